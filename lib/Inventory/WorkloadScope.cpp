//===- WorkloadScope.cpp - What a workload lets kloop tune ----------------===//
//
// Rules: docs/builtin-search.md, "What is tuned".
//
//===----------------------------------------------------------------------===//
#include "kloop/Inventory/WorkloadScope.h"
#include "kloop/Support/Path.h"

#include "llvm/ADT/StringRef.h"

#include <deque>

using json = nlohmann::json;

namespace kloop {

static llvm::Error scopeError(const std::string &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "workload: " + Msg);
}

json toJSON(const WorkloadScope &S) {
  return {{"targets", S.Targets}, {"dir", S.Dir}, {"sources", S.Sources}, {"protected", S.Protected}};
}

static llvm::Error readStrings(const json &J, const char *Key, std::vector<std::string> &Out) {
  if (!J.contains(Key) || !J[Key].is_array())
    return scopeError(std::string("\"") + Key + "\" must be an array of strings");
  for (const json &E : J[Key]) {
    if (!E.is_string())
      return scopeError(std::string("\"") + Key + "\" must be an array of strings, not " + E.dump());
    Out.push_back(E.get<std::string>());
  }
  return llvm::Error::success();
}

llvm::Expected<WorkloadScope> workloadScopeFromJSON(const json &J) {
  if (!J.is_object())
    return scopeError("expected an object {targets, dir, sources, protected}");
  WorkloadScope S;
  for (auto [Key, Field] : {std::pair{"targets", &S.Targets}, {"sources", &S.Sources}, {"protected", &S.Protected}})
    if (llvm::Error E = readStrings(J, Key, *Field))
      return E;
  if (!J.contains("dir") || !J["dir"].is_string() || J["dir"].get<std::string>().empty())
    return scopeError("\"dir\" must be the workload's directory");
  S.Dir = J["dir"].get<std::string>();
  return S;
}

/// The names a target may be a substring of: the qualified name and every symbol's demangled form.
static std::vector<std::string> kernelNames(const inv::Kernel &K) {
  std::vector<std::string> N = {K.QualifiedName};
  for (const inv::Symbol &S : K.Symbols)
    N.push_back(S.MatchKey);
  for (const inv::Instantiation &I : K.Instantiations)
    N.push_back(I.Sym.MatchKey);
  return N;
}

bool kernelNameMatches(const inv::Kernel &K, llvm::StringRef Pattern) {
  for (const std::string &Name : kernelNames(K))
    if (llvm::StringRef(Name).contains(Pattern))
      return true;
  return false;
}

static bool isTarget(const inv::Kernel &K, const std::vector<std::string> &Targets) {
  for (const std::string &T : Targets)
    if (kernelNameMatches(K, T))
      return true;
  return false;
}

ScopeFilter::ScopeFilter(const inv::Inventory &Inv, const WorkloadScope *Scope) : Scope(Scope), Root(Inv.Root) {
  for (const inv::LaunchSite &L : Inv.LaunchSites)
    if (L.Kernel)
      SiteKernel[L.ID] = *L.Kernel;
  if (!Scope)
    return;
  for (const std::string &F : Scope->Sources)
    SourceFiles.insert(absolutePath(F, Scope->Dir));
  for (const std::string &F : Scope->Protected)
    ProtectedFiles.insert(absolutePath(F, Scope->Dir));
  // Targets, then every device function reachable from one through `calls`.
  std::map<std::string, const std::vector<std::string> *> Callees;
  for (const inv::DeviceFunction &F : Inv.DeviceFunctions)
    Callees[F.ID] = &F.Calls;
  std::deque<const std::vector<std::string> *> Work;
  for (const inv::Kernel &K : Inv.Kernels)
    if (isTarget(K, Scope->Targets)) {
      Targets.insert(K.ID);
      Work.push_back(&K.Calls);
    }
  while (!Work.empty()) {
    const std::vector<std::string> *Calls = Work.front();
    Work.pop_front();
    for (const std::string &C : *Calls) {
      auto It = Callees.find(C);
      if (It != Callees.end() && Reachable.insert(It->first).second)
        Work.push_back(It->second);
    }
  }
}

bool ScopeFilter::ownerInScope(const std::string &ID) const {
  if (!Scope || Targets.count(ID) || Reachable.count(ID))
    return true;
  auto It = SiteKernel.find(ID);
  return It != SiteKernel.end() && Targets.count(It->second);
}

std::optional<std::string> ScopeFilter::fileExcluded(const inv::Location &Loc) const {
  if (!Scope)
    return std::nullopt;
  const std::string &File = Loc.File;
  std::string Abs = absolutePath(File, Root);
  if (ProtectedFiles.count(Abs))
    return "is in " + File + ", which the workload protects (protected:); never edited";
  if (!SourceFiles.count(Abs))
    return "is in " + File + ", which is not one of the workload's sources (sources:); not edited";
  return std::nullopt;
}

std::optional<std::string> ScopeFilter::kernelExcluded(const inv::Kernel &K) const {
  if (auto Why = fileExcluded(K.Loc))
    return Why;
  if (!ownerInScope(K.ID))
    return std::string("is not a target of the workload (targets:) and no target calls it; not tuned");
  return std::nullopt;
}

std::optional<std::string> ScopeFilter::constantExcluded(const inv::Constant &C) const {
  if (C.Hardware)
    return "is a hardware fact, never tuned: " + C.Hardware->Reason;
  if (auto Why = fileExcluded(C.Loc))
    return Why;
  std::set<std::string> Others;
  for (const inv::ConstantUse &U : C.Uses) {
    if (ownerInScope(U.Owner))
      return std::nullopt;
    Others.insert(U.Owner);
  }
  std::string List;
  for (const std::string &O : Others)
    List += (List.empty() ? "" : ", ") + O;
  return "is used only by " + List +
         ", none of them a target of the workload (targets:), called by one or launching one; not tuned";
}

inv::Inventory scopeInventory(const inv::Inventory &Inv, const WorkloadScope *Scope, std::vector<std::string> &Notes) {
  const ScopeFilter Filter(Inv, Scope);
  inv::Inventory Out = Inv;
  auto Mark = [&](const std::string &ID, inv::Editability &E, std::optional<std::string> Why) {
    if (!Why || !E.Editable)
      return;
    E.Editable = false;
    E.NotEditableReason = *Why;
    Notes.push_back(ID + ": " + *Why);
  };
  for (inv::Kernel &K : Out.Kernels)
    Mark(K.ID, K.Edit, Filter.kernelExcluded(K));
  for (inv::Constant &C : Out.Constants)
    Mark(C.ID, C.Edit, Filter.constantExcluded(C));
  return Out;
}

} // namespace kloop
