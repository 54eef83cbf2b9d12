//===- Findings.cpp - The builtin rules on the touched kernels -------------===//
#include "kloop/Check/Check.h"
#include "kloop/Edit/Rules.h"
#include "kloop/Frontend/Preamble.h"
#include "kloop/Support/Path.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

using namespace llvm;

namespace kloop {
namespace check {

namespace {

/// One fired site before its fix-its are planned: the finding and its edits'
/// indices in the combined proposal.
struct Pending {
  Finding F;
  std::vector<unsigned> EditIndices;
};

/// The kernel of \p Sub whose ID is \p Site or prefixes it as `<kernel>/...` (the longest).
const inv::Kernel *kernelOfSite(const inv::Inventory &Sub, StringRef Site) {
  const inv::Kernel *Best = nullptr;
  for (const inv::Kernel &K : Sub.Kernels)
    if ((Site == K.ID || Site.starts_with(K.ID + "/")) && (!Best || K.ID.size() > Best->ID.size()))
      Best = &K;
  return Best;
}

/// Where the region \p Site of \p K is written; the kernel's location when it has none of its own.
const inv::Location &siteLocation(const inv::Kernel &K, StringRef Site) {
  for (const inv::Loop &L : K.Loops)
    if (L.ID == Site)
      return L.Loc;
  for (const inv::SharedArray &A : K.SharedArrays)
    if (A.ID == Site)
      return A.Loc;
  for (const inv::LocalConstant &C : K.LocalConstants)
    if (C.ID == Site)
      return C.Loc;
  return K.Loc;
}

/// Every site where a builtin rule fires on \p Sub, with its edits appended to \p P.
std::vector<Pending> firedSites(const inv::Inventory &Sub, Proposal &P) {
  std::vector<Pending> Out;
  for (const Rule &R : builtinRules())
    for (const RuleSite &S : explainRule(R, Sub)) {
      const inv::Kernel *K = S.Edits.empty() ? nullptr : kernelOfSite(Sub, S.Site);
      if (!K)
        continue;
      Pending X;
      X.F.Rule = R.Name;
      X.F.Kernel = K->ID;
      X.F.Site = S.Site;
      X.F.Message = "kernel '" + K->ID + "': " + R.Summary + ": " + S.Why;
      const inv::Location &L = siteLocation(*K, S.Site);
      X.F.File = absolutePath(L.File, Sub.Root);
      X.F.Line = L.Begin.Line;
      X.F.Column = L.Begin.Column;
      for (const Edit &E : S.Edits) {
        X.EditIndices.push_back(P.Edits.size());
        P.Edits.push_back(E);
      }
      Out.push_back(std::move(X));
    }
  return Out;
}

/// One job per file that defines a kernel of \p Sub: the job of that file, else the first
/// translation unit that read it (a kernel in a header).
std::vector<CompileJob> jobsDefining(const inv::Inventory &Sub, const Extraction &E) {
  std::set<size_t> Picked;
  for (const inv::Kernel &K : Sub.Kernels) {
    std::string File = absolutePath(K.Loc.File, Sub.Root);
    std::optional<size_t> Pick;
    for (size_t I = 0; I < E.Results.size() && !Pick; ++I)
      if (E.Results[I].Job.File == File)
        Pick = I;
    for (size_t I = 0; I < E.Results.size() && !Pick; ++I)
      if (llvm::is_contained(E.Results[I].Device.InputFiles, File))
        Pick = I;
    if (Pick)
      Picked.insert(*Pick);
  }
  std::vector<CompileJob> Jobs;
  for (size_t I : Picked)
    Jobs.push_back(E.Results[I].Job);
  return Jobs;
}

/// Line and column (1-based) of byte \p Offset in \p File; {0, 0} when it cannot be read.
std::pair<unsigned, unsigned> lineColumn(const std::string &File, unsigned Offset,
                                         std::map<std::string, std::string> &Texts) {
  auto It = Texts.find(File);
  if (It == Texts.end()) {
    ErrorOr<std::unique_ptr<MemoryBuffer>> B = MemoryBuffer::getFile(File);
    It = Texts.emplace(File, B ? (*B)->getBuffer().str() : std::string()).first;
  }
  StringRef Before = StringRef(It->second).take_front(Offset);
  if (Before.size() < Offset)
    return {0, 0};
  size_t LastNL = Before.rfind('\n');
  unsigned Col = LastNL == StringRef::npos ? Offset + 1 : Offset - LastNL;
  return {unsigned(Before.count('\n') + 1), Col};
}

/// Fills the findings' fix-its from \p R; drops a finding every one of whose edits
/// apply refused on its own (the rule's edit does not hold there: an aliasing launch
/// for add_restrict, say), and keeps the whole proposal's refusal as NoFixReason.
void attachFixes(std::vector<Pending> &Sites, const ApplyResult &R) {
  std::string Whole;
  std::set<unsigned> Refused;
  for (const Refusal &X : R.Refusals)
    if (X.EditIndex < 0)
      Whole = X.Reason;
    else
      Refused.insert(X.EditIndex);
  std::map<std::string, std::string> Texts;
  for (const FileChange &C : R.Changes)
    Texts[C.File] = C.Before;
  for (Pending &S : Sites) {
    for (const TextEdit &T : R.Edits)
      if (llvm::is_contained(S.EditIndices, T.EditIndex))
        S.F.Fixes.push_back({T.File, T.Offset, T.Length, T.Text});
    if (!S.F.Fixes.empty())
      std::tie(S.F.Line, S.F.Column) = lineColumn(S.F.Fixes.front().File, S.F.Fixes.front().Offset, Texts);
    if (!S.F.Fixes.empty()) {
      S.F.File = S.F.Fixes.front().File;
      S.F.Offset = S.F.Fixes.front().Offset;
    }
    if (S.F.Fixes.empty())
      S.F.NoFixReason = Whole;
  }
  llvm::erase_if(Sites, [&](const Pending &S) {
    return Whole.empty() && S.F.Fixes.empty() &&
           llvm::all_of(S.EditIndices, [&](unsigned I) { return Refused.count(I) > 0; });
  });
}

/// applyProposal's replacements for \p P (DropRefused, no formatting, re-parse on). A crashed
/// parse is an error; an input apply cannot process becomes a whole-proposal refusal.
Expected<ApplyResult> planFixes(const Proposal &P, const std::vector<CompileJob> &Jobs,
                                const FrontendOptions &Inputs, StringRef Root) {
  ApplyOptions AO;
  AO.Root = Root.str();
  AO.Format = false;
  AO.DropRefused = true;
  PreambleCache Preambles;
  AO.Preambles = &Preambles;
  ParseCrashScope Crashes;
  Expected<ApplyResult> R = applyProposal(P, Jobs, Inputs, AO);
  if (Error E = Crashes.takeError("check")) {
    if (!R)
      consumeError(R.takeError());
    return E;
  }
  if (R)
    return R;
  ApplyResult None;
  None.Refusals.push_back({-1, "", "apply cannot plan them: " + toString(R.takeError())});
  return None;
}

bool findingBefore(const Finding &A, const Finding &B) {
  return std::tie(A.File, A.Line, A.Column, A.Rule, A.Site) < std::tie(B.File, B.Line, B.Column, B.Rule, B.Site);
}

} // namespace

Expected<CheckResult> checkKernels(const Extraction &E, const std::vector<std::string> &Kernels,
                                   const FrontendOptions &Inputs, StringRef Root) {
  inv::Inventory Sub = onlyKernels(E.Inventory, Kernels);
  Proposal P;
  std::vector<Pending> Sites = firedSites(Sub, P);
  CheckResult Out;
  if (!P.Edits.empty()) {
    Expected<ApplyResult> R = planFixes(P, jobsDefining(Sub, E), Inputs, Root);
    if (!R)
      return R.takeError();
    attachFixes(Sites, *R);
    if (!R->Applied.empty())
      Out.Changes = R->Changes;
  }
  for (Pending &S : Sites)
    Out.Findings.push_back(std::move(S.F));
  llvm::sort(Out.Findings, findingBefore);
  return Out;
}

} // namespace check
} // namespace kloop
