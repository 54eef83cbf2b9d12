//===- Context.cpp - optimize's context -> the LLM template's placeholders ===//
#include "kloop/Propose/Context.h"
#include "kloop/Support/JSON.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <map>

using json = nlohmann::json;

namespace kloop {

/// (file as the inventory spells it, 1-based line) -> the IDs of the entities that begin there.
using IdsByLine = std::map<std::pair<std::string, unsigned>, std::vector<std::string>>;

/// Every located entity of \p Inv by the line it begins on.
static IdsByLine idsByLine(const json &Inv) {
  IdsByLine At;
  auto note = [&](const json &E) {
    if (!E.is_object() || !E.contains("location") || !E.contains("id") || !E["location"].is_object())
      return;
    const json &L = E["location"];
    unsigned Line = L.contains("begin") && L["begin"].is_object() ? L["begin"].value("line", 0u) : 0u;
    At[{L.value("file", std::string()), Line}].push_back(E["id"].get<std::string>());
  };
  for (const json &K : Inv.value("kernels", json::array())) {
    note(K);
    for (const char *Kind : {"loops", "shared_arrays", "local_constants"})
      for (const json &R : K.value(Kind, json::array()))
        note(R);
    if (K.contains("launch_bounds") && K["launch_bounds"].is_object())
      note(K["launch_bounds"]);
  }
  for (const char *Kind : {"launch_sites", "constants", "device_functions"})
    for (const json &E : Inv.value(Kind, json::array()))
      note(E);
  return At;
}

std::string annotateSources(const std::vector<SourceText> &Files, const json &Inventory) {
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

std::string renderProfile(const json &Context) {
  if (!Context.contains("profile") || !Context["profile"].is_array() || Context["profile"].empty())
    return "not measured yet: no candidate of this run has been measured (no GPU, or the first round)";
  return dumpJSON(Context["profile"], 2);
}

json llmPlaceholders(const json &Context, const std::vector<SourceText> &Files) {
  const json &Inv = Context.contains("inventory") ? Context["inventory"] : json::object();
  std::string Names;
  for (const json &K : Inv.value("kernels", json::array()))
    Names += (Names.empty() ? "" : ", ") + K.value("id", std::string());
  return {{"kernel_name", Names},
          {"kernel_source", annotateSources(Files, Inv)},
          {"ptxas_report", dumpJSON(Context.value("ptxas_baseline", json()), 2)},
          {"profile", renderProfile(Context)},
          {"history", dumpJSON(Context.value("history", json()), 2)}};
}

llvm::Expected<ProposalReply> LLMContextAdapter::propose(const json &Context) {
  return P->propose(llmPlaceholders(Context, Files));
}

} // namespace kloop
