//===- CoarsenGridStride.cpp - Rules coarsen-grid-stride-{2,4,8} -----------===//
//
// Match: an elementwise grid-stride loop (inventory "elementwise") that is all
//        its kernel does (no other statement but plain declarations).
// Legal: a grid-stride loop visits every i in [0, n) exactly once for any grid,
//        its iterations are independent (ElementwiseLoops.cpp), so F of them
//        per thread and step, with a grid F times smaller, visit the same
//        elements; the index is computed in 64 bits, so stepping F grids at a
//        time cannot overflow; every launch site of the kernel must be editable
//        and its grid a name or a literal (it is evaluated three times).
// Edit:  replace_loop of the loop, set_launch_config of each launch site.
// docs/rules/coarsen-grid-stride.md.
//
//===----------------------------------------------------------------------===//
#include "kloop/Edit/Rules.h"

namespace kloop {

/// The loop doing \p F iterations per step, one grid apart.
static std::string coarsened(const inv::Elementwise &E, unsigned F) {
  std::string S = "(long long)(" + E.Stride + ")";
  return "for (long long kloop_c0 = " + E.Init + "; kloop_c0 < (" + E.Bound + "); kloop_c0 += " +
         std::to_string(F) + " * " + S + ") {\n#pragma unroll\n  for (int kloop_c = 0; kloop_c < " +
         std::to_string(F) + "; ++kloop_c) {\n    const long long kloop_j = kloop_c0 + kloop_c * " + S +
         ";\n    if (kloop_j >= (" + E.Bound + "))\n      break;\n    const " + E.VarType + " " + E.Var + " = (" +
         E.VarType + ")kloop_j;\n    " + E.Body + "\n  }\n}";
}

/// The grid \p G made \p F times smaller in x: `dim3(G)` is G whether it is a dim3 or a number.
static std::string smallerGrid(const std::string &G, unsigned F) {
  std::string D = "dim3(" + G + ")";
  return "dim3((" + D + ".x + " + std::to_string(F - 1) + ") / " + std::to_string(F) + ", " + D + ".y, " + D + ".z)";
}

/// The grid edits of every launch site of \p K, or why one cannot be edited.
static std::optional<std::string> gridEdits(const inv::Inventory &Inv, const inv::Kernel &K, unsigned F,
                                            std::vector<Edit> &Out) {
  if (K.LaunchSites.empty())
    return std::string("the kernel has no launch site kloop sees: its grid cannot be made smaller");
  for (const std::string &ID : K.LaunchSites) {
    const inv::LaunchSite *L = Inv.launchSite(ID);
    if (!L)
      return "its launch site " + ID + " is not in the inventory";
    if (std::optional<std::string> Why = launchDimRefusal(*L, /*Grid=*/true))
      return Why;
    Edit E;
    E.Kind = EditKind::SetLaunchConfig;
    E.ID = ID;
    E.Grid = smallerGrid(L->Grid->Expr, F);
    Out.push_back(E);
  }
  return std::nullopt;
}

/// Rule coarsen-grid-stride-F on loop \p L of kernel \p K.
static RuleSite coarsenSite(const inv::Inventory &Inv, const inv::Kernel &K, const inv::Loop &L, unsigned F) {
  std::optional<std::string> Why = elementwiseRefusal(K, L);
  if (!Why && L.ElementwiseFacts->StrideKind != "grid")
    Why = "a block-stride loop: each block walks all its elements, so a smaller grid would leave some undone";
  if (!Why && L.ElementwiseFacts->OtherEffects)
    Why = "the kernel does more than the loop (" + *L.ElementwiseFacts->OtherEffects +
          " is not a plain declaration), which a smaller grid would change";
  std::vector<Edit> Grids;
  if (!Why)
    Why = gridEdits(Inv, K, F, Grids);
  RuleSite S = replaceLoopSite(
      L, Why, [&] { return coarsened(*L.ElementwiseFacts, F); },
      [&] {
        return std::to_string(F) + " elements per thread and step, one grid apart; the grid of " +
               std::to_string(Grids.size()) + " launch site(s) divided by " + std::to_string(F);
      });
  if (!Why)
    S.Edits.insert(S.Edits.end(), Grids.begin(), Grids.end());
  return S;
}

std::vector<RuleSite> explainCoarsenGridStride(const inv::Inventory &Inv, unsigned Factor) {
  std::vector<RuleSite> Out;
  for (const inv::Kernel &K : Inv.Kernels)
    for (const inv::Loop &L : K.Loops)
      Out.push_back(coarsenSite(Inv, K, L, Factor));
  return Out;
}

} // namespace kloop
