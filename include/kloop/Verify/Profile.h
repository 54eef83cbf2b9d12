//===- kloop/Verify/Profile.h - The JSON written by libkloop-cupti.so ------===//
///
/// \file
/// Structs for the profile/capture file written by libkloop-cupti.so (one per
/// process, named by env KLOOP_CUPTI_OUT; schema "kloop-cupti/1", described in
/// docs/verify.md) and the reader that validates it.
///
/// Required members: "schema" (== "kloop-cupti/1"), "launches" and
/// "captures" (arrays). Optional: "device", "env_samples" (default empty),
/// "nvml" (default false), "overhead". In an env sample only "t_ns" is
/// required; "compute_processes", "foreign_processes", "gpu_util_pct" and
/// "mem_util_pct" may also be -1 (unknown). In a launch, "seq", "kernel", "grid",
/// "block", "start_ns", "end_ns" and "duration_ns" are required; in a capture,
/// "seq", "kernel", "kernel_ordinal", "arg", "bytes" and "hash" are required.
/// Every other member may be absent; a member that is present must have the
/// documented type, or reading fails.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_VERIFY_PROFILE_H
#define KLOOP_VERIFY_PROFILE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kloop {
namespace verify {

/// Schema tag this reader accepts.
inline constexpr const char *ProfileSchema = "kloop-cupti/1";

/// The GPU the profile was taken on ("device").
struct DeviceInfo {
  /// e.g. "NVIDIA H200".
  std::string Name;
  /// Compute capability, e.g. "9.0".
  std::string ComputeCapability;
  /// L2 cache size in bytes.
  uint64_t L2Bytes = 0;
  /// PCI bus id as cuDeviceGetPCIBusId prints it, e.g. "0000:19:00.0" ("" when
  /// the profile does not say); kloop's GPU monitor watches this device.
  std::string PciBusId;
};

/// LaunchRecord::Seq of a record whose launch call the library did not see
/// ("seq": -1 in the file); it sorts after every seen launch.
inline constexpr uint64_t UnseenLaunchSeq = ~uint64_t(0);

/// One kernel launch recorded by the CUPTI Activity API ("launches[]").
struct LaunchRecord {
  /// Global launch order in the process; UnseenLaunchSeq for "seq": -1.
  uint64_t Seq = 0;
  /// Mangled kernel name.
  std::string Kernel;
  /// Demangled name ("" when absent).
  std::string Name;
  /// Grid and block dimensions (x, y, z).
  std::array<uint64_t, 3> Grid{}, Block{};
  /// Registers per thread.
  uint64_t Registers = 0;
  /// Static and dynamic shared memory per block, bytes.
  uint64_t StaticSmem = 0, DynamicSmem = 0;
  /// CUDA stream and context ids as reported by CUPTI.
  uint64_t Stream = 0, Context = 0;
  /// The stream the launch call named: "default" (the legacy default
  /// stream), "per_thread_default", "created" or "unknown"; "" when the
  /// profile does not say ("stream_kind" absent).
  std::string StreamKind;
  /// GPU timestamps (ns) and duration (ns, end - start).
  uint64_t StartNs = 0, EndNs = 0, DurationNs = 0;
};

/// One NVML sample ("env_samples[]").
struct EnvSample {
  /// Time of the sample, ns, on the profile's clock.
  uint64_t TimeNs = 0;
  /// SM and memory clocks, MHz. Like every NVML reading below, std::nullopt
  /// when unknown: absent, or -1 (the sampler writes -1 for a field NVML could
  /// not read, tools/kloop-cupti/NvmlSampler.h).
  std::optional<uint64_t> SmClockMHz, MemClockMHz;
  /// GPU temperature, degrees Celsius.
  std::optional<int64_t> TempC;
  /// Board power, mW.
  std::optional<uint64_t> PowerMw;
  /// NVML clocks-event (throttle) reason bit mask; 0 = none. Unknown is never
  /// read as throttled.
  std::optional<uint64_t> ThrottleReasons;
  /// Processes with a compute context on the GPU ("compute_processes",
  /// nvmlDeviceGetComputeRunningProcesses), the workload's own included.
  /// std::nullopt when unknown: absent (a library older than the member) or
  /// -1 (NVML could not list them).
  std::optional<uint64_t> ComputeProcesses;
  /// Of those, processes outside the workload's process group
  /// ("foreign_processes": another program using the GPU while the workload
  /// ran). std::nullopt when unknown, as ComputeProcesses; unknown is never
  /// read as foreign.
  std::optional<uint64_t> ForeignProcesses;
  /// Process ids of the foreign processes ("foreign_pids"), at most the
  /// library's cap (8); empty when none or unknown.
  std::vector<uint64_t> ForeignPids;
  /// GPU and memory utilization in percent over NVML's last sample period
  /// ("gpu_util_pct", "mem_util_pct", nvmlDeviceGetUtilizationRates; the
  /// workload's own work included). std::nullopt when unknown.
  std::optional<uint64_t> GpuUtilPct, MemUtilPct;
};

/// The bytes of one pointer argument after one target launch ("captures[]").
struct CaptureRecord {
  /// Global launch order of the launch captured.
  uint64_t Seq = 0;
  /// Mangled kernel name; demangled name ("" when absent).
  std::string Kernel, Name;
  /// Launch count of this kernel before this launch (0, 1, 2, ...).
  uint64_t KernelOrdinal = 0;
  /// Index of the kernel argument captured.
  uint64_t Arg = 0;
  /// Device address (informational; 0 when absent).
  uint64_t Ptr = 0;
  /// Size of the captured buffer, bytes.
  uint64_t Bytes = 0;
  /// The bytes' capture hash (kloop/Support/BufferHash.h).
  uint64_t Hash = 0;
  /// Path of the raw dump, resolved against the JSON's directory; empty when
  /// the file had "dump": null or no "dump".
  std::string DumpPath;
  /// The buffer was poisoned (0xFF or 0xA5 bytes) before the launch.
  bool Poisoned = false;
};

/// Device memory the program allocated through tracked calls (cudaMalloc*,
/// cuMemAlloc*, the async/pool variants) and had not freed at exit
/// ("memory"); absent in profiles of older libraries.
struct MemoryUse {
  /// The profile had a "memory" member.
  bool Known = false;
  /// Live allocations and their total size (bytes) at exit.
  uint64_t LiveAllocations = 0, LiveBytes = 0;
  /// Largest total size of live allocations during the run, bytes.
  uint64_t PeakBytes = 0;
};

/// What libkloop-cupti.so did about L2 residency ("l2_flush").
struct L2FlushInfo {
  /// The profile had an "l2_flush" member.
  bool Known = false;
  /// KLOOP_CUPTI_L2_FLUSH was set.
  bool Enabled = false;
  /// Launches preceded by a flush, and launches that could not be (graph
  /// launches, stream capture, a second context, a failed allocation).
  uint64_t Flushes = 0, Skipped = 0;
};

/// A whole profile file.
struct Profile {
  /// Path the profile was read from ("<memory>" for parseProfile without one).
  std::string Path;
  DeviceInfo Device;
  std::vector<LaunchRecord> Launches;
  std::vector<EnvSample> EnvSamples;
  /// True when NVML was available and env_samples is meaningful.
  bool Nvml = false;
  std::vector<CaptureRecord> Captures;
  /// Wall time spent inside the injection library's callbacks, ns.
  uint64_t OverheadWallNs = 0;
  /// Live device memory at exit (leak check).
  MemoryUse Memory;
  /// L2 flushing between launches.
  L2FlushInfo L2Flush;
  /// "kernel_trace": the CUPTI activity kind that timed the kernels, "serial"
  /// (CUPTI_ACTIVITY_KIND_KERNEL) or "concurrent"; empty when the profile does
  /// not say (a library older than the member).
  std::string KernelTrace;
  /// "errors": failures the library recorded that make the file incomplete
  /// (a CUDA or CUPTI call that failed, a bad KLOOP_CUPTI_* variable), each
  /// "message" or "message (N times)"; empty when none or absent.
  std::vector<std::string> Errors;
  /// "dropped_records": kernel activity records CUPTI dropped (launches
  /// missing from Launches); 0 when absent.
  uint64_t DroppedRecords = 0;
};

/// "" when \p P reports no error and no dropped record, else one sentence
/// naming the profile and what it reports (the first errors, quoted, and the
/// dropped count): what `kloop measure` and `kloop compare` add to their notes.
std::string profileProblems(const Profile &P);

/// Parses the text of a profile. \p Path names the file in error messages and
/// is the base for relative dump paths.
/// Errors: invalid JSON; wrong schema; a missing required member or a member
/// of the wrong type, as "<path>: launches[3].duration_ns: expected a
/// non-negative integer"; a hash that is not 16 hex digits; two captures with
/// the same (kernel, kernel_ordinal, arg).
llvm::Expected<Profile> parseProfile(llvm::StringRef Text,
                                     llvm::StringRef Path);

/// Reads and parses the file at \p Path. Errors: the file cannot be read,
/// or any error of parseProfile().
llvm::Expected<Profile> readProfile(llvm::StringRef Path);

/// kloop::bufferHash (kloop/Support/BufferHash.h) of \p Bytes: the capture
/// hash libkloop-cupti.so computes.
uint64_t bufferHashOf(llvm::ArrayRef<uint8_t> Bytes);

/// Reads the dump of \p C: the file's bytes as MemoryBuffer has them (mapped
/// when large, not copied; dumpBytes() views them). Errors: the capture has no
/// dump, the file cannot be read, its size differs from C.Bytes, or its
/// bufferHashOf differs from C.Hash (a corrupt or stale dump), each naming the
/// file.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readDump(const CaptureRecord &C);

/// The bytes of a dump that readDump() returned.
inline llvm::ArrayRef<uint8_t> dumpBytes(const llvm::MemoryBuffer &Dump) {
  return {reinterpret_cast<const uint8_t *>(Dump.getBufferStart()),
          Dump.getBufferSize()};
}

} // namespace verify
} // namespace kloop

#endif
