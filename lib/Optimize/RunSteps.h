//===- RunSteps.h - Run-level steps of a journaled optimize run -----------===//
///
/// \file
/// Internal to kloopOptimize: the payloads of the run-level steps that the
/// results, a finished run's resume and `kloop compare --recheck` read.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_LIB_OPTIMIZE_RUNSTEPS_H
#define KLOOP_LIB_OPTIMIZE_RUNSTEPS_H

#include "kloop/Journal/Journal.h"
#include "kloop/Measure/KernelProfile.h"

#include <string>
#include <vector>

namespace kloop {
namespace optimize {

/// The payload of step (round 0, \p State, \p Key) of \p Run once finished,
/// else null: "final" (StepState::Done) and "canary" (StepState::Measure).
llvm::Expected<nlohmann::json> runStepPayload(Journal &J, int64_t Run, StepState State, llvm::StringRef Key);

/// The payload of the run's final step (null until it finished) and of its drift canary (null when none ran).
llvm::Expected<nlohmann::json> finalPayload(Journal &J, int64_t Run);
llvm::Expected<nlohmann::json> canaryOf(Journal &J, int64_t Run);

/// \p V formatted with \p Fmt when it is a number, else "n/a".
std::string num(const nlohmann::json &V, const char *Fmt = "{0:f0}");

/// A candidate as the reports show it: its edits ("kind target=value; ..."), its outcome (the verdict's,
/// "refused", or "(unfinished)") and the reason (the first refusal as kloop apply words it, or the
/// verdict's explanation; "" when unfinished).
std::string candidateEdits(const ProposalSummary &P);
std::string candidateOutcome(const ProposalSummary &P);
std::string candidateReason(const ProposalSummary &P);

/// A finished `counters-<Who>` measure step (the baseline's or a new incumbent's hardware counters):
/// its payload, each profile as one line (summarizeKernelProfile) or the reason it could not be read,
/// and the problems the step recorded.
struct CountersStep {
  std::string Who;       ///< "baseline" or "cand-N"
  nlohmann::json Payload; ///< the whole payload (cost, passes, chip)
  struct Row {
    std::string Name, Shape; ///< empty when the profile is unreadable
    std::string Summary;     ///< summarizeKernelProfile, or "unreadable: <why>"
    bool Readable = true;
  };
  std::vector<Row> Rows;
  std::vector<std::string> Problems;
};

/// The finished counters steps of \p Steps, in journal order.
std::vector<CountersStep> countersSteps(const std::vector<StepRecord> &Steps);

} // namespace optimize
} // namespace kloop

#endif
