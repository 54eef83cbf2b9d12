//===- LaunchLimits.cpp - CUDA's launch limits on the edited inventory ----===//
#include "LaunchLimits.h"
#include "kloop/Edit/Proposal.h"
#include "kloop/Support/JSON.h"

#include <cstdint>

using nlohmann::json;

namespace kloop {
namespace edit {

std::optional<long long> blockThreads(const json &Block) {
  if (!Block.is_object() || !Block["value"].is_array())
    return std::nullopt;
  long long T = 1;
  for (const json &V : Block["value"])
    T *= V.get<long long>();
  return T;
}

std::string dimsText(const json &Dims) {
  std::string S;
  for (const json &V : Dims["value"])
    S += (S.empty() ? "" : "x") + dumpJSON(V);
  return S;
}

const json &member(const json &Data, const char *Name) {
  static const json Null;
  return Data.is_object() && Data.contains(Name) ? Data[Name] : Null;
}

std::optional<std::string> blockOutOfRange(const json &Block) {
  auto T = blockThreads(Block);
  if (!T || (*T >= 1 && *T <= 1024))
    return std::nullopt;
  return "block " + dimsText(Block) + " = " + std::to_string(*T) + " threads; a block holds 1 to 1024 threads";
}

std::optional<std::string> gridOutOfRange(const json &Grid) {
  if (!Grid.is_object() || !Grid.contains("value") || !Grid["value"].is_array() || Grid["value"].size() != 3)
    return std::nullopt;
  static const char *const Axis[] = {"x", "y", "z"};
  const long long *Limit = MaxGridDim;
  for (unsigned D = 0; D < 3; ++D) {
    const json &V = Grid["value"][D];
    if (!V.is_number_integer())
      return std::nullopt;
    long long N = V.get<long long>();
    if (N >= 1 && N <= Limit[D])
      continue;
    std::string Why = "grid " + dimsText(Grid) + ": " + Axis[D] + " is " + std::to_string(N) +
                      (N < 1 ? ", but every dimension is at least 1" : ", more than " + std::to_string(Limit[D]));
    // dim3 holds unsigned ints: a negative component arrives as N + 2^32.
    if (N > 2147483647LL && N <= 4294967295LL)
      Why += " (" + std::to_string(N) + " is what " + std::to_string(N - 4294967296LL) +
             " becomes as the unsigned int of a dim3)";
    return Why + "; CUDA's maximum grid size is 2147483647 x 65535 x 65535 blocks";
  }
  return std::nullopt;
}

// The most one block may use on sm_90 (H100/H200) with opt-in; smaller limits of other GPUs
// (sm_80: 163 KiB, sm_86/sm_89: 99 KiB) are not checked: the target GPU is not known here.
std::optional<std::string> sharedMemoryOutOfRange(const json &Smem) {
  constexpr long long Max = MaxDynamicSharedMemory;
  if (!Smem.is_object() || !Smem.contains("value") || !Smem["value"].is_number_integer())
    return std::nullopt;
  long long N = Smem["value"].get<long long>();
  std::string Expr = Smem.value("expr", std::string());
  if (N < 0)
    return "shared memory '" + Expr + "' = " + std::to_string(N) +
           " bytes, which is negative (the size_t launch argument turns it into " +
           std::to_string(static_cast<std::uint64_t>(N)) + " bytes); dynamic shared memory is 0 to " +
           std::to_string(Max) + " bytes";
  if (N > Max)
    return "shared memory '" + Expr + "' = " + std::to_string(N) + " bytes, more than " + std::to_string(Max) +
           " bytes (227 KiB), the most dynamic shared memory one block may use on sm_90 (H100/H200), with "
           "opt-in";
  return std::nullopt;
}

std::optional<std::string> launchBoundsProblem(const std::string &Kernel, const EditedInventory &Inv,
                                               const std::string *OnlySite) {
  auto K = Inv.Kernels.find(Kernel);
  if (Kernel.empty() || K == Inv.Kernels.end())
    return std::nullopt;
  const json &LB = K->second->Data["launch_bounds"];
  if (!LB.is_object() || !LB["max_threads"]["value"].is_number_integer())
    return std::nullopt;
  long long Max = LB["max_threads"]["value"].get<long long>();
  for (auto &[SID, S] : Inv.Sites) {
    if (S->Data["kernel"] != Kernel || (OnlySite && SID != *OnlySite))
      continue;
    auto T = blockThreads(S->Data["block"]);
    if (T && *T > Max)
      return "launch site " + SID + " launches '" + Kernel + "' with block " + dimsText(S->Data["block"]) + " = " +
             std::to_string(*T) + " threads, more than __launch_bounds__ max_threads " + std::to_string(Max);
  }
  return std::nullopt;
}

std::optional<std::string> launchLimitProblem(const EditedInventory &Inv) {
  for (auto &[SID, S] : Inv.Sites) {
    std::optional<std::string> Why = blockOutOfRange(S->Data["block"]);
    if (!Why)
      Why = gridOutOfRange(member(S->Data, "grid"));
    if (!Why)
      Why = sharedMemoryOutOfRange(member(S->Data, "shared_memory"));
    if (Why)
      return "launch site " + SID + " then launches '" + S->Data.value("kernel", std::string("?")) + "' with " + *Why;
  }
  for (auto &[KID, K] : Inv.Kernels) {
    const json &LB = K->Data["launch_bounds"];
    if (LB.is_object() && LB["max_threads"].is_object() && LB["max_threads"]["value"].is_number_integer() &&
        LB["max_threads"]["value"].get<long long>() > 1024)
      return "kernel '" + KID + "' then has __launch_bounds__ max_threads " +
             std::to_string(LB["max_threads"]["value"].get<long long>()) + ", more than 1024";
  }
  return std::nullopt;
}

} // namespace edit
} // namespace kloop
