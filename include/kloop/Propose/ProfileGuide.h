//===- kloop/Propose/ProfileGuide.h - What the counters say to try first --===//
///
/// \file
/// The builtin search driven by the profile (issue 15, item 4): the hardware
/// counters of the incumbent (measure::KernelProfile, one per target kernel
/// and shape, from kloop optimize's counters steps) name what limits each
/// kernel; each dimension of the space says which limiters it addresses; the
/// walk tries the dimensions that address the strongest limiter first and
/// never those that address none of them. docs/builtin-search.md,
/// "Profile-guided order", gives every threshold and its source.
///
/// Pure functions: nothing here runs a program or prints.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_PROPOSE_PROFILEGUIDE_H
#define KLOOP_PROPOSE_PROFILEGUIDE_H

#include "kloop/Measure/KernelProfile.h"
#include "kloop/Propose/BuiltinProposer.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kloop {
namespace builtin {

/// What the counters can say limits a kernel.
enum class Limiter {
  BankConflicts, ///< shared-memory bank conflicts, at least BankConflictsPerThread per launched thread
  Uncoalesced,   ///< global accesses with more 32-byte sectors per warp request than a coalesced 4-byte access needs
  GlobalMemory,  ///< warps stall on global or local memory (long_scoreboard, lg_throttle, drain, membar, tex/imc)
  SharedMemory,  ///< warps stall on shared memory or barriers (mio_throttle, short_scoreboard, barrier)
  Occupancy,     ///< achieved occupancy below OccupancyLowPct, or a grid smaller than the GPU holds
  Compute,       ///< warps stall on the math pipes or fixed-latency dependencies (math_pipe_throttle, wait, ...)
};

/// "bank_conflicts", "uncoalesced", "global_memory", "shared_memory",
/// "occupancy", "compute".
const char *limiterName(Limiter L);

/// Bank conflicts (load + store) per launched thread from which a kernel is
/// limited by them. Measured on the H200 (docs/results.md, eighth session): a
/// 2048 x 2048 transpose through a 32 x 32 tile read by columns had 0.97 per
/// thread (4,079,257 on 4,194,304 threads; test/Profile/gpu-metrics.test),
/// the tile padded to 33 columns 0.0011 (4,534); 0.05 is 19x below the one
/// and 45x above the other.
inline constexpr double BankConflictsPerThread = 0.05;
/// Sectors per request above which global accesses count as uncoalesced: a
/// warp's coalesced 4-byte access touches 4 sectors of 32 bytes (CUDA C++ Best
/// Practices Guide, "Coalesced Access to Global Memory"). 8-byte and wider
/// accesses also exceed it; the finding then only moves coalescing rules up.
inline constexpr double CoalescedSectorsPerRequest = 4.5;
/// A warp-stall reason counts when it takes at least this share of active warp
/// cycles, percent (Nsight Compute's warp-state sampling; shares below it are
/// noise next to the top reason).
inline constexpr double StallSharePct = 10.0;
/// Achieved occupancy below this percentage of the SM's warps is a limiter
/// (half the warps: below it latency hiding degrades for memory-bound
/// kernels, CUDA C++ Best Practices Guide, "Occupancy").
inline constexpr double OccupancyLowPct = 50.0;

/// One limiter of one kernel, with what in the profile showed it.
struct Finding {
  Limiter What = Limiter::GlobalMemory;
  /// Strength used to rank findings, in [0, 1] (a stall's share / 100; 1 for
  /// bank conflicts and uncoalesced accesses, which the rules address directly).
  double Weight = 0;
  /// The figures: "0.24 bank conflicts per thread (shape n16M)".
  std::string Evidence;
};

/// The findings of one kernel from its profiles (one per shape), strongest
/// first; each limiter at most once, with the strongest evidence over the
/// shapes. Empty when the profiles show none of the limiters.
std::vector<Finding> findingsOf(const std::vector<measure::KernelProfile> &Profiles);

/// The limiters a dimension can address: a rule by its name (docs/rules/),
/// a parameter by its kind (docs/builtin-search.md has the table). A rule
/// kloop does not know addresses every limiter (it is never left out).
std::vector<Limiter> limitersAddressed(const Dimension &D);

/// The findings of every kernel of a space that the counters profiled.
struct ProfileGuide {
  /// Inventory kernel ID -> its findings (possibly empty: profiled, nothing found).
  std::map<std::string, std::vector<Finding>> ByKernel;
};

/// The guide from the context's "counters" member (kloop optimize's counters
/// step payload: {"profiles": [KernelProfile JSON], ...}); profiles are matched
/// to the kernels of \p S by mangled name (symbolNamesKernel). Errors: a
/// profile that kernelProfileFromJSON refuses, named with \p Source. A null or
/// absent member, or one without profiles, gives an empty guide.
llvm::Expected<ProfileGuide> profileGuide(const TunableSpace &S, const nlohmann::json &Counters,
                                          llvm::StringRef Source);

/// How the guide ranks one dimension.
struct Rank {
  /// False when no profile covers the dimension's kernel (a Tile constant,
  /// which has no kernel, is covered when any kernel is): the walk keeps its
  /// kind order for it.
  bool Guided = false;
  /// Guided: the index in its kernel's findings of the first finding it
  /// addresses; std::nullopt when it addresses none (the walk leaves it out).
  std::optional<size_t> Index;
  /// Guided with an index: that finding's weight (for the order across kernels).
  double Weight = 0;
};
Rank rankOf(const Dimension &D, const ProfileGuide &G);

/// One line per profiled kernel: "k: global_memory (long_scoreboard 84.9% of
/// active warp cycles, shape n16M), ..." or "k: no limiter the rules address".
std::vector<std::string> describeGuide(const ProfileGuide &G);

} // namespace builtin
} // namespace kloop

#endif
