//===- kloop/Measure/Measure.h - Build, run and summarise a workload ------===//
///
/// \file
/// The library behind `kloop measure`: build the workload, run it under
/// libkloop-cupti.so N times per shape (or until the median is known to a
/// target relative precision), and summarise the GPU durations of the target
/// kernels per kernel and shape, with achieved bandwidth/FLOP rate against
/// measured ceilings (issue 4, item 4). Nothing here prints; progress goes to
/// an optional callback.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_MEASURE_MEASURE_H
#define KLOOP_MEASURE_MEASURE_H

#include "kloop/Decide/Statistics.h"
#include "kloop/Measure/Config.h"
#include "kloop/Measure/Runner.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kloop {
namespace measure {

/// Error meaning "there is no usable GPU here": measurement is skipped, not
/// failed. Commands report it plainly and exit 1.
class NoGpuError : public llvm::ErrorInfo<NoGpuError> {
public:
  static char ID;
  explicit NoGpuError(std::string Reason) : Reason(std::move(Reason)) {}
  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }
  std::string Reason;
};

/// Checks for a GPU with `nvidia-smi -L` ($KLOOP_NVIDIA_SMI overrides the
/// program, for tests). Returns the first line of its output ("GPU 0: ...").
/// Error (NoGpuError): nvidia-smi not found, or it fails / lists no GPU.
llvm::Expected<std::string> probeGpu();

/// Where the build of one source directory happens.
struct BuildRequest {
  std::string SourceDir; ///< absolute; {source_dir}
  std::string BuildDir;  ///< absolute, created if missing; {build_dir}
  std::string LogDir;    ///< receives <Label>.stdout/.stderr
  std::string Label = "build";
};

/// Runs build.command. Error when it cannot be run or does not exit 0: the
/// message names the command, the status and the log files, and quotes the
/// last lines of the build's stderr (or stdout when stderr is empty).
llvm::Error buildWorkload(const WorkloadConfig &C, const BuildRequest &R);

/// Measured ceilings of one GPU (bench/ceilings/ceilings.cu).
struct Ceilings {
  std::string Device;    ///< cudaDeviceProp::name, the cache key
  double CopyGBps = 0;   ///< D2D copy, read + write bytes, GB/s (1e9 B/s)
  double FmaGFlops = 0;  ///< f32 FMA peak, GFLOP/s (2 flops per FMA)
};

/// Parses the JSON line printed by ceilings.cu. Error on anything else.
llvm::Expected<Ceilings> parseCeilingsOutput(llvm::StringRef Text);

/// $KLOOP_CACHE_DIR/ceilings.json, else $XDG_CACHE_HOME/kloop/ceilings.json,
/// else ~/.cache/kloop/ceilings.json.
std::string defaultCeilingsCachePath();

/// The cached ceilings of \p Device in \p CacheFile, or std::nullopt when the
/// file or the entry does not exist. Error when the file is not valid JSON.
llvm::Expected<std::optional<Ceilings>> lookupCeilings(llvm::StringRef CacheFile, llvm::StringRef Device);

/// Adds or replaces the entry of C.Device in \p CacheFile (atomically:
/// written to a temporary file, then renamed).
llvm::Error storeCeilings(llvm::StringRef CacheFile, const Ceilings &C);

/// The nvcc to use: $KLOOP_NVCC, $CUDA_HOME/bin/nvcc, `nvcc` on PATH, or
/// /usr/local/cuda/bin/nvcc. Error when none exists.
llvm::Expected<std::string> findNvcc();

/// Cached ceilings of \p Device, or, when absent, builds ceilings.cu (its
/// source is compiled into kloop) with nvcc -O3 -arch=native in \p WorkDir,
/// runs it, and caches the result. Error when nvcc, the build or the run
/// fails, or when the program reports another device name.
llvm::Expected<Ceilings> ensureCeilings(llvm::StringRef Device, llvm::StringRef CacheFile,
                                        llvm::StringRef WorkDir);

