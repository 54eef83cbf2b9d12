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

namespace kloop {
namespace optimize {

/// The payload of step (round 0, \p State, \p Key) of \p Run once finished,
/// else null: "final" (StepState::Done) and "canary" (StepState::Measure).
llvm::Expected<nlohmann::json> runStepPayload(Journal &J, int64_t Run, StepState State, llvm::StringRef Key);

} // namespace optimize
} // namespace kloop

#endif
