//===- Select.cpp - The hottest editable kernels of a profile --------------===//
#include "kloop/Codebase/Codebase.h"
#include "kloop/Support/Error.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <set>

using json = nlohmann::json;
using llvm::Expected;
using llvm::StringRef;

namespace kloop {
namespace codebase {

namespace {

/// The inventory kernel a profile row names: by ID, or as one of its instantiations.
const inv::Kernel *kernelOf(const inv::Inventory &Inv, StringRef Id) {
  for (const inv::Kernel &K : Inv.Kernels) {
    if (K.ID == Id)
      return &K;
    for (const inv::Instantiation &I : K.Instantiations)
      if (I.ID == Id)
        return &K;
  }
  return nullptr;
}

std::vector<OutputParam> writtenPointers(const inv::Kernel &K) {
  std::vector<OutputParam> Out;
  for (unsigned I = 0; I < K.Params.size(); ++I)
    if (K.Params[I].Pointer && K.Params[I].Written.value_or(false))
      Out.push_back({I, K.Params[I].Type});
  return Out;
}

/// Why profile row \p T cannot be tuned, "" when it can; \p K is set to its inventory kernel.
std::string whyNot(const measure::KernelTotal &T, const inv::Inventory &Inv, const std::set<std::string> &TUs,
                   const std::map<std::string, std::string> &ChosenFiles, const inv::Kernel *&K) {
  if (T.Origin == measure::KernelOrigin::Library)
    return "library kernel (" + (T.Library.empty() ? std::string("library") : T.Library) +
           "): no source of the project's own to edit";
  K = T.Id.empty() ? nullptr : kernelOf(Inv, T.Id);
  if (!K)
    return "not in the inventory: no source in the compilation database (a prebuilt library, or code built "
           "outside it)";
  if (K->Library)
    return "library kernel: no source of the project's own to edit";
  if (!K->Edit.Editable)
    return "not editable: " + K->Edit.NotEditableReason.value_or("the inventory says so");
  if (!K->State.ok())
    return "not editable: compile errors touch it" +
           (K->State.Errors.empty() ? std::string() : " (" + K->State.Errors.front() + ")");
  if (!TUs.count(K->Loc.File))
    return "defined in " + K->Loc.File +
           ", which is not a translation unit of the compilation database (a header other translation units "
           "also read); not tuned";
  if (auto It = ChosenFiles.find(K->Loc.File); It != ChosenFiles.end())
    return "defined in " + K->Loc.File + " like the hotter kernel " + It->second +
           ", whose patch changes that file; tune it after applying the series";
  if (writtenPointers(*K).empty())
    return "no output to check: the inventory sees no pointer parameter it writes";
  return "";
}

bool met(const Selection &S, const SelectOptions &O) {
  if (O.Count > 0)
    return S.Chosen.size() >= O.Count;
  return S.CoveredPct >= O.Cover * 100.0 - 1e-9;
}

} // namespace

Selection selectKernels(const measure::ProgramProfile &P, const inv::Inventory &Inv,
                        const std::vector<std::string> &TUFiles, const SelectOptions &O) {
  Selection S;
  std::set<std::string> TUs(TUFiles.begin(), TUFiles.end());
  std::map<std::string, std::string> ChosenFiles; // file -> the chosen kernel defined there
  for (const measure::KernelTotal &T : P.Kernels) {
    if (met(S, O)) {
      S.Skipped.push_back({T.Name, T.Id, T.SharePct,
                           O.Count > 0 ? llvm::formatv("below the cut: --kernels {0} already chosen", O.Count).str()
                                       : llvm::formatv("below the cut: the chosen kernels cover {0:f1}% of GPU "
                                                       "time (--cover {1})",
                                                       S.CoveredPct, O.Cover)
                                             .str()});
      continue;
    }
    const inv::Kernel *K = nullptr;
    std::string Why = whyNot(T, Inv, TUs, ChosenFiles, K);
    if (!Why.empty()) {
      S.Skipped.push_back({T.Name, K ? K->ID : T.Id, T.SharePct, Why});
      continue;
    }
    ChosenKernel C;
    C.Id = K->ID;
    C.QualifiedName = K->QualifiedName.empty() ? K->Name : K->QualifiedName;
    C.Name = T.Name;
    C.File = K->Loc.File;
    C.SharePct = T.SharePct;
    C.TotalNs = T.TotalNs;
    C.Outputs = writtenPointers(*K);
    ChosenFiles[C.File] = C.Id;
    S.CoveredPct += C.SharePct;
    S.Chosen.push_back(std::move(C));
  }
  return S;
}

json toJSON(const Selection &S) {
  json J = {{"chosen", json::array()}, {"skipped", json::array()}, {"covered_pct", S.CoveredPct}};
  for (const ChosenKernel &C : S.Chosen) {
    json Outs = json::array();
    for (const OutputParam &O : C.Outputs)
      Outs.push_back({{"index", O.Index}, {"type", O.Type}});
    J["chosen"].push_back({{"id", C.Id}, {"target", C.QualifiedName}, {"name", C.Name}, {"file", C.File},
                           {"share_pct", C.SharePct}, {"total_ns", C.TotalNs}, {"outputs", Outs}});
  }
  for (const SkippedKernel &K : S.Skipped)
    J["skipped"].push_back({{"name", K.Name}, {"id", K.Id}, {"share_pct", K.SharePct}, {"reason", K.Reason}});
  return J;
}

Expected<Selection> selectionFromJSON(const json &J, StringRef Source) {
  if (!J.is_object() || !J.value("chosen", json()).is_array() || !J.value("skipped", json()).is_array())
    return makeError(Source + ": expected an object with the arrays \"chosen\" and \"skipped\"");
  Selection S;
  for (const json &C : J["chosen"]) {
    for (const char *Key : {"id", "target", "name", "file"})
      if (!C.is_object() || !C.value(Key, json()).is_string())
        return makeError(Source + ": chosen[]." + Key + " is missing or not a string");
    if (!C.value("share_pct", json()).is_number())
      return makeError(Source + ": chosen[].share_pct is missing or not a number");
    ChosenKernel K;
    K.Id = C["id"], K.QualifiedName = C["target"], K.Name = C["name"], K.File = C["file"];
    K.SharePct = C["share_pct"];
    K.TotalNs = C.value("total_ns", uint64_t(0));
    for (const json &O : C.value("outputs", json::array()))
      K.Outputs.push_back({O.value("index", 0u), O.value("type", std::string())});
    S.CoveredPct += K.SharePct;
    S.Chosen.push_back(std::move(K));
  }
  for (const json &K : J["skipped"])
    S.Skipped.push_back({K.value("name", ""), K.value("id", ""), K.value("share_pct", 0.0), K.value("reason", "")});
  return S;
}

} // namespace codebase
} // namespace kloop
