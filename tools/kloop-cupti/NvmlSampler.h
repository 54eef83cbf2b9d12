//===- NvmlSampler.h - NVML clock/temperature/power sampler ---------------===//
//
// Samples one GPU through NVML on a background thread. NVML is loaded at run time (dlopen of
// libnvidia-ml.so.1) because the CPU build machines have no nvml.h; the few entry points used are
// declared in NvmlSampler.cpp from the NVML API reference (docs.nvidia.com/deploy/nvml-api).
//
//===----------------------------------------------------------------------===//
#ifndef KLOOP_TOOLS_KLOOP_CUPTI_NVMLSAMPLER_H
#define KLOOP_TOOLS_KLOOP_CUPTI_NVMLSAMPLER_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kloop {
namespace cupti {

/// One reading of the sampled GPU. A field NVML could not read is -1.
struct EnvSample {
  /// Time of the reading in ns, on the clock given to NvmlSampler::start (CUPTI's timestamp clock, the
  /// one of the kernels' start_ns/end_ns).
  uint64_t TimeNs = 0;
  /// SM clock in MHz (nvmlDeviceGetClockInfo, NVML_CLOCK_SM).
  int64_t SmClockMHz = -1;
  /// Memory clock in MHz (nvmlDeviceGetClockInfo, NVML_CLOCK_MEM).
  int64_t MemClockMHz = -1;
  /// GPU die temperature in degrees C (nvmlDeviceGetTemperature, NVML_TEMPERATURE_GPU).
  int64_t TempC = -1;
  /// Board power draw in mW (nvmlDeviceGetPowerUsage).
  int64_t PowerMw = -1;
  /// Bit mask of nvmlClocksEventReason* (nvmlDeviceGetCurrentClocksEventReasons, or the older
  /// ...ThrottleReasons); -1 when unreadable. Bit 0x1 (GPU idle) is not a slowdown.
  int64_t ThrottleReasons = -1;
};

/// Background NVML sampler of one device. All methods are thread safe and never throw.
class NvmlSampler {
public:
  /// Loads NVML, finds the device by PCI bus id (as cuDeviceGetPCIBusId prints it, e.g.
  /// "0000:3B:00.0") and starts a thread reading it every \p PeriodUs microseconds (0: one reading at
  /// start and one at stop only). \p Clock returns the current time in ns. Returns false and sets
  /// \p Error when NVML cannot be loaded or the device is not found; no thread is started then.
  bool start(const std::string &PciBusId, uint64_t PeriodUs, std::function<uint64_t()> Clock,
             std::string &Error);
  /// Takes a last reading, stops the thread and shuts NVML down. Idempotent.
  void stop();
  /// True once start succeeded (NVML loaded and the device found).
  bool active() const { return Active.load(); }
  /// A copy of the readings taken so far, in time order.
  std::vector<EnvSample> samples() const;
  /// Errors met while sampling (a reading that failed once is reported once).
  std::vector<std::string> errors() const;

private:
  void sampleOnce();
  void run(uint64_t PeriodUs);

  std::atomic<bool> Active{false};
  std::atomic<bool> StopRequested{false};
  std::thread Thread;
  std::function<uint64_t()> Clock;
  mutable std::mutex Mutex;
  std::condition_variable Wake;
  std::vector<EnvSample> Samples;
  std::vector<std::string> Errors;
  unsigned FailedMask = 0;
};

} // namespace cupti
} // namespace kloop

#endif
