//===- kloop/Decide/Decision.h - Accept or refuse a candidate --------------===//
///
/// \file
/// The acceptance rule of `kloop compare` (issue 4, docs/decide.md).
///
/// A candidate is judged per kernel and per shape. One (kernel, shape) pair is
/// accepted only if ALL of the following hold:
///  1. after discarding throttled samples and samples taken while another
///     process used the GPU (filterSamples), each side has at least
///     DecisionThresholds::MinSamples samples (otherwise the verdict is
///     InsufficientSamples, with a reason that says how many samples each
///     cause discarded, unless rule 4 or 5 already refuses it);
///  2. the lower bound of the bootstrap confidence interval of
///     median(baseline) / median(candidate) exceeds 1 + MinGain;
///  3. p99(candidate) <= p99(baseline) * (1 + P99Tolerance);
///  4. outputs matched the baseline on every seed checked, at least one seed
///     was checked, and (with RequireHeldOutSeed) at least one of them was a
///     held-out seed;
///  5. for every output whose baseline was bitwise deterministic (same seed
///     run twice, equal hashes), the candidate is too; with
///     RequireDeterminismEvidence, at least one output must have been checked.
///
/// The combined verdict over all pairs is Accepted only if every pair is
/// Accepted: one regressing shape refuses the candidate whatever the others
/// gain. The geometric mean of the per-pair speed-ups is computed as an extra
/// column for the report and is NEVER an input of any decision.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_DECIDE_DECISION_H
#define KLOOP_DECIDE_DECISION_H

