//===- ElementwiseLoops.cpp - Grid-stride loops over independent elements -===//
#include "ElementwiseLoops.h"
#include "SourceText.h"

#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <string>

using namespace clang;
using nlohmann::json;

namespace kloop {

static std::string squeezed(std::string S) {
  S.erase(std::remove_if(S.begin(), S.end(), [](unsigned char C) { return std::isspace(C); }), S.end());
  return S;
}

static bool textIsOneOf(const Expr *E, std::initializer_list<const char *> Forms, ASTContext &Ctx) {
  std::string T = squeezed(sourceText(E->IgnoreParenImpCasts()->getSourceRange(), Ctx));
  for (const char *F : Forms)
    if (T == F)
      return true;
  return false;
}

bool isGlobalThreadIndex(const Expr *E, ASTContext &Ctx, char Dim) {
  std::string T = squeezed(sourceText(E->IgnoreParenImpCasts()->getSourceRange(), Ctx));
  std::string D(1, Dim), B = "blockIdx." + D, N = "blockDim." + D, I = "threadIdx." + D;
  return T == B + "*" + N + "+" + I || T == N + "*" + B + "+" + I || T == I + "+" + B + "*" + N ||
         T == I + "+" + N + "*" + B;
}

/// blockDim.x * gridDim.x, or a const local initialized so.
static bool isGridSize(const Expr *E, ASTContext &Ctx) {
  if (textIsOneOf(E, {"blockDim.x*gridDim.x", "gridDim.x*blockDim.x"}, Ctx))
    return true;
  const auto *R = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
  const auto *V = R ? dyn_cast<VarDecl>(R->getDecl()) : nullptr;
  return V && V->hasLocalStorage() && V->getType().isConstQualified() && V->getInit() &&
         textIsOneOf(V->getInit(), {"blockDim.x*gridDim.x", "gridDim.x*blockDim.x"}, Ctx);
}

/// Whether \p E is only read: its value is loaded (an lvalue-to-rvalue conversion).
bool isPlainRead(const Expr *E, ASTContext &Ctx) {
  const Stmt *P = parentOf(E, Ctx);
  while (P && isa<ParenExpr>(P))
    P = parentOf(P, Ctx);
  const auto *C = dyn_cast_or_null<ImplicitCastExpr>(P);
  return C && C->getCastKind() == CK_LValueToRValue;
}

static const VarDecl *referencedVar(const Expr *E) {
  const auto *R = dyn_cast_or_null<DeclRefExpr>(E ? E->IgnoreParenImpCasts() : nullptr);
  return R ? dyn_cast<VarDecl>(R->getDecl()) : nullptr;
}

/// Why call \p E may touch memory or synchronize threads (a function outside the system headers, a barrier,
/// shuffle, vote, atomic or printf), or nullopt (math functions, CUDA's builtin-variable accessors).
std::optional<std::string> callProblem(const CallExpr *E, ASTContext &Ctx) {
  const FunctionDecl *F = E->getDirectCallee();
  if (!F)
    return "an indirect call" + atLine(E->getBeginLoc(), Ctx);
  std::string Name = F->getNameAsString();
  if (!Ctx.getSourceManager().isInSystemHeader(F->getLocation()))
    return "a call of '" + Name + "'" + atLine(E->getBeginLoc(), Ctx) + ", whose memory accesses the rule does not analyse";
  for (const char *Bad : {"sync", "shfl", "atomic", "ballot", "activemask", "__any", "__all", "match", "printf"})
    if (Name.find(Bad) != std::string::npos)
      return "a call of '" + Name + "'" + atLine(E->getBeginLoc(), Ctx) + ": threads would meet it in another order";
  return std::nullopt;
}

namespace {
/// The loop `for (T i = A; i < B; i += S)` taken apart.
struct Header {
  const VarDecl *Var = nullptr, *Bound = nullptr;
  const Expr *Init = nullptr, *BoundExpr = nullptr, *Stride = nullptr;
};

/// Checks a loop body statement by statement; stops at the first refusal.
class BodyCheck : public RecursiveASTVisitor<BodyCheck> {
public:
  BodyCheck(const VarDecl *Var, const Stmt *Body, ASTContext &Ctx) : Var(Var), Body(Body), Ctx(Ctx) {
    BodyOffset = Ctx.getSourceManager().getFileOffset(Ctx.getSourceManager().getExpansionLoc(Body->getBeginLoc()));
  }

