//===- kloop/Check/Check.h - `kloop check`: rules on the kernels a diff touches -===//
///
/// \file
/// The pre-commit pass (docs/check.md): read a unified diff, find the kernels
/// whose source range (or the range of a device function they call, directly
/// or through other device functions) holds a changed line, run the builtin
/// rules (kloop/Edit/Rules.h) on those kernels only, and turn each site where
/// a rule fires into a finding with the fix-it applyProposal plans for it.
/// Nothing here prints: lib/Driver/CheckCommand.cpp renders the findings as
/// clang-style diagnostics and picks the exit status.
///
/// Cost: the inventory comes from extractInventory with the extract cache
/// (kloop/Inventory/ExtractCache.h), so an unchanged translation unit is read
/// from its content-hashed entry and not parsed; only the translation units
/// that define a touched kernel are parsed again, by applyProposal, to plan
/// the fix-its (bench/check/ measures it).
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_CHECK_CHECK_H
#define KLOOP_CHECK_CHECK_H

#include "kloop/Edit/Apply.h"
#include "kloop/Inventory/Extract.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <string>
#include <utility>
#include <vector>

namespace kloop {
namespace check {

/// The lines of one file that a diff adds or changes, in the new file's
/// numbering (1-based, inclusive ranges). Lines deleted with nothing added in
/// their place count as the two lines around the deletion, so that deleting
/// a statement from a kernel touches the kernel.
struct FileChanges {
  /// The path as the diff names it after `+++ `, with \p Strip leading
  /// components removed (parseUnifiedDiff), made absolute against the
  /// directory passed there.
  std::string File;
  /// [first, last] line ranges, in the order of the diff.
  std::vector<std::pair<unsigned, unsigned>> Ranges;
  /// True when a line of [\p First, \p Last] lies in one of Ranges.
  bool touches(unsigned First, unsigned Last) const;
};

/// Reads a unified diff (`git diff`, `diff -u`; any context size) named \p Name
/// in messages. Paths lose \p Strip leading components (`patch -p`: 1 for
/// git's `a/` and `b/`) and are made absolute against \p BaseDir. Deleted
/// files (`+++ /dev/null`) are left out. Errors, naming \p Name and the line
/// number: text without any `+++` line, a hunk header that does not parse, a
/// hunk before any `+++` line, a hunk whose body has fewer or more lines than
/// its header says, a path with fewer than \p Strip components. Empty text is
/// an empty list, not an error; git format-patch's signature (`-- `) ends it.
llvm::Expected<std::vector<FileChanges>> parseUnifiedDiff(llvm::StringRef Text, llvm::StringRef Name,
                                                          unsigned Strip, llvm::StringRef BaseDir);

/// The diff of the working tree (staged and unstaged changes) against \p Ref:
/// `git diff --no-color --no-ext-diff --src-prefix=a/ --dst-prefix=b/ -U0
/// --relative REF --` run in \p Dir, so paths are relative to \p Dir with the
/// `a/`/`b/` prefixes whatever the user's git configuration says. Errors: git
/// cannot be started; git fails (an unknown ref, not a repository), with its
/// message: "cannot diff against 'REF': <git's stderr>".
llvm::Expected<std::string> gitDiff(llvm::StringRef Ref, llvm::StringRef Dir);

/// Only the changes of \p Files (absolute paths) when it is not empty.
std::vector<FileChanges> restrictTo(std::vector<FileChanges> Changes, const std::vector<std::string> &Files);

/// The IDs of the kernels of \p Inv, library kernels aside, that \p Changes
/// touch (editable or not: the rules skip those that are not, and the caller
/// says why with Editability::NotEditableReason): a changed line within the kernel's location, or within the location
/// of a device function that the kernel calls directly or through other device
/// functions (Kernel::Calls, DeviceFunction::Calls). Inventory paths are
/// relative to Inv.Root. In the order of Inv.Kernels.
std::vector<std::string> touchedKernels(const inv::Inventory &Inv, const std::vector<FileChanges> &Changes);

/// \p Inv with only the kernels \p IDs (the rules then match nothing else).
inv::Inventory onlyKernels(const inv::Inventory &Inv, const std::vector<std::string> &IDs);

/// One replacement of a fix-it, in the file's original coordinates.
struct FixIt {
  std::string File; ///< absolute
  unsigned Offset = 0, Length = 0;
  std::string Text;
};

/// One site where a builtin rule fires on a touched kernel.
struct Finding {
  std::string Rule;   ///< "unroll-constant-loops"; printed as [kloop-<Rule>]
  std::string Kernel; ///< the touched kernel's ID
  std::string Site;   ///< the site's inventory ID (a loop, a parameter, a shared array)
  /// "kernel 'K': <what the rule does>: <why it fires here>".
  std::string Message;
  /// Where the diagnostic points: the first fix-it's offset, else the site's
  /// location, else the kernel's. Absolute path; 1-based line and column.
  std::string File;
  unsigned Line = 0, Column = 0;
  /// Byte offset of Line:Column in File (0 when no fix-it gave it).
  unsigned Offset = 0;
  /// The replacements applyProposal planned for the site's edits. A site
  /// whose every edit apply refuses on its own (add_restrict on a pointer a
  /// launch aliases, say) is no finding. Empty when apply could not plan the
  /// proposal as a whole (a translation unit it cannot process, a re-parse
  /// error); NoFixReason then says why.
  std::vector<FixIt> Fixes;
  std::string NoFixReason;
};

/// What checkKernels found.
struct CheckResult {
  /// Sorted by file, line, column, rule.
  std::vector<Finding> Findings;
  /// Every changed file with all fix-its applied, for `--fix` (writeChangesInPlace).
  std::vector<FileChange> Changes;
};

/// Runs every builtin rule on the kernels \p Kernels of \p E, and plans the
/// fired sites' edits with applyProposal (ApplyOptions::DropRefused, no
/// formatting, re-parse on) on one translation unit per file that defines a
/// touched kernel. \p Inputs are the options \p E was extracted with; \p Root
/// the inventory's root. Errors: a parse that crashed (ParseCrashError); a
/// translation unit that apply cannot process is not an error: its findings
/// keep no fix-it and say why.
llvm::Expected<CheckResult> checkKernels(const Extraction &E, const std::vector<std::string> &Kernels,
                                         const FrontendOptions &Inputs, llvm::StringRef Root);

/// clang-tidy's `--export-fixes` YAML (clang::tooling::TranslationUnitDiagnostics:
/// MainSourceFile, Diagnostics with DiagnosticName `kloop-<rule>`, message,
/// file offset and Replacements), which clang-apply-replacements reads. Level
/// "Error" for a finding \p IsError holds for (`--warnings-as-errors`), else "Warning".
std::string exportFixesYaml(const std::vector<Finding> &Findings, llvm::StringRef MainSourceFile,
                            llvm::function_ref<bool(const Finding &)> IsError);

} // namespace check
} // namespace kloop

#endif
