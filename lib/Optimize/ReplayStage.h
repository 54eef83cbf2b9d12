//===- ReplayStage.h - Capture and replay stages of kloop optimize --------===//
///
/// \file
/// Internal to kloopOptimize: what the process stages (kloop/Optimize/Stages.h) do for
/// Stages::capture and Stages::replayCompare (docs/optimize.md, "Replay timing"). The capture is
/// recordCapture (kloop/Capture/Record.h) of the baseline's run.command for the first search shape,
/// keyed by that command and the baseline's sources; a search step builds one cubin per source
/// directory with search.cubin_command and sends it to the search's long-lived replay worker
/// (capture::ReplayServer, kloop/Capture/Replay.h), whose result judgeReplay
/// (kloop/Optimize/ReplayTiming.h) decides; the step's time split goes into the verdict's
/// detail.replay_time.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_LIB_OPTIMIZE_REPLAYSTAGE_H
#define KLOOP_LIB_OPTIMIZE_REPLAYSTAGE_H

#include "kloop/Capture/Replay.h"
#include "kloop/Measure/Config.h"
#include "kloop/Optimize/Optimize.h"
#include "kloop/Optimize/ReplayTiming.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace kloop {
namespace optimize {

/// Settings of the replay stage.
/// A run of the workload program: run.command expanded for one shape (seed 0) and its working
/// directory, as kloop compare runs it.
struct ShapeRun {
  std::string Command, Cwd;
};

/// The run of shape \p Sh of workload \p C for the sources in \p SourceDir built in \p BuildDir.
/// Errors: a placeholder of run.command or run.cwd that cannot be expanded.
llvm::Expected<ShapeRun> shapeRun(const measure::WorkloadConfig &C, const measure::ShapeSpec &Sh,
                                  llvm::StringRef SourceDir, llvm::StringRef BuildDir);

struct ReplayStageOptions {
  /// The replay worker (capture::findReplayWorker), or "" with WorkerProblem saying why there is none.
  std::string Worker, WorkerProblem;
  /// libkloop-cupti.so, which records the capture.
  std::string CuptiLib;
  /// Timing rounds of a search step: the worker times Rounds x iters launches per side.
  unsigned Rounds = 3;
  /// Cubin builds run with `-Xptxas -v` in NVCC_APPEND_FLAGS and give a ptxas report
  /// (ProcessStagesOptions::Ptxas).
  bool Ptxas = true;
};

/// Capture and replay for one workload.
class ReplayStage {
public:
  ReplayStage(const measure::WorkloadConfig &C, ReplayStageOptions O) : C(C), O(std::move(O)) {}

  /// Stages::capture, with the baseline built in \p BuildDir.
  llvm::Expected<CaptureOutcome> capture(llvm::StringRef BaseDir, llvm::StringRef BuildDir,
                                         llvm::StringRef CaptureDir, llvm::StringRef Shape);
  /// Stages::replayCompare: one served worker per capture (search shape), kept up between steps.
  llvm::Expected<ReplayCompareOutcome> compare(llvm::StringRef BaseDir, llvm::StringRef CandDir,
                                               llvm::StringRef CaptureDir, llvm::StringRef WorkDir,
                                               llvm::StringRef Shape, const capture::ReplayConfigs &Configs);
  /// Stops every replay worker that is up, so that the GPU holds no context of kloop's while a workload
  /// is timed: the measurement runner discards every sample taken while another process uses the GPU
  /// (foreign GPU load, docs/measure.md), and the worker is such a process. Called before every
  /// compare (search step, canary, final check); not before the counters' metrics runs, which time
  /// nothing. The next replayed step starts a new worker.
  void releaseGpu();
  /// Stages::buildCubin: \p SourceDir's cubin built into \p WorkDir (once per directory; compare uses
  /// it), with the ptxas report of that build. May run on another thread than compare, for another
  /// directory.
  BuildOutcome buildCubin(llvm::StringRef SourceDir, llvm::StringRef WorkDir);
  /// Forgets the cubins of source directories at or below \p Dir (a directory about to be replaced).
  void forget(llvm::StringRef Dir);

private:
  /// One directory's cubin build: the cubin's path, or why there is none; the command's stdout and
  /// stderr (its ptxas report) and wall time (ms).
  struct CubinBuild {
    std::string Path, Failure, Output;
    int64_t WallMs = 0;
  };
  /// The cubin of \p SourceDir's kernels; an error's message is the fallback reason.
  llvm::Expected<std::string> cubin(llvm::StringRef SourceDir, llvm::StringRef WorkDir, llvm::StringRef Side);
  /// \p SourceDir's cubin build: the one made before (a failed one too), else search.cubin_command run
  /// now into `<WorkDir>/<Side>.cubin`.
  CubinBuild build(llvm::StringRef SourceDir, llvm::StringRef WorkDir, llvm::StringRef Side);
  /// search.cubin_command (or the default nvcc -cubin) for \p SourceDir, with -Xptxas -v appended.
  CubinBuild runCubinCommand(llvm::StringRef SourceDir, llvm::StringRef WorkDir, llvm::StringRef Side) const;

  const measure::WorkloadConfig &C;
  ReplayStageOptions O;
  /// Source directory -> its cubin build, under CubinsLock (buildCubin runs on other threads). A failed
  /// build is kept too: a candidate's sources do not change once applied (copySources forgets the
  /// directory it replaces).
  std::map<std::string, CubinBuild> Cubins;
  std::mutex CubinsLock;
  /// The long-lived replay workers of the search, one per capture directory (one CUDA context, the
  /// capture loaded once), each started on its first replayed step and restarted after a candidate that
  /// crashed it.
  std::map<std::string, std::unique_ptr<capture::ReplayServer>> Servers;
  /// Capture directory -> its written and declared-output allocations (read once per capture).
  std::map<std::string, CapturedOutputs> Outputs;
};

} // namespace optimize
} // namespace kloop

#endif
