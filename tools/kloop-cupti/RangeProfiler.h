//===- RangeProfiler.h - Hardware counters per kernel launch (KLOOP_CUPTI_METRICS) -===//
//
// With KLOOP_CUPTI_METRICS=1, libkloop-cupti.so collects hardware counters for chosen kernel launches through
// CUPTI's Range Profiler API (cupti_range_profiler.h, CUDA 13) and the profiler host API
// (cupti_profiler_host.h) that builds the config image and evaluates the counters into metric values.
// Ranges are automatic (CUPTI_AutoRange: one range per kernel) and replay is CUPTI's kernel replay
// (CUPTI_KernelReplay: CUPTI runs the kernel once per pass, saving and restoring the device memory it writes),
// so one launch gives every metric whatever the number of passes. The profiler is started in the launch
// call's ENTER callback and stopped, decoded and evaluated in its EXIT callback, on the program's thread.
//
// Every CUPTI call that fails is reported with its name and its CUptiResult spelled out
// (cuptiGetResultString: "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES", ...): one GPU run tells what broke.
// Metric names are PerfWorks / Nsight Compute names; KernelMetricNames lists them (each was checked to
// exist for the GH100 chip with cuptiProfilerHostGetMetricProperties, see RangeProfilerTest.cpp). The
// profiler is never disabled: it lives until the process exits (a context torn down at exit cannot be
// disabled safely from an atexit handler).
//
//===----------------------------------------------------------------------===//
#ifndef KLOOP_TOOLS_KLOOP_CUPTI_RANGEPROFILER_H
#define KLOOP_TOOLS_KLOOP_CUPTI_RANGEPROFILER_H

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

struct CUpti_RangeProfiler_Object;
struct CUpti_Profiler_Host_Object;

namespace kloop {
namespace cupti {

/// The metrics collected per profiled launch, in the order of RangeProfiler::Values.
extern const char *const KernelMetricNames[];
/// Number of entries of KernelMetricNames.
extern const size_t KernelMetricCount;

/// The CUDA device limits the occupancy calculation needs (cuDeviceGetAttribute), -1 when a query failed.
struct DeviceLimits {
  int SmCount = -1, WarpSize = -1, MaxThreadsPerSm = -1, MaxBlocksPerSm = -1, RegsPerSm = -1, RegsPerBlock = -1,
      SmemPerSm = -1, SmemPerBlockOptin = -1, ReservedSmemPerBlock = -1, CcMajor = -1, CcMinor = -1;
};

/// Reads the limits of device \p Dev.
DeviceLimits queryDeviceLimits(CUdevice Dev);

/// The range profiler of one CUDA context. Not thread-safe: the caller serialises begin/end.
class RangeProfiler {
public:
  /// \p MaxRanges bounds the launches profiled in the process (the counter data image holds that many ranges).
  explicit RangeProfiler(size_t MaxRanges) : MaxRanges(MaxRanges) {}
  ~RangeProfiler() = default;
  RangeProfiler(const RangeProfiler &) = delete;
  RangeProfiler &operator=(const RangeProfiler &) = delete;

  /// Sets up profiling of context \p Ctx on first use (initialize, chip name, counter availability, host
  /// object, config image, counter data image, SetConfig), then starts a range. False with \p Err set (each
  /// failing call named with its CUptiResult) when it cannot; a setup failure is permanent (Broken()).
  bool begin(CUcontext Ctx, std::string &Err);
  /// Stops the range begun last, decodes it and evaluates every metric of the new range into \p Values
  /// (KernelMetricNames order; NaN for a metric the chip lacks). False with \p Err set when it fails.
  bool end(std::vector<double> &Values, std::string &Err);
  /// A range is begun and not ended yet.
  bool busy() const { return Started; }
  bool broken() const { return !SetupError.empty(); }
  const std::string &setupError() const { return SetupError; }
  bool full() const { return Decoded >= MaxRanges; }
  CUcontext context() const { return Ctx; }
  const std::string &chip() const { return Chip; }
  size_t passes() const { return Passes; }
  /// Ranges CUPTI reported dropped while decoding.
  size_t droppedRanges() const { return Dropped; }
  /// Metrics of KernelMetricNames the chip does not have (not collected).
  const std::vector<std::string> &unsupported() const { return Unsupported; }

private:
  bool setup(CUcontext Ctx, std::string &Err);

  size_t MaxRanges;
  CUcontext Ctx = nullptr;
  CUpti_RangeProfiler_Object *Object = nullptr;
  CUpti_Profiler_Host_Object *Host = nullptr;
  std::string Chip, SetupError;
  /// What cuptiProfilerDeviceSupported said when it did not say "supported" ("" otherwise).
  std::string SupportNote;
  std::vector<uint8_t> Availability, Config, CounterData;
  std::vector<const char *> Collected; // the metrics of KernelMetricNames the chip has
  std::vector<size_t> CollectedIndex;  // their index in KernelMetricNames
  std::vector<std::string> Unsupported;
  size_t Passes = 0, Decoded = 0, Dropped = 0;
  bool Started = false;
};

/// "cuptiXxx: CUPTI_ERROR_... (message)" for a failed call.
std::string cuptiFailure(const char *Call, int Result);

/// A CUPTI parameter struct of type \p T, zeroed, with its structSize set to \p Size (the header's
/// T_STRUCT_SIZE).
template <typename T> T cuptiParams(size_t Size) {
  T P;
  std::memset(&P, 0, sizeof(P));
  P.structSize = Size;
  return P;
}

} // namespace cupti
} // namespace kloop

#endif
