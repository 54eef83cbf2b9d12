//===- ApplyFile.cpp - read -> parse -> plan -> apply -> write in place ---===//
#include "kloop/Edit/ApplyFile.h"

#include "llvm/Support/MemoryBuffer.h"

using llvm::Expected;

namespace kloop {

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
