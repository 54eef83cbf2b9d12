//===- ProfileGuide.cpp - What the counters say to try first ---------------===//
//
// Thresholds and tables: docs/builtin-search.md, "Profile-guided order".
//
//===----------------------------------------------------------------------===//
#include "kloop/Propose/ProfileGuide.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using json = nlohmann::json;
using llvm::Expected;

namespace kloop {
namespace builtin {

const char *limiterName(Limiter L) {
  switch (L) {
  case Limiter::BankConflicts: return "bank_conflicts";
  case Limiter::Uncoalesced: return "uncoalesced";
  case Limiter::GlobalMemory: return "global_memory";
  case Limiter::SharedMemory: return "shared_memory";
  case Limiter::Occupancy: return "occupancy";
  case Limiter::Compute: return "compute";
  }
  return "?";
}

/// The limiters a warp-stall reason points at (Nsight Compute's Kernel Profiling Guide, "Warp Stall
/// Reasons"): short_scoreboard waits on the MIO pipes, shared memory and the special-function unit alike.
static std::vector<Limiter> stallLimiters(const std::string &Reason) {
  static const std::map<std::string, std::vector<Limiter>> Table = {
      {"long_scoreboard", {Limiter::GlobalMemory}}, {"lg_throttle", {Limiter::GlobalMemory}},
      {"drain", {Limiter::GlobalMemory}},           {"membar", {Limiter::GlobalMemory}},
      {"tex_throttle", {Limiter::GlobalMemory}},    {"imc_miss", {Limiter::GlobalMemory}},
      {"mio_throttle", {Limiter::SharedMemory}},    {"barrier", {Limiter::SharedMemory}},
      {"short_scoreboard", {Limiter::SharedMemory, Limiter::Compute}},
      {"math_pipe_throttle", {Limiter::Compute}},   {"wait", {Limiter::Compute}},
      {"dispatch_stall", {Limiter::Compute}},       {"not_selected", {Limiter::Compute}},
      {"no_instruction", {Limiter::Compute}},       {"branch_resolving", {Limiter::Compute}},
  };
  auto It = Table.find(Reason);
  return It == Table.end() ? std::vector<Limiter>{} : It->second;
}

static std::string shapeClause(const measure::KernelProfile &P) {
  return P.Shape.empty() ? std::string() : ", shape " + P.Shape;
}

static uint64_t threadsLaunched(const measure::LaunchResources &L) {
  uint64_t T = 1;
  for (int I = 0; I < 3; ++I)
    T *= std::max<uint64_t>(L.Grid[I], 1) * std::max<uint64_t>(L.Block[I], 1);
  return T;
}

/// Every finding of one profile, unranked and possibly repeated.
static std::vector<Finding> findingsOfOne(const measure::KernelProfile &P) {
  std::vector<Finding> Out;
  double Conflicts = P.SmemBankConflictsLoad.value_or(0) + P.SmemBankConflictsStore.value_or(0);
  double PerThread = Conflicts / double(threadsLaunched(P.Launch));
  if (PerThread >= BankConflictsPerThread)
    Out.push_back({Limiter::BankConflicts, 1.0,
                   llvm::formatv("{0:f2} bank conflicts per thread{1}", PerThread, shapeClause(P)).str()});
  double Sectors = std::max(P.GlobalLoadSectorsPerRequest.value_or(0), P.GlobalStoreSectorsPerRequest.value_or(0));
  if (Sectors > CoalescedSectorsPerRequest)
    Out.push_back({Limiter::Uncoalesced, 1.0,
                   llvm::formatv("{0:f1} sectors per global request, 4 when coalesced{1}", Sectors, shapeClause(P))
                       .str()});
  for (const measure::StallReason &St : P.TopStalls)
    if (St.Pct >= StallSharePct)
      for (Limiter L : stallLimiters(St.Reason))
        Out.push_back({L, St.Pct / 100.0,
                       llvm::formatv("{0} {1:f1}% of active warp cycles{2}", St.Reason, St.Pct, shapeClause(P)).str()});
  bool SmallGrid = P.Theoretical && P.Theoretical->GridSmallerThanGpu;
  if (P.AchievedOccupancyPct && *P.AchievedOccupancyPct < OccupancyLowPct)
    Out.push_back({Limiter::Occupancy, 1.0 - *P.AchievedOccupancyPct / 100.0,
                   llvm::formatv("achieved occupancy {0:f1}%{1}{2}", *P.AchievedOccupancyPct,
                                 P.Theoretical ? std::string(" (limiter ") +
                                                     measure::toString(P.Theoretical->Limiter).str() + ")"
                                               : std::string(),
                                 shapeClause(P))
                       .str()});
  else if (SmallGrid)
    Out.push_back({Limiter::Occupancy, 0.5, "the grid is smaller than the GPU holds at once" + shapeClause(P)});
  return Out;
}

std::vector<Finding> findingsOf(const std::vector<measure::KernelProfile> &Profiles) {
  std::vector<Finding> Best;
  for (const measure::KernelProfile &P : Profiles)
    for (Finding &F : findingsOfOne(P)) {
      auto It = std::find_if(Best.begin(), Best.end(), [&](const Finding &B) { return B.What == F.What; });
      if (It == Best.end())
        Best.push_back(std::move(F));
      else if (F.Weight > It->Weight)
        *It = std::move(F);
    }
  std::stable_sort(Best.begin(), Best.end(), [](const Finding &A, const Finding &B) { return A.Weight > B.Weight; });
  return Best;
}

std::vector<Limiter> limitersAddressed(const Dimension &D) {
  using L = Limiter;
  switch (D.Kind) {
  case DimKind::Rule: {
    static const std::map<std::string, std::vector<Limiter>> Rules = {
        {"pad-shared-tiles", {L::BankConflicts, L::SharedMemory}},
        {"vectorize-global-access", {L::GlobalMemory}},
        {"coarsen-grid-stride-2", {L::GlobalMemory, L::Compute}},
        {"coarsen-grid-stride-4", {L::GlobalMemory, L::Compute}},
        {"coarsen-grid-stride-8", {L::GlobalMemory, L::Compute}},
        {"coalesce-thread-index", {L::Uncoalesced, L::GlobalMemory}},
        {"tile-shared-memory", {L::GlobalMemory, L::Uncoalesced}},
        {"tile-shared-memory-rb4", {L::GlobalMemory, L::Uncoalesced, L::SharedMemory}},
        {"privatize-atomics", {L::GlobalMemory}},
        {"warp-shuffle-reductions", {L::SharedMemory}},
        {"fast-math", {L::Compute}},
    };
    auto It = Rules.find(D.Target.substr(0, D.Target.find('@')));
    if (It != Rules.end())
      return It->second;
    return {L::BankConflicts, L::Uncoalesced, L::GlobalMemory, L::SharedMemory, L::Occupancy, L::Compute};
  }
  case DimKind::BlockSize: return {L::Occupancy, L::SharedMemory};
  case DimKind::Tile: return {L::SharedMemory, L::BankConflicts, L::Occupancy};
  case DimKind::Unroll: return {L::Compute, L::GlobalMemory};
  case DimKind::MinBlocks: return {L::Occupancy};
  case DimKind::Qualifiers: return {L::GlobalMemory};
  }
  return {};
}

Expected<ProfileGuide> profileGuide(const TunableSpace &S, const json &Counters, llvm::StringRef Source) {
  ProfileGuide G;
  if (!Counters.is_object() || !Counters.contains("profiles") || !Counters["profiles"].is_array())
    return G;
  std::map<std::string, std::vector<measure::KernelProfile>> ByKernel;
  for (const json &J : Counters["profiles"]) {
    Expected<measure::KernelProfile> P = measure::kernelProfileFromJSON(J, Source);
    if (!P)
      return P.takeError();
    for (const auto &[KID, Symbols] : S.Symbols)
      if (P->Kernel == KID || std::any_of(Symbols.begin(), Symbols.end(), [&](const KernelSymbol &K) {
            return symbolNamesKernel(K, P->Kernel);
          }))
        ByKernel[KID].push_back(*P);
  }
  for (const auto &[KID, Ps] : ByKernel)
    G.ByKernel[KID] = findingsOf(Ps);
  return G;
}

/// The first of \p Fs that \p D addresses, as a Rank.
static Rank rankIn(const Dimension &D, const std::vector<Finding> &Fs) {
  Rank R;
  R.Guided = true;
  std::vector<Limiter> Addr = limitersAddressed(D);
  for (size_t I = 0; I < Fs.size(); ++I)
    if (std::find(Addr.begin(), Addr.end(), Fs[I].What) != Addr.end()) {
      R.Index = I;
      R.Weight = Fs[I].Weight;
      return R;
    }
  return R;
}

Rank rankOf(const Dimension &D, const ProfileGuide &G) {
  if (!D.Kernel.empty()) {
    auto It = G.ByKernel.find(D.Kernel);
    return It == G.ByKernel.end() ? Rank{} : rankIn(D, It->second);
  }
  // A constant with no kernel of its own: the best rank over the profiled kernels.
  Rank Best;
  for (const auto &[_, Fs] : G.ByKernel) {
    Rank R = rankIn(D, Fs);
    if (!Best.Guided || (R.Index && (!Best.Index || R.Weight > Best.Weight)))
      Best = R;
  }
  return Best;
}

std::vector<std::string> describeGuide(const ProfileGuide &G) {
  std::vector<std::string> Out;
  for (const auto &[KID, Fs] : G.ByKernel) {
    std::string Line = KID + ":";
    if (Fs.empty())
      Line += " no limiter the rules address";
    for (size_t I = 0; I < Fs.size(); ++I)
      Line += std::string(I ? ", " : " ") + limiterName(Fs[I].What) + " (" + Fs[I].Evidence + ")";
    Out.push_back(Line);
  }
  return Out;
}

} // namespace builtin
} // namespace kloop
