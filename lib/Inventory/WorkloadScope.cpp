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
static std::vector<std::string> kernelNames(const json &K) {
  std::vector<std::string> N = {K.value("qualified_name", K.value("id", ""))};
  for (const char *Field : {"symbols", "instantiations"})
    if (K.contains(Field) && K[Field].is_array())
      for (const json &S : K[Field])
        if (S.is_object() && S.contains("match_key") && S["match_key"].is_string())
          N.push_back(S["match_key"].get<std::string>());
  return N;
}

static bool isTarget(const json &K, const std::vector<std::string> &Targets) {
  for (const std::string &Name : kernelNames(K))
    for (const std::string &T : Targets)
      if (llvm::StringRef(Name).contains(T))
        return true;
  return false;
}

static const json &arrayOr(const json &J, const char *Key) {
  static const json Empty = json::array();
  return J.is_object() && J.contains(Key) && J[Key].is_array() ? J[Key] : Empty;
}

ScopeFilter::ScopeFilter(const json &Inv, const WorkloadScope *Scope) : Scope(Scope) {
  Root = Inv.is_object() ? Inv.value("root", std::string()) : std::string();
  for (const json &L : arrayOr(Inv, "launch_sites"))
    if (L.contains("id") && L["id"].is_string() && L.contains("kernel") && L["kernel"].is_string())
      SiteKernel[L["id"].get<std::string>()] = L["kernel"].get<std::string>();
  if (!Scope)
    return;
  for (const std::string &F : Scope->Sources)
    SourceFiles.insert(absolutePath(F, Scope->Dir));
  for (const std::string &F : Scope->Protected)
    ProtectedFiles.insert(absolutePath(F, Scope->Dir));
  // Targets, then every device function reachable from one through `calls`.
  std::map<std::string, const json *> Callees;
  for (const json &F : arrayOr(Inv, "device_functions"))
    Callees[F.value("id", "")] = &F;
  std::deque<const json *> Work;
  for (const json &K : arrayOr(Inv, "kernels"))
    if (isTarget(K, Scope->Targets)) {
      Targets.insert(K.value("id", ""));
      Work.push_back(&K);
    }
  while (!Work.empty()) {
    const json *F = Work.front();
    Work.pop_front();
    for (const json &C : arrayOr(*F, "calls")) {
      auto It = C.is_string() ? Callees.find(C.get<std::string>()) : Callees.end();
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

std::optional<std::string> ScopeFilter::fileExcluded(const json &E) const {
  if (!Scope || !E.contains("location") || !E["location"].is_object())
    return std::nullopt;
  std::string File = E["location"].value("file", "");
  std::string Abs = absolutePath(File, Root);
  if (ProtectedFiles.count(Abs))
    return "is in " + File + ", which the workload protects (protected:); never edited";
  if (!SourceFiles.count(Abs))
    return "is in " + File + ", which is not one of the workload's sources (sources:); not edited";
  return std::nullopt;
}

std::optional<std::string> ScopeFilter::kernelExcluded(const json &K) const {
  if (auto Why = fileExcluded(K))
    return Why;
  if (!ownerInScope(K.value("id", "")))
    return std::string("is not a target of the workload (targets:) and no target calls it; not tuned");
  return std::nullopt;
}

std::optional<std::string> ScopeFilter::constantExcluded(const json &C) const {
  if (C.contains("hardware_fact") && C["hardware_fact"].is_object())
    return "is a hardware fact, never tuned: " + C["hardware_fact"].value("reason", std::string());
  if (auto Why = fileExcluded(C))
    return Why;
  std::set<std::string> Others;
  for (const json &U : arrayOr(C, "uses")) {
    std::string Owner = U.is_object() ? U.value("owner", "") : "";
    if (ownerInScope(Owner))
      return std::nullopt;
    Others.insert(Owner);
  }
  std::string List;
  for (const std::string &O : Others)
    List += (List.empty() ? "" : ", ") + O;
  return "is used only by " + List +
         ", none of them a target of the workload (targets:), called by one or launching one; not tuned";
}

json scopeInventory(const json &Inv, const WorkloadScope *Scope, std::vector<std::string> &Notes) {
  const ScopeFilter Filter(Inv, Scope);
  json Out = Inv;
  auto Mark = [&](json &E, std::optional<std::string> Why) {
    if (!Why || !E.is_object() || !E.value("editable", true))
      return;
    E["editable"] = false;
    E["not_editable_reason"] = *Why;
    Notes.push_back(E.value("id", std::string("?")) + ": " + *Why);
  };
  if (Out.is_object() && Out.contains("kernels") && Out["kernels"].is_array())
    for (json &K : Out["kernels"])
      Mark(K, Filter.kernelExcluded(K));
  if (Out.is_object() && Out.contains("constants") && Out["constants"].is_array())
    for (json &C : Out["constants"])
      Mark(C, Filter.constantExcluded(C));
  return Out;
}

} // namespace kloop
