//===- LaunchCapture.h - capture of launches for replay (kloop capture) ---===//
//
// With KLOOP_CUPTI_CAPTURE_DIR set, libkloop-cupti.so records the first N launches of each target kernel
// and launch configuration into a kloop-capture/1 directory (kloop/Capture/Manifest.h, docs/capture.md):
// the launch configuration, the raw parameter buffer with its layout, and every device allocation an
// 8-byte word of that buffer points into, before and after the launch. KloopCupti.cpp decodes the CUPTI
// callbacks of the driver launch calls into a DriverLaunch; this file does the rest.
//
//===----------------------------------------------------------------------===//
#ifndef KLOOP_TOOLS_KLOOP_CUPTI_LAUNCHCAPTURE_H
#define KLOOP_TOOLS_KLOOP_CUPTI_LAUNCHCAPTURE_H

#include "kloop/Capture/Manifest.h"

#include <cuda.h>

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace kloop {
namespace cupti {

/// What to capture, from KLOOP_CUPTI_CAPTURE_DIR / _KERNELS / _LAUNCHES.
struct CaptureSettings {
  /// Existing directory the capture is written into (kloop capture makes a fresh temporary one).
  std::string Dir;
  /// Substrings of mangled or demangled kernel names; empty: every kernel.
  std::vector<std::string> Kernels;
  /// Launches captured per kernel and launch configuration (>= 1).
  uint64_t LaunchesPerConfig = 1;
};

/// Reads the settings from the environment; std::nullopt when KLOOP_CUPTI_CAPTURE_DIR is unset or empty.
/// A malformed KLOOP_CUPTI_CAPTURE_LAUNCHES (not an integer >= 1) is appended to \p Errors and 1 is used.
std::optional<CaptureSettings> readCaptureSettings(std::vector<std::string> &Errors);

/// A driver-API kernel launch (cuLaunchKernel, cuLaunchKernelEx, cuLaunchCooperativeKernel and their
/// _ptsz forms), decoded from its CUPTI callback.
struct DriverLaunch {
  /// Launch number (the profile's seq): the runtime launch's when the driver launch is made inside one.
  uint64_t Seq = 0;
  /// The kernel's mangled name ("" when unknown).
  std::string Mangled;
  uint32_t Grid[3] = {1, 1, 1};
  uint32_t Block[3] = {1, 1, 1};
  uint64_t DynamicSmem = 0;
  /// "default", "per_thread_default" or "created".
  std::string StreamKind;
  /// The launch is being recorded into a graph (stream capture): it cannot be synchronised.
  bool StreamCapturing = false;
  bool Cooperative = false;
  uint32_t Cluster[3] = {0, 0, 0};
  /// cuLaunchKernelEx attributes other than cooperative and cluster dimension (ids), noted in refusals
  /// only when they change what a launch computes (none do today; kept for the record).
  std::vector<unsigned> OtherAttributes;
  /// kernelParams (one pointer per parameter), or the packed `extra` buffer; both null when the launch
  /// passed neither.
  void **Params = nullptr;
  const char *ExtraBuf = nullptr;
  size_t ExtraSize = 0;
};

/// Answers the parameter layout of the launched kernel (offset and size per parameter), or std::nullopt
/// with the reason in its argument.
using LayoutQuery = std::function<std::optional<std::vector<capture::ParamSlot>>(std::string &Why)>;

/// The tracked allocation containing an address (the injection library's allocation map).
using TrackedLookup = std::function<std::optional<capture::AddressRange>(uint64_t)>;

/// Records launches into a capture directory. Thread safe; the before/after copies of one launch happen
/// on the thread that launched it, between the enter and exit callbacks of its driver launch.
class LaunchCapturer {
public:
  explicit LaunchCapturer(CaptureSettings S);
  ~LaunchCapturer();

  /// True when \p Mangled is a target kernel (by mangled or demangled name).
  bool isTarget(const std::string &Mangled) const;

  /// Enter callback of a driver launch: decides whether this launch is captured, and if so records the
  /// parameter buffer, finds the allocations it points into and copies them (after synchronising the
  /// context), or records a refusal with the reason.
  void onEnter(const DriverLaunch &L, const LayoutQuery &Layout, const TrackedLookup &Tracked);

  /// Exit callback of the same launch: synchronises and copies the allocations again (the reference).
  void onExit(bool Succeeded);

  /// A runtime launch of a target kernel inside which no driver launch was reported: not captured.
  void refuseUnseen(uint64_t Seq, const std::string &Mangled);

  /// Writes manifest.json (once; at process exit).
  void finish();

  /// A launch between its enter and exit callbacks (one per thread).
  struct Pending;

private:
  bool claim(const DriverLaunch &L);
  void refuse(uint64_t Seq, const std::string &Mangled, const std::string &Reason);
  void error(const std::string &Message);
  bool copyAllocation(const capture::AddressRange &R, std::string &Blob);
  std::optional<std::string> checkMemory(const capture::FoundPointer &P);
  void describeDevice();

  CaptureSettings Settings;
  std::mutex Mu;
  capture::Manifest M;
  capture::BlobWriter Blobs;
  /// Launches seen per kernel and launch configuration (mangled name, grid, block, dynamic shared memory).
  std::map<std::tuple<std::string, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint64_t>, uint64_t>
      PerConfig;
  std::vector<char> Chunk;
  bool DeviceKnown = false;
  bool Finished = false;
};

} // namespace cupti
} // namespace kloop

#endif
