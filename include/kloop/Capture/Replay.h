//===- kloop/Capture/Replay.h - Run the replay worker ---------------------===//
///
/// \file
/// `kloop replay`: runs the replay worker kloop-replay (tools/kloop-replay,
/// docs/capture.md) on a capture and one or two cubins, in a process group
/// of its own with a wall-clock limit, and reads its kloop-replay/1 result.
/// The worker checks and times; this side only starts it, bounds it and
/// reads what it says.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_CAPTURE_REPLAY_H
#define KLOOP_CAPTURE_REPLAY_H

#include "llvm/Support/Error.h"
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kloop {
namespace capture {

/// What to replay.
struct ReplayOptions {
  /// Absolute path of the kloop-replay executable.
  std::string Worker;
  /// Capture directory, baseline cubin, candidate cubin ("" for none).
  std::string Capture, Cubin, CandidateCubin;
  /// Timed launches per captured launch and side; >= 1.
  unsigned Iters = 10;
  /// Indices of the manifest's launches to replay; empty: all.
  std::vector<uint64_t> Launches;
  /// "exact", "abs:X" or "rel:X", optionally ",f32"/",f64" (the worker
  /// parses it).
  std::string Tolerance = "exact";
  /// Clear L2 before each timed launch.
  bool L2Flush = true;
  /// Poison the outputs the baseline writes without reading (classified by
  /// the worker) before each launch.
  bool Poison = false;
  /// Bound on one kernel's run inside the worker, ms; > 0.
  unsigned LaunchTimeoutMs = 10000;
  /// Bound on the whole worker, s; > 0. Past it the worker's group is killed.
  unsigned TimeoutS = 600;
  /// Directory for the worker's stdout/stderr files (created if needed).
  std::string WorkDir;
};

/// One side (baseline or candidate) of one replayed launch.
struct ReplaySide {
  /// Durations of the timed launches, ns (CUDA events).
  std::vector<uint64_t> TimesNs;
  uint64_t MedianNs = 0;
  bool Match = false;
  /// The first difference from the captured reference, "" when none.
  std::string Mismatch;
};

/// One replayed launch.
struct ReplayLaunch {
  uint64_t Index = 0, Seq = 0;
  std::string Kernel, Name;
  /// Allocations poisoned before each launch (indices into the launch's
  /// allocations).
  std::vector<uint64_t> Poisoned;
  ReplaySide Baseline;
  std::optional<ReplaySide> Candidate;
};

/// What the worker reported.
struct ReplayResult {
  /// The worker's exit code: 0 every check matched, 1 the candidate
  /// mismatched, faulted or timed out, 2 usage or capture error, 3 the
  /// baseline does not reproduce the capture.
  int ExitCode = 0;
  std::string Device;
  /// The captured allocations could not be mapped at their captured
  /// addresses and were relocated (pointers stored in device memory then
  /// point at the old addresses).
  bool Relocated = false;
  std::vector<ReplayLaunch> Launches;
  bool BaselineMatch = false;
  std::optional<bool> CandidateMatch;
  /// "baseline" or "candidate" when a launch failed, faulted or timed out.
  std::string Failed;
  bool TimedOut = false;
  /// The worker's error message, "" when none.
  std::string Error;
  /// The worker's JSON output as it printed it.
  std::string Json;
};

/// Runs the worker. Errors (nothing to report about the candidate): the
/// worker cannot be started, was killed at ReplayOptions::TimeoutS ("the
/// replay worker did not finish within 600 s"), crashed, or printed no
/// valid kloop-replay/1 result (the message quotes its stderr).
llvm::Expected<ReplayResult> runReplayWorker(const ReplayOptions &O);

/// The replay worker kloop runs: $KLOOP_REPLAY_WORKER when set (the test
/// seam that substitutes a stand-in worker), else kloop-replay beside the
/// executable found from \p Argv0 and \p MainAddr
/// (llvm::sys::fs::getMainExecutable). Errors: $KLOOP_REPLAY_WORKER is not
/// executable; the worker beside kloop does not exist (it is built only where
/// cuda.h and libcuda are found).
llvm::Expected<std::string> findReplayWorker(const char *Argv0, void *MainAddr);

} // namespace capture
} // namespace kloop

#endif
