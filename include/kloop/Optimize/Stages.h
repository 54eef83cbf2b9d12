//===- kloop/Optimize/Stages.h - The real stages of kloop optimize --------===//
///
/// \file
/// The Stages implementation `kloop optimize` uses: extract and apply in this
/// process, through the library calls the `kloop extract` and `kloop apply`
/// commands make (extractInventory, kloop/Inventory/Extract.h;
/// applyProposalFile, kloop/Edit/ApplyFile.h; a crashed parse is caught by
/// llvm::CrashRecoveryContext and fails only its candidate), the workload's
/// build.command (whose log gives the ptxas report, kloop/Support/Ptxas.h)
/// and kloopMeasure's compareWorkloads; for search steps timed by replay, the
/// capture of the baseline (kloop/Capture/Record.h) and the replay worker
/// (kloop/Capture/Replay.h) on cubins built with search.cubin_command. No
/// stage runs kloop's own binary.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_OPTIMIZE_STAGES_H
#define KLOOP_OPTIMIZE_STAGES_H

#include "kloop/Measure/Config.h"
#include "kloop/Optimize/Optimize.h"
#include "llvm/ADT/ArrayRef.h"

#include <memory>

namespace kloop {
namespace optimize {

/// Settings of the process stages.
struct ProcessStagesOptions {
  /// Test seam (`kloop optimize --apply-command`, hidden): when set, apply
  /// runs this argv prefix with `PROPOSAL FILES... --in-place --root DIR --
  /// ARGS` in the candidate's directory instead of applying in process; the
  /// command edits the files itself and prints the outcome on stdout as
  /// toJSON(ApplyOutcome) (kloop/Optimize/Optimize.h), read strictly. A
  /// non-zero exit, a timeout or another stdout is an error of the stage.
  std::vector<std::string> ApplyCommand;
  /// Compiler arguments given after `--` to extract and apply (relative paths
  /// are taken from the source directory being parsed).
  std::vector<std::string> CompilerArgs;
  /// Produce a ptxas report: builds run with `-Xptxas -v` appended to NVCC_APPEND_FLAGS and the
  /// report is read from their log (kloop/Support/Ptxas.h); a build without ptxas lines gets a note.
  bool Ptxas = true;
  /// libkloop-cupti.so, for compare (GPU only).
  std::string CuptiLib;
  /// Timing rounds per (shape, seed) in compare.
  unsigned Rounds = 3;
  /// Verification runs made side by side in compare (measure::CompareOptions::VerifyJobs).
  unsigned VerifyJobs = 4;
  /// Search-time compares verify and time only this many search seeds per
  /// shape (measure::CompareOptions::MaxSeeds; 0 = every seed). The final
  /// compare always checks every seed, held-out ones included.
  unsigned ScreenSeeds = 1;
  /// Search-time compares time the candidate before verifying it and skip
  /// verification when the timing alone rejects it
  /// (measure::CompareOptions::TimingFirst; `--no-timing-first` turns it
  /// off). The final compare always verifies in full.
  bool TimingFirst = true;
  /// Where baseline builds are kept between compares ("" = rebuild each time).
  std::string BaselineBuildCache;
  /// The replay worker for search steps timed by replay (capture::findReplayWorker), or "" with
  /// ReplayWorkerProblem saying why there is none (each replayed step then falls back to workload
  /// runs with that reason).
  std::string ReplayWorker, ReplayWorkerProblem;
};

/// The real stages for workload \p C.
std::unique_ptr<Stages> makeProcessStages(const measure::WorkloadConfig &C, ProcessStagesOptions O);

} // namespace optimize
} // namespace kloop

#endif
