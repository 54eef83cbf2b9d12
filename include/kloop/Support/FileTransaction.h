//===- kloop/Support/FileTransaction.h - All-or-nothing multi-file writes -*- C++ -*-===//
///
/// \file
/// Rewrites several files so that, even across a crash (SIGKILL, power loss),
/// they end up either all old or all new. The protocol:
///
///  1. every target's current contents are checked against what kloop read;
///  2. for every target a temporary with the new contents and a backup with the
///     old contents are written next to it and fsynced (kloop/Support/AtomicFile.h);
///  3. an intent manifest `.kloop-apply-intent.json` is written atomically in
///     the targets' common directory, naming every target, temporary and backup
///     with the SHA-256 of the old and the new contents;
///  4. each target is checked once more just before its temporary is renamed
///     over it (a changed file is never overwritten: the files already renamed
///     are restored from their backups and the whole write is refused);
///  5. the manifest, then the backups are removed.
///
/// recoverInterruptedWrites(), run by the next kloop command in that tree,
/// finishes the renames when every file is either renamed or has its temporary
/// (roll forward), and otherwise restores the renamed ones from their backups
/// (roll back). Files that changed since are left alone and reported.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_SUPPORT_FILETRANSACTION_H
#define KLOOP_SUPPORT_FILETRANSACTION_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace kloop {

/// File name of the intent manifest, in the targets' common directory.
constexpr const char *IntentManifestName = ".kloop-apply-intent.json";

/// One file of a transaction.
struct FileReplacement {
  /// The file to rewrite. A symbolic link is kept: its target is rewritten.
  std::string Path;
  /// The contents kloop read and based the new contents on.
  std::string Before;
  /// The new contents.
  std::string After;
};

/// Rewrites every file of \p Files or none (see the file comment). Errors: a
/// file changed since kloop read it ("changed since kloop read it; not
/// overwritten", naming it), a manifest of an unfinished write already exists
/// in the common directory, or a write, fsync or rename fails (naming the file
/// and errno). On error no target is changed and no temporary is left.
llvm::Error replaceFilesAtomically(llvm::ArrayRef<FileReplacement> Files);

/// Finds intent manifests in the directories of \p Paths and in every directory
/// above them, finishes or rolls back each (see the file comment), then removes
/// kloop's stray temporaries and backups (of processes that no longer exist)
/// next to \p Paths and next to the manifests' files. Returns one line per
/// action taken, for the caller to print. Errors: a manifest that is not valid
/// JSON of the documented shape, or names a file outside its own directory.
llvm::Expected<std::vector<std::string>> recoverInterruptedWrites(llvm::ArrayRef<std::string> Paths);

} // namespace kloop

#endif
