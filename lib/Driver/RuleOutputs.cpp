//===- RuleOutputs.cpp - The workload's outputs as the rules read them ----===//
#include "RuleOutputs.h"

namespace kloop {

std::vector<OutputTolerance> ruleOutputs(const measure::WorkloadConfig &C) {
  std::vector<OutputTolerance> Out;
  for (const measure::OutputSpec &O : C.Outputs)
    Out.push_back({O.Kernel, O.Arg, verify::toleranceKindName(O.Tol.Kind).str(), O.Tol.Value});
  return Out;
}

} // namespace kloop