  bool VisitVarDecl(VarDecl *V) {
    Inner.insert(V);
    return true;
  }
  bool VisitDeclRefExpr(DeclRefExpr *E) { return !refuse(declRefRefusal(E)); }
  bool VisitCallExpr(CallExpr *E) { return !refuse(callRefusal(E)); }
  bool VisitBreakStmt(BreakStmt *S) { return !refuse("a break" + atLine(S->getBeginLoc(), Ctx)); }
  bool VisitContinueStmt(ContinueStmt *S) { return !refuse("a continue" + atLine(S->getBeginLoc(), Ctx)); }
  bool VisitReturnStmt(ReturnStmt *S) { return !refuse("a return" + atLine(S->getBeginLoc(), Ctx)); }
  bool VisitGotoStmt(GotoStmt *S) { return !refuse("a goto" + atLine(S->getBeginLoc(), Ctx)); }
  bool VisitAsmStmt(AsmStmt *S) { return !refuse("inline asm" + atLine(S->getBeginLoc(), Ctx)); }
  bool VisitMemberExpr(MemberExpr *E) {
    return !E->isArrow() || !refuse("a member access through a pointer (->)" + atLine(E->getBeginLoc(), Ctx));
  }
  bool VisitUnaryOperator(UnaryOperator *U) {
    return U->getOpcode() != UO_Deref || !refuse("a pointer dereference (*)" + atLine(U->getBeginLoc(), Ctx));
  }

  std::optional<std::string> Refusal;
  json Accesses = json::array();

private:
  bool refuse(std::optional<std::string> Why) {
    if (Why && !Refusal)
      Refusal = "the body has " + *Why;
    return Refusal.has_value();
  }

  std::optional<std::string> declRefRefusal(const DeclRefExpr *E) {
    std::string Name = E->getDecl()->getNameAsString();
    if (Name == "threadIdx" || Name == "blockIdx" || Name == "blockDim" || Name == "gridDim" || Name == "warpSize")
      return "a read of " + Name + atLine(E->getBeginLoc(), Ctx) + ": its iterations would depend on which thread runs them";
    const auto *V = dyn_cast<VarDecl>(E->getDecl());
    if (!V || Inner.count(V))
      return std::nullopt;
    if (V == Var)
      return isPlainRead(E, Ctx) ? std::nullopt
                                 : std::optional<std::string>("a write or address of the loop variable '" + Name +
                                                              "'" + atLine(E->getBeginLoc(), Ctx));
    if (isa<ParmVarDecl>(V) && V->getType()->isPointerType())
      return access(E, V);
    if (V->hasAttr<CUDASharedAttr>())
      return "a use of __shared__ '" + Name + "'" + atLine(E->getBeginLoc(), Ctx) + ", which the rule does not analyse";
    if (!V->hasLocalStorage() && !V->getType().isConstQualified() && !V->hasAttr<CUDAConstantAttr>())
      return "a use of '" + Name + "', a variable outside the kernel" + atLine(E->getBeginLoc(), Ctx) +
             ", which the rule does not analyse";
    if (!isPlainRead(E, Ctx))
      return "a write, address or reference of '" + Name + "', declared outside the loop" + atLine(E->getBeginLoc(), Ctx) +
             ": its iterations would not be independent";
    if (V->getType()->isPointerType())
      return "an access through '" + Name + "', which is not a kernel parameter" + atLine(E->getBeginLoc(), Ctx);
    return std::nullopt;
  }

  /// \p E names pointer parameter \p P: it must be the base of `P[i]`.
  std::optional<std::string> access(const DeclRefExpr *E, const VarDecl *P) {
    const Stmt *Child = nullptr;
    const auto *AS = dyn_cast_or_null<ArraySubscriptExpr>(semanticParent(E, Child, Ctx));
    std::string Name = P->getNameAsString();
    if (!AS || AS->getBase()->IgnoreParenImpCasts() != E)
      return "a use of pointer '" + Name + "' other than " + Name + "[" + Var->getNameAsString() + "]" +
             atLine(E->getBeginLoc(), Ctx);
    if (referencedVar(AS->getIdx()) != Var || !isa<DeclRefExpr>(AS->getIdx()->IgnoreParenImpCasts()))
      return sourceText(AS->getSourceRange(), Ctx) + atLine(AS->getBeginLoc(), Ctx) + ": not indexed by the loop variable '" +
             Var->getNameAsString() + "' itself (a non-unit stride, or an offset another thread may own)";
    return element(AS, P);
  }

