//===- FileTransactionTest.cpp - all-or-nothing writes and their recovery -===//
#include "kloop/Support/FileTransaction.h"
#include "kloop/Support/AtomicFile.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"
#include "TestFiles.h"
#include "gtest/gtest.h"

using namespace kloop;

namespace {

using testfiles::put;
using testfiles::slurp;

/// A fresh directory of this test file's own prefix.
struct TempDir : testfiles::TempDir {
  TempDir() : testfiles::TempDir("kloop-txn") {}
};

std::string sha(llvm::StringRef S) { return llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(S)), true); }

TEST(FileTransaction, ReplacesEveryFile) {
  TempDir D;
  put(D.file("a.cu"), "a0");
  put(D.file("b.cu"), "b0");
  ASSERT_FALSE(static_cast<bool>(replaceFilesAtomically({{D.file("a.cu"), "a0", "a1"}, {D.file("b.cu"), "b0", "b1"}})));
  EXPECT_EQ(slurp(D.file("a.cu")), "a1");
  EXPECT_EQ(slurp(D.file("b.cu")), "b1");
  EXPECT_EQ(D.count(), 2u) << "temporaries, backups or the manifest were left";
}

TEST(FileTransaction, AFileChangedSinceItWasReadIsNotOverwritten) {
  TempDir D;
  put(D.file("a.cu"), "a0");
  put(D.file("b.cu"), "b0 plus a line appended meanwhile");
  llvm::Error E = replaceFilesAtomically({{D.file("a.cu"), "a0", "a1"}, {D.file("b.cu"), "b0", "b1"}});
  ASSERT_TRUE(static_cast<bool>(E));
  std::string Msg = llvm::toString(std::move(E));
  EXPECT_NE(Msg.find(D.file("b.cu") + " changed since kloop read it"), std::string::npos) << Msg;
  EXPECT_EQ(slurp(D.file("a.cu")), "a0");
  EXPECT_EQ(slurp(D.file("b.cu")), "b0 plus a line appended meanwhile");
  EXPECT_EQ(D.count(), 2u);
}

/// A crash after the manifest: a.cu renamed, b.cu still old with its temporary.
struct Planted {
  TempDir D;
  std::string TmpA, TmpB, BakA, BakB;
  Planted() {
    std::string A = D.file("a.cu"), B = D.file("b.cu");
    TmpA = A + ".kloop-tmp.99999999.aaaaaaaa";
    TmpB = B + ".kloop-tmp.99999999.bbbbbbbb";
    BakA = A + ".kloop-bak.99999999.aaaaaaaa";
    BakB = B + ".kloop-bak.99999999.bbbbbbbb";
    put(A, "a1"); // already renamed: TmpA is gone
    put(B, "b0");
    put(TmpB, "b1");
    put(BakA, "a0");
    put(BakB, "b0");
    put(D.file(IntentManifestName),
        R"({"kloop_intent":1,"pid":99999999,"files":[)"
        R"({"path":"a.cu","temp":"a.cu.kloop-tmp.99999999.aaaaaaaa","backup":"a.cu.kloop-bak.99999999.aaaaaaaa",)"
        R"("old_sha256":")" + sha("a0") + R"(","new_sha256":")" + sha("a1") + R"("},)"
        R"({"path":"b.cu","temp":"b.cu.kloop-tmp.99999999.bbbbbbbb","backup":"b.cu.kloop-bak.99999999.bbbbbbbb",)"
        R"("old_sha256":")" + sha("b0") + R"(","new_sha256":")" + sha("b1") + R"("}]})");
  }
};

TEST(FileTransaction, RecoveryRollsForwardWhenEveryTemporaryIsThere) {
  Planted P;
  llvm::Expected<std::vector<std::string>> Notes = recoverInterruptedWrites({P.D.file("a.cu")});
  ASSERT_TRUE(static_cast<bool>(Notes)) << llvm::toString(Notes.takeError());
  ASSERT_FALSE(Notes->empty());
  EXPECT_NE(Notes->front().find("finished it"), std::string::npos) << Notes->front();
  EXPECT_EQ(slurp(P.D.file("a.cu")), "a1");
  EXPECT_EQ(slurp(P.D.file("b.cu")), "b1");
  EXPECT_EQ(P.D.count(), 2u);
}

TEST(FileTransaction, RecoveryRollsBackWhenATemporaryIsMissing) {
  Planted P;
  llvm::sys::fs::remove(P.TmpB);
  llvm::Expected<std::vector<std::string>> Notes = recoverInterruptedWrites({P.D.file("b.cu")});
  ASSERT_TRUE(static_cast<bool>(Notes)) << llvm::toString(Notes.takeError());
  ASSERT_FALSE(Notes->empty());
  EXPECT_NE(Notes->front().find("rolled it back"), std::string::npos) << Notes->front();
  EXPECT_EQ(slurp(P.D.file("a.cu")), "a0");
  EXPECT_EQ(slurp(P.D.file("b.cu")), "b0");
  EXPECT_EQ(P.D.count(), 2u);
}

TEST(FileTransaction, AManifestNamingAFileOutsideItsDirectoryIsRefused) {
  TempDir D;
  put(D.file(IntentManifestName), R"({"files":[{"path":"../x","temp":"../x.kloop-tmp.1.aaaaaaaa",)"
                                  R"("backup":"../x.kloop-bak.1.aaaaaaaa","old_sha256":"","new_sha256":""}]})");
  llvm::Expected<std::vector<std::string>> Notes = recoverInterruptedWrites({D.Path.str().str()});
  ASSERT_FALSE(static_cast<bool>(Notes));
  EXPECT_NE(llvm::toString(Notes.takeError()).find("leaves the manifest's directory"), std::string::npos);
}

} // namespace
