//===- kloop/Capture/Replay.h - Run the replay worker ---------------------===//
///
/// \file
/// `kloop replay`: runs the replay worker kloop-replay (tools/kloop-replay,
/// docs/capture.md) on a capture and one or two cubins, in a process group
/// of its own with a wall-clock limit, and reads its kloop-replay/1 result.
/// The worker checks and times; this side only starts it, bounds it and
/// reads what it says. Two ways to run it: once per replay
/// (runReplayWorker, `kloop replay`), or one long-lived worker for a whole
/// search (ReplayServer, `kloop optimize`): one CUDA context, the capture
/// loaded once, one request and one reply per candidate as JSON lines.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_CAPTURE_REPLAY_H
#define KLOOP_CAPTURE_REPLAY_H

#include "kloop/Inventory/LaunchFormula.h"
#include "nlohmann/json.hpp"
#include "llvm/Support/Error.h"
#include <chrono>
#include <map>
#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>
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
  /// The L2 state before each timed launch (capture::isL2Mode): "flush",
  /// "steady" (default), "rotate", "flush-dirty" or "warm"; docs/capture.md,
  /// "The L2 before a timed launch".
  std::string L2 = "steady";
  /// Where in device memory the timed launches run (--placements; docs/capture.md, "Placements"): timed
  /// iteration i of every launch, both sides, at placement i mod Placements (0 the captured addresses,
  /// the others copies at other addresses). 1..16; 1 times at the captured addresses only.
  unsigned Placements = 1;
  /// Where the placements land (the worker's --placement-pad-mib and --placement-seed; docs/capture.md,
  /// "Placements"): before the captured allocations' mapping and before each copy, a pad of 2 MiB x k,
  /// k in [0, PlacementPadMiB / 2) drawn from PlacementSeed (capture::placementPadBytes), as kloop compare
  /// pads a program per timing round (`placement_pad_mib`). A ReplayServer draws the copies' pads again
  /// for every request, from PlacementSeed and the request's number. 0..4096; under 4 (or Placements 1):
  /// no pads, every run at the same placements.
  unsigned PlacementPadMiB = 0;
  uint64_t PlacementSeed = 0;
  /// With L2 "rotate-sets": launches queued back to back before each timed launch, cycling the other
  /// buffer sets and never the timed one (the worker's --back-to-back --train; docs/capture.md, "Back to
  /// back"), as a program's timed loop runs; 0 launches on the rotation's sets only, each waited for.
  /// Ignored in the other L2 modes. At most MaxTrain.
  unsigned Train = 0;
  /// Poison the outputs the baseline writes without reading (classified by
  /// the worker) before each launch.
  bool Poison = false;
  /// Hold each timed launch and its CUDA events behind a stream wait until
  /// all are enqueued, so that the event interval holds no host launch
  /// latency (docs/capture.md); false passes --no-gate.
  bool Gate = true;
  /// How the worker times a launch (--timer): "cupti" (default: the
  /// kernel's CUPTI activity record, as the workload path times it; the
  /// worker falls back to events when libcupti cannot be used) or "events"
  /// (CUDA events behind the gate); docs/capture.md, "How a launch is timed".
  std::string Timer = "cupti";
  /// Bound on one kernel's run inside the worker, ms; > 0.
  unsigned LaunchTimeoutMs = 10000;
  /// Bound on the whole worker, s; > 0. Past it the worker's group is killed.
  /// For a ReplayServer: the bound on its start and on each request.
  unsigned TimeoutS = 600;
  /// Directory for the worker's stdout/stderr files (created if needed).
  std::string WorkDir;
};

/// Launch configurations a replay request gives instead of the captured
/// ones, by the captured launch's index, per side (docs/capture.md, "Serve
/// mode": the request's "configs").
/// How one side launches one captured launch instead of as captured.
struct LaunchAs {
  inv::LaunchConfig Config;
  /// The symbol of the kernel launched instead of the captured one (another
  /// instantiation of its template); "" for the captured kernel.
  std::string Kernel;
  bool operator==(const LaunchAs &O) const { return Config == O.Config && Kernel == O.Kernel; }
  bool operator!=(const LaunchAs &O) const { return !(*this == O); }
};

struct ReplayConfigs {
  std::map<uint64_t, LaunchAs> Baseline, Candidate;
  bool empty() const { return Baseline.empty() && Candidate.empty(); }
};

/// The request's "configs" member for \p C: [{"launch", "side", "grid",
/// "block", "shared_memory"}], with "kernel" when another kernel is launched.
nlohmann::json toJSON(const ReplayConfigs &C);

