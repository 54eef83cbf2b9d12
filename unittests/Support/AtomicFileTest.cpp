//===- AtomicFileTest.cpp - the one writer, with failing sinks ------------===//
#include "kloop/Support/AtomicFile.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "TestFiles.h"
#include "gtest/gtest.h"

#include <cerrno>
#include <sys/stat.h>
#include <unistd.h>

using namespace kloop;

namespace {

using testfiles::put;
using testfiles::slurp;

/// A fresh directory of this test file's own prefix.
struct TempDir : testfiles::TempDir {
  TempDir() : testfiles::TempDir("kloop-atomic") {}
};

/// Fails the N-th call of one kind with a chosen errno; the others are real.
struct FailingSink : FileSink {
  enum What { None, Write, Fsync, Close } Fail;
  int Errno;
  int WritesBeforeFailure = 0;
  FailingSink(What W, int E) : Fail(W), Errno(E) {}
  ssize_t write(int FD, const char *D, size_t N) override {
    if (Fail == Write && WritesBeforeFailure-- <= 0) {
      errno = Errno;
      return -1;
    }
    return FileSink::write(FD, D, 1); // one byte at a time: short writes must be resumed
  }
  int fsync(int FD) override {
    if (Fail == Fsync) {
      errno = Errno;
      return -1;
    }
    return FileSink::fsync(FD);
  }
  int close(int FD) override {
    int R = FileSink::close(FD);
    if (Fail == Close) {
      errno = Errno;
      return -1;
    }
    return R;
  }
};

void expectFailureKeepsOld(FailingSink::What W, int Errno, const char *ErrnoText) {
  TempDir D;
  std::string P = D.file("out.json");
  put(P, "old contents\n");
  FailingSink Sink(W, Errno);
  Sink.WritesBeforeFailure = 3;
  AtomicWriteOptions O;
  O.Sink = &Sink;
  llvm::Error E = writeFileAtomically(P, "new contents that do not fit\n", O);
  ASSERT_TRUE(static_cast<bool>(E));
  std::string Msg = llvm::toString(std::move(E));
  EXPECT_NE(Msg.find("cannot write " + P), std::string::npos) << Msg;
  EXPECT_NE(Msg.find(ErrnoText), std::string::npos) << Msg;
  EXPECT_EQ(slurp(P), "old contents\n");
  EXPECT_EQ(D.names(), std::vector<std::string>{"out.json"}) << "a temporary file was left";
}

TEST(AtomicFile, WriteFailureKeepsTheOldFile) { expectFailureKeepsOld(FailingSink::Write, ENOSPC, "No space left on device"); }
TEST(AtomicFile, FsyncFailureKeepsTheOldFile) { expectFailureKeepsOld(FailingSink::Fsync, EIO, "Input/output error"); }
TEST(AtomicFile, CloseFailureKeepsTheOldFile) { expectFailureKeepsOld(FailingSink::Close, EDQUOT, "quota exceeded"); }

TEST(AtomicFile, ShortWritesAreResumedAndNothingIsLeft) {
  TempDir D;
  std::string P = D.file("out.txt");
  FailingSink Sink(FailingSink::None, 0); // never fails; writes one byte per call
  AtomicWriteOptions O;
  O.Sink = &Sink;
  ASSERT_FALSE(static_cast<bool>(writeFileAtomically(P, "hello, world\n", O)));
  EXPECT_EQ(slurp(P), "hello, world\n");
  EXPECT_EQ(D.names(), std::vector<std::string>{"out.txt"});
}

TEST(AtomicFile, KeepsPermissionsOfTheReplacedFile) {
  TempDir D;
  std::string P = D.file("k.cu");
  put(P, "x");
  ::chmod(P.c_str(), 0640);
  ASSERT_FALSE(static_cast<bool>(writeFileAtomically(P, "y")));
  struct stat St;
  ASSERT_EQ(::stat(P.c_str(), &St), 0);
  EXPECT_EQ(St.st_mode & 07777, 0640u);
}

TEST(AtomicFile, WritesThroughASymbolicLinkAndKeepsIt) {
  TempDir D;
  std::string Target = D.file("real.cu"), Link = D.file("link.cu");
  put(Target, "old");
  ASSERT_EQ(::symlink(Target.c_str(), Link.c_str()), 0);
  ASSERT_FALSE(static_cast<bool>(writeFileAtomically(Link, "new")));
  llvm::sys::fs::file_status St;
  ASSERT_FALSE(llvm::sys::fs::status(Link, St, /*follow=*/false));
  EXPECT_EQ(St.type(), llvm::sys::fs::file_type::symlink_file);
  EXPECT_EQ(slurp(Target), "new");
}

TEST(AtomicFile, AMissingDirectoryIsNamed) {
  TempDir D;
  std::string P = D.file("no/such/dir/out.json");
  llvm::Error E = writeFileAtomically(P, "x");
  ASSERT_TRUE(static_cast<bool>(E));
  std::string Msg = llvm::toString(std::move(E));
  EXPECT_NE(Msg.find(P), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("No such file or directory"), std::string::npos) << Msg;
}

TEST(AtomicFile, OnlyTemporariesOfDeadProcessesAreStray) {
  TempDir D;
  // A pid that cannot exist (above the kernel's pid_max limit of 2^22).
  std::string Dead = D.file("k.cu.kloop-tmp.99999999.abcdefgh");
  std::string Alive = siblingFileName(D.file("k.cu"), "tmp", static_cast<int>(::getpid()));
  std::string Other = D.file("k.cu.kloop-tmp.notapid.abcdefgh");
  for (const std::string &P : {Dead, Alive, Other})
    put(P, "x");
  EXPECT_TRUE(isStrayTempFile(Dead));
  EXPECT_FALSE(isStrayTempFile(Alive));
  EXPECT_FALSE(isStrayTempFile(Other));
  EXPECT_EQ(removeStrayTempFiles(D.Path), std::vector<std::string>{Dead});
  EXPECT_FALSE(llvm::sys::fs::exists(Dead));
  EXPECT_TRUE(llvm::sys::fs::exists(Alive));
}

} // namespace
