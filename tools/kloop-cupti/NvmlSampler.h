//===- NvmlSampler.h - NVML clock/temperature/power sampler ---------------===//
//
// Samples one GPU through NVML on a background thread: clocks, temperature, power, throttle reasons,
// utilization and the processes that use the GPU (foreign GPU load, docs/cupti.md). NVML is called only
// on that thread (and at start and stop), never from a CUPTI callback on the launch path. NVML is loaded
// at run time (dlopen of libnvidia-ml.so.1) because the CPU build machines have no nvml.h; the few entry
// points used are declared in NvmlSampler.cpp from the NVML API reference
// (docs.nvidia.com/deploy/nvml-api).
//
//===----------------------------------------------------------------------===//
#ifndef KLOOP_TOOLS_KLOOP_CUPTI_NVMLSAMPLER_H
#define KLOOP_TOOLS_KLOOP_CUPTI_NVMLSAMPLER_H

#include "CaptureSupport.h"

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
  /// GPU and memory utilization in percent over NVML's last sample period (nvmlDeviceGetUtilizationRates;
  /// the device as a whole, this process included).
  int64_t GpuUtilPct = -1, MemUtilPct = -1;
  /// Processes with a compute context on the device (nvmlDeviceGetComputeRunningProcesses_v3, else _v2),
  /// and of those, processes outside this process's process group (censusProcesses); -1 when unreadable.
  int64_t ComputeProcesses = -1, ForeignProcesses = -1;
  /// Process ids of the foreign processes, at most MaxForeignPids.
  std::vector<unsigned> ForeignPids;
};

/// Cost of the compute-process queries (one per sample), host wall time.
struct ProcessQueryCost {
  /// Queries made, total and largest ns spent in one (nvmlDeviceGetComputeRunningProcesses calls and the
  /// process-group lookups of the pids they list).
  uint64_t Queries = 0, TotalNs = 0, MaxNs = 0;
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
  /// What the compute-process queries cost so far.
  ProcessQueryCost processQueryCost() const;

private:
  void sampleOnce();
  void run(uint64_t PeriodUs);
  /// Lists the device's compute processes into S (ComputeProcesses, ForeignProcesses, ForeignPids); returns
  /// the NVML status (0 on success) and times the query into QueryCost.
  int readProcesses(EnvSample &S);

  std::atomic<bool> Active{false};
  std::atomic<bool> StopRequested{false};
  std::thread Thread;
  std::function<uint64_t()> Clock;
  mutable std::mutex Mutex;
  std::condition_variable Wake;
  std::vector<EnvSample> Samples;
  std::vector<std::string> Errors;
  unsigned FailedMask = 0;
  /// This process's process group (getpgid(0) at start): the workload's, by kloop's isolation.
  long OwnGroup = -1;
  /// Reused buffer of nvmlProcessInfo_t entries (only the sampling thread, or start/stop, touch it).
  std::vector<unsigned char> ProcessBuffer;
  ProcessQueryCost QueryCost; // guarded by Mutex
};

} // namespace cupti
} // namespace kloop

#endif
