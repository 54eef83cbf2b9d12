//===- ProtectedTest.cpp - Tests of protected-file hashing ----------------===//
#include "kloop/Verify/Protected.h"
#include "TestProfiles.h"
#include "gtest/gtest.h"

using namespace kloop::verify;
using namespace kloop::verify::test;

namespace {

TEST(Protected, Sha256OfKnownContent) {
  TempDir D;
  D.write("abc.txt", "abc");
  auto G = digestFile(D.file("abc.txt"));
  ASSERT_TRUE(static_cast<bool>(G)) << llvm::toString(G.takeError());
  // FIPS 180-2 appendix B.1 test vector.
  EXPECT_EQ(G->Sha256,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Protected, ReportsModifiedAndDeletedFiles) {
  TempDir D;
  D.write("harness.h", "#define ITERS 20\n");
  D.write("timer.h", "// cudaEventRecord\n");
  D.write("same.h", "int x;\n");
  auto Before = digestFiles({D.file("harness.h"), D.file("timer.h"),
                             D.file("same.h")});
  ASSERT_TRUE(static_cast<bool>(Before));
  auto None = checkProtectedFiles(*Before);
  ASSERT_TRUE(static_cast<bool>(None));
  EXPECT_TRUE(None->empty());

  D.write("harness.h", "#define ITERS 1\n"); // the candidate edits the harness
  llvm::sys::fs::remove(D.file("timer.h"));
  auto Changes = checkProtectedFiles(*Before);
  ASSERT_TRUE(static_cast<bool>(Changes)) << llvm::toString(Changes.takeError());
  ASSERT_EQ(Changes->size(), 2u);
  EXPECT_EQ((*Changes)[0].Path, D.file("harness.h"));
  EXPECT_NE((*Changes)[0].After, (*Changes)[0].Before);
  EXPECT_NE((*Changes)[0].Message.find("harness.h was modified (sha256 "),
            std::string::npos)
      << (*Changes)[0].Message;
  EXPECT_EQ((*Changes)[1].After, "");
  EXPECT_NE((*Changes)[1].Message.find("timer.h was deleted"),
            std::string::npos);
}

TEST(Protected, UnreadableFileIsAnError) {
  TempDir D;
  auto E = digestFiles({D.file("missing.h")});
  ASSERT_FALSE(static_cast<bool>(E));
  std::string Msg = llvm::toString(E.takeError());
  EXPECT_NE(Msg.find("cannot read protected file"), std::string::npos);
  EXPECT_NE(Msg.find("missing.h"), std::string::npos);
}

} // namespace