  /// Records the access \p AS to parameter \p P: how it is used and where it is in the body.
  std::optional<std::string> element(const ArraySubscriptExpr *AS, const VarDecl *P) {
    QualType T = P->getType()->getPointeeType();
    if (T->isIncompleteType() || T->isDependentType())
      return "an access to '" + P->getNameAsString() + "' whose element type is not complete" + atLine(AS->getBeginLoc(), Ctx);
    const SourceManager &SM = Ctx.getSourceManager();
    if (AS->getBeginLoc().isMacroID() || AS->getEndLoc().isMacroID())
      return sourceText(AS->getSourceRange(), Ctx) + atLine(AS->getBeginLoc(), Ctx) + " from a macro expansion";
    json A = {{"param", P->getNameAsString()},
              {"element_type", T.getUnqualifiedType().getAsString(Ctx.getPrintingPolicy())},
              {"element_bytes", Ctx.getTypeSizeInChars(T).getQuantity()},
              {"read", false}, {"written", false}, {"unconditional", false}};
    SourceLocation End = Lexer::getLocForEndOfToken(AS->getEndLoc(), 0, SM, Ctx.getLangOpts());
    A["begin"] = SM.getFileOffset(AS->getBeginLoc()) - BodyOffset;
    A["end"] = SM.getFileOffset(End) - BodyOffset;
    const Stmt *Child = AS;
    const Stmt *Use = parentOf(AS, Ctx);
    while (Use && isa<ParenExpr>(Use)) {
      Child = Use;
      Use = parentOf(Use, Ctx);
    }
    if (const auto *C = dyn_cast_or_null<ImplicitCastExpr>(Use); C && C->getCastKind() == CK_LValueToRValue) {
      A["read"] = true;
    } else if (const auto *B = dyn_cast_or_null<BinaryOperator>(Use); B && B->isAssignmentOp() && B->getLHS() == Child) {
      A["written"] = true;
      A["read"] = B->isCompoundAssignmentOp();
      A["unconditional"] = !B->isCompoundAssignmentOp() && isDirectStatement(B);
    } else if (const auto *U = dyn_cast_or_null<UnaryOperator>(Use); U && U->isIncrementDecrementOp()) {
      A["written"] = A["read"] = true;
    } else {
      return "an element's address or reference taken, " + sourceText(AS->getSourceRange(), Ctx) + atLine(AS->getBeginLoc(), Ctx);
    }
    Accesses.push_back(A);
    return std::nullopt;
  }

  bool isDirectStatement(const Stmt *S) const {
    const auto *C = dyn_cast<CompoundStmt>(Body);
    return C ? llvm::is_contained(C->body(), S) : Body == S;
  }

  std::optional<std::string> callRefusal(const CallExpr *E) { return callProblem(E, Ctx); }

