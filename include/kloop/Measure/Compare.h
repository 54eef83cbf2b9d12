//===- kloop/Measure/Compare.h - Baseline against candidate, end to end ---===//
///
/// \file
/// The library behind `kloop compare` (and `kloop optimize`): builds a
/// baseline and a candidate source directory, checks that protected files are
/// identical, runs both interleaved (A B A B ...) per shape and seed with
/// output capture, compares captures with kloopVerify and decides per kernel
/// and shape with kloopDecide (issue 4, item 5; docs/measure.md).
///
/// Per (shape, seed), in this order:
///  1. one capture run of each side (targets captured, buffers dumped, output
///     arguments poisoned with NaN) -> verify::compareProfiles -> a SeedCheck;
///  2. for the first seed of each shape, a second capture run of each side
///     without dumps -> verify::checkDeterminism on each side ->
///     decide::DeterminismCheck;
///  3. Rounds timing rounds A B, without capture (captures perturb timing),
///     whose target launches (after Warmup per run) are the samples.
/// Dumps of a (shape, seed) are deleted once compared (they can be GBs).
/// A candidate whose protected files differ from the baseline's is refused
/// before anything is built or run.
/// A candidate that fails to build, crashes, hangs or exits non-zero is
/// refused with that reason; the same from the baseline is an error.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_MEASURE_COMPARE_H
#define KLOOP_MEASURE_COMPARE_H

#include "kloop/Decide/Decision.h"
#include "kloop/Measure/Config.h"
#include "kloop/Measure/Measure.h"
#include "llvm/Support/Error.h"
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kloop {
namespace measure {

/// Options of compareWorkloads.
struct CompareOptions {
  std::string BaselineDir;  ///< baseline source directory ({source_dir}), absolute
  std::string CandidateDir; ///< candidate source directory, absolute
  std::string WorkDir;      ///< builds (build-base, build-cand) and runs; absolute
  unsigned Rounds = 3;      ///< timing rounds A B per (shape, seed)
  unsigned Warmup = 1;      ///< launches of each target discarded per run
  std::string CuptiLib;     ///< libkloop-cupti.so, required
  /// Include held-out shapes and seeds (final acceptance). Without, only the
  /// search shapes and seeds are used and no held-out seed is required.
  bool IncludeHeldOut = true;
  std::vector<std::string> Shapes; ///< only these shapes; empty = all (per IncludeHeldOut)
  /// Screening (the search-time compares of `kloop optimize`, docs/optimize.md):
  /// verify and time only the first MaxSeeds search seeds of each shape
  /// (0 = every seed). Only allowed with IncludeHeldOut = false: a final
  /// acceptance always checks every seed.
  unsigned MaxSeeds = 0;
  /// Keep baseline builds here between compares, one directory per SHA-256 of
  /// the workload description's path, the build command, cwd and environment,
  /// and the baseline's sources and protected files (a stamp file marks a
  /// finished build; files the build reads must be listed in `sources` or
  /// `protected`); "" builds the baseline in WorkDir every time. A candidate
  /// is always built afresh.
  std::string BaselineBuildCache;
  decide::DecisionThresholds Thresholds;
};

/// What one compare found.
struct CompareResult {
  /// True only if the combined verdict is Accepted, no protected file
  /// differs and the candidate never failed.
  bool Accepted = false;
  /// Per kernel and shape; empty when the candidate failed before timing.
  std::optional<decide::CombinedVerdict> Verdict;
  /// Protected files that differ between baseline and candidate, or that
  /// changed while the candidate was built and run (one sentence each).
  std::vector<std::string> ProtectedChanges;
  /// "candidate build failed: ...", "candidate run ... crashed: ...".
  std::optional<std::string> CandidateFailure;
  /// Output checks per shape and seed, with kloopVerify's explanations.
  struct SeedResult {
    std::string Shape;
    unsigned Seed = 0;
    bool HeldOut = false;
    bool Matched = false;
    std::string Explanation;
  };
  std::vector<SeedResult> Seeds;
  /// Throttled samples discarded, both sides, all kernels and shapes.
  size_t ThrottledDiscarded = 0;
  /// Notes: L2 policy, NVML availability.
  std::vector<std::string> Notes;
  /// The whole verdict in words.
  std::string Explanation;
  /// Wall time split, seconds: builds (both sides), verification runs
  /// (capture and determinism, with the output comparisons), timing runs,
  /// and the decision (bootstrap and rules).
  double BuildSeconds = 0, VerifySeconds = 0, TimingSeconds = 0, DecideSeconds = 0;
  /// Workload runs started, both sides.
  unsigned Runs = 0;
};

/// Runs the comparison described in the file comment.
/// Errors: no outputs declared (nothing to verify); an unknown shape; the
/// baseline fails to build or run (with its log tail); a run reports no CUDA
/// device (NoGpuError); kloopVerify or kloopDecide errors.
llvm::Expected<CompareResult> compareWorkloads(const WorkloadConfig &C, const CompareOptions &O,
                                               const ProgressFn &Progress = nullptr);

/// JSON form ("kloop-compare/1", embedding decide's "kloop-verdict/1").
nlohmann::json toJSON(const CompareResult &R);

} // namespace measure
} // namespace kloop

#endif
