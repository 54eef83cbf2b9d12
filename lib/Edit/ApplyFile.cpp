//===- ApplyFile.cpp - read -> parse -> plan -> apply -> write in place ---===//
#include "kloop/Edit/ApplyFile.h"

#include "kloop/Inventory/Extract.h"
#include "kloop/Inventory/ExtractCache.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <map>

using llvm::Expected;

namespace kloop {

/// \p File with every symbolic link resolved (as it is when it cannot be), so that a header reached
/// through a link and through its own directory compare equal.
static std::string realFile(const std::string &File) {
  llvm::SmallString<256> Real;
  return llvm::sys::fs::real_path(File, Real) ? File : std::string(Real);
}

/// The files \p Changes edits that are no main file of \p Jobs (headers other units may read): each
/// file with its links resolved, to the path kloop edits it by.
static std::map<std::string, std::string> editedHeaders(const std::vector<FileChange> &Changes,
                                                        const std::vector<CompileJob> &Jobs) {
  std::map<std::string, std::string> Out;
  for (const FileChange &C : Changes)
    if (llvm::none_of(Jobs, [&](const CompileJob &J) { return realFile(J.File) == realFile(C.File); }))
      Out[realFile(C.File)] = C.File;
  return Out;
}

/// The files of \p Headers that a side of \p T read, each by the path it read it through.
static std::vector<std::string> headersRead(const TUResult &T, const std::map<std::string, std::string> &Headers) {
  std::vector<std::string> Out;
  for (const std::vector<std::string> *Files : {&T.Device.InputFiles, &T.Host.InputFiles})
    for (const std::string &F : *Files)
      if (Headers.count(realFile(F)))
        Out.push_back(F);
  return Out;
}

/// The units of \p Inputs' compilation database outside \p Jobs that read a header \p Changes edits,
/// found by an extract of the whole database (through the extract cache): the edit must compile in
/// them too. A unit that does not parse before the edit cannot be checked; \p Notes says so. A unit that
/// reads the header through another path (a symbolic link) would read it unedited, so it cannot be
/// checked either: \p Unchecked says why, and the caller refuses the proposal. None when \p Inputs names
/// no files or has no database (\p Jobs are then every unit kloop knows of).
static Expected<std::vector<CompileJob>> includersOutside(const FrontendOptions &Inputs, const std::vector<CompileJob> &Jobs,
                                                          const std::vector<FileChange> &Changes, const ApplyOptions &Opts,
                                                          std::vector<std::string> &Notes,
                                                          std::vector<std::string> &Unchecked) {
  std::map<std::string, std::string> Headers = editedHeaders(Changes, Jobs);
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
    std::vector<std::string> Read = headersRead(T, Headers);
    if (Named || Read.empty())
      continue;
    auto Linked = llvm::find_if(Read, [&](const std::string &F) { return Headers.at(realFile(F)) != F; });
    if (T.lost())
      Notes.push_back(T.Job.File + " reads an edited header but does not parse before the edit; the edit is not checked there");
    else if (Linked != Read.end())
      Unchecked.push_back(T.Job.File + " reads the edited " + Headers.at(realFile(*Linked)) + " through another path, " +
                          *Linked + " (a symbolic link), where kloop cannot check the edit");
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
    std::vector<std::string> Unchecked;
    Expected<std::vector<CompileJob>> More = includersOutside(Inputs, A.Jobs, R->Changes, Opts, A.Notes, Unchecked);
    if (!More)
      return More.takeError();
    if (!More->empty()) {
      A.Jobs.insert(A.Jobs.end(), More->begin(), More->end());
      R = applyProposal(P, A.Jobs, Inputs, Opts);
    }
    for (std::string &Why : Unchecked)
      if (R)
        R->Refusals.push_back(Refusal{-1, "", std::move(Why)});
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