  const VarDecl *Var;
  const Stmt *Body;
  ASTContext &Ctx;
  unsigned BodyOffset = 0;
  std::set<const VarDecl *> Inner;
};
} // namespace

/// Why \p F is not `for (T i = <global thread index>; i < n; i += <grid size>)`, or nullopt; fills \p H.
static std::optional<std::string> headerRefusal(const ForStmt *F, Header &H, ASTContext &Ctx) {
  const auto *Init = dyn_cast_or_null<DeclStmt>(F->getInit());
  H.Var = Init && Init->isSingleDecl() ? dyn_cast<VarDecl>(Init->getSingleDecl()) : nullptr;
  if (!H.Var || !H.Var->getInit() || !H.Var->getType()->isIntegerType())
    return std::string("it does not declare one integer loop variable with an initializer");
  H.Init = H.Var->getInit();
  if (!isGlobalThreadIndex(H.Init, Ctx))
    return "it starts at '" + sourceText(H.Init->getSourceRange(), Ctx) +
           "', not at blockIdx.x * blockDim.x + threadIdx.x";
  const auto *Cond = dyn_cast_or_null<BinaryOperator>(F->getCond());
  if (!Cond || Cond->getOpcode() != BO_LT || referencedVar(Cond->getLHS()) != H.Var)
    return "its condition is not '" + H.Var->getNameAsString() + " < n'";
  H.BoundExpr = Cond->getRHS();
  H.Bound = referencedVar(H.BoundExpr);
  if (!H.Bound || !H.Bound->getType()->isIntegerType() || !isa<DeclRefExpr>(H.BoundExpr->IgnoreParenImpCasts()))
    return "its bound '" + sourceText(H.BoundExpr->getSourceRange(), Ctx) + "' is not an integer variable";
  const auto *Inc = dyn_cast_or_null<CompoundAssignOperator>(F->getInc());
  if (!Inc || Inc->getOpcode() != BO_AddAssign || referencedVar(Inc->getLHS()) != H.Var)
    return "its step is not '" + H.Var->getNameAsString() + " += <stride>'";
  H.Stride = Inc->getRHS();
  if (!isGridSize(H.Stride, Ctx))
    return "its stride '" + sourceText(H.Stride->getSourceRange(), Ctx) +
           "' is not blockDim.x * gridDim.x: not a grid-stride loop";
  return std::nullopt;
}

/// Why the bound variable of \p H may change while the loop runs (a write anywhere in \p KernelBody), or nullopt.
static std::optional<std::string> boundRefusal(const Header &H, const Stmt *KernelBody, ASTContext &Ctx) {
  RefFinder R(H.Bound);
  R.TraverseStmt(const_cast<Stmt *>(KernelBody));
  for (const DeclRefExpr *E : R.Refs)
    if (!isPlainRead(E, Ctx))
      return "its bound '" + H.Bound->getNameAsString() + "' is written or its address taken" + atLine(E->getBeginLoc(), Ctx);
  return std::nullopt;
}

/// The first direct statement of \p KernelBody but \p Loop that is not a declaration without assignments
/// whose calls pass callProblem, as "statement N at line L", or null.
static json otherEffects(const CompoundStmt *KernelBody, const Stmt *Loop, ASTContext &Ctx) {
  unsigned Index = 0;
  for (const Stmt *S : KernelBody->body()) {
    ++Index;
    if (S == Loop || isa<NullStmt>(S))
      continue;
    bool Plain = isa<DeclStmt>(S);
    std::vector<const Stmt *> Work{S};
    while (Plain && !Work.empty()) {
      const Stmt *X = Work.back();
      Work.pop_back();
      if (!X)
        continue;
      const auto *B = dyn_cast<BinaryOperator>(X);
      const auto *U = dyn_cast<UnaryOperator>(X);
      const auto *Call = dyn_cast<CallExpr>(X);
      Plain = !(Call && callProblem(Call, Ctx)) && !(B && B->isAssignmentOp()) && !(U && U->isIncrementDecrementOp());
      for (const Stmt *C : X->children())
        Work.push_back(C);
    }
    if (!Plain)
      return "statement " + std::to_string(Index) + atLine(S->getBeginLoc(), Ctx);
  }
  return nullptr;
}

/// The member with every field, as the typed model writes it back.
static json facts(json Refusal) {
  return {{"refusal", std::move(Refusal)}, {"var", ""},  {"var_type", ""}, {"init", ""},
          {"bound", ""},                   {"stride", ""}, {"body", ""},   {"accesses", json::array()},
          {"other_effects", nullptr}};
}

static json refused(const std::string &Why) { return facts(Why); }

json elementwiseLoop(const ForStmt *F, const FunctionDecl *Kernel, ASTContext &Ctx) {
  const auto *KernelBody = dyn_cast_or_null<CompoundStmt>(Kernel ? Kernel->getBody() : nullptr);
  const Stmt *Direct = KernelBody ? directStatement(KernelBody, F) : nullptr;
  if (!Direct)
    return refused("it is not a direct statement of the kernel body");
  if (F->getBeginLoc().isMacroID() || F->getBody()->getBeginLoc().isMacroID() ||
      F->getBody()->getEndLoc().isMacroID())
    return refused("it is written through a macro");
  Header H;
  if (std::optional<std::string> Why = headerRefusal(F, H, Ctx))
    return refused(*Why);
  if (std::optional<std::string> Why = boundRefusal(H, KernelBody, Ctx))
    return refused(*Why);
  std::string Body = sourceText(F->getBody()->getSourceRange(), Ctx);
  if (Body.find("kloop_") != std::string::npos)
    return refused("its body uses names that begin with kloop_, which the rewrites declare");
  BodyCheck Check(H.Var, F->getBody(), Ctx);
  Check.TraverseStmt(const_cast<Stmt *>(F->getBody()));
  if (Check.Refusal)
    return refused(*Check.Refusal);
  if (Check.Accesses.empty())
    return refused("the body reads and writes no kernel pointer parameter as p[i]");
  json Out = facts(nullptr);
  Out["var"] = H.Var->getNameAsString();
  Out["var_type"] = H.Var->getType().getUnqualifiedType().getAsString(Ctx.getPrintingPolicy());
  Out["init"] = sourceText(H.Init->getSourceRange(), Ctx);
  Out["bound"] = sourceText(H.BoundExpr->getSourceRange(), Ctx);
  Out["stride"] = sourceText(H.Stride->getSourceRange(), Ctx);
  Out["body"] = Body;
  Out["accesses"] = Check.Accesses;
  Out["other_effects"] = otherEffects(KernelBody, Direct, Ctx);
  return Out;
}

} // namespace kloop
