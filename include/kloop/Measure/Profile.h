//===- kloop/Measure/Profile.h - What kloop reads from a kloop-cupti JSON -===//
///
/// \file
/// The subset of the "kloop-cupti/1" profile JSON (written by
/// libkloop-cupti.so; format in docs/measure.md) that measurement needs:
/// launches with their GPU durations and the NVML environment samples. Output
/// captures are read by kloopVerify, which owns their comparison.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_MEASURE_PROFILE_H
#define KLOOP_MEASURE_PROFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <string>
#include <vector>

namespace kloop {
namespace measure {

/// One kernel launch as recorded by the CUPTI Activity API.
struct ProfileLaunch {
  uint64_t Seq = 0;          ///< global launch order in the process
  std::string Kernel;        ///< mangled name
  std::string Name;          ///< demangled name
  uint64_t StartNs = 0;      ///< GPU timestamp, ns
  uint64_t EndNs = 0;        ///< GPU timestamp, ns
  uint64_t DurationNs = 0;   ///< EndNs - StartNs, ns
  uint64_t Stream = 0;
};

/// One NVML sample of the GPU's state.
struct EnvSample {
  uint64_t TNs = 0;           ///< timestamp, ns, same clock as launches
  unsigned SmClockMHz = 0;
  unsigned MemClockMHz = 0;
  unsigned TempC = 0;
  uint64_t PowerMw = 0;
  uint64_t ThrottleReasons = 0; ///< nvmlClocksEventReasons bitmask
};

/// The parts of one profile file that kloopMeasure uses.
struct Profile {
  std::string DeviceName;  ///< e.g. "NVIDIA H200"; empty if absent
  std::string DeviceCC;    ///< e.g. "9.0"
  uint64_t L2Bytes = 0;
  bool Nvml = false;
  std::vector<ProfileLaunch> Launches;
  std::vector<EnvSample> EnvSamples;
  uint64_t OverheadNs = 0; ///< overhead.wall_ns_in_callbacks
};

/// NVML throttle-reason bits that do not slow a running kernel: GPU idle
/// (0x1), applications clocks setting (0x2), display clock setting (0x100).
/// Values from nvml.h (nvmlClocksEventReason*). Any other bit set counts as
/// throttling (power cap 0x4, HW slowdown 0x8, sync boost 0x10, thermal
/// 0x20/0x40, power brake 0x80).
constexpr uint64_t BenignThrottleMask = 0x1 | 0x2 | 0x100;

/// True when the NVML sample governing \p L (the last sample at or before its
/// start, else the first one) reports a throttle reason outside
/// BenignThrottleMask. False when \p P has no samples.
bool launchThrottled(const Profile &P, const ProfileLaunch &L);

/// Parses profile JSON text. \p Name names the file in errors.
/// Errors: not JSON; "schema" missing or not "kloop-cupti/1"; "launches"
/// missing or not an array; a launch without kernel/name or with negative or
/// non-numeric times.
llvm::Expected<Profile> parseProfile(llvm::StringRef Text, llvm::StringRef Name);

/// Reads and parses the file \p Path. Error when it is missing or unreadable.
llvm::Expected<Profile> loadProfile(llvm::StringRef Path);

} // namespace measure
} // namespace kloop

#endif
