//===- kloop/Edit/ApplyFile.h - The whole apply sequence --------*- C++ -*-===//
///
/// \file
/// `kloop apply PROPOSAL FILES... [--in-place]` as one library call: read and
/// parse the proposal (parseProposalText), plan the compile jobs
/// (planCompileJobs), finish or roll back an interrupted `--in-place` write
/// next to their files (recoverInterruptedWrites), apply (applyProposal, its
/// parses guarded by a ParseCrashScope) and, when asked and nothing is
/// refused, write the changed files all or nothing (writeChangesInPlace). The
/// `kloop apply` command and `kloop optimize`'s apply stage both call it, so
/// the two cannot drift apart; neither runs kloop's own binary.
///
/// Three outcomes stay apart: a refusal (a proposal that does not parse or
/// fails the schema, an edit whose preconditions fail, edited code that does
/// not compile) is data, ProposalApplication::Result.Refusals, with the index
/// of the refused edit; an input that cannot be processed (an unreadable
/// proposal file, a source file that does not parse before the edit, a failed
/// write) is an llvm::Error; a parse that crashed is a ParseCrashError
/// (kloop/Frontend/Frontend.h, stage "apply").
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_EDIT_APPLYFILE_H
#define KLOOP_EDIT_APPLYFILE_H

#include "kloop/Edit/Apply.h"
#include <optional>

namespace kloop {

/// What applyProposalFile / applyProposalToInputs did.
struct ProposalApplication {
  /// The proposal; std::nullopt when its text was refused (Result.Refusals
  /// then holds one whole-proposal refusal saying why).
  std::optional<Proposal> P;
  /// The planned jobs (empty when the text was refused).
  std::vector<CompileJob> Jobs;
  /// One line per action the recovery of interrupted writes took, for the caller to print.
  std::vector<std::string> RecoveryNotes;
  /// What the apply did beyond the units asked for, for the caller to print as notes: a header the
  /// proposal edits is checked in every other unit of the compilation database that reads it.
  std::vector<std::string> Notes;
  /// applyProposal's result.
  ApplyResult Result;
  /// True when the proposal is refused: any refusal, or with
  /// ApplyOptions::DropRefused, every edit refused. Nothing is written then.
  bool Refused = false;
  /// Nothing refused, and nothing to change (every edit leaves its code as it is).
  bool Unchanged = false;
  /// The changed files were written (in-place was asked, nothing refused, something changed).
  bool Written = false;
};

/// Applies \p P to the translation units of \p Inputs: plan, recover, apply,
/// and with \p InPlace write. When \p Inputs names files of a compilation
/// database and the proposal edits a header, every other unit of the database
/// that reads it (an extract of the database, through the extract cache) is
/// planned and re-parsed too, so an edit that breaks one of them is refused;
/// a unit that reads the header through a symbolic link (where the check would
/// read it unedited) refuses the proposal, naming both paths. Errors: those of planCompileJobs,
/// recoverInterruptedWrites, applyProposal and writeChangesInPlace (on a
/// failed write no file is changed); a ParseCrashError when a parse crashed.
llvm::Expected<ProposalApplication> applyProposalToInputs(const Proposal &P, const FrontendOptions &Inputs,
                                                          const ApplyOptions &Opts, bool InPlace);

/// Reads the proposal at \p ProposalPath ("-": standard input), parses it
/// (a syntax or schema error is a whole-proposal refusal, EditIndex -1, its
/// reason parseProposalText's message) and runs applyProposalToInputs.
/// Errors: "cannot read <path>: <reason>", then those of applyProposalToInputs.
llvm::Expected<ProposalApplication> applyProposalFile(llvm::StringRef ProposalPath, const FrontendOptions &Inputs,
                                                      const ApplyOptions &Opts, bool InPlace);

} // namespace kloop

#endif