#include "kloop/Decide/Bootstrap.h"
#include "kloop/Decide/Statistics.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kloop {
namespace decide {

/// Result of comparing the candidate's outputs with the baseline's for one
/// input seed (produced by kloopVerify's compareCaptures()).
struct SeedCheck {
  /// The input seed passed to the workload ({seed} placeholder).
  uint64_t Seed = 0;
  /// True for a seed held out from the search and used only for acceptance.
  bool HeldOut = false;
  /// True when every captured output matched within its tolerance and no
  /// anti-cheat check fired.
  bool Matched = false;
  /// One-line reason when !Matched (e.g. "arg 1 launch 3: 12 of 4096 elements
  /// differ, max rel error 3.1e-3 > 1e-5"); may be empty when matched.
  std::string Detail;
};

/// Determinism of one output: the same seed run twice gave bitwise-equal
/// captures (equal hashes on every launch).
struct DeterminismCheck {
  /// Name of the output, e.g. "saxpy arg 1".
  std::string Output;
  /// The baseline's two runs were bitwise equal.
  bool BaselineDeterministic = false;
  /// The candidate's two runs were bitwise equal.
  bool CandidateDeterministic = false;
};

/// Everything decide() needs for one kernel at one shape.
struct ShapeEvidence {
  /// Kernel name as in the inventory / .kloop.yaml `targets`.
  std::string Kernel;
  /// Shape name as in .kloop.yaml `shapes[].name`.
  std::string Shape;
  /// True when the shape is held out from search (only used for acceptance).
  /// Informational: held-out shapes are judged by the same rule.
  bool HeldOutShape = false;
  /// Timed launches of the kernel in the baseline and the candidate
  /// (durations in ns, throttle and foreign-load flags per sample),
  /// interleaved ABAB by the caller to cancel drift.
  std::vector<Sample> Baseline, Candidate;
  /// Output comparison per seed (search and held-out seeds).
  std::vector<SeedCheck> Seeds;
  /// Determinism per output.
  std::vector<DeterminismCheck> Determinism;
};

/// Thresholds of the acceptance rule. Defaults and their justification are in
/// docs/decide.md.
struct DecisionThresholds {
  /// Minimum relative gain: the CI lower bound of the speed-up must exceed
  /// 1 + MinGain. Default 0.02 (2%): below the run-to-run drift of clocks
  /// and thermal state we expect on a GPU, a gain is not worth a patch.
  double MinGain = 0.02;
  /// Allowed relative p99 regression: candidate p99 <= baseline p99 *
  /// (1 + P99Tolerance). Default 0.05 (5%).
  double P99Tolerance = 0.05;
  /// Minimum samples per side after filtering (filterSamples). Default 10: with
  /// fewer, the type-7 p99 is an interpolation of the two largest values and
  /// the bootstrap median takes only a handful of distinct values.
  size_t MinSamples = 10;
  /// Require that at least one held-out seed was verified. Default true;
  /// set false only for workloads that declare `held_out_seeds: 0`.
  bool RequireHeldOutSeed = true;
  /// Require at least one DeterminismCheck. Default true.
  bool RequireDeterminismEvidence = true;
  /// Bootstrap settings (confidence, B, seed).
  BootstrapOptions Bootstrap;
};

/// Outcome of a decision.
enum class Verdict {
  /// Every rule holds.
  Accepted,
  /// At least one rule fails.
  Rejected,
  /// Too few samples left after filtering (throttled and foreign-load
  /// samples discarded) to judge speed; outputs and determinism did not
  /// refuse the candidate. Measure more and decide again.
  InsufficientSamples,
};

/// "accepted", "rejected" or "insufficient samples".
llvm::StringRef verdictName(Verdict V);

/// Inverse of verdictName(). Errors on any other string, naming it.
llvm::Expected<Verdict> parseVerdict(llvm::StringRef Name);

/// The verdict on one kernel at one shape, with the numbers behind it.
struct ShapeVerdict {
  /// Copied from the evidence.
  std::string Kernel, Shape;
  bool HeldOutShape = false;
  /// The outcome.
  Verdict Outcome = Verdict::Rejected;
  /// Throttled samples discarded per side (FilteredSamples::DiscardedThrottled).
  size_t BaselineDiscarded = 0, CandidateDiscarded = 0;
  /// Samples discarded per side because another process used the GPU
  /// (FilteredSamples::DiscardedForeign).
  size_t BaselineForeign = 0, CandidateForeign = 0;
  /// Summaries of the kept samples (ns); absent for a side with no samples
  /// left.
  std::optional<Summary> Baseline, Candidate;
  /// Speed-up interval; absent when a side has fewer than MinSamples.
  std::optional<SpeedupInterval> Speedup;
  /// Relative p99 change candidate.P99 / baseline.P99 - 1 (positive = worse);
  /// absent when a side has fewer than MinSamples.
  std::optional<double> P99Change;
  /// Per rule: did it hold? (Speed and tail are false when not evaluated.)
  bool SpeedupOk = false, TailOk = false, OutputsOk = false,
       DeterminismOk = false;
  /// Number of seeds checked and, among them, held out.
  size_t SeedsChecked = 0, HeldOutSeedsChecked = 0;
  /// One sentence per failed rule, in rule order; empty when accepted.
  std::vector<std::string> Reasons;
  /// The verdict in words, e.g. "rejected: kernel saxpy shape n1M: p99
  /// regressed 12.3% > 5% tolerance".
  std::string Explanation;
  /// Thresholds the verdict was taken with.
  DecisionThresholds Thresholds;
};

/// Decides one kernel at one shape (rules in the file comment).
/// Errors (not verdicts): invalid thresholds (MinGain < 0, P99Tolerance < 0,
/// MinSamples < 2, bad bootstrap options) or a duration that is not finite
/// and > 0, naming the kernel, shape, side and index.
llvm::Expected<ShapeVerdict> decide(const ShapeEvidence &Evidence,
                                    const DecisionThresholds &Thresholds =
                                        DecisionThresholds());

/// The verdict on a candidate over all kernels and shapes.
struct CombinedVerdict {
  /// Accepted only if every shape is Accepted; Rejected if any shape is
  /// Rejected; otherwise InsufficientSamples.
  Verdict Outcome = Verdict::Rejected;
  /// The per-(kernel, shape) verdicts, in evidence order.
  std::vector<ShapeVerdict> Shapes;
  /// Geometric mean of the per-shape point speed-ups over the shapes that
  /// have one. An extra column for the report: NEVER a decision input.
  std::optional<double> GeomeanSpeedup;
  /// The verdict in words, naming every refused shape and its reasons.
  std::string Explanation;
  /// Thresholds the verdict was taken with.
  DecisionThresholds Thresholds;
};

/// Decides every (kernel, shape) and combines them.
/// Errors: empty evidence, or any error of decide().
llvm::Expected<CombinedVerdict>
decideAll(llvm::ArrayRef<ShapeEvidence> Evidence,
          const DecisionThresholds &Thresholds = DecisionThresholds());

} // namespace decide
} // namespace kloop

#endif
