//===- ApplyFile.cpp - read -> parse -> plan -> apply -> write in place ---===//
#include "kloop/Edit/ApplyFile.h"

#include "kloop/Inventory/Extract.h"
#include "kloop/Inventory/ExtractCache.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <set>

using llvm::Expected;

namespace kloop {

/// The files \p Changes edits that are no main file of \p Jobs: headers other units may read.
static std::set<std::string> editedHeaders(const std::vector<FileChange> &Changes, const std::vector<CompileJob> &Jobs) {
  std::set<std::string> Out;
  for (const FileChange &C : Changes)
    if (llvm::none_of(Jobs, [&](const CompileJob &J) { return J.File == C.File; }))
      Out.insert(C.File);
  return Out;
}

/// Whether a side of \p T read a file of \p Files.
static bool readsAny(const TUResult &T, const std::set<std::string> &Files) {
  auto In = [&](const std::string &F) { return Files.count(F) > 0; };
  return llvm::any_of(T.Device.InputFiles, In) || llvm::any_of(T.Host.InputFiles, In);
}

/// The units of \p Inputs' compilation database outside \p Jobs that read a header \p Changes edits,
/// found by an extract of the whole database (through the extract cache): the edit must compile in
/// them too. A unit that does not parse before the edit cannot be checked; \p Notes says so. None
/// when \p Inputs names no files or has no database (\p Jobs are then every unit kloop knows of).
static Expected<std::vector<CompileJob>> includersOutside(const FrontendOptions &Inputs, const std::vector<CompileJob> &Jobs,
                                                          const std::vector<FileChange> &Changes, const ApplyOptions &Opts,
                                                          std::vector<std::string> &Notes) {
  std::set<std::string> Headers = editedHeaders(Changes, Jobs);
  if (Inputs.BuildPath.empty() || Inputs.Inputs.empty() || Headers.empty())
    return std::vector<CompileJob>();
  FrontendOptions All = Inputs;
  All.Inputs.clear();
  std::unique_ptr<ExtractCache> Cache = openExtractCache("", /*Disabled=*/false);
  Expected<Extraction> E = extractInventory(All, {Opts.Root, Cache.get()});
  if (!E)
    return E.takeError();
  std::vector<CompileJob> Out;
  for (const TUResult &T : E->Results) {
    bool Named = llvm::any_of(Jobs, [&](const CompileJob &J) { return J.File == T.Job.File && J.Entry == T.Job.Entry; });
    if (Named || !readsAny(T, Headers))
      continue;
    if (T.lost())
      Notes.push_back(T.Job.File + " reads an edited header but does not parse before the edit; the edit is not checked there");
    else
      Out.push_back(T.Job);
  }
  if (!Out.empty())
    Notes.push_back("the edit is checked in " + std::to_string(Out.size()) +
                    " more translation unit(s) of the compilation database that read an edited header");
  return Out;
}

Expected<ProposalApplication> applyProposalToInputs(const Proposal &P, const FrontendOptions &Inputs,
                                                    const ApplyOptions &Opts, bool InPlace) {
  ProposalApplication A;
  A.P = P;
  Expected<PlannedJobs> Planned = planJobsAndRecover(Inputs);
  if (!Planned)
    return Planned.takeError();
  A.Jobs = std::move(Planned->Jobs);
  A.RecoveryNotes = std::move(Planned->RecoveryNotes);
  ParseCrashScope Crashes;
  Expected<ApplyResult> R = applyProposal(P, A.Jobs, Inputs, Opts);
  if (R && !R->Changes.empty()) {
    Expected<std::vector<CompileJob>> More = includersOutside(Inputs, A.Jobs, R->Changes, Opts, A.Notes);
    if (!More)
      return More.takeError();
    if (!More->empty()) {
      A.Jobs.insert(A.Jobs.end(), More->begin(), More->end());
      R = applyProposal(P, A.Jobs, Inputs, Opts);
    }
  }
  // A crash first: applyProposal folds a crashed parse into an error or a refusal of its own.
  if (llvm::Error E = Crashes.takeError("apply")) {
    if (!R)
      llvm::consumeError(R.takeError());
    return E;
  }
  if (!R)
    return R.takeError();
  A.Result = std::move(*R);
  A.Refused = Opts.DropRefused ? A.Result.refused() : !A.Result.Refusals.empty();
  A.Unchanged = !A.Refused && A.Result.Changes.empty();
  if (!InPlace || A.Refused || A.Unchanged)
    return A;
  if (llvm::Error E = writeChangesInPlace(A.Result.Changes))
    return E;
  A.Written = true;
  return A;
}

Expected<ProposalApplication> applyProposalFile(llvm::StringRef ProposalPath, const FrontendOptions &Inputs,
                                                const ApplyOptions &Opts, bool InPlace) {
  auto Buf = llvm::MemoryBuffer::getFileOrSTDIN(ProposalPath);
  if (!Buf)
    return llvm::createStringError(Buf.getError(),
                                   "cannot read " + ProposalPath + ": " + Buf.getError().message());
  Expected<Proposal> P = parseProposalText((*Buf)->getBuffer(), ProposalPath);
  if (P)
    return applyProposalToInputs(*P, Inputs, Opts, InPlace);
  ProposalApplication A;
  Refusal R;
  R.Reason = llvm::toString(P.takeError());
  A.Result.Refusals.push_back(std::move(R));
  A.Refused = true;
  return A;
}

} // namespace kloop
