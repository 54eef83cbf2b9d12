//===- kloop/Verify/Protected.h - Files a candidate must not change --------===//
///
/// \file
/// The workload's protected files (.kloop.yaml `protected`: the harness,
/// the timing code) are hashed with SHA-256 (llvm::SHA256, FIPS 180-4) before
/// a candidate is built and again after it ran; any difference refuses the
/// candidate ("the candidate editing the harness", DESIGN.md).
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_VERIFY_PROTECTED_H
#define KLOOP_VERIFY_PROTECTED_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace kloop {
namespace verify {

/// The SHA-256 of one file.
struct FileDigest {
  /// Path as given.
  std::string Path;
  /// False when the file did not exist (only from checkProtectedFiles()).
  bool Exists = true;
  /// 64 lowercase hex digits; empty when !Exists.
  std::string Sha256;
};

/// SHA-256 of \p Path's bytes. Errors: the file cannot be read (naming it).
llvm::Expected<FileDigest> digestFile(llvm::StringRef Path);

/// digestFile() of every path. Errors: the first unreadable file.
llvm::Expected<std::vector<FileDigest>>
digestFiles(llvm::ArrayRef<std::string> Paths);

/// A protected file that changed.
struct ProtectedChange {
  std::string Path;
  /// Digests before and after ("" when deleted).
  std::string Before, After;
  /// e.g. "protected file harness.h was modified (sha256 1a2b.. -> 3c4d..)"
  /// or "... was deleted".
  std::string Message;
};

/// Differences between two digest lists of the same paths (matched by Path).
/// A path only in \p Before counts as deleted.
std::vector<ProtectedChange> diffDigests(llvm::ArrayRef<FileDigest> Before,
                                         llvm::ArrayRef<FileDigest> After);

/// Re-hashes the files of \p Before now and returns their changes; a file
/// that no longer exists is reported as deleted. Errors: a file that exists
/// but cannot be read.
llvm::Expected<std::vector<ProtectedChange>>
checkProtectedFiles(llvm::ArrayRef<FileDigest> Before);

} // namespace verify
} // namespace kloop

#endif
