//===- kloop/Edit/Apply.h - Checked application of proposals ----*- C++ -*-===//
///
/// \file
/// Resolves a proposal's inventory IDs on the AST of each translation unit
/// (device side: kernels and their regions; host side: launch sites), checks
/// every precondition of docs/edits.md, builds non-overlapping replacements,
/// applies them in memory, re-parses both sides and refuses the whole proposal
/// on any new error or any new warning from the documented list, or on what the
/// edits add to a translation unit (an #include outside the CUDA toolkit's and the
/// compiler's system headers, a pragma other than unroll, a new declaration other
/// than a __device__ function, a side effect in a constant or launch expression;
/// docs/edits.md, "Added code"). Nothing is written here: the caller renders a
/// diff, exports fixes or writes in place.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_EDIT_APPLY_H
#define KLOOP_EDIT_APPLY_H

#include "kloop/Edit/Proposal.h"
#include "kloop/Frontend/Frontend.h"
#include "kloop/Inventory/LaunchFormula.h"
#include "llvm/Support/Error.h"
#include <map>
#include <string>
#include <vector>

namespace kloop {

/// One text replacement in one file: [Offset, Offset + Length) becomes Text.
struct TextEdit {
  std::string File; ///< absolute path
  unsigned Offset = 0, Length = 0;
  std::string Text;
  unsigned EditIndex = 0; ///< 0-based index into Proposal::Edits
};

/// Why one edit (or the whole proposal, EditIndex < 0) was refused.
struct Refusal {
  int EditIndex = -1;      ///< 0-based; -1: the proposal as a whole
  std::string EditLabel;   ///< "set_unroll k/loop#1"; empty for the whole proposal
  std::string Reason;
  /// "edit #1 (set_unroll k/loop#1): <reason>" (1-based index, as printed).
  std::string str() const;
};

/// One changed file.
struct FileChange {
  std::string File;    ///< absolute path
  std::string RelPath; ///< relative to ApplyOptions::Root when below it
  std::string Before, After;
};

/// Options of applyProposal.
struct ApplyOptions {
  /// Launch-site IDs carry file paths relative to this directory (as `kloop
  /// extract --root`). Absolute; empty: the current directory.
  std::string Root;
  /// Re-parse the edited code and refuse on new diagnostics (always on in kloop apply).
  bool Reparse = true;
  /// Format the changed lines with clang-format when a .clang-format governs the file.
  bool Format = true;
  /// Drop refused edits instead of refusing the proposal (used by built-in rules,
  /// whose candidate edits are filtered by the same checks). Refusals are still reported.
  /// When the re-parse refuses edits it attributes (docs/edits.md, "Structural code"),
  /// the proposal is applied again without them; a refusal of the proposal as a
  /// whole still refuses everything. A translation unit that cannot be parsed
  /// before the edit is left out (ApplyResult::Unparsed) instead of failing the apply.
  bool DropRefused = false;
  /// Precompiled preambles shared by the parses (kloop/Frontend/Preamble.h); null: none. kloop
  /// optimize passes one per run, so that the implicit includes are parsed once. When a parse
  /// after the edit cannot load the preamble its parse before the edit loaded (the edit changed a
  /// file the preamble read), the proposal is applied again without preambles, so that both parses
  /// see the same code.
  PreambleCache *Preambles = nullptr;
};

/// What applyProposal produced.
struct ApplyResult {
  /// Non-empty: the proposal was refused (nothing in Changes is valid then),
  /// unless ApplyOptions::DropRefused, where these are the dropped edits.
  std::vector<Refusal> Refusals;
  /// Files the proposal changes, with their contents before and after.
  std::vector<FileChange> Changes;
  /// The replacements, before formatting, in the files' original coordinates.
  std::vector<TextEdit> Edits;
  /// Indices of edits that were applied (all of them unless DropRefused).
  std::vector<unsigned> Applied;
  /// ApplyOptions::DropRefused: the translation units left out because they have no command
  /// ("FILE: no entry for this file in the compilation database") or clang cannot parse them before
  /// the edit ("FILE cannot be parsed (host side) before the edit: FIRST ERROR"), one line each
  /// (without DropRefused either is an error of applyProposal).
  std::vector<std::string> Unparsed;
  /// What the check could not cover, one sentence each, for the caller to print as notes: a GPU
  /// architecture the command builds under which a unit's device side cannot be parsed before the edit
  /// ("FILE is not checked under sm_75: ...").
  std::vector<std::string> Unchecked;
  /// The launch formulas of the edited code (kloop/Inventory/LaunchFormula.h)
  /// of every `<<<>>>` launch site in a re-parsed translation unit, by the
  /// inventory's launch site ID ("file:function/launch#N", the file relative
  /// to ApplyOptions::Root). Empty when nothing was re-parsed or the proposal
  /// was refused.
  std::map<std::string, inv::LaunchFormula> LaunchFormulas;
  bool refused() const { return !Refusals.empty() && Applied.empty(); }
};

/// Warnings that refuse a proposal when the edit introduces them (docs/edits.md):
/// -Wuninitialized, -Wsometimes-uninitialized, -Wreturn-type, -Wunused-value, ...
/// (the flags, as passed to clang).
const std::vector<std::string> &checkedWarningFlags();

/// Applies \p P to the translation units \p Jobs (from planCompileJobs). Returns
/// an llvm::Error only when the inputs cannot be processed at all (a job that
/// cannot be parsed, a file that cannot be read, a TU that does not parse
/// cleanly before the edit); refusals are part of the result.
llvm::Expected<ApplyResult> applyProposal(const Proposal &P, const std::vector<CompileJob> &Jobs,
                                          const FrontendOptions &FOpts, const ApplyOptions &Opts);

/// A git-style unified diff of \p Changes (3 lines of context), preceded by a
/// header naming the proposal (\p Name) and its rationale; `git apply` and
/// `patch -p1` accept it.
std::string renderDiff(const std::vector<FileChange> &Changes, const Proposal &P, llvm::StringRef Name);

/// One replacement of bytes: Length bytes at Offset become Text.
struct ByteReplacement {
  size_t Offset = 0, Length = 0;
  std::string Text;
};

/// The smallest range of \p Before that differs from \p After (the common
/// prefix and suffix left out), and what replaces it there.
ByteReplacement smallestReplacement(llvm::StringRef Before, llvm::StringRef After);

/// clang-apply-replacements YAML (clang::tooling::TranslationUnitReplacements)
/// for \p Changes: one replacement per changed file covering the changed lines.
std::string exportFixesYaml(const std::vector<FileChange> &Changes, llvm::StringRef MainSourceFile);

/// Writes every changed file atomically: each new content goes to a temporary
/// file in the same directory with the original's permissions, and only when
/// all temporaries are written are they renamed over the originals. On error
/// the temporaries are removed and the originals are untouched.
llvm::Error writeChangesInPlace(const std::vector<FileChange> &Changes);

} // namespace kloop

#endif
