//===- kloop/Optimize/Recheck.h - Re-measure an accepted change -----------===//
///
/// \file
/// `kloop compare --recheck JOURNAL` (issue 17, item 4; docs/optimize.md,
/// "Re-check"): repeats the final check of a `kloop optimize` run that
/// accepted a change (the same source directories, workload description,
/// shapes, seeds, timing rounds, warm-up and decision thresholds, held-out
/// inputs included) and says, per kernel and shape, whether the new median
/// speed-up falls inside the 95% interval the run journaled.
///
/// The journal's final step ("done"/"final" of round 0) holds what this
/// needs in its "final_check" object (written since this header exists; an
/// older journal is refused with an error that says so).
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_OPTIMIZE_RECHECK_H
#define KLOOP_OPTIMIZE_RECHECK_H

#include "kloop/Decide/Decision.h"
#include "kloop/Journal/Journal.h"
#include "kloop/Measure/Compare.h"
#include "kloop/Measure/Config.h"
#include "llvm/Support/Error.h"
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kloop {
namespace optimize {

/// What a re-check repeats: the final check of one journaled run.
struct RecheckPlan {
  int64_t Run = 0;
  std::string Candidate;    ///< the accepted candidate, "cand-N"
  std::string ConfigPath;   ///< the workload description the run used (absolute path)
  std::string ConfigHash;   ///< configHash() of that file's bytes when the run began
  std::string BaselineDir;  ///< the baseline's source directory (kloop's copy in the run's output)
  std::string CandidateDir; ///< the accepted candidate's source directory
  unsigned Rounds = 3;      ///< timing rounds A B per shape and seed
  unsigned Warmup = 1;      ///< launches of each target discarded per run
  std::vector<std::string> Shapes;      ///< as the final check had them (empty: every shape)
  decide::DecisionThresholds Thresholds; ///< the final check's thresholds
  /// The final check's evidence rows (CompareOutcome::Evidence): per kernel
  /// and shape the medians, "speedup", "ci_low" and "ci_high".
  nlohmann::json Evidence;
};

/// Reads the re-check plan of run \p Run (0: the journal's last run).
/// Errors, each naming the journal and the run: the journal has no run; the
/// run has not finished; it accepted nothing (no patch to re-check); its
/// final step has no "final_check" object (a journal of an older kloop) or
/// one with a missing or mistyped field (named, e.g. "final_check.settings.rounds:
/// expected an integer >= 1").
llvm::Expected<RecheckPlan> loadRecheckPlan(Journal &J, int64_t Run);

/// Checks the inputs of a re-check before anything runs: \p ConfigText (the
/// bytes of the workload description \p C) has the plan's ConfigHash, and
/// both source directories hold every `sources` and `protected` file of \p C.
/// Errors name the description and both hashes, or the missing file.
llvm::Error checkRecheckInputs(const RecheckPlan &P, const measure::WorkloadConfig &C,
                               llvm::StringRef ConfigText);

/// The options of compareWorkloads that repeat the final check of \p P, with
/// builds and runs below \p WorkDir (absolute) and \p CuptiLib.
measure::CompareOptions recheckOptions(const RecheckPlan &P, llvm::StringRef WorkDir, llvm::StringRef CuptiLib);

/// One kernel and shape of a re-check.
struct RecheckPair {
  std::string Kernel, Shape;
  bool HeldOutShape = false; ///< from the re-check's verdict (false when the re-check has no such pair)
  /// The run's median speed-up and 95% interval (absent when not journaled).
  std::optional<double> Speedup, Low, High;
  /// The re-check's (absent when it has no interval for the pair).
  std::optional<double> NewSpeedup, NewLow, NewHigh;
  /// True when NewSpeedup lies in [Low, High], bounds included.
  bool Reproduced = false;
};

/// Pairs the run's evidence rows \p Evidence with the re-check \p New by
/// (kernel, shape), in the run's order, then any pair only the re-check has.
/// A pair missing on either side, or without an interval, is not reproduced.
std::vector<RecheckPair> matchRecheck(const nlohmann::json &Evidence, const measure::CompareResult &New);

/// The JSON form ("kloop-recheck/1"): {"schema", "journal", "run",
/// "candidate", "config", "baseline_dir", "candidate_dir", "reproduced"
/// (every pair), "pairs": [{"kernel", "shape", "held_out_shape",
/// "original": {"speedup", "ci_low", "ci_high"}, "recheck": {...}, "reproduced"}],
/// "compare" (the re-check's kloop-compare/1)}; absent numbers are null.
nlohmann::json recheckJSON(const RecheckPlan &P, llvm::StringRef JournalPath,
                           const std::vector<RecheckPair> &Pairs, const measure::CompareResult &New);

} // namespace optimize
} // namespace kloop

#endif
