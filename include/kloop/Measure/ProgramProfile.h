//===- kloop/Measure/ProgramProfile.h - Where a program's GPU time goes ---===//
///
/// \file
/// The library behind `kloop profile -- <command>` (issue 16, item 2): from
/// the kernel records of one run under libkloop-cupti.so (verify::Profile,
/// docs/cupti.md), each kernel's total GPU time, its share of the total, its
/// launch count and launch configurations, its inventory ID (or the library
/// it comes from) and its % of roofline against measured ceilings. Pure
/// functions over records: nothing here runs a program or prints. The table
/// and the JSON ("kloop-profile/1") are described in docs/profile.md.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_MEASURE_PROGRAMPROFILE_H
#define KLOOP_MEASURE_PROGRAMPROFILE_H

#include "kloop/Inventory/KernelNames.h"
#include "kloop/Measure/KernelProfile.h"
#include "kloop/Measure/Measure.h"
#include "kloop/Measure/Runner.h"
#include "kloop/Verify/Profile.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kloop {
namespace measure {

/// Schema tag of the JSON written by `kloop profile -o`.
inline constexpr const char *ProgramProfileSchema = "kloop-profile/1";

/// The launches of one kernel with one launch configuration.
struct LaunchConfigTotal {
  /// Grid and block dimensions (x, y, z).
  std::array<uint64_t, 3> Grid{}, Block{};
  /// Static and dynamic shared memory per block, bytes.
  uint64_t StaticSmem = 0, DynamicSmem = 0;
  /// Registers per thread.
  uint64_t Registers = 0;
  /// Launches with this configuration, and their summed GPU time, ns.
  uint64_t Launches = 0, TotalNs = 0;
};

/// Where a kernel seen at run time comes from.
enum class KernelOrigin {
  Unknown,        ///< no inventory was given (`kloop profile` without -p)
  Inventory,      ///< an inventory kernel of the project's own code
  Library,        ///< an inventory kernel marked `library` (a CUB/Thrust template
                  ///< the project instantiates), or a kernel the inventory does not
                  ///< list whose demangled name is inside a namespace
  NotInInventory, ///< the inventory does not list it and it has no namespace
};

/// "unknown", "inventory", "library", "not_in_inventory" (the JSON spelling).
llvm::StringRef toString(KernelOrigin O);

/// DRAM bytes and floating-point operations per launch of the kernels whose
/// demangled name contains \p Match or whose inventory ID is \p Match
/// (`kloop profile --bytes/--flops`).
struct KernelWork {
  std::string Match;
  std::optional<uint64_t> Bytes, Flops;
};

/// One kernel's share of a run.
struct KernelTotal {
  /// Mangled name as recorded by CUPTI (the grouping key) and the demangled
  /// name (the record's, else llvm::demangle of the mangled name).
  std::string Kernel, Name;
  /// Summed GPU time of its launches, ns, and their number.
  uint64_t TotalNs = 0, Launches = 0;
  /// TotalNs as a percentage of every kernel's summed GPU time.
  double SharePct = 0;
  /// Its launch configurations, most GPU time first.
  std::vector<LaunchConfigTotal> Configs;
  KernelOrigin Origin = KernelOrigin::Unknown;
  /// Inventory ID (Origin Inventory, or Library when the inventory lists it);
  /// "" otherwise.
  std::string Id;
  /// Outermost namespace of the demangled name for Origin Library ("cub").
  std::string Library;
  /// Work per launch, when given (KernelWork).
  std::optional<uint64_t> BytesPerLaunch, FlopsPerLaunch;
  /// Achieved rates over all launches: bytes / ns (= GB/s), flops / ns (= GFLOP/s).
  std::optional<double> GBps, GFlops;
  /// % of roofline; std::nullopt = n/a, and RooflineNote says why.
  std::optional<double> RooflinePct;
  /// Why RooflinePct is n/a ("" when it is known).
  std::string RooflineNote;
  /// Hardware counters of its profiled launches (`kloop profile --metrics`),
  /// one per launch configuration profiled; empty without a metrics run.
  std::vector<KernelProfile> Counters;
};

/// The metrics run of `kloop profile --metrics` and what it cost.
struct CountersRun {
  /// Wall time of the timing run and of the metrics run, s.
  double TimingWallS = 0, MetricsWallS = 0;
  /// The chip CUPTI named and the replay passes per profiled launch.
  std::string Chip;
  uint64_t Passes = 0;
  /// Launches profiled (with counters).
  uint64_t Profiled = 0;
};

/// Where a whole run's GPU time went.
struct ProgramProfile {
  /// GPU name from the profile ("" when no context was created).
  std::string Device;
  /// Summed GPU time of every kernel launch, ns, and the number of launches.
  uint64_t TotalNs = 0, Launches = 0;
  /// Most GPU time first; ties by demangled name.
  std::vector<KernelTotal> Kernels;
  /// The ceilings roofline percentages were computed against, if any.
  std::optional<Ceilings> Ceil;
  /// The metrics run, when one was made and could be read.
  std::optional<CountersRun> Counters;
  /// Remarks on the run: the profile's own problems (verify::profileProblems),
  /// inventory symbols that could not be read, --bytes/--flops that matched
  /// no kernel.
  std::vector<std::string> Notes;
};

/// One kernel or template instantiation an inventory lists, with one of its
/// symbols: what a run-time name is matched against.
struct InventoryKernel {
  /// Inventory ID: the instantiation's ("reduce<256>") or the kernel's.
  std::string Id;
  /// The kernel is a library kernel (`library: true` in the inventory).
  bool Library = false;
  KernelSymbol Symbol;
};

/// The kernels of inventory \p Inventory (kloop extract's), each
/// instantiation before its kernel so that the more precise ID matches first.
std::vector<InventoryKernel> inventoryKernels(const inv::Inventory &Inventory);

/// The outermost namespace of the demangled function name of \p Mangled
/// ("cub" for any cub kernel, "thrust" for thrust's), found with LLVM's
/// Itanium partial demangler; "" when the name does not demangle, has no
/// namespace, or its outermost one is anonymous.
std::string outermostNamespace(llvm::StringRef Mangled);

/// What summarizeProgram needs besides the records.
struct ProgramProfileInputs {
  /// From -p (inventoryKernels); std::nullopt: kernels are not matched.
  std::optional<std::vector<InventoryKernel>> Inventory;
  /// --bytes/--flops.
  std::vector<KernelWork> Work;
  /// Measured ceilings of the profile's GPU, if known.
  std::optional<Ceilings> Ceil;
  /// Why Ceil is missing, for the roofline note ("" when present).
  std::string NoCeilingsReason;
};

/// Aggregates \p P's launches per kernel (by mangled name) and per launch
/// configuration, computes shares, matches names against the inventory
/// (symbolNamesKernel), and fills the roofline. % of roofline is achieved
/// performance over the attainable one of the roofline model (Williams,
/// Waterman, Patterson, "Roofline", CACM 2009) with the measured copy
/// bandwidth and f32 FMA peak as its ceilings: max(GB/s / copy GB/s,
/// GFLOP/s / FMA GFLOP/s) x 100, with only the rates whose work is known.
/// A kernel without bytes or flops, or a run without ceilings, gets n/a
/// and a note saying which. A kernel's work is that of the first KernelWork
/// it matches (bytes and flops may come from different entries).
ProgramProfile summarizeProgram(const verify::Profile &P, const ProgramProfileInputs &In);

/// Gives each kernel of \p P the profiles of \p Profiles with its mangled
/// name (KernelTotal::Counters, in their order), and records \p Run. A
/// profile of a kernel the timing run did not see is noted in P.Notes.
void attachKernelProfiles(ProgramProfile &P, std::vector<KernelProfile> Profiles, const CountersRun &Run);

/// The JSON form, schema ProgramProfileSchema (fields in docs/profile.md).
nlohmann::json toJSON(const ProgramProfile &P);

/// The table `kloop profile` prints: one row per kernel (time, share,
/// launches, % of roofline, ID, name), its launch configurations and its
/// hardware counters (summarizeKernelProfile) indented under it, then the
/// reasons for each n/a once. Columns are aligned; a
/// demangled name is cut to \p NameWidth characters.
std::string formatProgramTable(const ProgramProfile &P, size_t NameWidth = 100);

/// One run of a program under libkloop-cupti.so, as `kloop profile` and
/// `kloop optimize -p` make it.
struct ProgramRunRequest {
  std::string Command;  ///< shell command line
  std::string Cwd;      ///< absolute working directory
  unsigned TimeoutS = 3600;
  std::string WorkDir;  ///< receives profile.stdout, profile.stderr and profile.json
  std::string CuptiLib; ///< libkloop-cupti.so (findCuptiLibrary)
  /// A metrics run (KLOOP_CUPTI_METRICS=1: hardware counters through CUPTI's
  /// range profiler, docs/cupti.md) instead of a timing run; its files are
  /// labelled profile-metrics.
  bool Metrics = false;
};

/// What the run did, and the kernel records it left.
struct ProgramRun {
  RunResult Result;
  /// The records: those of an Ok run, or those a run that exited non-zero
  /// still wrote (its exit handlers ran); std::nullopt when none are readable
  /// (a crash, a timeout, a program that launched no CUDA work).
  std::optional<verify::Profile> Profile;
};

/// Runs \p R's command once through the measurement runner (runIsolated: its
/// own process group, killed at the timeout) with kernels traced serially,
/// nothing captured or poisoned (docs/profile.md). Errors: the runner cannot
/// run it at all.
llvm::Expected<ProgramRun> runProgramUnderCupti(const ProgramRunRequest &R);

} // namespace measure
} // namespace kloop

#endif
