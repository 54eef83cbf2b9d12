//===- kloop/Support/AtomicFile.h - The one writer of kloop's outputs -*- C++ -*-===//
///
/// \file
/// Every file kloop writes (inventory, fixes YAML, report, patch, proposal
/// files, results, sources rewritten in place) goes through this writer: the
/// contents go to a temporary file next to the target, every write(2) and the
/// close(2) are checked, the temporary is fsync(2)ed, renamed over the target
/// and the directory is fsynced. On any error the old file stays as it was, the
/// temporary is removed and the llvm::Error names the target file and the
/// errno text (e.g. "cannot write out.json: No space left on device").
///
/// Temporary files are named `<name>.kloop-tmp.<pid>.<random>` so that a later
/// kloop can tell the leftovers of a killed process (removeStrayTempFiles).
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_SUPPORT_ATOMICFILE_H
#define KLOOP_SUPPORT_ATOMICFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstddef>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace kloop {

/// The system calls the writer makes on an open file descriptor. The default
/// (systemFileSink()) is POSIX; unit tests pass a sink that fails on purpose.
class FileSink {
public:
  virtual ~FileSink();
  /// As write(2): bytes written, or -1 with errno set.
  virtual ssize_t write(int FD, const char *Data, size_t Size);
  /// As fsync(2): 0, or -1 with errno set.
  virtual int fsync(int FD);
  /// As close(2): 0, or -1 with errno set. The descriptor is released either way.
  virtual int close(int FD);
};

/// The POSIX sink (write(2), fsync(2), close(2)).
FileSink &systemFileSink();

/// Options of writeFileAtomically and writeTempFileNextTo.
struct AtomicWriteOptions {
  /// Permission bits of the new file; default: the existing target's, and
  /// for a new file 0666 less the process umask (as open(2) creates files).
  std::optional<unsigned> Mode;
  /// The sink the contents go through; null: systemFileSink().
  FileSink *Sink = nullptr;
};

/// Replaces \p Path by \p Contents atomically (see the file comment). A
/// symbolic link at \p Path is kept: its target is written. Errors: the target
/// cannot be resolved, the temporary cannot be created, a write, fsync or close
/// fails (ENOSPC, EIO, ...), or the rename fails; each names \p Path and errno.
llvm::Error writeFileAtomically(llvm::StringRef Path, llvm::StringRef Contents,
                                const AtomicWriteOptions &Opts = {});

/// The first half of writeFileAtomically: writes \p Contents to a new
/// temporary next to \p Target (which must already be resolved, see
/// resolveWriteTarget), checked and fsynced, and returns its path. Nothing is
/// renamed. On error no temporary is left.
llvm::Expected<std::string> writeTempFileNextTo(llvm::StringRef Target, llvm::StringRef Contents,
                                                const AtomicWriteOptions &Opts = {});

/// The second half: rename(2)s \p Temp over \p Target and fsyncs the
/// directory. On error \p Temp is left for the caller to remove.
llvm::Error commitTempFile(llvm::StringRef Temp, llvm::StringRef Target);

/// fsync(2) of directory \p Dir, which makes renames and removals in it durable.
llvm::Error syncDirectory(llvm::StringRef Dir);

/// The file that writing \p Path replaces: \p Path itself, or, when \p Path is
/// a symbolic link, the file it finally points to (absolute), so that links are
/// kept. Error: a dangling link, naming it.
llvm::Expected<std::string> resolveWriteTarget(llvm::StringRef Path);

/// Path of a kloop file next to \p Target that belongs to process \p Pid:
/// `<Target>.kloop-<Kind>.<Pid>.<random>`; \p Kind is "tmp" (temporary) or
/// "bak" (backup of an in-place rewrite). Unique at the time of the call.
std::string siblingFileName(llvm::StringRef Target, llvm::StringRef Kind, int Pid);

/// True when \p Path is named as siblingFileName() names files and the process
/// that created it no longer exists (kill(pid, 0) reports ESRCH).
bool isStrayTempFile(llvm::StringRef Path);

/// Removes the stray temporaries and backups (isStrayTempFile) directly in
/// directory \p Dir; returns the paths removed. An unreadable directory is
/// skipped.
std::vector<std::string> removeStrayTempFiles(llvm::StringRef Dir);

} // namespace kloop

#endif
