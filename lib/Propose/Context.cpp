//===- Context.cpp - optimize's context -> the LLM template's placeholders ===//
#include "kloop/Propose/Context.h"
#include "kloop/Measure/KernelProfile.h"
#include "kloop/Support/JSON.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <map>

using json = nlohmann::json;

namespace kloop {

/// (file as the inventory spells it, 1-based line) -> the IDs of the entities that begin there.
using IdsByLine = std::map<std::pair<std::string, unsigned>, std::vector<std::string>>;

/// Every located entity of \p Inv by the line it begins on.
static IdsByLine idsByLine(const inv::Inventory &Inv) {
  IdsByLine At;
  auto noteAll = [&](const auto &Entities) {
    for (const auto &E : Entities)
      At[{E.Loc.File, E.Loc.Begin.Line}].push_back(E.ID);
  };
  for (const inv::Kernel &K : Inv.Kernels) {
    noteAll(llvm::ArrayRef<inv::Kernel>(K));
    noteAll(K.Loops);
    noteAll(K.SharedArrays);
    noteAll(K.LocalConstants);
  }
  noteAll(Inv.LaunchSites);
  noteAll(Inv.Constants);
  noteAll(Inv.DeviceFunctions);
  return At;
}

std::string annotateSources(const std::vector<SourceText> &Files, const inv::Inventory &Inventory) {
  IdsByLine At = idsByLine(Inventory);
  std::string Out;
  for (const auto &[Name, Text] : Files) {
    Out += "// file: " + Name + "\n";
    llvm::SmallVector<llvm::StringRef, 0> Lines;
    llvm::StringRef(Text).split(Lines, '\n');
    for (unsigned I = 0; I < Lines.size(); ++I) {
      Out += Lines[I].str();
      for (const auto &[Key, IDs] : At)
        if (Key.second == I + 1 &&
            (llvm::StringRef(Key.first).ends_with(Name) || llvm::StringRef(Name).ends_with(Key.first)))
          for (const std::string &ID : IDs)
            Out += "  // [kloop id: " + ID + "]";
      if (I + 1 < Lines.size())
        Out += "\n";
    }
    Out += "\n";
  }
  return Out;
}

/// The timing evidence of the latest measured candidate, or why there is none.
static std::string renderTiming(const json &Context) {
  if (!Context.contains("profile") || !Context["profile"].is_array() || Context["profile"].empty())
    return "not measured yet: no candidate of this run has been measured (no GPU, or the first round)";
  return dumpJSON(Context["profile"], 2);
}

std::string renderCounters(const json &Context) {
  const json *C = Context.contains("counters") ? &Context["counters"] : nullptr;
  if (!C || !C->is_object() || !C->contains("profiles") || !(*C)["profiles"].is_array())
    return "Hardware counters: none taken (no GPU in this run)";
  std::string Out = "Hardware counters of the current best version (a metrics run per shape through CUPTI's range "
                    "profiler; not a timing):";
  for (const json &J : (*C)["profiles"]) {
    llvm::Expected<measure::KernelProfile> P = measure::kernelProfileFromJSON(J, "context: counters");
    if (!P) {
      Out += "\n- (unreadable: " + llvm::toString(P.takeError()) + ")";
      continue;
    }
    auto Dim = [](const std::array<uint64_t, 3> &D) {
      return std::to_string(D[0]) + "x" + std::to_string(D[1]) + "x" + std::to_string(D[2]);
    };
    Out += "\n- " + P->Name + (P->Shape.empty() ? "" : " [shape " + P->Shape + "]") + ", grid " +
           Dim(P->Launch.Grid) + " block " + Dim(P->Launch.Block) + ", " + std::to_string(P->Launch.Registers) +
           " registers: " + measure::summarizeKernelProfile(*P);
  }
  if (C->contains("problems") && (*C)["problems"].is_array())
    for (const json &Problem : (*C)["problems"])
      Out += "\n- missing: " + (Problem.is_string() ? Problem.get<std::string>() : dumpJSON(Problem));
  if ((*C)["profiles"].empty() && (!C->contains("problems") || (*C)["problems"].empty()))
    Out += "\n- (no target kernel was profiled)";
  return Out;
}

std::string renderProfile(const json &Context) { return renderTiming(Context) + "\n\n" + renderCounters(Context); }

llvm::Expected<json> llmPlaceholders(const json &Context, const std::vector<SourceText> &Files) {
  inv::Inventory Inv;
  if (Context.contains("inventory")) {
    llvm::Expected<inv::Inventory> Read = inv::inventoryFromJSON(Context["inventory"], "context: inventory");
    if (!Read)
      return Read.takeError();
    Inv = std::move(*Read);
  }
  std::string Names;
  for (const inv::Kernel &K : Inv.Kernels)
    Names += (Names.empty() ? "" : ", ") + K.ID;
  return json{{"kernel_name", Names},
              {"kernel_source", annotateSources(Files, Inv)},
              {"ptxas_report", dumpJSON(Context.value("ptxas_baseline", json()), 2)},
              {"profile", renderProfile(Context)},
              {"history", dumpJSON(Context.value("history", json()), 2)}};
}

llvm::Expected<ProposalReply> LLMContextAdapter::propose(const json &Context) {
  llvm::Expected<json> Placeholders = llmPlaceholders(Context, Files);
  if (!Placeholders)
    return Placeholders.takeError();
  return P->propose(*Placeholders);
}

llvm::Expected<std::vector<ProposalReply>> LLMContextAdapter::proposeBatch(const json &Context, unsigned N) {
  llvm::Expected<json> Placeholders = llmPlaceholders(Context, Files);
  if (!Placeholders)
    return Placeholders.takeError();
  return P->proposeBatch(*Placeholders, N);
}

} // namespace kloop
