//===- kloop/Optimize/Optimize.h - The closed loop of kloop optimize ------===//
///
/// \file
/// The state machine of `kloop optimize` (issue 5; docs/optimize.md):
///
///   round 0:  Extract (inventory) -> Build "baseline" (+ ptxas report)
///             -> Measure "capture" (search.timing auto or replay, with a GPU)
///   round N:  Propose -> Apply -> Build -> Verify -> Measure -> Decide  (key "cand-N");
///             Verify replays the capture when it can represent the candidate,
///             else runs the workload (docs/optimize.md, "Replay timing")
///   end:      Measure "canary" in round 0 (the baseline against itself, when a
///             final check follows), then Done "final" (stop reason, diff of
///             baseline vs best, evidence)
///
/// One candidate per round. Every transition is a journal step
/// (Journal::beginStep/finishStep/failStep) whose payload holds everything the
/// later steps need, so a resumed run (OptimizeOptions::Resume) reuses the
/// payload of each finished step instead of redoing it.
///
/// The stages that touch the outside world (the inventory and the apply of a
/// proposal, both in this process; the workload's build and its ptxas report;
/// the measured comparison) sit behind the Stages interface: makeProcessStages
/// (Stages.h) runs the real ones, and tests substitute fakes.
///
/// Without a GPU (Stages::haveGpu false) Verify and Measure are journaled as
/// skipped and nothing is accepted.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_OPTIMIZE_OPTIMIZE_H
#define KLOOP_OPTIMIZE_OPTIMIZE_H

#include "kloop/Capture/Replay.h"
#include "kloop/Decide/Decision.h"
#include "kloop/Edit/Apply.h"
#include "kloop/Inventory/Model.h"
#include "kloop/Journal/Journal.h"
#include "kloop/Measure/Config.h"
#include "kloop/Measure/KernelProfile.h"
#include "kloop/Propose/Proposer.h"
#include "llvm/Support/Error.h"
#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>

