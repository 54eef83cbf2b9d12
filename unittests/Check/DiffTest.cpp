//===- DiffTest.cpp - parseUnifiedDiff and touchedKernels ------------------===//
#include "kloop/Check/Check.h"

#include "gtest/gtest.h"

using namespace kloop;
using namespace kloop::check;

namespace {

using Ranges = std::vector<std::pair<unsigned, unsigned>>;

std::vector<FileChanges> parse(llvm::StringRef Text, unsigned Strip = 1) {
  llvm::Expected<std::vector<FileChanges>> R = parseUnifiedDiff(Text, "t.diff", Strip, "/w");
  EXPECT_TRUE(bool(R)) << (R ? "" : llvm::toString(R.takeError()));
  return R ? *R : std::vector<FileChanges>();
}

std::string parseError(llvm::StringRef Text) {
  llvm::Expected<std::vector<FileChanges>> R = parseUnifiedDiff(Text, "t.diff", 1, "/w");
  return R ? std::string("no error") : llvm::toString(R.takeError());
}

TEST(Diff, AddedAndChangedLinesInNewNumbering) {
  auto C = parse("diff --git a/k.cu b/k.cu\n--- a/k.cu\n+++ b/k.cu\n@@ -3,3 +3,4 @@ void f()\n a\n-b\n+B\n+B2\n c\n"
                 "@@ -20 +21 @@\n-x\n+y\n");
  ASSERT_EQ(C.size(), 1u);
  EXPECT_EQ(C[0].File, "/w/k.cu");
  EXPECT_EQ(C[0].Ranges, (Ranges{{4, 4}, {5, 5}, {21, 21}}));
}

TEST(Diff, PureDeletionTouchesBothNeighbours) {
  // git diff -U0: two lines deleted after new line 7.
  auto C = parse("--- a/k.cu\n+++ b/k.cu\n@@ -8,2 +7,0 @@\n-x\n-y\n");
  ASSERT_EQ(C.size(), 1u);
  EXPECT_EQ(C[0].Ranges, (Ranges{{7, 8}}));
  // With context: the deletion lies between new lines 2 and 3.
  C = parse("--- a/k.cu\n+++ b/k.cu\n@@ -1,4 +1,3 @@\n a\n b\n-x\n c\n");
  EXPECT_EQ(C[0].Ranges, (Ranges{{2, 3}}));
}

TEST(Diff, DeletedFilesAndSignatureAndStrip) {
  auto C = parse("--- a/gone.cu\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n--- a/d/k.cu\n+++ b/d/k.cu\n@@ -1 +1 @@\n-a\n+b\n"
                 "-- \n2.39.2\n");
  ASSERT_EQ(C.size(), 1u);
  EXPECT_EQ(C[0].File, "/w/d/k.cu");
  C = parse("--- d/k.cu\n+++ d/k.cu\t2024-01-01 00:00:00\n@@ -1 +1 @@\n-a\n+b\n", 0);
  EXPECT_EQ(C[0].File, "/w/d/k.cu");
  EXPECT_TRUE(parse("").empty());
}

TEST(Diff, MalformedInputNamesLineAndReason) {
  EXPECT_EQ(parseError("hello\n"), "t.diff:1: not a unified diff: no '+++ FILE' line");
  EXPECT_EQ(parseError("+++ b/k.cu\n@@ -1 +1,2 @@\n-a\n+b\n"),
            "t.diff:4: the diff ends inside the hunk at line 2 (fewer lines than its header says)");
  EXPECT_EQ(parseError("+++ b/k.cu\n@@ -1 +1 @@\n-a\n+b\n+c\n"),
            "t.diff:5: a '+' or '-' line after the hunk at line 2 ended (more lines than its header says)");
  EXPECT_EQ(parseError("+++ b/k.cu\n@@ -1 +1 @@\n-a\n-b\n"),
            "t.diff:4: the hunk at line 2 has more old lines than its header says");
  EXPECT_EQ(parseError("+++ b/k.cu\n@@ -1 +1 @@\n-a\n?\n"),
            "t.diff:4: the hunk at line 2 ends early: expected ' ', '+' or '-' here, got '?'");
}

inv::Kernel kernel(const std::string &ID, unsigned Begin, unsigned End, std::vector<std::string> Calls = {}) {
  inv::Kernel K;
  K.ID = ID;
  K.Loc = {"k.cu", {Begin, 1}, {End, 1}};
  K.Calls = std::move(Calls);
  return K;
}

TEST(Touched, KernelRangeAndCalleesThroughOtherDeviceFunctions) {
  inv::Inventory I;
  I.Root = "/w";
  I.Kernels = {kernel("a", 10, 20, {"device:f"}), kernel("b", 30, 40), kernel("lib", 50, 60)};
  I.Kernels[2].Library = true;
  inv::DeviceFunction F, G;
  F.ID = "device:f";
  F.Loc = {"k.cu", {1, 1}, {3, 1}};
  F.Calls = {"device:g"};
  G.ID = "device:g";
  G.Loc = {"h.cuh", {5, 1}, {6, 1}};
  I.DeviceFunctions = {F, G};
  auto Touch = [&](const std::string &File, unsigned Line) {
    return touchedKernels(I, {FileChanges{File, {{Line, Line}}}});
  };
  EXPECT_EQ(Touch("/w/k.cu", 15), std::vector<std::string>{"a"});
  EXPECT_EQ(Touch("/w/k.cu", 40), std::vector<std::string>{"b"});
  EXPECT_EQ(Touch("/w/k.cu", 25), std::vector<std::string>{});
  EXPECT_EQ(Touch("/w/k.cu", 55), std::vector<std::string>{}); // a library kernel
  EXPECT_EQ(Touch("/w/k.cu", 2), std::vector<std::string>{"a"}); // device:f, called by a
  EXPECT_EQ(Touch("/w/h.cuh", 6), std::vector<std::string>{"a"}); // device:g, through device:f
  EXPECT_EQ(Touch("/w/other.cu", 15), std::vector<std::string>{});
}

} // namespace
