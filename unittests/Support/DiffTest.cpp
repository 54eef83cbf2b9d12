//===- DiffTest.cpp - The one unified-diff writer -------------------------===//
#include "kloop/Support/Diff.h"

#include "gtest/gtest.h"

using namespace kloop;

namespace {

TEST(Diff, EqualTextsGiveNothing) { EXPECT_EQ(unifiedDiff("a.cu", "x\ny\n", "x\ny\n"), ""); }

TEST(Diff, OneChangedLineWithContext) {
  std::string Before = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
  std::string After = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
  EXPECT_EQ(unifiedDiff("src/a.cu", Before, After), "diff --git a/src/a.cu b/src/a.cu\n"
                                                    "--- a/src/a.cu\n+++ b/src/a.cu\n"
                                                    "@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
}

TEST(Diff, FarApartChangesAreTwoHunks) {
  std::string Before, After;
  for (int I = 1; I <= 20; ++I) {
    Before += std::to_string(I) + "\n";
    After += (I == 2 || I == 19 ? "x" : std::to_string(I)) + "\n";
  }
  std::string D = unifiedDiff("a.cu", Before, After);
  EXPECT_NE(D.find("@@ -1,5 +1,5 @@\n 1\n-2\n+x\n 3\n 4\n 5\n"), std::string::npos) << D;
  EXPECT_NE(D.find("@@ -16,5 +16,5 @@\n 16\n 17\n 18\n-19\n+x\n 20\n"), std::string::npos) << D;
}

TEST(Diff, InsertionIntoEmptyAndMissingNewline) {
  EXPECT_EQ(unifiedDiff("n.cu", "", "a\n"), "diff --git a/n.cu b/n.cu\n--- a/n.cu\n+++ b/n.cu\n@@ -0,0 +1,1 @@\n+a\n");
  EXPECT_EQ(unifiedDiff("n.cu", "a\nb", "a\nc"),
            "diff --git a/n.cu b/n.cu\n--- a/n.cu\n+++ b/n.cu\n@@ -1,2 +1,2 @@\n a\n-b\n"
            "\\ No newline at end of file\n+c\n\\ No newline at end of file\n");
}

} // namespace