namespace kloop {
namespace optimize {

/// What applying a proposal to a candidate directory did: applied, refused
/// (Refusals, feedback for the proposer), or failed (Failure: kloop itself
/// failed on this candidate, e.g. a parse crashed; the candidate is journaled
/// as failed and is not feedback). Errors that concern every candidate alike
/// (an unreadable file, a baseline that does not parse) are not outcomes: the
/// stage returns them as llvm::Error.
struct ApplyOutcome {
  bool Applied = false;
  /// Why the proposal was refused, with the index of each refused edit
  /// (kloop/Edit/Apply.h); empty when applied or failed.
  std::vector<Refusal> Refusals;
  /// What failed, e.g. "apply: clang crashed while parsing /w/k.cu (host side)".
  std::optional<std::string> Failure;
  /// The edited code's launch formulas by launch site ID
  /// (ApplyResult::LaunchFormulas); empty unless applied.
  std::map<std::string, inv::LaunchFormula> LaunchFormulas;
  /// The refusals as kloop apply prints them (Refusal::str()), joined by "; ".
  std::string refusalText() const;
};

/// The JSON form of an ApplyOutcome, the one pair used by the journal's apply
/// step and by the `--apply-command` test seam: {"applied": bool, "refusals":
/// [{"edit_index": 0-based integer or null (the whole proposal), "edit":
/// label ("" for the whole proposal), "reason": string}], "failure": string
/// (present only when failed), "launch_formulas": {launch site ID: its
/// config_formula} (present only when applied and known)}.
nlohmann::json toJSON(const ApplyOutcome &A);

/// Reads toJSON's form from \p J. Errors name \p Source and the field: an
/// object is expected; "applied" must be a boolean; "refusals" an array of
/// objects with an integer or null "edit_index", string "edit" and "reason";
/// "failure" a string; any other key is refused; an applied outcome holds no
/// refusal and no failure.
llvm::Expected<ApplyOutcome> applyOutcomeFromJSON(const nlohmann::json &J, llvm::StringRef Source);

/// What building one source directory did.
struct BuildOutcome {
  bool Succeeded = false;
  std::string Log;           ///< build output (stdout + stderr, tail)
  int64_t WallMs = 0;
  /// ptxas report {"kernels": [...]} (parsePtxasOutput and toJSON in kloop/Optimize/Stages.h), or null when not produced.
  nlohmann::json Ptxas;
  /// True when this built the cubin alone (Stages::buildCubin), not the workload.
  bool Cubin = false;
};

/// What the verified, measured comparison of a candidate against the
/// incumbent decided.
struct CompareOutcome {
  bool Accepted = false;
  /// "accepted", "rejected", "failed_verification", "inconclusive", "refused".
  std::string Outcome;
  std::string Explanation;
  /// Per kernel and shape: {"kernel", "shape", "base_median_ns", "cand_median_ns",
  /// "ci_low", "ci_high", "base_p99_ns", "cand_p99_ns", "pct_roofline" (or null),
  /// "speedup" (median(base) / median(cand), the bootstrap's point estimate),
  /// "base_n", "cand_n" (unthrottled samples per side), and "bytes", "flops"
  /// when the shape declares them in .kloop.yaml}; the numbers are null
  /// when decide had too few samples to compute them.
  nlohmann::json Evidence = nlohmann::json::array();
  /// The full comparison (kloop-compare/1), for the journal.
  nlohmann::json Detail;
  /// What the comparison measured with, so that it can be repeated
  /// (`kloop compare --recheck`): {"rounds", "warmup", "include_held_out",
  /// "shapes" (names; empty = every shape the other fields allow),
  /// "max_seeds", "timing_first", "thresholds" (decide's thresholds JSON)};
  /// null when the stage does not say.
  nlohmann::json Settings;
  /// The timed launches per kernel and shape (measure::CompareResult::Timing);
  /// empty when the stage does not keep them (replay, test stages).
  std::vector<decide::ShapeEvidence> Timing;
  /// The device ceilings "pct_roofline" was computed with: {"device",
  /// "copy_gbps" (GB/s), "fma_gflops" (GFLOP/s)} (kloop::measure::Ceilings,
  /// bench/ceilings/ceilings.cu); null when none were known.
  nlohmann::json Ceilings;
};

/// What capturing the baseline for replay made (Stages::capture;
/// docs/optimize.md, "Replay timing").
struct CaptureOutcome {
  /// The capture directory (kloop-capture/1, docs/capture.md), absolute.
  std::string Dir;
  /// What the capture is keyed by: the first 16 hex digits of the SHA-256 of
  /// the captured command line (run.command expanded for the captured search
  /// shape, seed 0), its working directory and environment, and the bytes of
  /// the baseline's sources and protected files.
  std::string Key;
  /// A capture with this key was already in Dir (an earlier run's), and is
  /// used as it is.
  bool Reused = false;
  /// Why a capture found in Dir was replaced ("" when none was there or it was
  /// reused), e.g. "the baseline's sources or the workload command changed".
  std::string Stale;
  /// Launches captured, and the distinct kernels among them (demangled).
  unsigned Launches = 0;
  std::vector<std::string> Kernels;
};

/// A search step timed by replay (Stages::replayCompare): Compare when replay
/// judged the candidate (its verdict by decide's rule, or "crashed" when it
/// faulted or hung under replay); otherwise Fallback says why replay cannot
/// judge it (the cubins do not build, the worker failed for a reason that is
/// not the candidate's, the baseline does not reproduce the capture), and the
/// step is timed by workload runs instead.
struct ReplayCompareOutcome {
  std::optional<CompareOutcome> Compare;
  std::string Fallback;
};

/// The hardware counters of one source directory's target kernels
/// (Stages::counters; issue 15, item 2): one metrics run of the workload per
/// search shape (libkloop-cupti.so with KLOOP_CUPTI_METRICS=1 and the targets;
/// never a timing run), and one plain injected run of the same shape for its cost.
struct CountersOutcome {
  /// One profile per profiled target launch configuration and shape.
  std::vector<measure::KernelProfile> Profiles;
  /// Why a shape or a kernel has no counters (a failed CUPTI call named with
  /// its CUptiResult, a run that failed); empty when none is missing.
  std::vector<std::string> Problems;
  /// Summed wall time of the metrics runs and of the plain runs, s.
  double MetricsWallS = 0, PlainWallS = 0;
  /// The chip CUPTI named, and the replay passes per profiled launch.
  std::string Chip;
  uint64_t Passes = 0;
};

/// The outside world, as the state machine sees it. Every path is absolute.
class Stages {
public:
  virtual ~Stages();
  /// The inventory of the workload's sources (what `kloop extract` prints;
  /// kloop/Inventory/Extract.h). Errors: a source does not parse (a
  /// ParseCrashError when its parse crashed).
  virtual llvm::Expected<inv::Inventory> extract() = 0;
  /// Makes \p Dir a fresh copy of the source directory \p From (replacing
  /// anything there); returns the source directory inside the copy.
  virtual llvm::Expected<std::string> copySources(llvm::StringRef From, llvm::StringRef Dir) = 0;
  /// Applies \p ProposalFile (a proposal JSON) to the sources in \p SourceDir
  /// in place (kloop/Edit/ApplyFile.h). \p SourceDir is a fresh copy
  /// (copySources) of \p From, which no stage changes: the process stages
  /// parse the sources there, so that the parses of every candidate made from
  /// one incumbent share their precompiled preambles
  /// (kloop/Frontend/Preamble.h), and write the changed files into
  /// \p SourceDir. A crashed parse is an outcome (ApplyOutcome::Failure);
  /// errors: the proposal file or a source cannot be read, a source does not
  /// parse before the edit, the write fails.
  virtual llvm::Expected<ApplyOutcome> apply(llvm::StringRef ProposalFile, llvm::StringRef SourceDir,
                                             llvm::StringRef From) = 0;
  /// Builds \p SourceDir into \p BuildDir and produces its ptxas report.
  virtual llvm::Expected<BuildOutcome> build(llvm::StringRef SourceDir, llvm::StringRef BuildDir) = 0;
  /// True when a GPU is usable; \p Why says why not otherwise.
  virtual bool haveGpu(std::string &Why) = 0;
  /// Verifies and measures \p CandDir against \p BaseDir (\p Final: include
  /// held-out shapes and seeds). Work files go below \p WorkDir.
  virtual llvm::Expected<CompareOutcome> compare(llvm::StringRef BaseDir, llvm::StringRef CandDir,
                                                 llvm::StringRef WorkDir, bool Final) = 0;
  /// The drift canary's measurement: \p BaseDir against itself (A/A, the
  /// same source directory on both sides) on the first search shape, with
  /// the search seeds a search step uses, timing first (docs/optimize.md,
  /// "Drift canary"). Work files go below \p WorkDir. Errors: those of compare.
  virtual llvm::Expected<CompareOutcome> canary(llvm::StringRef BaseDir, llvm::StringRef WorkDir) = 0;
  /// Captures the target kernels' launches of one run of the baseline
  /// \p BaseDir's workload, for search shape \p Shape (a name in the
  /// workload's shapes) with seed 0, into \p CaptureDir, or reuses the
  /// capture there when its key matches (CaptureOutcome). Errors: no such
  /// search shape; the capture cannot be made (the program fails under
  /// capture, nothing was captured, every launch was refused;
  /// kloop/Capture/Record.h). The default says that these stages cannot capture.
  virtual llvm::Expected<CaptureOutcome> capture(llvm::StringRef BaseDir, llvm::StringRef CaptureDir,
                                                 llvm::StringRef Shape);
  /// Times and checks \p CandDir against \p BaseDir on the capture
  /// \p CaptureDir of search shape \p Shape with the replay worker
  /// (docs/capture.md); the evidence names \p Shape. Work files go below
  /// \p WorkDir. \p Configs: the captured launches either side launches
  /// with another configuration (replayConfigs, kloop/Optimize/ReplayTiming.h).
  /// Errors: only those that concern every candidate alike (a work directory
  /// that cannot be made). The default falls back.
  virtual llvm::Expected<ReplayCompareOutcome> replayCompare(llvm::StringRef BaseDir, llvm::StringRef CandDir,
                                                             llvm::StringRef CaptureDir, llvm::StringRef WorkDir,
                                                             llvm::StringRef Shape,
                                                             const capture::ReplayConfigs &Configs);
  /// Unified diff of the editable sources between two source directories
  /// ("" when identical), with a/ b/ paths relative to the source directory.
  virtual llvm::Expected<std::string> diff(llvm::StringRef BaseDir, llvm::StringRef CandDir) = 0;
  /// The hardware counters of \p SourceDir's target kernels (CountersOutcome);
  /// work files go below \p WorkDir. A profiler that cannot count, or a run
  /// that fails, is a Problem of the outcome, never an error. Errors: only
  /// those that concern every directory alike (the build directory is
  /// missing and cannot be built). The default says that these stages cannot
  /// profile.
  virtual llvm::Expected<CountersOutcome> counters(llvm::StringRef SourceDir, llvm::StringRef WorkDir);
  /// True when copySources, apply, build and buildCubin may run on other
  /// threads, several at once on distinct directories, while the calling
  /// thread runs any method on other directories (OptimizeOptions::PrepareJobs).
  /// Default false.
  virtual bool concurrentPrepare() const { return false; }
  /// Builds what a search step timed by replay needs of the candidate
  /// \p SourceDir, into \p WorkDir: its cubin (search.cubin_command, once
  /// per directory; replayCompare uses it), with the ptxas report of that
  /// build (kloop/Support/Ptxas.h). The workload itself is built only when a
  /// step needs it (docs/optimize.md, "What a candidate's build builds").
  /// A cubin that does not build is a failed outcome whose log names the
  /// reason. std::nullopt when these stages build no cubins (the default):
  /// build() builds the workload then.
  virtual std::optional<BuildOutcome> buildCubin(llvm::StringRef SourceDir, llvm::StringRef WorkDir);
};

/// Options of runOptimize.
struct OptimizeOptions {
  std::string OutDir;               ///< absolute; candidates/, accepted.patch, report.md
  std::string BaselineDir;          ///< the workload's source directory (absolute)
  std::string ConfigHash;           ///< stored with the run (configHash of the description)
  /// The workload description (absolute path), recorded with the final check
  /// so that `kloop compare --recheck` can repeat it.
  std::string ConfigPath;
  /// Run the drift canary before the final check (`--no-canary` turns it off).
  bool Canary = true;
  bool Resume = false;              ///< continue the journal's last run
  /// The proposals are complete relative to the baseline (builtin); otherwise
  /// each applies to the incumbent (LLM, command).
  bool AbsoluteProposals = false;
  unsigned MaxCandidates = 20;      ///< budget: candidates proposed
  unsigned MaxRounds = 50;          ///< budget: rounds
  unsigned Plateau = 5;             ///< stop after K rounds without an accepted win (0: never)
  std::optional<double> TimeBudgetS;    ///< wall seconds since the run started
  std::optional<int64_t> TokenBudget;   ///< tokens in + out, all proposals
  /// Stop when every search shape of the incumbent is within this many
  /// percent of its roofline ceiling (needs measured % of roofline).
  std::optional<double> SpeedOfLightPct;
  /// How search steps are timed (`search.timing`): replay on a capture of
  /// the baseline, or workload runs (docs/optimize.md, "Replay timing").
  /// The final check always runs the workload.
  measure::SearchTiming Timing = measure::SearchTiming::Workload;
  /// The workload's search shapes (not held out), in its order. Replay captures
  /// each of them and a replayed search step times every one, as a workload
  /// search step does; empty: one capture, of the shape the stages choose.
  std::vector<std::string> SearchShapes;
  /// Candidates prepared ahead (copied, applied and built: the cubin alone
  /// when the step will replay) on this many threads while the loop times the
  /// current one, for a deterministic proposer (Proposer::deterministic) or
  /// the untried proposals of a batch (Batch), and stages that allow it
  /// (Stages::concurrentPrepare); 0: one candidate at a time. A prepared
  /// candidate is used only when its round's proposal is the very proposal it
  /// was prepared for; the journal is the same either way (docs/optimize.md,
  /// "Preparing ahead").
  unsigned PrepareJobs = 0;
  /// Proposals asked for per request (Proposer::proposeBatch; `--batch`,
  /// docs/proposers.md, "Batches"), at most the candidates and rounds left;
  /// the rounds after the one that asked take the rest in order, until the
  /// incumbent changes (a win drops those left). 1: one proposal per round.
  unsigned Batch = 1;
  /// Time every replayed search step a second time by workload runs and
  /// journal both speed-ups per kernel and shape (`--agreement`;
  /// kloop/Optimize/Agreement.h). The step's verdict stays replay's, and a
  /// replayed step then times every search shape, not only up to the first
  /// that refuses the candidate.
  bool Agreement = false;
  /// The workload's `targets`, in order: --agreement pairs replayed kernels
  /// with the workload's rows by them (matchAgreement).
  std::vector<std::string> Targets;
  /// Extra context for proposers (e.g. the kernel source); merged into each context.
  nlohmann::json ExtraContext = nlohmann::json::object();
};

/// What a progress event reports, so that the display can treat each kind
/// as it should without reading the text.
enum class ProgressKind {
  /// A step or a round's outcome ("round 3: cand-3 rejected; ..."): for a
  /// terminal, not for a log.
  Step,
  /// Verification and measurement are skipped (no GPU): said in any case,
  /// since it means nothing can be accepted.
  VerificationSkipped,
};

/// One progress event: its kind and one line of text.
struct ProgressEvent {
  ProgressKind Kind = ProgressKind::Step;
  std::string Text;
};

/// Receives runOptimize's progress events.
using ProgressFn = std::function<void(const ProgressEvent &)>;

/// What a run ended with.
struct OptimizeResult {
  int64_t Run = 0;
  std::string StopReason;
  unsigned Candidates = 0;           ///< proposed in this run (resumed ones included)
  std::optional<unsigned> Best;      ///< candidate number of the final incumbent
  bool GpuSkipped = false;           ///< verification and measurement were skipped
  std::string Diff;                  ///< baseline vs final sources ("" if nothing accepted)
  /// canaryWarning of the run's drift canary: "" when it did not fire.
  std::string Unreliable;
};

/// The key of a workload description stored with a run (runs.config_hash):
/// the first 16 hex digits of the SHA-256 of the file's bytes \p Text.
std::string configHash(llvm::StringRef Text);

/// The drift canary's rule: an A/A speed-up interval [\p Lower, \p Upper]
/// drifted when Lower > 1 + \p MinGain or Upper < 1 / (1 + MinGain), i.e.
/// when the baseline measured against itself, read in either direction,
/// clears the bar decide's speed rule sets for accepting a candidate
/// (docs/optimize.md, "Drift canary", says why this and not 1 - MinGain).
bool canaryDrifted(double Lower, double Upper, double MinGain);

/// The journal payload of the drift canary from its A/A comparison \p AA
/// (Stages::canary) and its wall time \p WallS (s): {"shape", "verdict"
/// ("reliable", "unreliable" or "inconclusive": no interval to judge),
/// "reliable" (false only when some pair drifted), "min_gain", "wall_s",
/// "runs", "explanation" (the A/A's), "kernels": [{"kernel", "shape",
/// "samples_base", "samples_cand", "median_speedup", "ci_low", "ci_high"
/// (null without enough samples), "drifted"}]}. \p MinGain is decide's
/// DecisionThresholds::MinGain of the comparisons it guards.
nlohmann::json canaryPayload(const CompareOutcome &AA, double MinGain, double WallS);

/// "verdicts unreliable: the baseline measured against itself drifted by
/// -9.1% (CI [0.891, 0.927]) on shape S" (the pair furthest from 1) for a
/// canary payload that fired; "" otherwise (reliable, inconclusive, skipped).
std::string canaryWarning(const nlohmann::json &Payload);

/// The canary's figures in one sentence, whatever its verdict (or that it
/// was skipped); "" for a null payload (the canary did not run).
std::string canaryFigures(const nlohmann::json &Payload);

/// Runs (or, with Resume, continues) the loop, journaling into \p J.
/// Environment hook for tests: KLOOP_TEST_CRASH_AT=<state>:<round> makes the
/// process _exit(137) right after that step began (e.g. "apply:2").
/// Errors: the baseline does not build; a stage fails to run at all; the
/// journal fails; Resume with no run in the journal.
llvm::Expected<OptimizeResult> runOptimize(Journal &J, Stages &S, Proposer &P,
                                           const OptimizeOptions &O,
                                           const ProgressFn &Progress = nullptr);

/// Writes OutDir/accepted.patch (when something was accepted) and
/// OutDir/report.md from the journal alone (`kloop report` uses it too).
/// \p Run: the run (0: the last one). Returns the paths written.
llvm::Expected<std::vector<std::string>> writeResults(Journal &J, int64_t Run,
                                                      llvm::StringRef OutDir);

/// The run \p Run of \p J, or its last run when \p Run is 0.
/// Errors: the journal has no run; journal errors.
llvm::Expected<int64_t> resolveRun(Journal &J, int64_t Run);

/// The Markdown ledger of \p Run (report.md's content).
llvm::Expected<std::string> renderReport(Journal &J, int64_t Run);
/// The git format-patch style text of \p Run's accepted change, or "" if none.
llvm::Expected<std::string> renderPatch(Journal &J, int64_t Run);

} // namespace optimize
} // namespace kloop

#endif