/// Half-width-free relative width of the distribution-free ~95% confidence
/// interval of the median: (x[k] - x[j]) / median with order statistics
/// j = floor(n/2 - 0.98 sqrt(n)), k = ceil(n/2 + 0.98 sqrt(n)) (clamped), the
/// normal approximation to the binomial(n, 1/2) rank interval (Conover,
/// "Practical Nonparametric Statistics", 3rd ed., section 3.2). Returns +inf
/// for n < 6, where the interval cannot reach 95%.
double medianRelCIWidth(llvm::ArrayRef<double> Values);

/// Options of measureWorkload.
struct MeasureOptions {
  std::string SourceDir;      ///< default: the config's directory
  std::string BuildDir;       ///< absolute; required
  std::string WorkDir;        ///< logs, profiles; required
  bool Build = true;          ///< run build.command first
  unsigned Runs = 5;          ///< runs per shape without TargetRelCI
  std::optional<double> TargetRelCI; ///< stop when every kernel's medianRelCIWidth < this
  unsigned MinRuns = 3;       ///< with TargetRelCI
  unsigned MaxRuns = 30;      ///< with TargetRelCI
  std::vector<std::string> Shapes; ///< only these shapes (error if unknown); empty = all
  unsigned Seed = 0;          ///< {seed}
  unsigned Warmup = 1;        ///< launches of each kernel discarded at the start of each run
  std::string CuptiLib;       ///< libkloop-cupti.so, required
  std::optional<Ceilings> Ceil; ///< ceilings to compare against; none = not reported
};

/// Statistics of one kernel at one shape.
struct KernelShapeStats {
  std::string Kernel; ///< demangled name as recorded by CUPTI
  std::string Shape;
  size_t Launches = 0;       ///< target launches seen after warm-up
  size_t Discarded = 0;      ///< of which dropped as throttled (and not foreign)
  size_t DiscardedForeign = 0; ///< of which dropped for foreign GPU load (launchForeign)
  decide::Summary Stats;     ///< of the kept durations, ns
  std::vector<double> KeptNs; ///< the kept durations themselves, ns, in launch order
  /// The run (0, 1, ...) each of KeptNs came from, parallel to it: each run of a shape is a placement of
  /// the program's buffers of its own (`placement_pad_mib`), a group for decide::bootstrapSpeedupUnpaired.
  std::vector<uint32_t> KeptGroups;
  double MedianRelCI = 0;    ///< medianRelCIWidth of the kept durations
  std::optional<double> GBps;    ///< shape bytes / median ns
  std::optional<double> GFlops;  ///< shape flops / median ns
  std::optional<double> PctCopy; ///< GBps / ceiling * 100
  std::optional<double> PctFma;  ///< GFlops / ceiling * 100
  /// A figure above its measured ceiling: a measurement error (usually L2
  /// residency or wrong bytes/flops), never a win. Sentences, empty if none.
  std::vector<std::string> MeasurementErrors;
};

/// What a measurement produced.
struct MeasureReport {
  std::string Workload;
  L2Policy L2 = L2Policy::None;
  std::string L2Note;                   ///< what the policy means for these numbers
  KernelTrace Tracing = KernelTrace::Serial;
  std::string TracingNote;              ///< what the tracing mode means for these numbers
  std::string Device;                   ///< from the profiles
  std::optional<Ceilings> Ceil;
  std::vector<std::pair<std::string, unsigned>> RunsPerShape;
  std::vector<KernelShapeStats> Kernels;
  uint64_t MaxOverheadNs = 0;           ///< largest overhead.wall_ns_in_callbacks of a run
  std::vector<std::string> Notes;       ///< e.g. "NVML unavailable: throttling not checked"
};

/// NVML throttle-reason bits that do not slow a running kernel: GPU idle
/// (0x1), applications clocks setting (0x2), display clock setting (0x100).
/// Values from nvml.h (nvmlClocksEventReason*). Any other bit counts as
/// throttling (SW power cap 0x4, HW slowdown 0x8, sync boost 0x10, SW/HW
/// thermal 0x20/0x40, power brake 0x80).
constexpr uint64_t BenignThrottleMask = 0x1 | 0x2 | 0x100;

