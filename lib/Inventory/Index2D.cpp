//===- Index2D.cpp - Two-dimensional thread indexes of a kernel ------------===//
//
// Legality facts (each refusal names the first failure with its line): the
// indexes are never written; nothing else in the body reads threadIdx,
// blockIdx, blockDim, gridDim or warpSize (so a thread's work depends on its
// position only through X and Y); no __shared__ variable, no inline asm, and
// only calls that callProblem accepts (no barrier, shuffle, vote, atomic,
// printf, or function whose memory accesses are not analysed). Profitability
// facts: the first access `p[X * e + Y]` (p a pointer parameter, e free of Y)
// and no access `p[Y * e + X]` or `p[X]`, which the swap would make strided.
//
//===----------------------------------------------------------------------===//
#include "Index2D.h"
#include "ElementwiseLoops.h"
#include "SourceText.h"

#include "clang/AST/Attr.h"
#include "clang/AST/Expr.h"

using namespace clang;
using nlohmann::json;

namespace kloop {

namespace {
/// One index declaration: `[const] int X = blockIdx.D * blockDim.D + threadIdx.D;`.
struct IndexDecl {
  const VarDecl *Var = nullptr;
  unsigned Stmt = 0; ///< 1-based among the body's direct statements
  std::string Text;  ///< the statement with its `;`
  unsigned Thread = 0; ///< offset in Text of the component letter of threadIdx.D
};
} // namespace

/// The index declaration of component \p Dim among the direct statements of \p Body, if any.
static std::optional<IndexDecl> indexDecl(const CompoundStmt *Body, char Dim, ASTContext &Ctx) {
  unsigned Index = 0;
  for (const Stmt *S : Body->body()) {
    ++Index;
    const auto *D = dyn_cast<DeclStmt>(S);
    const auto *V = D && D->isSingleDecl() ? dyn_cast<VarDecl>(D->getSingleDecl()) : nullptr;
    if (!V || !V->getInit() || !V->getType()->isIntegerType() || !isGlobalThreadIndex(V->getInit(), Ctx, Dim))
      continue;
    IndexDecl Out{V, Index, statementText(S, Ctx), 0};
    std::optional<unsigned> Init = offsetIn(V->getInit()->getBeginLoc(), fileRangeOf(S->getSourceRange(), Ctx), Ctx);
    size_t At = Init ? Out.Text.find("threadIdx", *Init) : std::string::npos;
    At = At == std::string::npos ? At : Out.Text.find(Dim, At + 9);
    if (Out.Text.empty() || At == std::string::npos)
      return std::nullopt;
    Out.Thread = At;
    return Out;
  }
  return std::nullopt;
}

/// True when \p E, past parentheses and casts, names \p V.
static bool names(const Expr *E, const VarDecl *V) {
  const auto *R = dyn_cast<DeclRefExpr>(E->IgnoreParenCasts());
  return R && R->getDecl() == V;
}

/// True when \p S mentions \p V.
static bool mentions(const Stmt *S, const VarDecl *V) {
  for (const DeclRefExpr *R : findAll<DeclRefExpr>(S))
    if (R->getDecl() == V)
      return true;
  return false;
}

/// True when \p Index is `A * e + B` (terms in either order), A named in the product and B alone.
static bool productPlus(const Expr *Index, const VarDecl *A, const VarDecl *B) {
  const auto *Add = dyn_cast<BinaryOperator>(Index->IgnoreParenCasts());
  if (!Add || Add->getOpcode() != BO_Add)
    return false;
  for (auto [T, U] : {std::pair{Add->getLHS(), Add->getRHS()}, std::pair{Add->getRHS(), Add->getLHS()}}) {
    const auto *Mul = dyn_cast<BinaryOperator>(T->IgnoreParenCasts());
    if (names(U, B) && Mul && Mul->getOpcode() == BO_Mul && mentions(Mul, A) && !mentions(Mul, B))
      return true;
  }
  return false;
}

/// Why swapping threadIdx.x and threadIdx.y in \p X and \p Y would change more than the threads' order in
/// \p Body, or nullopt.
static std::optional<std::string> swapProblem(const CompoundStmt *Body, const IndexDecl &X, const IndexDecl &Y,
                                              ASTContext &Ctx) {
  for (const IndexDecl *I : {&X, &Y}) {
    RefFinder R(I->Var);
    R.TraverseStmt(const_cast<CompoundStmt *>(Body));
    for (const DeclRefExpr *E : R.Refs)
      if (!isPlainRead(E, Ctx))
        return "'" + I->Var->getNameAsString() + "' is written or its address taken" + atLine(E->getBeginLoc(), Ctx);
  }
  for (const DeclRefExpr *E : findAll<DeclRefExpr>(Body)) {
    std::string Name = E->getDecl()->getNameAsString();
    bool InIndex = offsetIn(E->getBeginLoc(), fileRangeOf(X.Var->getInit()->getSourceRange(), Ctx), Ctx) ||
                   offsetIn(E->getBeginLoc(), fileRangeOf(Y.Var->getInit()->getSourceRange(), Ctx), Ctx);
    if (!InIndex && (Name == "threadIdx" || Name == "blockIdx" || Name == "blockDim" || Name == "gridDim" ||
                     Name == "warpSize"))
      return "a read of " + Name + atLine(E->getBeginLoc(), Ctx) + " outside the two indexes: the thread's work "
             "would depend on its position other than through them";
    if (const auto *V = dyn_cast<VarDecl>(E->getDecl()); V && V->hasAttr<CUDASharedAttr>())
      return "a use of __shared__ '" + Name + "'" + atLine(E->getBeginLoc(), Ctx) + ": threads of a block may "
             "exchange data through it in the old lane order";
  }
  for (const CallExpr *C : findAll<CallExpr>(Body))
    if (std::optional<std::string> Why = callProblem(C, Ctx))
      return *Why;
  for (const AsmStmt *A : findAll<AsmStmt>(Body))
    return "inline asm" + atLine(A->getBeginLoc(), Ctx);
  return std::nullopt;
}

/// The first access to a pointer parameter whose index satisfies \p Pred, as "in[row * n + col] at line 12".
template <typename Pred> static std::optional<std::string> firstAccess(const CompoundStmt *Body, ASTContext &Ctx, Pred P) {
  for (const ArraySubscriptExpr *A : findAll<ArraySubscriptExpr>(Body)) {
    const auto *Base = dyn_cast<DeclRefExpr>(A->getBase()->IgnoreParenImpCasts());
    const auto *Param = Base ? dyn_cast<ParmVarDecl>(Base->getDecl()) : nullptr;
    if (Param && Param->getType()->isPointerType() && P(A->getIdx()))
      return sourceText(A->getSourceRange(), Ctx) + atLine(A->getBeginLoc(), Ctx);
  }
  return std::nullopt;
}

json index2D(const FunctionDecl *Kernel, ASTContext &Ctx) {
  const auto *Body = dyn_cast_or_null<CompoundStmt>(Kernel->getBody());
  std::optional<IndexDecl> X = Body ? indexDecl(Body, 'x', Ctx) : std::nullopt;
  std::optional<IndexDecl> Y = Body ? indexDecl(Body, 'y', Ctx) : std::nullopt;
  if (!X || !Y)
    return nullptr;
  json Out = {{"refusal", nullptr},      {"x_var", X->Var->getNameAsString()}, {"y_var", Y->Var->getNameAsString()},
              {"x_stmt", X->Stmt},       {"y_stmt", Y->Stmt},                  {"x_text", X->Text},
              {"y_text", Y->Text},       {"x_thread", X->Thread},              {"y_thread", Y->Thread},
              {"strided", nullptr}};
  std::optional<std::string> Strided =
      firstAccess(Body, Ctx, [&](const Expr *I) { return productPlus(I, X->Var, Y->Var); });
  std::optional<std::string> Contiguous = firstAccess(
      Body, Ctx, [&](const Expr *I) { return names(I, X->Var) || productPlus(I, Y->Var, X->Var); });
  if (Strided)
    Out["strided"] = *Strided;
  if (std::optional<std::string> Why = swapProblem(Body, *X, *Y, Ctx))
    Out["refusal"] = *Why;
  else if (!Strided)
    Out["refusal"] = "no access p[" + X->Var->getNameAsString() + " * ld + " + Y->Var->getNameAsString() +
                     "]: threadIdx.x does not stride memory";
  else if (Contiguous)
    Out["refusal"] = *Contiguous + " is contiguous in threadIdx.x already: the swap would make it strided";
  return Out;
}

} // namespace kloop
