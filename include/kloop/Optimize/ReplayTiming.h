//===- kloop/Optimize/ReplayTiming.h - Search steps timed by replay -------===//
///
/// \file
/// What `kloop optimize` needs to time a search step by replay instead of
/// workload runs (issue 14, item 3; docs/optimize.md, "Replay timing"):
/// whether replay can represent a candidate at all, the tolerance the replay
/// worker checks outputs with, and the verdict on the worker's result by
/// decide's rule (docs/decide.md). Pure functions; the stage that runs the
/// capture and the worker is in kloop/Optimize/Stages.h.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_OPTIMIZE_REPLAYTIMING_H
#define KLOOP_OPTIMIZE_REPLAYTIMING_H

#include "kloop/Capture/Manifest.h"
#include "kloop/Capture/Replay.h"
#include "kloop/Inventory/Model.h"
#include "kloop/Measure/Config.h"
#include "kloop/Optimize/Optimize.h"

#include <nlohmann/json.hpp>
#include <map>
#include <set>
#include <string>

namespace kloop {
namespace optimize {

/// Why replay cannot time the candidate that \p Proposal (a proposal in the
/// edit language, docs/edits.md) makes from code inventoried as \p Inv; ""
/// when it can. Replay launches every kernel with its captured launch
/// configuration and finds it by its captured mangled name, and it runs no
/// host code, so a candidate whose launch configuration is computed by host
/// code that the edit changes cannot be represented: set_launch_config,
/// add_kernel_variant (launches retargeted to a kernel the capture never saw),
/// add_const (the kernel's mangled name changes), a set_constant of a
/// constant that a launch site uses (its inventory `uses[]` name a launch site
/// as owner, or the contexts block_size, grid_size or shared_memory_size; a
/// constant the inventory does not list has no tunable use, so none in a
/// launch configuration), and any kind not known to leave launches as they
/// were. Example: "set_constant macro:BLOCK: the launch configuration
/// of launch site launch:main#1 (block_size) is computed by host code from
/// it, and replay replays the captured one".
///
/// With \p Evaluated (the candidate's launch formulas are known, from its
/// apply), set_launch_config and set_constant are not reasons: replayConfigs
/// decides on the capture whether the new configuration can be replayed.
std::string launchConfigChange(const nlohmann::json &Proposal, const inv::Inventory &Inv, bool Evaluated = false);

/// The launch formulas of one side's source by launch site ID (the
/// inventory's "file:function/launch#N"): the sites whose formulas an apply
/// re-parsed, for a side whose edits may change a launch (launchConfigChange
/// names a reason without formulas). A site not listed is as in the
/// inventory the capture was made from; a site listed with an unknown formula
/// may launch anything.
using SiteFormulas = std::map<std::string, inv::LaunchFormula>;

/// What each side of a replayed step launches where it differs from the
/// capture, by the captured launch's index; a launch not listed is launched
/// as captured.
using ReplayConfigs = capture::ReplayConfigs;

/// The configurations the incumbent (\p Incumbent, replayed as the baseline
/// side) and the candidate (\p Candidate) give the launches of capture \p M,
/// made from the code inventoried as \p Inv (docs/optimize.md, "Replaying a
/// new launch configuration"). \p Params holds each launch's raw parameter
/// buffer (paramBuffers). A captured launch is traced to the launch sites of
/// its kernel (by symbol) whose inventory formula, with the variables the
/// launch gives away (inv::bindLaunch), yields its captured configuration;
/// each side's formulas for those sites then give that side's configuration.
/// A launch whose kernel's sites no side changes is left as captured.
///
/// Errors, each a reason to time the step by workload runs instead, naming
/// the launch and the site: no site of the kernel yields the captured
/// configuration; sites that do but disagree on a side; a side's formula is
/// unknown or cannot be evaluated (a variable the launch does not give away);
/// the side calls another kernel instantiation; an argument the side passes
/// differs from the captured one (a constant), or changes in a way kloop
/// cannot evaluate.
llvm::Expected<ReplayConfigs> replayConfigs(const capture::Manifest &M, const std::vector<std::vector<uint8_t>> &Params,
                                            const inv::Inventory &Inv, const SiteFormulas &Incumbent,
                                            const SiteFormulas &Candidate);

/// The raw parameter buffer of every launch of capture \p M in directory
/// \p Dir, in launch order. Errors name the blob (capture::readBlob).
llvm::Expected<std::vector<std::vector<uint8_t>>> paramBuffers(const std::string &Dir, const capture::Manifest &M);

/// What is wrong with \p C's run.command for `search.timing: workload`: ""
/// when it uses both {seed} and {iters} or when search steps may replay
/// (search.timing auto or replay, where the program only runs as it is, for
/// the capture and the final check); else the message, naming the file and
/// the missing placeholders.
std::string runCommandTimingProblem(const measure::WorkloadConfig &C);

/// The replay worker's `--tolerance` for \p C's outputs (docs/capture.md):
/// "exact" without outputs or when every output is exact, else "abs:X" or
/// "rel:X" with ",f32" or ",f64" from the outputs' dtype. Errors (replay
/// cannot check these outputs the way the workload compare does; the caller
/// falls back to workload runs): a `ulp` tolerance, outputs with different
/// non-exact tolerances or dtypes, a non-exact tolerance on a dtype other
/// than f32/f64.
llvm::Expected<std::string> replayTolerance(const measure::WorkloadConfig &C);

/// The verdict on a replay worker's result \p R of the incumbent (baseline
/// side) against a candidate, on the capture of shape \p Shape:
/// - the worker's own errors (exit 2: a kernel missing from a cubin, another
///   parameter layout, a bad capture) and a baseline that does not reproduce
///   the capture (exit 3) are Fallback reasons;
/// - a candidate that faulted, failed to launch or hung is Compare with
///   outcome "crashed" and the worker's message;
/// - a candidate whose outputs differ from the captured reference is
///   "failed_verification" with the first mismatch;
/// - otherwise decide's rule (decide::decideAll, default thresholds, no
///   held-out seed required, as in a search step) on the interleaved CUDA
///   event times of each captured launch: "accepted" or "rejected". The
///   evidence rows have CompareOutcome::Evidence's form, kernel = the
///   demangled name up to '(' and shape = \p Shape (with "#I", I the launch's
///   index, when the capture holds several launches of one kernel).
/// A duration of 0 ns (below the event timer's resolution) is a Fallback.
/// A capture's allocations as the judge sees them: per launch (its index in
/// the capture), the allocations the launch wrote (before != after), and of
/// those the ones a declared output (`outputs:`) of its kernel points into.
struct CapturedOutputs {
  std::map<uint64_t, std::set<uint64_t>> Written, Declared;
};

/// CapturedOutputs of capture \p M under the workload's \p Outputs: an output's
/// allocation is the one its parameter's pointer word points into (the
/// parameter's slot offset among the launch's pointer words).
CapturedOutputs capturedOutputs(const capture::Manifest &M, const std::vector<measure::OutputSpec> &Outputs);

/// With \p Outputs (nullptr: every mismatch refuses), a candidate whose first
/// mismatch is in an allocation the baseline wrote but no declared output
/// covers (a scratch buffer, such as a reduction's per-block partials, that
/// the candidate may legitimately fill differently) is a Fallback instead of
/// a refusal: the workload's own checks and the declared outputs decide.
///
/// With \p Reconfigured (the candidate was launched with a configuration kloop
/// evaluated from its launch formulas, replayConfigs), a candidate whose
/// outputs differ is a Fallback too: the evaluation rests on host values it
/// assumes unchanged (docs/optimize.md), so the workload decides.
llvm::Expected<ReplayCompareOutcome> judgeReplay(const capture::ReplayResult &R, llvm::StringRef Shape,
                                                 const CapturedOutputs *Outputs = nullptr, bool Reconfigured = false);

} // namespace optimize
} // namespace kloop

#endif
