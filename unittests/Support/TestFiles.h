//===- TestFiles.h - Temporary directories and files for Support's tests --===//
#ifndef KLOOP_UNITTESTS_SUPPORT_TESTFILES_H
#define KLOOP_UNITTESTS_SUPPORT_TESTFILES_H

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <string>
#include <vector>

namespace kloop::testfiles {

/// A fresh directory named after \p Prefix, removed with its files at the end.
struct TempDir {
  llvm::SmallString<128> Path;
  explicit TempDir(const char *Prefix) { EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory(Prefix, Path)); }
  ~TempDir() { llvm::sys::fs::remove_directories(Path); }
  std::string file(llvm::StringRef Name) const { return (Path + "/" + Name).str(); }
  /// The names of the entries in the directory, in directory order.
  std::vector<std::string> names() const {
    std::vector<std::string> N;
    std::error_code EC;
    for (llvm::sys::fs::directory_iterator It(Path, EC), End; It != End && !EC; It.increment(EC))
      N.push_back(llvm::sys::path::filename(It->path()).str());
    return N;
  }
  size_t count() const { return names().size(); }
};

/// The contents of \p P, or "<missing>".
inline std::string slurp(const std::string &P) {
  auto B = llvm::MemoryBuffer::getFile(P);
  return B ? (*B)->getBuffer().str() : "<missing>";
}

/// Writes \p Text to \p P (test setup; no checks).
inline void put(const std::string &P, llvm::StringRef Text) {
  std::error_code EC;
  llvm::raw_fd_ostream OS(P, EC);
  OS << Text;
}

} // namespace kloop::testfiles

#endif