/// One side (baseline or candidate) of one replayed launch.
struct ReplaySide {
  /// Durations of the timed launches, ns (CUDA events).
  std::vector<uint64_t> TimesNs;
  /// The placement each of TimesNs ran at (ReplayOptions::Placements), parallel to it; empty when the
  /// worker timed at one placement.
  std::vector<uint64_t> Placements;
  uint64_t MedianNs = 0;
  bool Match = false;
  /// The first difference from the captured reference, "" when none.
  std::string Mismatch;
  /// The index (into the launch's allocations) of the allocation Mismatch is in; nullopt when there is
  /// no mismatch or it is a write outside every captured allocation.
  std::optional<uint64_t> MismatchAllocation;
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

/// Where the wall time of one replay went, s (the worker's figures from its
/// `time_ns`, the others measured here with a steady clock).
struct ReplayTimes {
  /// Starting the worker until it was ready: process start, CUDA context,
  /// reading and decompressing the capture, mapping its allocations. 0 when
  /// the request went to a worker that was already up.
  double WorkerStartS = 0;
  /// The part of WorkerStartS the worker measured itself (capture load,
  /// context, mapping).
  double CaptureLoadS = 0;
  /// Inside the worker: loading the cubins, restoring inputs (with the L2
  /// flush), the timed launches (host wall), the checks of every
  /// allocation, and the whole request.
  double ModulesS = 0, RestoreS = 0, TimedS = 0, CheckS = 0, WorkerS = 0;
  /// From writing the request to reading the reply.
  double RoundTripS = 0;
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
  /// The timed launches were enqueued behind a stream wait (no host launch
  /// latency in the CUDA event interval; docs/capture.md).
  bool Gated = false;
  /// What timed the launches: "cupti" or "events" (the worker's "timer";
  /// "events" when a worker does not say).
  std::string Timer = "events";
  /// Why the worker timed with events although asked for CUPTI ("" if not).
  std::string TimerNote;
  /// The L2 mode the worker timed from (its "l2"; "" when it does not say): the one asked for, or
  /// "rotate" when "rotate-sets" could not be used, and L2Note then says why.
  std::string L2;
  std::string L2Note;
  /// The placements the worker timed at (its "placements"; 1 when it does not say) and, when that is
  /// fewer than ReplayOptions::Placements, why ("" otherwise).
  unsigned Placements = 1;
  std::string PlacementNote;
  /// The seed the worker drew the placements' pads from and each placement's pad, MiB (its
  /// "placement_seed" and "placement_pads_mib"; absent and empty without pads), and why the pads asked for
  /// were not used ("" when they were).
  std::optional<uint64_t> PlacementSeed;
  std::vector<uint64_t> PlacementPadsMiB;
  std::string PlacementPadNote;
  /// The train the worker queued before each timed launch (its "train"; 0 when it does not say, as when
  /// "rotate-sets" fell back to "rotate").
  unsigned Train = 0;
  /// Where the time went (ReplayServer only).
  std::optional<ReplayTimes> Times;
};

/// Runs the worker. Errors (nothing to report about the candidate): the
/// worker cannot be started, was killed at ReplayOptions::TimeoutS ("the
/// replay worker did not finish within 600 s"), crashed, or printed no
/// valid kloop-replay/1 result (the message quotes its stderr).
llvm::Expected<ReplayResult> runReplayWorker(const ReplayOptions &O);

/// One long-lived replay worker (`kloop-replay --serve`, docs/capture.md,
/// "Serve mode") for the capture and settings of a ReplayOptions (its Cubin,
/// CandidateCubin and Iters are per request). The worker is started on the
/// first request, in a process group of its own, and kept for the next ones;
/// the destructor closes its stdin and reaps its group.
///
/// A candidate that faults or hangs loses the worker's context: the worker
/// replies (failed "candidate") and exits, or dies without replying, or does
/// not answer within ReplayOptions::TimeoutS (then its group is killed). Each
/// way the request's result has Failed == "candidate" (TimedOut for the
/// last) and the next request starts a new worker.
class ReplayServer {
public:
  /// \p O: Worker, Capture, Tolerance, L2, Poison, LaunchTimeoutMs,
  /// Launches, TimeoutS; WorkDir receives each worker's stderr
  /// (`replay-worker-N.stderr`, N counting starts from 1).
  explicit ReplayServer(ReplayOptions O);
  ~ReplayServer();
  ReplayServer(const ReplayServer &) = delete;
  ReplayServer &operator=(const ReplayServer &) = delete;

  /// Times and checks \p CandidateCubin ("" for none) against \p Cubin with
  /// \p Iters timed launches per side and captured launch. Errors (nothing is
  /// known about the candidate): the worker cannot be started, is not ready
  /// within TimeoutS, refuses the capture (its message), or replies with
  /// something that is not a kloop-replay/1 result.
  /// \p Configs: the launches either side launches with another
  /// configuration than the captured one (the worker checks the outputs
  /// against the captured reference all the same).
  llvm::Expected<ReplayResult> replay(const std::string &Cubin, const std::string &CandidateCubin,
                                      unsigned Iters, const ReplayConfigs &Configs = {});
  /// Workers started so far (a restart after a crash counts).
  unsigned starts() const { return Starts; }

private:
  llvm::Error start(ReplayTimes &T);
  void stop();
  /// The next line from the worker, or std::nullopt at end of output or at \p Deadline (\p TimedOut).
  std::optional<std::string> readLine(std::chrono::steady_clock::time_point Deadline, bool &TimedOut);
  std::string stderrTail() const;

  ReplayOptions O;
  pid_t Pid = -1;
  int In = -1, Out = -1;
  std::string Pending;
  unsigned Starts = 0;
  /// Requests sent so far: the next one's placement_seed is drawn from it (ReplayOptions::PlacementSeed;
  /// docs/capture.md, "Placements").
  uint64_t Requests = 0;
};

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
