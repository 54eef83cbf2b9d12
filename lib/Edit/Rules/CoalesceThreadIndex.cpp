//===- CoalesceThreadIndex.cpp - Rule coalesce-thread-index ----------------===//
//
// Match: a kernel body that declares X = blockIdx.x * blockDim.x + threadIdx.x
//        and Y = blockIdx.y * blockDim.y + threadIdx.y and reads p[X * e + Y]
//        (inventory "index_2d"): the 32 threads of a warp, consecutive in
//        threadIdx.x, read addresses e elements apart.
// Legal: with threadIdx.x and threadIdx.y swapped in the two declarations,
//        X = blockIdx.x * blockDim.x + threadIdx.y. In a square block
//        (blockDim.x == blockDim.y, proved from every launch site's constant
//        block) threadIdx.y runs over the same range as threadIdx.x did, so each
//        block covers the same (X, Y) tile, one thread per element: a bijection
//        over the same index space, the bounds checks unchanged (they test X
//        and Y). Index2D.cpp proves that nothing else depends on the thread's
//        position (no other read of the builtin indexes, no shared memory,
//        barriers, shuffles, votes, atomics, unanalysed calls or asm).
// Edit:  replace_stmt of the two declarations; the launches stay as written.
// docs/rules/coalesce-thread-index.md.
//
//===----------------------------------------------------------------------===//
#include "kloop/Edit/Rules.h"

namespace kloop {

/// "[16, 16, 1]" for the value of \p D, "?" for a component that is not a constant.
static std::string shape(const inv::LaunchDim &D) {
  std::string Out;
  for (const std::optional<int64_t> &C : *D.Value)
    Out += (Out.empty() ? "" : ", ") + (C ? std::to_string(*C) : std::string("?"));
  return "[" + Out + "]";
}

/// Why the blocks of \p K's launches are not proved square, or nullopt.
static std::optional<std::string> blockRefusal(const inv::Inventory &Inv, const inv::Kernel &K) {
  if (K.LaunchSites.empty())
    return std::string("the kernel has no launch site kloop sees: its block is not proved square");
  const char *Why = ": threadIdx.x and threadIdx.y trade roles only in a square block (swapping the grid's x and y "
                    "as well would need the grid's x within gridDim.y's limit of 65535, which is not proved)";
  for (const std::string &ID : K.LaunchSites) {
    const inv::LaunchSite *L = Inv.launchSite(ID);
    if (!L || !L->Block || !L->Block->Value || L->Block->Value->size() < 2 || !(*L->Block->Value)[0] ||
        !(*L->Block->Value)[1])
      return "the block of launch site " + ID + (L && L->Block ? " (" + L->Block->Expr + ")" : std::string()) +
             " is not a constant" + Why;
    if (*(*L->Block->Value)[0] != *(*L->Block->Value)[1])
      return "the block of launch site " + ID + " is " + shape(*L->Block) + ", not square" + Why;
  }
  return std::nullopt;
}

/// replace_stmt of declaration \p Text (statement \p Stmt of \p K's body) with threadIdx's component at \p At
/// set to \p Dim.
static Edit swapped(const inv::Kernel &K, unsigned Stmt, std::string Text, unsigned At, char Dim) {
  Text[At] = Dim;
  Edit E;
  E.Kind = EditKind::ReplaceStmt;
  E.ID = K.ID;
  E.StmtIndex = Stmt;
  E.Code = Text;
  return E;
}

/// Rule coalesce-thread-index on kernel \p K.
static RuleSite coalesceSite(const inv::Inventory &Inv, const inv::Kernel &K) {
  const inv::Index2D &I = *K.Index2DFacts;
  RuleSite S;
  S.Site = K.ID + "/index_2d";
  std::optional<std::string> Why;
  if (!K.Edit.Editable)
    Why = "the kernel is not editable: " + K.Edit.NotEditableReason.value_or("");
  else if (I.Refusal)
    Why = *I.Refusal;
  else
    Why = blockRefusal(Inv, K);
  if (Why) {
    S.Why = *Why;
    return S;
  }
  S.Edits.push_back(swapped(K, I.XStmt, I.XText, I.XThread, 'y'));
  S.Edits.push_back(swapped(K, I.YStmt, I.YText, I.YThread, 'x'));
  S.Why = *I.Strided + " strides memory with threadIdx.x (through '" + I.XVar + "'): threadIdx.x and threadIdx.y "
          "swap roles in '" + I.XVar + "' and '" + I.YVar + "', so a warp reads consecutive '" + I.YVar +
          "'; every launch's block is square, so each block covers the same elements";
  return S;
}

std::vector<RuleSite> explainCoalesceThreadIndex(const inv::Inventory &Inv) {
  std::vector<RuleSite> Out;
  for (const inv::Kernel &K : Inv.Kernels)
    if (K.Index2DFacts)
      Out.push_back(coalesceSite(Inv, K));
  return Out;
}

std::vector<Edit> matchCoalesceThreadIndex(const inv::Inventory &Inv) { return editsOf(explainCoalesceThreadIndex(Inv)); }

} // namespace kloop
