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
/// With CompareOptions::TimingFirst (screening only) the order changes: the
/// timing rounds of every shape and seed run first, and a candidate the timing
/// alone rejects (screenOnTiming) is rejected without any capture or
/// determinism run; otherwise steps 1 and 2 follow for every shape and seed.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_MEASURE_COMPARE_H
#define KLOOP_MEASURE_COMPARE_H

#include "kloop/Decide/Decision.h"
#include "kloop/Measure/Config.h"
#include "kloop/Measure/Measure.h"
#include "llvm/ADT/ArrayRef.h"
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
  /// Timing first (the search-step screening of `kloop optimize`, on unless
  /// `--no-timing-first`; docs/optimize.md). What it does: the timing rounds
  /// of every selected shape and seed run before any capture run (same ABAB
  /// interleaving, same run labels); if the timing alone already rejects the
  /// candidate for some kernel and shape (screenOnTiming: decide's speed rule
  /// or p99 guard fails), the compare stops there and returns a rejection
  /// with CompareResult::VerificationSkipped set, without a single capture or
  /// determinism run. Otherwise the capture and determinism runs follow and
  /// the decision uses everything, exactly as without this option.
  /// Why it is sound: the acceptance rule needs every rule to hold on every
  /// pair, so a pair refused on speed or tail refuses the candidate whatever
  /// the outputs are; verification can only add reasons to a rejection, never
  /// reverse it. An acceptance still needs every verification run, and a
  /// candidate that passes timing but fails verification gets the same
  /// refusal as without this option. A candidate run that fails during the
  /// timing rounds is refused as always. The samples are the same runs in the
  /// same order per (shape, seed); only the captures move after them.
  /// Only allowed with IncludeHeldOut = false (an error otherwise): a final
  /// acceptance verifies in full, in the usual order.
  bool TimingFirst = false;
  /// Keep baseline builds here between compares, one directory per SHA-256 of
  /// the workload description's path, the build command, cwd and environment,
  /// and the baseline's sources and protected files (a stamp file marks a
  /// finished build; files the build reads must be listed in `sources` or
  /// `protected`); "" builds the baseline in WorkDir every time. A candidate
  /// is built afresh unless CandidateBuildDir holds a stamped build of it.
  std::string BaselineBuildCache;
  /// A build of CandidateDir that the caller already made with
  /// buildWorkload() and {build_dir} = this directory, then marked with
  /// markBuildFinished() (kloop optimize's build step). When its stamp names
  /// CandidateDir, the candidate is not built again and runs from there;
  /// otherwise (empty, no stamp, another source directory) it is built in
  /// WorkDir as usual. Saves one build per search step (3-5 s of nvcc per
  /// candidate on the GPU machine, docs/optimize.md).
  std::string CandidateBuildDir;
  /// Verification runs (capture and determinism runs, never timing runs) made at a time. Above 1,
  /// the next this many verification runs (in the serial order; a seed may be cut, its rest then made
  /// one at a time) are made side by side on the GPU before the first of them is needed; every one has ended before anything else
  /// runs, so no timing run ever shares the GPU with them. A run that does not end Ok beside others
  /// (out of GPU memory, say) is made again alone when still needed, and only that run's result
  /// counts; a note says so. After such a batch the GPU must drain (drainAfter) before anything runs.
  /// Why it is sound: a verification run's outputs do not depend on what else runs on the GPU, and
  /// its time is never a sample. Why it pays: a capture run is mostly CPU (CUDA start-up, input
  /// generation, hashing every target buffer; 3.2 s of wall time against 1.35 s plain for transpose
  /// r4096c4096 on the H200, docs/results.md, "Tenth GPU session"). 0 is an error.
  unsigned VerifyJobs = 4;
  decide::DecisionThresholds Thresholds;
};

/// The stamp file of a finished build in \p BuildDir: `<BuildDir>/.kloop-build-ok`
/// (the baseline build cache and markBuildFinished() both use it).
std::string buildStampPath(llvm::StringRef BuildDir);

/// Writes the stamp that marks \p BuildDir as a finished build of
/// \p SourceDir (a file `.kloop-build-ok` holding the source directory).
/// Errors: the stamp cannot be written (the message names the path).
llvm::Error markBuildFinished(llvm::StringRef BuildDir, llvm::StringRef SourceDir);