/// The NVML sample governing a launch starting at \p StartNs (ns, on the
/// profile's clock): the last sample at or before it, else the first;
/// nullptr when \p P has no samples. The one rule launchThrottled and
/// launchForeign share.
const verify::EnvSample *governingSample(const verify::Profile &P, uint64_t StartNs);

/// True when the governing sample (governingSample) of a launch starting at
/// \p StartNs reports a throttle reason outside BenignThrottleMask. False when
/// \p P has no samples.
bool launchThrottled(const verify::Profile &P, uint64_t StartNs);

/// True when the governing sample (governingSample) of a launch starting at
/// \p StartNs reports at least one foreign process: a process outside the
/// workload's process group with a compute context on the GPU
/// (libkloop-cupti.so's "foreign_processes", docs/cupti.md). False when \p P
/// has no samples or the sample does not say (unknown is not foreign).
bool launchForeign(const verify::Profile &P, uint64_t StartNs);

/// Progress callback: one line per event ("build ok", "run n16M 3/5 ok").
using ProgressFn = std::function<void(llvm::StringRef)>;

/// Builds (unless !Build), runs every selected shape and summarises.
/// Errors: unknown shape; the build fails (buildWorkload); a run does not
/// end Ok (message with RunResult::describe() and the stderr tail); a run
/// reports no CUDA device (NoGpuError); no launch of any target kernel.
llvm::Expected<MeasureReport> measureWorkload(const WorkloadConfig &C, const MeasureOptions &O,
                                              const ProgressFn &Progress = nullptr);

/// The entry of C.Targets that demangled kernel name \p Name contains (the
/// first), else \p Name: kloop compare and the journal's samples key kernels
/// by it, so a candidate that re-instantiates a template still pairs.
std::string targetKey(const WorkloadConfig &C, llvm::StringRef Name);

/// Per-launch samples of target kernels, grouped by demangled name in
/// first-seen order.
using TargetSamples = std::vector<std::pair<std::string, std::vector<decide::Sample>>>;

/// Per-launch samples of target kernels in one profile, grouped by demangled
/// name in first-seen order, dropping the first \p Warmup launches of each;
/// each flagged throttled (launchThrottled) and foreign (launchForeign) by its
/// governing NVML sample.
TargetSamples targetSamples(const WorkloadConfig &C, const verify::Profile &P, unsigned Warmup);

/// Flags every sample in \p Samples foreign: for a run during which another
/// process used the GPU although no NVML sample inside the run saw it (seen
/// right before or after the run).
void markAllForeign(TargetSamples &Samples);

/// True when the host-side NVML snapshots of run \p R (RunResult::GpuWatched)
/// saw foreign load: a compute process on a watched GPU right before the run
/// started, or one right after it ended that is still alive (/proc/<pid>
/// exists). A process listed after the run but gone by then is taken for the
/// run's own, which NVML may list for a moment after it was reaped; where
/// NVML's pids are not kloop's (another pid namespace) only the snapshot
/// before the run counts.
bool foreignAroundRun(const RunResult &R);

/// The samples of one timed run \p R (Ok, with a profile): targetSamples of
/// its profile, all marked foreign (markAllForeign) when foreignAroundRun(R).
/// The one place `kloop measure` and `kloop compare` take a run's samples from.
TargetSamples runSamples(const WorkloadConfig &C, const RunResult &R, unsigned Warmup);

/// Fills GBps/GFlops/Pct* and MeasurementErrors of \p K from \p Shape and \p Ceil.
void attachRates(KernelShapeStats &K, const ShapeSpec &Shape, const std::optional<Ceilings> &Ceil);

/// JSON form ("kloop-measure/1"); fields in docs/measure.md.
nlohmann::json toJSON(const MeasureReport &R);

/// One sentence on what tracing mode \p T means for the numbers measured under
/// it (printed by `kloop measure` and `kloop compare`, figures from
/// docs/results.md, bench/overhead).
std::string tracingNote(KernelTrace T);

} // namespace measure
} // namespace kloop

#endif
