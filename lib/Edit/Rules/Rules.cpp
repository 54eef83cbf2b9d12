//===- Rules.cpp - Registry of built-in rules -----------------------------===//
#include "kloop/Edit/Rules.h"

using namespace llvm;

namespace kloop {

const std::vector<Rule> &builtinRules() {
  static const std::vector<Rule> R = {
      {"restrict-const-params", "add const and __restrict__ to read-only / non-aliased kernel pointer parameters",
       matchRestrictConstParams},
      {"unroll-constant-loops", "add #pragma unroll N to loops with a small constant trip count N",
       matchUnrollConstantLoops},
  };
  return R;
}

Expected<Proposal> proposalFromRule(StringRef Name, const nlohmann::json &Inventory) {
  for (const Rule &R : builtinRules()) {
    if (Name != R.Name)
      continue;
    Proposal P;
    P.Edits = R.Match(Inventory);
    if (P.Edits.empty())
      return createStringError(inconvertibleErrorCode(), "rule '" + Name + "' matched nothing");
    P.Rationale = std::string("built-in rule ") + R.Name + ": " + R.Summary;
    P.Provenance = {{"proposer", "rule"}, {"rule", R.Name}};
    return P;
  }
  std::string Known;
  for (const Rule &R : builtinRules())
    Known += (Known.empty() ? "" : ", ") + std::string(R.Name);
  return createStringError(inconvertibleErrorCode(), "unknown rule '" + Name + "' (known rules: " + Known + ")");
}

} // namespace kloop