/// True when \p BuildDir holds the stamp of markBuildFinished() for exactly
/// \p SourceDir.
bool isBuildFinished(llvm::StringRef BuildDir, llvm::StringRef SourceDir);

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
  /// Samples discarded because another process used the GPU (foreign load,
  /// measure::launchForeign), both sides, all kernels and shapes; a sample
  /// both throttled and foreign counts here only (decide::filterSamples).
  size_t ForeignDiscarded = 0;
  /// Notes: L2 policy, NVML availability, verification runs that failed beside others and were
  /// made again alone (CompareOptions::VerifyJobs).
  std::vector<std::string> Notes;
  /// The whole verdict in words.
  std::string Explanation;
  /// Wall time split, seconds: builds (both sides), verification runs
  /// (capture and determinism, with the output comparisons; runs made side
  /// by side count once, as the wall time of the batch), timing runs, and
  /// the decision (bootstrap and rules).
  double BuildSeconds = 0, VerifySeconds = 0, TimingSeconds = 0, DecideSeconds = 0;
  /// Workload runs started, both sides (the runs of a side-by-side batch included).
  unsigned Runs = 0;
  /// The timed launches the verdict was decided on, per kernel and shape in
  /// evidence order: Kernel, Shape, HeldOutShape and both sides' Samples
  /// (durations in ns, throttled and foreign ones included; Seeds and
  /// Determinism left empty). Empty when the candidate failed before timing.
  /// `kloop optimize` journals the final check's (docs/journal.md).
  std::vector<decide::ShapeEvidence> Timing;
  /// The compare ran with CompareOptions::TimingFirst.
  bool TimingFirst = false;
  /// True when TimingFirst rejected the candidate on its timing alone and no
  /// capture or determinism run was made (Seeds is then empty, and Verdict is
  /// decide's verdict on the timing evidence alone: no seed or determinism
  /// check, so every pair also carries rule 4 and 5 reasons; only its speed
  /// and tail fields bear on the rejection).
  bool VerificationSkipped = false;
  /// Why verification was skipped ("" unless VerificationSkipped): the pairs
  /// the timing rejects, and that verifying cannot change a rejection.
  std::string VerificationSkippedReason;
};

/// What the timing evidence alone says about a candidate
/// (CompareOptions::TimingFirst).
struct TimingScreen {
  /// True when decide::decide already rejects at least one (kernel, shape)
  /// pair on its timing: enough samples on both sides, and the bootstrap CI
  /// lower bound of the median speed-up does not exceed 1 + MinGain (rule 2)
  /// or the candidate's p99 exceeds the baseline's by more than P99Tolerance
  /// (rule 3). Output and determinism checks cannot reverse such a verdict.
  /// False when every pair passes both rules or has too few samples to judge.
  bool Rejects = false;
  /// One entry per rejecting pair, in evidence order: "kernel K shape S:
  /// " and decide's speed and tail reasons, joined with "; ".
  std::vector<std::string> Rejections;
  /// decide::decideAll over the evidence with its seed and determinism checks
  /// removed (so every pair also fails rules 4 and 5 with "no output check"
  /// and, with RequireDeterminismEvidence, "no determinism check"). Its
  /// summaries, speed-up intervals and p99 changes are the timing's.
  decide::CombinedVerdict Verdict;
};

/// Decides on timing alone with kloopDecide's rule (no statistics of its
/// own): runs decide::decideAll over \p Timing without seed and determinism
/// checks, and reports the pairs whose speed or tail rule fails.
/// Errors: those of decide::decideAll (empty evidence, invalid thresholds,
/// a duration that is not finite and > 0).
llvm::Expected<TimingScreen> screenOnTiming(llvm::ArrayRef<decide::ShapeEvidence> Timing,
                                            const decide::DecisionThresholds &T);

/// Runs the comparison described in the file comment.
/// Errors: no outputs declared (nothing to verify); an unknown shape;
/// MaxSeeds or TimingFirst together with IncludeHeldOut; the baseline fails
/// to build or run (with its log tail); a run reports no CUDA
/// device (NoGpuError); kloopVerify or kloopDecide errors.
llvm::Expected<CompareResult> compareWorkloads(const WorkloadConfig &C, const CompareOptions &O,
                                               const ProgressFn &Progress = nullptr);

/// JSON form ("kloop-compare/1", embedding decide's "kloop-verdict/1"), with
/// "timing_first", "verification_skipped" (booleans) and
/// "verification_skipped_reason" (a string, or null when nothing was skipped).
nlohmann::json toJSON(const CompareResult &R);

} // namespace measure
} // namespace kloop

#endif
