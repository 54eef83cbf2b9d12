//===- RuleOutputs.h - The workload's outputs as the rules read them -*- C++ -*-===//
//
// Private to kloopDriver (kloop apply --rule, kloop extract --explain-rules, kloop optimize).
//
//===----------------------------------------------------------------------===//
#ifndef KLOOP_LIB_DRIVER_RULEOUTPUTS_H
#define KLOOP_LIB_DRIVER_RULEOUTPUTS_H

#include "kloop/Edit/Rules.h"
#include "kloop/Measure/Config.h"

#include <vector>

namespace kloop {

/// The outputs of workload \p C (`outputs:`) as the rules read them: kernel, argument and tolerance of each
/// entry (rule fast-math, docs/rules/fast-math.md).
std::vector<OutputTolerance> ruleOutputs(const measure::WorkloadConfig &C);

} // namespace kloop

#endif
