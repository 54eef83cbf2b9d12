//===- kloop/Measure/GpuMonitor.h - Who holds the GPU, seen from kloop ----===//
///
/// \file
/// kloop's host-side view of the GPU through NVML (issue 17, item 1): which
/// processes hold a compute context on the monitored devices, with how much
/// device memory, and how busy each device is. The runner (Runner.h) takes a
/// snapshot before every run (what is there then is foreign to the run) and,
/// after a run that did not end Ok, waits until the GPU has drained before
/// anything else runs (waitForDrain); a GPU that does not drain within the
/// bound stops the measurement (DirtyGpuError).
///
/// NVML is loaded at run time with dlopen, from $KLOOP_NVML_LIBRARY when set
/// (the tests point it at a fake NVML, test/Inputs/fake-nvml/), else
/// libnvidia-ml.so.1; the few entry points used are declared in GpuMonitor.cpp
/// from the NVML API reference (docs.nvidia.com/deploy/nvml-api), as in
/// tools/kloop-cupti/NvmlSampler.cpp: kloop builds without nvml.h.
///
/// Devices monitored: those watch() was given (the PCI bus ids the profiles
/// report, verify::DeviceInfo::PciBusId); until the first, the devices of
/// $CUDA_VISIBLE_DEVICES when every entry of it is a UUID ("GPU-..." or
/// "MIG-..."), else every device NVML lists (CUDA's device indices need not
/// follow NVML's order, so an index list is not mapped).
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_MEASURE_GPUMONITOR_H
#define KLOOP_MEASURE_GPUMONITOR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kloop {
namespace measure {

/// A process that NVML lists as holding a compute context on a monitored
/// device (nvmlDeviceGetComputeRunningProcesses).
struct GpuProcess {
  /// The device as kloop monitors it: the PCI bus id a profile reported, a
  /// UUID from $CUDA_VISIBLE_DEVICES, or "nvml:<index>".
  std::string Device;
  /// As NVML reports it: the pid kloop sees when NVML runs in kloop's pid
  /// namespace (it does on the GPU machine, measured).
  unsigned Pid = 0;
  /// Device memory the process holds, bytes; none when NVML does not say.
  std::optional<uint64_t> UsedBytes;

  /// The same process: same device and pid (the memory it holds may change).
  bool operator==(const GpuProcess &O) const { return Device == O.Device && Pid == O.Pid; }
  /// "pid 465, 1032 MiB" (MiB = 2^20 bytes, rounded down; "memory unknown"
  /// without UsedBytes).
  std::string describe() const;
};

/// "pid 465, 1032 MiB; pid 470, 8 MiB" (GpuProcess::describe, "; "-joined).
std::string describeProcesses(llvm::ArrayRef<GpuProcess> Ps);

/// Utilization of one monitored device.
struct GpuUtilization {
  std::string Device; ///< named as in GpuProcess::Device
  /// Percent of NVML's last sample period (1/6 s to 1 s, by product) in
  /// which a kernel ran (nvmlDeviceGetUtilizationRates().gpu); none when NVML
  /// does not support it on this device.
  std::optional<unsigned> Percent;
};

/// One look at the monitored devices.
struct GpuSnapshot {
  /// Compute processes of every monitored device, device by device in NVML's order.
  std::vector<GpuProcess> Processes;
  /// One entry per monitored device.
  std::vector<GpuUtilization> Utilization;
};

/// The processes of \p After that are not in \p Before (same device and pid).
std::vector<GpuProcess> newProcesses(const GpuSnapshot &Before, const GpuSnapshot &After);

/// NVML, loaded and initialised for the life of the object.
class GpuMonitor {
public:
  /// Loads and initialises NVML (see the file comment). Never fails: when
  /// NVML cannot be loaded, lacks an entry point, nvmlInit_v2 fails or lists
  /// no device, available() is false and unavailableReason() says why.
  GpuMonitor();
  /// Shuts NVML down (nvmlShutdown) when it was initialised; the library stays loaded.
  ~GpuMonitor();
  /// Not copyable: one NVML initialisation per object.
  GpuMonitor(const GpuMonitor &) = delete;
  GpuMonitor &operator=(const GpuMonitor &) = delete;

  /// True when NVML is loaded, initialised and lists at least one device.
  bool available() const;
  /// Why NVML is not used, e.g. "cannot load libnvidia-ml.so.1: ..." or
  /// "nvmlInit_v2 failed: Driver Not Loaded"; "" when available().
  const std::string &unavailableReason() const;
  /// The library it loads: $KLOOP_NVML_LIBRARY, else "libnvidia-ml.so.1".
  const std::string &library() const;

  /// Monitors the device with PCI bus id \p PciBusId ("0000:19:00.0", as
  /// cuDeviceGetPCIBusId prints it; NVML also takes the 8-digit domain) from
  /// now on. The first device given replaces the default set; later ones are
  /// added. False (nothing changes) when NVML is unavailable or does not know
  /// the id.
  bool watch(llvm::StringRef PciBusId);
  /// The names of the monitored devices (GpuProcess::Device).
  std::vector<std::string> devices() const;

  /// The compute processes and the utilization of every monitored device.
  /// Error when NVML is unavailable or a query fails (the message names the
  /// NVML call, the device and NVML's error string).
  llvm::Expected<GpuSnapshot> snapshot() const;

private:
  struct Impl;
  std::unique_ptr<Impl> I;
};

/// How waitForDrain ended.
struct DrainWait {
  /// True when the GPU drained within the bound.
  bool Drained = false;
  /// The last look: drained, or as the bound found it.
  GpuSnapshot Last;
  /// Processes of Last that are not in the pre-run snapshot.
  std::vector<GpuProcess> Held;
  /// Devices of Last whose utilization still had to reach 0 and had not
  /// (those where the pre-run snapshot listed no process).
  std::vector<GpuUtilization> Busy;
};

/// Polls \p M (every 20 ms) until no process is listed that \p Before did not
/// list and every device on which \p Before listed no process reports 0%
/// utilization, or until \p Deadline. A device that already ran foreign work
/// before the run is judged by its processes alone: its utilization is not
/// kloop's to wait for. A device without utilization support is judged by its
/// processes. Error when a query fails.
llvm::Expected<DrainWait> waitForDrain(const GpuMonitor &M, const GpuSnapshot &Before,
                                       std::chrono::steady_clock::time_point Deadline);

/// Error meaning "the GPU did not drain after a failed run": measurement stops
/// rather than time anything on a GPU that still runs the failed run's work
/// (issue 17, item 1). Commands report it as a stop and exit 1.
class DirtyGpuError : public llvm::ErrorInfo<DirtyGpuError> {
public:
  static char ID; ///< llvm::ErrorInfo's class id
  /// \p Reason: what was still there, e.g. "run cand-n1M-s0-t0 timed out: after
  /// 30 s NVML still lists pid 465, 1032 MiB".
  explicit DirtyGpuError(std::string Reason) : Reason(std::move(Reason)) {}
  /// "the GPU did not drain: " and the reason.
  void log(llvm::raw_ostream &OS) const override;
  /// No errno equivalent.
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }
  /// As given to the constructor.
  std::string Reason;
};

} // namespace measure
} // namespace kloop

#endif
