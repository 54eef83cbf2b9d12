//===- kloop/Edit/Rules.h - Built-in rewrite rules --------------*- C++ -*-===//
///
/// \file
/// Built-in rules in the style of clang's Tooling/Transformer: each rule
/// matches entities of the inventory (the document `kloop extract` writes) and
/// produces edits in the edit language, so its output goes through the same
/// checks as any proposal (`kloop apply --rule NAME`). One file per rule in
/// lib/Edit/Rules/, one page per rule in docs/rules/.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_EDIT_RULES_H
#define KLOOP_EDIT_RULES_H

#include "kloop/Edit/Proposal.h"
#include "nlohmann/json.hpp"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace kloop {

/// One built-in rule.
struct Rule {
  /// Name used on the command line, e.g. "unroll-constant-loops".
  const char *Name;
  /// One line: what the rule does.
  const char *Summary;
  /// Matches the inventory \p Inventory (mergeInventory's document) and returns
  /// candidate edits (possibly none). Entities that are not editable are skipped.
  std::vector<Edit> (*Match)(const nlohmann::json &Inventory);
};

/// All built-in rules, by name.
const std::vector<Rule> &builtinRules();

/// `restrict-const-params`: for every editable kernel, `const` on each pointer
/// parameter the kernel never writes through (inventory field "written" false)
/// and `__restrict__` on each pointer parameter that is not yet restrict.
/// Aliasing launches are filtered out by kloop apply's own checks.
std::vector<Edit> matchRestrictConstParams(const nlohmann::json &Inventory);

/// `unroll-constant-loops`: `#pragma unroll N` on every editable loop without an
/// unroll hint whose trip count is a constant N with 2 <= N <= MaxFullUnroll.
std::vector<Edit> matchUnrollConstantLoops(const nlohmann::json &Inventory);

/// Largest trip count `unroll-constant-loops` unrolls fully (16: past that,
/// full unrolling mostly costs registers and instruction cache; nvcc's own
/// heuristics unroll small constant loops by 4 at -O3).
constexpr long long MaxFullUnroll = 16;

/// Runs rule \p Name on \p Inventory and wraps its edits into a proposal with a
/// rationale naming the rule. Errors: unknown rule (listing the known ones);
/// the rule matched nothing.
llvm::Expected<Proposal> proposalFromRule(llvm::StringRef Name, const nlohmann::json &Inventory);

} // namespace kloop

#endif
