//===- Ptxas.cpp - ptxas resource usage, one parser -----------------------===//
#include "kloop/Support/Ptxas.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Regex.h"

using namespace llvm;
using nlohmann::json;

namespace kloop {

static unsigned toUnsigned(StringRef S) {
  unsigned V = 0;
  S.getAsInteger(10, V);
  return V;
}

/// The function a "Function properties for F" line is about: the entry just
/// announced, or a new non-entry function.
static PtxasFunction &functionNamed(std::vector<PtxasFunction> &Out, StringRef Name, StringRef Arch) {
  if (!Out.empty() && Out.back().Name == Name)
    return Out.back();
  Out.push_back({Name.str(), Arch.str()});
  return Out.back();
}

/// Reads the counts of a "Used N registers, ... N bytes smem, N bytes cmem[K]" line into \p F.
static void readUsedLine(StringRef Line, PtxasFunction &F) {
  Regex Count("([0-9]+) (registers|bytes smem|bytes cmem\\[[0-9]+\\])");
  SmallVector<StringRef, 3> M;
  F.ConstBytes = 0;
  for (StringRef Rest = Line; Count.match(Rest, &M); Rest = Rest.substr(Rest.find(M[0]) + M[0].size())) {
    if (M[2] == "registers")
      F.Registers = toUnsigned(M[1]);
    else if (M[2] == "bytes smem")
      F.SharedBytes = toUnsigned(M[1]);
    else
      F.ConstBytes += toUnsigned(M[1]);
  }
}

std::vector<PtxasFunction> parsePtxasVerbose(StringRef Text) {
  Regex Entry("Compiling entry function '([^']+)'( for '([^']+)')?");
  Regex Props("Function properties for ([^ \t]+)");
  Regex Frame("([0-9]+) bytes stack frame, ([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads");
  Regex Used("Used [0-9]+ registers");
  std::vector<PtxasFunction> Out;
  std::string Arch;
  PtxasFunction *Cur = nullptr;
  for (StringRef Line : split(Text, '\n')) {
    SmallVector<StringRef, 4> M;
    if (Entry.match(Line, &M)) {
      Arch = M.size() > 3 ? M[3].str() : "";
      Out.push_back({M[1].str(), Arch, /*Entry=*/true});
      Cur = &Out.back();
    } else if (Props.match(Line, &M)) {
      Cur = &functionNamed(Out, M[1], Arch);
    } else if (Cur && Frame.match(Line, &M)) {
      Cur->StackBytes = toUnsigned(M[1]);
      Cur->SpillStoreBytes = toUnsigned(M[2]);
      Cur->SpillLoadBytes = toUnsigned(M[3]);
    } else if (Cur && Used.match(Line)) {
      readUsedLine(Line, *Cur);
    }
  }
  return Out;
}

json toJSON(ArrayRef<PtxasFunction> Fs) {
  json J = {{"kernels", json::array()}, {"device_functions", json::array()}};
  for (const PtxasFunction &F : Fs)
    J[F.Entry ? "kernels" : "device_functions"].push_back(
        {{"name", F.Name}, {"arch", F.Arch}, {"registers", F.Registers}, {"stack_bytes", F.StackBytes},
         {"spill_store_bytes", F.SpillStoreBytes}, {"spill_load_bytes", F.SpillLoadBytes},
         {"shared_bytes", F.SharedBytes}, {"const_bytes", F.ConstBytes}});
  return J;
}

/// Reads one count of \p E: \p Key, or \p OldKey (the pre-issue-13 name); 0 when neither is there.
static Expected<unsigned> countOf(const json &E, const char *Key, const char *OldKey) {
  for (const char *K : {Key, OldKey}) {
    auto It = E.find(K);
    if (It == E.end())
      continue;
    if (!It->is_number_unsigned() && !(It->is_number_integer() && It->get<int64_t>() >= 0))
      return createStringError(inconvertibleErrorCode(), "ptxas report: \"%s\" of '%s' is not a non-negative integer",
                               K, E.value("name", std::string("?")).c_str());
    return It->get<unsigned>();
  }
  return 0u;
}

static Expected<PtxasFunction> functionFromJSON(const json &E, bool Entry) {
  if (!E.is_object() || !E.contains("name") || !E["name"].is_string())
    return createStringError(inconvertibleErrorCode(), "ptxas report: an entry without a string \"name\"");
  PtxasFunction F{E["name"].get<std::string>(), E.value("arch", std::string()), Entry};
  struct Field {
    unsigned PtxasFunction::*Member;
    const char *Key, *OldKey;
  };
  for (const Field &Fd : {Field{&PtxasFunction::Registers, "registers", "registers"},
                          Field{&PtxasFunction::StackBytes, "stack_bytes", "stack"},
                          Field{&PtxasFunction::SpillStoreBytes, "spill_store_bytes", "spill_stores"},
                          Field{&PtxasFunction::SpillLoadBytes, "spill_load_bytes", "spill_loads"},
                          Field{&PtxasFunction::SharedBytes, "shared_bytes", "smem"},
                          Field{&PtxasFunction::ConstBytes, "const_bytes", "cmem"}}) {
    Expected<unsigned> V = countOf(E, Fd.Key, Fd.OldKey);
    if (!V)
      return V.takeError();
    F.*Fd.Member = *V;
  }
  return F;
}

Expected<std::vector<PtxasFunction>> ptxasFromJSON(const json &J) {
  std::vector<PtxasFunction> Out;
  if (J.is_null())
    return Out;
  if (!J.is_object())
    return createStringError(inconvertibleErrorCode(), "ptxas report: not a JSON object");
  for (auto [Key, Entry] : {std::pair<const char *, bool>{"kernels", true}, {"device_functions", false}}) {
    auto It = J.find(Key);
    if (It == J.end())
      continue;
    if (!It->is_array())
      return createStringError(inconvertibleErrorCode(), "ptxas report: \"%s\" is not an array", Key);
    for (const json &E : *It) {
      Expected<PtxasFunction> F = functionFromJSON(E, Entry);
      if (!F)
        return F.takeError();
      Out.push_back(std::move(*F));
    }
  }
  return Out;
}

uint64_t spillBytes(ArrayRef<PtxasFunction> Fs) {
  uint64_t S = 0;
  for (const PtxasFunction &F : Fs)
    S += uint64_t(F.SpillStoreBytes) + F.SpillLoadBytes;
  return S;
}

std::vector<std::string> nvccCompatibleArgs(ArrayRef<std::string> ClangArgs) {
  std::vector<std::string> Out;
  for (size_t I = 0; I < ClangArgs.size(); ++I) {
    StringRef A = ClangArgs[I];
    bool Separate = A == "-I" || A == "-isystem" || A == "-D" || A == "-U" || A == "-include";
    if (Separate) {
      if (I + 1 < ClangArgs.size()) {
        Out.push_back(A.str());
        Out.push_back(ClangArgs[++I]);
      }
      continue;
    }
    bool Joined = ((A.starts_with("-I") || A.starts_with("-D") || A.starts_with("-U")) && A.size() > 2) ||
                  (A.starts_with("-isystem") && A.size() > 8) || A.starts_with("-std=");
    if (Joined)
      Out.push_back(A.str());
  }
  return Out;
}

std::string withPtxasVerbose(StringRef Existing) {
  Existing = Existing.trim();
  if (Existing.contains("-Xptxas -v") || Existing.contains("-Xptxas=-v"))
    return Existing.str();
  return Existing.empty() ? "-Xptxas -v" : (Existing + " -Xptxas -v").str();
}

} // namespace kloop
