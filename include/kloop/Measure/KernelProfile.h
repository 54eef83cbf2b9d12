//===- kloop/Measure/KernelProfile.h - Hardware counters of one kernel ----===//
///
/// \file
/// What the hardware counters say about one kernel launch (issue 15, item 2):
/// DRAM bytes, L2 hit rate, achieved and theoretical occupancy with its
/// limiter, shared-memory bank conflicts, global sectors per request and the
/// top warp-stall reasons. The counters come from a metrics run of
/// libkloop-cupti.so (KLOOP_CUPTI_METRICS=1: CUPTI's range profiler with
/// kernel replay; the "metrics" member of its kloop-cupti/1 file,
/// docs/cupti.md). A metrics run is never a timing run. Pure functions:
/// nothing here runs a program or prints.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_MEASURE_KERNELPROFILE_H
#define KLOOP_MEASURE_KERNELPROFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kloop {
namespace measure {

/// The limits of the GPU that bound occupancy, as cuDeviceGetAttribute
/// answers them ("metrics.device_limits" of a metrics run).
struct DeviceLimits {
  /// Streaming multiprocessors on the device.
  int64_t SmCount = 0;
  /// Threads per warp (32).
  int64_t WarpSize = 32;
  /// Resident threads and blocks per SM (2048 and 32 on sm_90).
  int64_t MaxThreadsPerSm = 0, MaxBlocksPerSm = 0;
  /// 32-bit registers per SM and per block (65536 each on sm_90).
  int64_t RegsPerSm = 0, RegsPerBlock = 0;
  /// Shared memory per SM, the most a block may opt in to, and what the
  /// driver reserves per block, bytes (233472, 232448 and 1024 on sm_90).
  int64_t SmemPerSm = 0, SmemPerBlockOptin = 0, ReservedSmemPerBlock = 0;
  /// Compute capability (9, 0 on the H200).
  int64_t CcMajor = 0, CcMinor = 0;
};

/// A launch configuration and the resources its kernel uses.
struct LaunchResources {
  /// Grid and block dimensions (x, y, z).
  std::array<uint64_t, 3> Grid{}, Block{};
  /// Registers per thread.
  uint64_t Registers = 0;
  /// Static and dynamic shared memory per block, bytes.
  uint64_t StaticSmem = 0, DynamicSmem = 0;
};

/// What bounds the blocks resident on one SM.
enum class OccupancyLimiter {
  Registers,    ///< registers per thread x threads per block
  SharedMemory, ///< shared memory per block (static + dynamic + the driver's reserve)
  Warps,        ///< the block size: warps per block against the SM's resident warps
  Blocks,       ///< the SM's resident-block limit (small blocks)
};

/// "registers", "shared_memory", "warps", "blocks" (the JSON spelling).
llvm::StringRef toString(OccupancyLimiter L);
/// The inverse of toString; std::nullopt for any other text.
std::optional<OccupancyLimiter> occupancyLimiterFromString(llvm::StringRef S);

/// Theoretical occupancy of one launch configuration on one SM.
struct Occupancy {
  /// Resident blocks per SM allowed by each resource; std::nullopt when the
  /// resource does not bound it (no registers, no shared memory).
  std::optional<uint64_t> BlocksByRegisters, BlocksBySharedMemory;
  uint64_t BlocksByWarps = 0, BlocksByBlockLimit = 0;
  /// The minimum of the four, the warps they hold, and those warps as a
  /// percentage of the SM's resident warps.
  uint64_t ActiveBlocks = 0, ActiveWarps = 0;
  double TheoreticalPct = 0;
  /// The resource with the fewest blocks; ties go to the first of
  /// registers, shared memory, warps, blocks.
  OccupancyLimiter Limiter = OccupancyLimiter::Warps;
  /// The grid has fewer blocks than the GPU holds at once (grid blocks <
  /// SmCount x ActiveBlocks): achieved occupancy is then bounded by the grid.
  bool GridSmallerThanGpu = false;
};

/// The occupancy of \p L on a device with limits \p D, by the rules of the
/// CUDA Occupancy Calculator as the CUDA toolkit's cuda_occupancy.h states
/// them (cudaOccMaxBlocksPerSMRegsLimit, cudaOccMaxBlocksPerSMSmemLimit,
/// cudaOccMaxBlocksPerSMWarpsLimit; what cudaOccupancyMaxActiveBlocksPerMultiprocessor
/// answers), for compute capability 7.0 and newer:
///   - warps per block = ceil(threads / warp size);
///   - registers: per warp round_up(registers x warp size, 256); warps per
///     SM = (registers per SM / 4 / that) x 4 (four sub-partitions); blocks =
///     warps per SM / warps per block; 0 when registers x 256-rounded warps,
///     with warps rounded up to a multiple of 4, exceed registers per block or
///     registers per thread exceed 256;
///   - shared memory: per block round_up(static + dynamic + reserved, 128);
///     blocks = shared memory per SM / that (the driver picks the largest
///     carveout, which is what the calculator assumes without a preference);
///   - warps: resident warps per SM / warps per block; blocks: the SM's limit.
/// Errors: a block of 0 threads, or a limit of \p D that is not positive
/// (unknown), each named.
llvm::Expected<Occupancy> theoreticalOccupancy(const LaunchResources &L, const DeviceLimits &D);

/// One profiled launch as libkloop-cupti.so recorded it ("metrics.ranges[]").
struct MetricRange {
  /// The launch's number in the process (the profile's seq).
  uint64_t Seq = 0;
  /// Mangled and demangled kernel name.
  std::string Kernel, Name;
  /// Launch configuration; Registers and StaticSmem are unknown (std::nullopt)
  /// when the library could not ask the driver (-1 in the file).
  std::array<uint64_t, 3> Grid{}, Block{};
  uint64_t DynamicSmem = 0;
  std::optional<uint64_t> Registers, StaticSmem;
  /// cuOccupancyMaxActiveBlocksPerMultiprocessor for the configuration; unknown as above.
  std::optional<uint64_t> DriverBlocksPerSm;
  /// Host wall time of the profiled launch call with all its replay passes, ns.
  uint64_t WallNs = 0;
  /// Metric name -> value; std::nullopt when the chip lacks the metric.
  std::map<std::string, std::optional<double>> Values;
  /// Why this launch has no values ("" when it has).
  std::string Error;
};

/// The "metrics" member of a kloop-cupti/1 file.
struct MetricsRun {
  /// How the counters were collected ("range_profiler/kernel_replay/auto_range").
  std::string Mode;
  /// The chip CUPTI named ("GH100"), "" when unknown.
  std::string Chip;
  /// Replay passes per profiled launch.
  uint64_t Passes = 0;
  /// Why no launch could be profiled (a failed CUPTI call, named with its
  /// CUptiResult); "" when the profiler worked.
  std::string Error;
  /// Metrics asked for, and those the chip does not have.
  std::vector<std::string> MetricNames, Unsupported;
  /// Ranges CUPTI dropped; launches not profiled because another thread's
  /// launch was; launches profiled per kernel and launch configuration.
  uint64_t DroppedRanges = 0, SkippedBusy = 0, LaunchesPerConfig = 0;
  /// The device's limits; std::nullopt when no launch reached the profiler.
  std::optional<DeviceLimits> Limits;
  std::vector<MetricRange> Ranges;
};

/// Reads the "metrics" member of kloop-cupti/1 document \p Cupti. Errors,
/// naming \p Source and the member: no "metrics" member (the run was not a
/// metrics run), a member of the wrong type.
llvm::Expected<MetricsRun> parseMetricsRun(const nlohmann::json &Cupti, llvm::StringRef Source);

/// parseMetricsRun of the file at \p Path. Errors: the file cannot be read or
/// is not JSON, and those of parseMetricsRun.
llvm::Expected<MetricsRun> readMetricsRun(llvm::StringRef Path);

/// A warp state and the percentage of active warp cycles warps spent in it
/// (smsp__warp_issue_stalled_<reason>_per_warp_active.pct, Nsight Compute's
/// "Warp State Statistics").
struct StallReason {
  std::string Reason;
  double Pct = 0;
};

/// What the counters say about one kernel launch (one MetricRange).
struct KernelProfile {
  /// Mangled and demangled kernel name.
  std::string Kernel, Name;
  /// The workload shape it ran with ("" outside kloop optimize).
  std::string Shape;
  LaunchResources Launch;
  /// gpu__time_duration.sum of one replay pass, ns: under the profiler, never a timing.
  std::optional<double> ProfiledDurationNs;
  /// dram__bytes_read.sum and dram__bytes_write.sum, bytes.
  std::optional<double> DramReadBytes, DramWriteBytes;
  /// lts__t_sector_hit_rate.pct, percent of L2 sector lookups that hit.
  std::optional<double> L2HitPct;
  /// sm__warps_active.avg.pct_of_peak_sustained_active: achieved occupancy, percent.
  std::optional<double> AchievedOccupancyPct;
  /// theoreticalOccupancy of Launch; std::nullopt when registers or the
  /// device limits are unknown (Notes says which).
  std::optional<Occupancy> Theoretical;
  /// The driver's resident blocks per SM for Launch (a check of Theoretical).
  std::optional<uint64_t> DriverBlocksPerSm;
  /// l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum / _op_st.sum.
  std::optional<double> SmemBankConflictsLoad, SmemBankConflictsStore;
  /// l1tex__t_sectors_pipe_lsu_mem_global_op_{ld,st}.sum divided by
  /// l1tex__t_requests_pipe_lsu_mem_global_op_{ld,st}.sum: 32-byte sectors
  /// per warp request (4 for a coalesced 4-byte access, 32 for a fully
  /// scattered one); std::nullopt when the kernel made no such request.
  std::optional<double> GlobalLoadSectorsPerRequest, GlobalStoreSectorsPerRequest;
  /// The (at most) three warp states with the largest share, largest first,
  /// ties by name; "selected" (issuing) is not a stall and zero shares are left out.
  std::vector<StallReason> TopStalls;
  /// What could not be derived, and why.
  std::vector<std::string> Notes;
};

/// The profile of \p R with the device limits \p Limits (theoretical
/// occupancy needs both them and the registers).
KernelProfile deriveKernelProfile(const MetricRange &R, const std::optional<DeviceLimits> &Limits);

/// The profiles of every range of \p Run that has values, in launch order,
/// each with shape \p Shape; the problems of the run (its error, dropped
/// ranges, each range's error) are appended to \p Problems.
std::vector<KernelProfile> kernelProfiles(const MetricsRun &Run, llvm::StringRef Shape,
                                          std::vector<std::string> &Problems);

/// The JSON form: {"kernel", "name", "shape", "launch": {"grid", "block",
/// "registers", "static_smem", "dynamic_smem"}, "profiled_duration_ns",
/// "dram_read_bytes", "dram_write_bytes", "l2_hit_pct",
/// "achieved_occupancy_pct", "theoretical": null or {"blocks_by_registers",
/// "blocks_by_shared_memory" (null: unbounded), "blocks_by_warps",
/// "blocks_by_block_limit", "active_blocks", "active_warps",
/// "theoretical_pct", "limiter", "grid_smaller_than_gpu"},
/// "driver_blocks_per_sm", "smem_bank_conflicts_ld", "smem_bank_conflicts_st",
/// "global_ld_sectors_per_request", "global_st_sectors_per_request",
/// "top_stalls": [{"reason", "pct"}], "notes"}; unknown numbers are null.
nlohmann::json toJSON(const KernelProfile &P);

/// Reads toJSON's form. Errors name \p Source and the member: a missing
/// member, a member of the wrong type, an unknown limiter.
llvm::Expected<KernelProfile> kernelProfileFromJSON(const nlohmann::json &J, llvm::StringRef Source);

/// One line for tables and logs: occupancy (achieved / theoretical, limiter),
/// DRAM bytes, L2 hit rate, bank conflicts, sectors per request, top stalls;
/// "?" for what is unknown.
std::string summarizeKernelProfile(const KernelProfile &P);

} // namespace measure
} // namespace kloop

#endif
