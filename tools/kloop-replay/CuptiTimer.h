//===- CuptiTimer.h - kernel durations from CUPTI activity records ---------*- C++ -*-===//
//
// The replay worker's timer (docs/capture.md, "How a launch is timed"): the duration of a kernel as
// CUPTI's kernel activity record gives it (end - start, ns, the GPU's own timestamps), the figure the
// workload path reads from libkloop-cupti.so, so that replay and the workload time the same thing.
// libcupti is loaded with dlopen, so a worker without it still runs and times with CUDA events.
//
//===----------------------------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kloop::replay {

/// Kernel records of CUPTI_ACTIVITY_KIND_KERNEL (the serial kind, as libkloop-cupti.so's default
/// KLOOP_CUPTI_KERNEL_TRACE=serial), one process-wide instance.
class CuptiTimer {
public:
  /// Loads libcupti (dlopen: libcupti.so, then the toolkit's usual directories) and enables kernel
  /// records. Call after cuInit, before the first launch to time. Returns "" on success, else why the
  /// timer cannot be used (no libcupti, a symbol missing, CUPTI refusing: e.g. another CUPTI client in
  /// the process); then durationOf always returns nothing.
  static std::string start();
  /// Whether start() succeeded.
  static bool active();
  /// Flushes CUPTI's buffers and returns the duration (ns) of the kernel record of \p Mangled (a
  /// kernel's mangled name) that started last among those completed since the previous call, which forgets every record before it;
  /// nothing when no such record arrived. Call after the kernel completed.
  static std::optional<uint64_t> durationOf(const std::string &Mangled);
  /// Flushes CUPTI's buffers and forgets every record delivered so far (call after untimed launches, so
  /// that durationOf sees only the timed one). Nothing when the timer is not active.
  static void discard();
};

} // namespace kloop::replay
