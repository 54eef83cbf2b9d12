//===- kloop/Support/Diff.h - Unified diffs of two texts ------------------===//
///
/// \file
/// The one diff writer of kloop (issue 13: `kloop optimize` ran `diff -u` as a
/// process beside kloop apply's own): the patch of kloop apply, the diff of an
/// optimize run and its accepted.patch all come from here.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_SUPPORT_DIFF_H
#define KLOOP_SUPPORT_DIFF_H

#include "llvm/ADT/StringRef.h"
#include <string>

namespace kloop {

/// A git-style unified diff of one file: "diff --git a/P b/P", "--- a/P",
/// "+++ b/P" with P = \p RelPath, then hunks with 3 lines of context; a last
/// line without a newline is marked "\ No newline at end of file". "" when
/// \p Before and \p After are equal. `git apply` and `patch -p1` accept it.
/// Lines are matched by a longest common subsequence after the common prefix
/// and suffix are cut off: time and memory grow with the product of the line
/// counts between the first and the last changed line.
std::string unifiedDiff(llvm::StringRef RelPath, llvm::StringRef Before, llvm::StringRef After);

} // namespace kloop

#endif
