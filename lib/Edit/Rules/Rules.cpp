//===- Rules.cpp - Registry of built-in rules -----------------------------===//
#include "kloop/Edit/Rules.h"

#include "llvm/Support/Regex.h"

using namespace llvm;

namespace kloop {

namespace {
template <unsigned F> std::vector<RuleSite> explainCoarsen(const inv::Inventory &Inventory) {
  return explainCoarsenGridStride(Inventory, F);
}
template <unsigned F> std::vector<Edit> matchCoarsen(const inv::Inventory &Inventory) {
  return editsOf(explainCoarsenGridStride(Inventory, F));
}
template <unsigned R> std::vector<RuleSite> explainTile(const inv::Inventory &Inventory) {
  return explainTileSharedMemory(Inventory, R);
}
template <unsigned R> std::vector<Edit> matchTile(const inv::Inventory &Inventory) {
  return editsOf(explainTileSharedMemory(Inventory, R));
}
} // namespace

const std::vector<Rule> &builtinRules() {
  static const std::vector<Rule> R = {
      {"restrict-const-params", "add const and __restrict__ to read-only / non-aliased kernel pointer parameters",
       matchRestrictConstParams},
      {"unroll-constant-loops", "add #pragma unroll N to loops with a small constant trip count N",
       matchUnrollConstantLoops},
      {"pad-shared-tiles", "pad 2-D __shared__ tiles read by columns to C + 1 columns against bank conflicts",
       matchPadSharedTiles, explainPadSharedTiles, /*Structural=*/true},
      {"vectorize-global-access",
       "16-byte loads and stores in an elementwise grid-stride or block-stride loop, with a run-time alignment "
       "check and a scalar tail",
       nullptr, nullptr, /*Structural=*/true, explainVectorizeGlobalAccess},
      {"coarsen-grid-stride-2", "2 elements per thread and step of an elementwise grid-stride loop, half the grid",
       matchCoarsen<2>, explainCoarsen<2>, /*Structural=*/true},
      {"coarsen-grid-stride-4",
       "4 elements per thread and step of an elementwise grid-stride loop, a quarter of the grid", matchCoarsen<4>,
       explainCoarsen<4>, /*Structural=*/true},
      {"coarsen-grid-stride-8",
       "8 elements per thread and step of an elementwise grid-stride loop, an eighth of the grid", matchCoarsen<8>,
       explainCoarsen<8>, /*Structural=*/true},
      {"warp-shuffle-reductions",
       "end shared-memory tree reductions with warp 0's __shfl_down_sync steps (same pairs, bit-identical)",
       matchWarpShuffleReductions, explainWarpShuffleReductions, /*Structural=*/true},
      {"privatize-atomics",
       "privatize a kernel's global atomics into a per-block shared copy merged with one atomic per element",
       matchPrivatizeAtomics, explainPrivatizeAtomics, /*Structural=*/true},
      {"coalesce-thread-index",
       "swap threadIdx.x and threadIdx.y in a 2-D index whose x strides memory, so that warps read contiguously",
       matchCoalesceThreadIndex, explainCoalesceThreadIndex, /*Structural=*/true},
      {"fast-math",
       "precision change: fast intrinsics (__expf, __fdividef) where the workload's output tolerances allow their "
       "documented error",
       nullptr, nullptr, /*Structural=*/true, explainFastMath},
      {"tile-shared-memory",
       "stage a dot-product loop's operands in T x T __shared__ tiles per block (the naive matmul pattern)",
       matchTile<1>, explainTile<1>, /*Structural=*/true},
      {"tile-shared-memory-rb4",
       "tile-shared-memory with register blocking: 4 outputs per thread, a block of a quarter of the rows",
       matchTile<4>, explainTile<4>, /*Structural=*/true},
  };
  return R;
}

long long staticSharedBytes(const inv::Kernel &Kernel) {
  long long Sum = 0;
  for (const inv::SharedArray &A : Kernel.SharedArrays)
    Sum += A.Bytes.value_or(0);
  return Sum;
}

std::vector<RuleSite> explainRule(const Rule &R, const inv::Inventory &Inventory,
                                  const std::vector<OutputTolerance> *Outputs) {
  if (R.ExplainWithOutputs)
    return R.ExplainWithOutputs(Inventory, Outputs);
  if (R.Explain)
    return R.Explain(Inventory);
  std::vector<RuleSite> Out;
  for (const Edit &E : R.Match(Inventory))
    Out.push_back({E.ID, {E}, E.label()});
  return Out;
}

std::optional<std::string> elementwiseRefusal(const inv::Kernel &K, const inv::Loop &L) {
  if (!K.Edit.Editable)
    return "its kernel is not editable: " + K.Edit.NotEditableReason.value_or("");
  if (!L.Edit.Editable)
    return "not editable: " + L.Edit.NotEditableReason.value_or("");
  if (!L.ElementwiseFacts)
    return "a " + L.LoopKind + " loop: the rule rewrites `for` loops";
  if (L.ElementwiseFacts->Refusal)
    return "not an elementwise grid-stride or block-stride loop: " + *L.ElementwiseFacts->Refusal;
  return std::nullopt;
}

RuleSite replaceLoopSite(const inv::Loop &L, const std::optional<std::string> &Why,
                         llvm::function_ref<std::string()> Code, llvm::function_ref<std::string()> Fired) {
  RuleSite S;
  S.Site = L.ID;
  if (Why) {
    S.Why = *Why;
    return S;
  }
  Edit E;
  E.Kind = EditKind::ReplaceLoop;
  E.ID = L.ID;
  E.Code = Code();
  S.Edits.push_back(E);
  S.Why = Fired();
  return S;
}

std::optional<std::string> launchDimRefusal(const inv::LaunchSite &L, bool Grid) {
  const char *What = Grid ? "grid" : "block";
  const std::optional<inv::LaunchDim> &D = Grid ? L.Grid : L.Block;
  if (!L.Edit.Editable)
    return "its launch site " + L.ID + " is not editable: " + L.Edit.NotEditableReason.value_or("");
  if (L.Via == "cudaLaunchKernelEx")
    return "its launch site " + L.ID + " launches through cudaLaunchKernelEx, whose " + What +
           " set_launch_config cannot change";
  if (!D || !llvm::Regex("^([A-Za-z_][A-Za-z0-9_]*|[0-9]+[uU]?)$").match(D->Expr))
    return "the " + std::string(What) + " of its launch site " + L.ID +
           " is not a name or a literal (it would be evaluated three times)";
  return std::nullopt;
}

std::vector<Edit> editsOf(const std::vector<RuleSite> &Sites) {
  std::vector<Edit> Out;
  for (const RuleSite &S : Sites)
    Out.insert(Out.end(), S.Edits.begin(), S.Edits.end());
  return Out;
}

nlohmann::json structuralRuleCandidates(const inv::Inventory &Inventory, const std::vector<OutputTolerance> *Outputs) {
  nlohmann::json Out = nlohmann::json::array();
  for (const Rule &R : builtinRules()) {
    if (!R.Structural)
      continue;
    for (const RuleSite &S : explainRule(R, Inventory, Outputs)) {
      Proposal P;
      P.Edits = S.Edits;
      Out.push_back({{"rule", R.Name}, {"site", S.Site}, {"why", S.Why}, {"edits", proposalToJson(P)["edits"]}});
    }
  }
  return Out;
}

/// "\n  <site>: <why>" for each site of \p Sites (all refusals when nothing fired).
static std::string refusals(const std::vector<RuleSite> &Sites) {
  std::string Out;
  for (const RuleSite &S : Sites)
    Out += "\n  " + S.Site + ": " + S.Why;
  return Out;
}

Expected<Proposal> proposalFromRule(StringRef Name, const inv::Inventory &Inventory,
                                    const std::vector<OutputTolerance> *Outputs) {
  for (const Rule &R : builtinRules()) {
    if (Name != R.Name)
      continue;
    Proposal P;
    std::vector<RuleSite> Sites;
    if (R.ExplainWithOutputs) {
      Sites = R.ExplainWithOutputs(Inventory, Outputs);
      P.Edits = editsOf(Sites);
    } else {
      P.Edits = R.Match(Inventory);
    }
    if (P.Edits.empty())
      return createStringError(inconvertibleErrorCode(), "rule '" + Name + "' matched nothing" + refusals(Sites));
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
