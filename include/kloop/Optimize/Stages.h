//===- kloop/Optimize/Stages.h - The real stages of kloop optimize --------===//
///
/// \file
/// The Stages implementation `kloop optimize` uses: `kloop extract` and
/// `kloop apply` as subprocesses (so that optimize depends only on their
/// command-line contract), the workload's build.command (whose log gives the
/// ptxas report, kloop/Support/Ptxas.h) and kloopMeasure's compareWorkloads.
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
  /// argv prefix for `kloop extract` / `kloop apply` (default: this kloop).
  std::vector<std::string> ExtractCommand, ApplyCommand;
  /// Compiler arguments given after `--` to extract and apply.
  std::vector<std::string> CompilerArgs;
  /// Produce a ptxas report: builds run with `-Xptxas -v` appended to NVCC_APPEND_FLAGS and the
  /// report is read from their log (kloop/Support/Ptxas.h); a build without ptxas lines gets a note.
  bool Ptxas = true;
  /// libkloop-cupti.so, for compare (GPU only).
  std::string CuptiLib;
  /// Timing rounds per (shape, seed) in compare.
  unsigned Rounds = 3;
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
};

/// The real stages for workload \p C.
std::unique_ptr<Stages> makeProcessStages(const measure::WorkloadConfig &C, ProcessStagesOptions O);

} // namespace optimize
} // namespace kloop

#endif
