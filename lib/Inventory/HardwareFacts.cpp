//===- HardwareFacts.cpp - Operands that carry a hardware fact ------------===//
#include "HardwareFacts.h"

#include "clang/AST/Decl.h"
#include "clang/AST/ExprCXX.h"

using namespace clang;

namespace kloop {

static bool evaluatesTo(const Expr *E, long long V, ASTContext &Ctx) {
  if (!E || E->isValueDependent() || E->isTypeDependent() || E->containsErrors())
    return false;
  Expr::EvalResult R;
  return E->EvaluateAsInt(R, Ctx) && R.Val.getInt().getBitWidth() <= 64 && R.Val.getInt().getExtValue() == V;
}

static bool isWarpSize(const Expr *E) {
  const auto *D = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
  return D && D->getDecl()->getName() == "warpSize";
}

/// `__shfl_*`: the index of the width argument (3 for the `_sync` forms, whose first argument is the
/// member mask), or -1.
static int shuffleWidthIndex(const CallExpr *CE) {
  const FunctionDecl *F = CE->getDirectCallee();
  if (!F || !F->getIdentifier())
    return -1;
  StringRef N = F->getName();
  if (!N.starts_with("__shfl"))
    return -1;
  return N.ends_with("_sync") ? 3 : 2;
}

static void binary(const BinaryOperator *B, ASTContext &Ctx, std::vector<HardwareOperand> &Out) {
  BinaryOperatorKind Op = B->getOpcode();
  const Expr *L = B->getLHS(), *R = B->getRHS();
  if ((Op == BO_Rem || Op == BO_RemAssign) && evaluatesTo(R, WarpSize, Ctx))
    Out.push_back({R, "right operand of `%` equal to 32, the warp size (a lane index)"});
  if (Op == BO_And || Op == BO_AndAssign)
    for (const Expr *E : {L, R})
      if (evaluatesTo(E, WarpSize - 1, Ctx))
        Out.push_back({E, "operand of `&` equal to 31, a lane mask (the warp size - 1)"});
  if (B->isComparisonOp()) {
    if (isWarpSize(L))
      Out.push_back({R, "other side of a comparison with warpSize"});
    else if (isWarpSize(R))
      Out.push_back({L, "other side of a comparison with warpSize"});
  }
}

std::vector<HardwareOperand> hardwareOperands(const Stmt *S, ASTContext &Ctx) {
  std::vector<HardwareOperand> Out;
  if (const auto *B = dyn_cast<BinaryOperator>(S)) {
    binary(B, Ctx, Out);
  } else if (const auto *CE = dyn_cast<CallExpr>(S)) {
    int W = shuffleWidthIndex(CE);
    if (W >= 0 && (unsigned)W < CE->getNumArgs() && !isa<CXXDefaultArgExpr>(CE->getArg(W)))
      Out.push_back({CE->getArg(W), "width argument of " + CE->getDirectCallee()->getName().str() +
                                        " (the lanes a warp shuffle spans)"});
  }
  return Out;
}

} // namespace kloop
