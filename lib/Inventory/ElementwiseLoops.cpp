//===- ElementwiseLoops.cpp - Grid-stride loops over independent elements -===//
#include "ElementwiseLoops.h"
#include "BlockCombine.h"
#include "TreeReductions.h"
#include "SourceText.h"
#include "kloop/Support/Text.h"

#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/MapVector.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <string>

using namespace clang;
using nlohmann::json;

namespace kloop {

static std::string squeezed(llvm::StringRef S) { return withoutSpaces(S); }

static bool textIsOneOf(const Expr *E, std::initializer_list<const char *> Forms, ASTContext &Ctx) {
  std::string T = squeezed(sourceText(E->IgnoreParenImpCasts()->getSourceRange(), Ctx));
  for (const char *F : Forms)
    if (T == F)
      return true;
  return false;
}


static bool isThreadIndexX(const Expr *E, ASTContext &Ctx);

bool isGlobalThreadIndex(const Expr *E, ASTContext &Ctx, char Dim) {
  std::string T = squeezed(sourceText(E->IgnoreParenImpCasts()->getSourceRange(), Ctx));
  std::string D(1, Dim), B = "blockIdx." + D, N = "blockDim." + D, I = "threadIdx." + D;
  return T == B + "*" + N + "+" + I || T == N + "*" + B + "+" + I || T == I + "+" + B + "*" + N ||
         T == I + "+" + N + "*" + B;
}

/// Whether \p E is only read: its value is loaded (an lvalue-to-rvalue conversion).
bool isPlainRead(const Expr *E, ASTContext &Ctx) {
  const Stmt *P = parentOf(E, Ctx);
  while (P && isa<ParenExpr>(P))
    P = parentOf(P, Ctx);
  if (const auto *C = dyn_cast_or_null<ImplicitCastExpr>(P))
    return C->getCastKind() == CK_LValueToRValue;
  // In a template, an operand of a type-dependent expression gets no conversion node yet. An arithmetic,
  // comparison or logical operator only reads a builtin-typed operand (`block_sum<B>(s, red) / cols`); the
  // right side of `=` into a builtin-typed left side is read (`out[i] = red[0]` with red of dependent
  // size); an argument bound to a by-value parameter of the function the call names is read
  // (`block_max<B>(m, red)`).
  const auto *B = dyn_cast_or_null<BinaryOperator>(P);
  if (B && B->isTypeDependent() && !B->isAssignmentOp())
    return E->getType()->isScalarType();
  if (B && B->getOpcode() == BO_Assign && B->getRHS()->IgnoreParens() == E)
    return !B->getLHS()->isTypeDependent() && B->getLHS()->getType()->isScalarType();
  const auto *C = dyn_cast_or_null<CallExpr>(P);
  const FunctionDecl *F = C && C->isTypeDependent() ? soleCallee(C) : nullptr;
  auto Arg = C ? llvm::find(C->arguments(), E) : nullptr;
  if (!F || Arg == C->arg_end() || unsigned(Arg - C->arg_begin()) >= F->getNumParams())
    return false;
  QualType T = F->getParamDecl(unsigned(Arg - C->arg_begin()))->getType();
  return !T->isReferenceType() && !T->isDependentType();
}

/// Why call \p E may touch memory or synchronize threads (a function outside the system headers, a barrier,
/// shuffle, vote, atomic or printf), or nullopt (math functions, CUDA's builtin-variable accessors).
static std::optional<std::string> calleeProblem(const CallExpr *E, const FunctionDecl *F, ASTContext &Ctx) {
  std::string Name = F->getNameAsString();
  if (!Ctx.getSourceManager().isInSystemHeader(F->getLocation()))
    return "a call of '" + Name + "'" + atLine(E->getBeginLoc(), Ctx) + ", whose memory accesses the rule does not analyse";
  for (const char *Bad : {"sync", "fence", "shfl", "atomic", "ballot", "activemask", "__any", "__all", "match",
                          "printf"})
    if (Name.find(Bad) != std::string::npos)
      return "a call of '" + Name + "'" + atLine(E->getBeginLoc(), Ctx) + ": threads would meet it in another order";
  return std::nullopt;
}

/// The functions call \p E may reach: its callee, or every candidate of a call in a template that waits for
/// its arguments' types (`rsqrtf(block_sum<B>(q, red) / cols)`); empty for an indirect call.
static std::vector<const FunctionDecl *> callees(const CallExpr *E) {
  if (const FunctionDecl *F = E->getDirectCallee())
    return {F};
  std::vector<const FunctionDecl *> Out;
  if (const auto *U = dyn_cast<UnresolvedLookupExpr>(E->getCallee()->IgnoreParenImpCasts()))
    for (const NamedDecl *N : U->decls()) {
      const NamedDecl *D = N->getUnderlyingDecl();
      if (const auto *FT = dyn_cast<FunctionTemplateDecl>(D))
        D = FT->getTemplatedDecl();
      if (const auto *F = dyn_cast<FunctionDecl>(D))
        Out.push_back(F);
    }
  return Out;
}

std::optional<std::string> callProblem(const CallExpr *E, ASTContext &Ctx) {
  std::vector<const FunctionDecl *> Fs = callees(E);
  if (Fs.empty())
    return "an indirect call" + atLine(E->getBeginLoc(), Ctx);
  for (const FunctionDecl *F : Fs)
    if (std::optional<std::string> Why = calleeProblem(E, F, Ctx))
      return Why;
  return std::nullopt;
}

/// Why call \p E may depend on which thread makes it, beyond callProblem, or nullopt: only functions of the
/// global namespace that are not members (the C math library: expf, fmaxf, rsqrtf) are taken to compute
/// from their arguments alone; `cooperative_groups::this_thread_block().thread_rank()` is not.
static std::optional<std::string> threadDependentCall(const CallExpr *E, ASTContext &Ctx) {
  if (std::optional<std::string> Why = callProblem(E, Ctx))
    return Why;
  for (const FunctionDecl *F : callees(E)) {
    if (const auto *M = dyn_cast<CXXMethodDecl>(F); M && M->getParent()->getName().starts_with("__cuda_builtin_"))
      continue; // threadIdx.x and the like: the variable's own reference decides
    if (isa<CXXMethodDecl>(F) || !F->getDeclContext()->getRedeclContext()->isTranslationUnit())
      return "a call of '" + F->getQualifiedNameAsString() + "'" + atLine(E->getBeginLoc(), Ctx) +
             ", a member or namespace function whose result may depend on the thread";
  }
  return std::nullopt;
}

/// The operands of \p E when it is `A Op B` (parentheses and implicit casts ignored).
static std::optional<std::pair<const Expr *, const Expr *>> operands(const Expr *E, BinaryOperatorKind Op) {
  const auto *B = dyn_cast<BinaryOperator>(E->IgnoreParenImpCasts());
  if (!B || B->getOpcode() != Op)
    return std::nullopt;
  return std::make_pair(B->getLHS(), B->getRHS());
}

/// Whether the kernel body \p KernelBody only reads \p V (no assignment, increment or address).
static bool neverWritten(const VarDecl *V, const Stmt *KernelBody, ASTContext &Ctx) {
  RefFinder R(V);
  R.TraverseStmt(const_cast<Stmt *>(KernelBody));
  return llvm::all_of(R.Refs, [&](const DeclRefExpr *E) { return isPlainRead(E, Ctx); });
}

namespace {
/// Whether an expression has one value for every thread that runs a loop whose elements the rewrites move
/// between threads: it reads no threadIdx, no blockIdx when the elements move between blocks (a grid-stride
/// loop), and otherwise only parameters the kernel never writes, const locals whose initializers are so,
/// template parameters, enumerators, __constant__ or const globals, and calls of system math functions.
/// Read at a direct statement \p At of the kernel body (when given), a local that is not const is uniform
/// when the last direct statement before At that writes it is `v = e;` (or its declaration with e), e
/// uniform there; and, in a block-stride loop, a call of a device function that returns its block's total
/// (returnsBlockTotal) is uniform, whatever its arguments.
class Uniformity : public RecursiveASTVisitor<Uniformity> {
public:
  Uniformity(bool Grid, const Stmt *KernelBody, ASTContext &Ctx, unsigned Depth = 0, const Stmt *At = nullptr)
      : Grid(Grid), KernelBody(KernelBody), Ctx(Ctx), Depth(Depth), At(At) {}

  bool TraverseCallExpr(CallExpr *E, DataRecursionQueue *Queue = nullptr) {
    if (!Grid && returnsBlockTotal(E, Ctx))
      return true;
    return RecursiveASTVisitor::TraverseCallExpr(E, Queue);
  }

  bool VisitDeclRefExpr(DeclRefExpr *E) {
    std::string Name = E->getDecl()->getNameAsString();
    if (Name == "threadIdx" || (Grid && Name == "blockIdx"))
      return fail("it reads " + Name);
    if (Name == "blockIdx" || Name == "blockDim" || Name == "gridDim" || Name == "warpSize")
      return true;
    const ValueDecl *D = E->getDecl();
    if (isa<FunctionDecl>(D) || isa<EnumConstantDecl>(D) || isa<NonTypeTemplateParmDecl>(D))
      return true;
    const auto *V = dyn_cast<VarDecl>(D);
    if (!V)
      return fail("it reads '" + Name + "'");
    return varIsUniform(V) || fail("it reads '" + Name + "', which may differ between threads");
  }
  bool VisitCallExpr(CallExpr *E) {
    return !threadDependentCall(E, Ctx) || fail("it calls a function whose result may differ between threads");
  }

  bool varIsUniform(const VarDecl *V) {
    if (V->hasAttr<CUDAConstantAttr>() || (!V->hasLocalStorage() && V->getType().isConstQualified()))
      return true;
    if (V->getType()->isReferenceType() || V->getType().isVolatileQualified())
      return false;
    if (isa<ParmVarDecl>(V))
      return neverWritten(V, KernelBody, Ctx);
    if (!V->hasLocalStorage() || Depth > 8)
      return false;
    if (!V->getType().isConstQualified())
      return At && V->getType()->isArithmeticType() && reachingValueIsUniform(V);
    if (!V->getInit())
      return false;
    Uniformity Inner(Grid, KernelBody, Ctx, Depth + 1, At ? directAt(V->getLocation()) : nullptr);
    return Inner.TraverseStmt(const_cast<Expr *>(V->getInit()));
  }

  std::optional<std::string> Why;

private:
  bool fail(std::string W) {
    if (!Why)
      Why = std::move(W);
    return false;
  }

  /// The direct statement of the kernel body that holds \p L, or null.
  const Stmt *directAt(SourceLocation L) const {
    const SourceManager &SM = Ctx.getSourceManager();
    for (const Stmt *S : cast<CompoundStmt>(KernelBody)->body())
      if (SM.isPointWithin(L, S->getBeginLoc(), S->getEndLoc()))
        return S;
    return nullptr;
  }

  bool insideLambda(const Stmt *E) const {
    const SourceManager &SM = Ctx.getSourceManager();
    return llvm::any_of(findAll<LambdaExpr>(KernelBody), [&](const LambdaExpr *L) {
      return SM.isPointWithin(E->getBeginLoc(), L->getBeginLoc(), L->getEndLoc());
    });
  }

  /// Whether the value of local \p V that reaches At is uniform: every use of V is a read or the left side of
  /// an assignment or increment; of the direct statements before At that write it, the last is `V = e;` or
  /// its declaration with e (none after it); e is uniform there. The kernel body's direct statements run in
  /// order, once (the loop is one of them), so no later write reaches At.
  bool reachingValueIsUniform(const VarDecl *V) {
    const SourceManager &SM = Ctx.getSourceManager();
    const Stmt *Last = directAt(V->getLocation());
    const Expr *Value = V->getInit();
    RefFinder R(V);
    R.TraverseStmt(const_cast<Stmt *>(KernelBody));
    for (const DeclRefExpr *E : R.Refs) {
      if (insideLambda(E))
        return false; // a lambda's body runs where it is called, not where it is written
      if (isPlainRead(E, Ctx))
        continue;
      const Stmt *P = parentOf(E, Ctx);
      const auto *B = dyn_cast_or_null<BinaryOperator>(P);
      const auto *U = dyn_cast_or_null<UnaryOperator>(P);
      if (!(B && B->isAssignmentOp() && B->getLHS() == E) && !(U && U->isIncrementDecrementOp()))
        return false; // an address or a reference: writes through it are not followed
      const Stmt *D = directAt(E->getBeginLoc());
      if (!D || D == At)
        return false;
      if (SM.isBeforeInTranslationUnit(At->getBeginLoc(), D->getBeginLoc()))
        continue;
      if (Last && SM.isBeforeInTranslationUnit(D->getBeginLoc(), Last->getBeginLoc()))
        continue;
      Last = D;
      Value = B && B == D && B->getOpcode() == BO_Assign ? B->getRHS() : nullptr;
    }
    if (!Value)
      return false;
    Uniformity Inner(Grid, KernelBody, Ctx, Depth + 1, Last);
    return Inner.TraverseStmt(const_cast<Expr *>(Value));
  }

  bool Grid;
  const Stmt *KernelBody;
  ASTContext &Ctx;
  unsigned Depth;
  const Stmt *At;
};
} // namespace

/// Why \p E may differ between the threads of a loop (Uniformity), or nullopt.
static std::optional<std::string> nonUniform(const Expr *E, bool Grid, const Stmt *KernelBody, ASTContext &Ctx) {
  Uniformity U(Grid, KernelBody, Ctx);
  if (U.TraverseStmt(const_cast<Expr *>(E)))
    return std::nullopt;
  return U.Why.value_or("it may differ between threads");
}

/// Why variable \p V, read by direct statement \p At of the kernel body, may differ between the threads of a
/// loop, or nullopt.
static std::optional<std::string> nonUniformVar(const VarDecl *V, bool Grid, const Stmt *KernelBody, const Stmt *At,
                                                ASTContext &Ctx) {
  Uniformity U(Grid, KernelBody, Ctx, 0, At);
  if (U.varIsUniform(V))
    return std::nullopt;
  return "'" + V->getNameAsString() + "' may differ between threads (it is not an unwritten parameter, a const "
         "local of such values, nor a local last assigned one" + std::string(Grid ? "" : " or its block's total") + ")";
}

namespace {
/// The loop `for (T i = A; i < B; i += S)` taken apart.
struct Header {
  const VarDecl *Var = nullptr, *Bound = nullptr;
  const Expr *Init = nullptr, *BoundExpr = nullptr, *Stride = nullptr;
  /// A block-stride loop (start threadIdx.x); else a grid-stride one.
  bool Block = false;
  /// B: the block extent the start and stride name (blockDim.x, or a launch constant).
  const Expr *Extent = nullptr;
};

/// Checks a loop body statement by statement; stops at the first refusal.
class BodyCheck : public RecursiveASTVisitor<BodyCheck> {
public:
  BodyCheck(const VarDecl *Var, const Stmt *LoopStmt, const Stmt *Body, const Stmt *KernelBody, const Expr *Extent,
            bool Grid, ASTContext &Ctx)
      : Var(Var), LoopStmt(LoopStmt), Body(Body), KernelBody(KernelBody), Extent(Extent), Grid(Grid), Ctx(Ctx) {
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
  bool VisitArraySubscriptExpr(ArraySubscriptExpr *AS) { return !refuse(subscriptRefusal(AS)); }

  /// After the traversal: classifies the uses of the variables declared outside the loop. Each is only read,
  /// or the accumulator of a reduction (every use one update of one operation); else sets Refusal.
  void finishReductions() {
    for (const auto &[V, Refs] : Outside) {
      if (Refusal)
        return;
      if (llvm::all_of(Refs, [&](const DeclRefExpr *E) { return isPlainRead(E, Ctx); })) {
        if (std::optional<std::string> Why = nonUniformVar(V, Grid, KernelBody, LoopStmt, Ctx))
          refuse("a read" + atLine(Refs.front()->getBeginLoc(), Ctx) + ": " + *Why +
                 ": the rewrite gives its elements to other threads");
        continue;
      }
      std::optional<std::string> Op;
      for (const DeclRefExpr *E : Refs) {
        std::optional<std::string> This = updateOp(E, V);
        if (!This || (Op && *Op != *This)) {
          refuse(notIndependent(E, V));
          break;
        }
        Op = This;
      }
      if (Refusal)
        return;
      bool Float = V->getType()->isRealFloatingType();
      json R = {{"var", V->getNameAsString()},
                {"type", V->getType().getUnqualifiedType().getAsString(Ctx.getPrintingPolicy())},
                {"op", *Op},
                {"reassociates", Float && (*Op == "+" || *Op == "*")},
                {"combined_in", nullptr},
                {"tree_stmt", nullptr},
                {"not_combined", nullptr}};
      BlockCombine C;
      if (std::optional<std::string> Why =
              blockCombineProblem(V, *Op, LoopStmt, cast<CompoundStmt>(KernelBody), Extent, Ctx, C)) {
        R["not_combined"] = *Why;
      } else {
        R["combined_in"] = C.Array;
        R["tree_stmt"] = C.FoldStmt;
      }
      Reductions.push_back(R);
    }
  }

  std::optional<std::string> Refusal;
  json Accesses = json::array();
  json Reductions = json::array();
  /// The parameters the accessed pointers are based on, and whether the loop writes through each.
  std::map<std::string, bool> Roots;

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
      return access(E, V, V);
    if (V->hasAttr<CUDASharedAttr>())
      return "a use of __shared__ '" + Name + "'" + atLine(E->getBeginLoc(), Ctx) + ", which the rule does not analyse";
    if (!V->hasLocalStorage() && !V->getType().isConstQualified() && !V->hasAttr<CUDAConstantAttr>())
      return "a use of '" + Name + "', a variable outside the kernel" + atLine(E->getBeginLoc(), Ctx) +
             ", which the rule does not analyse";
    if (V->getType()->isReferenceType())
      return "a use of the reference '" + Name + "'" + atLine(E->getBeginLoc(), Ctx) + ", which the rule does not follow";
    if (V->getType()->isPointerType()) {
      if (const VarDecl *Root = pointerRoot(V))
        return access(E, V, Root);
      return "an access through '" + Name + "', which is not a kernel parameter nor a local pointer set once to one" +
             " plus an offset that is the same for all threads of the loop" + atLine(E->getBeginLoc(), Ctx);
    }
    if (!V->getType()->isArithmeticType() || V->getType().isVolatileQualified() || V->getType()->isBooleanType())
      return isPlainRead(E, Ctx) ? std::optional<std::string>(nonUniformVar(V, Grid, KernelBody, LoopStmt, Ctx))
                                 : std::optional<std::string>(notIndependent(E, V));
    Outside[V].push_back(E); // only read, or a reduction's accumulator: finishReductions decides
    return std::nullopt;
  }

  /// Why subscript \p AS may reach memory the rule does not follow, or nullopt: its base must be a pointer
  /// that access() checks, an array the body declares, or a __constant__ or const global array.
  std::optional<std::string> subscriptRefusal(const ArraySubscriptExpr *AS) {
    const Expr *B = AS->getBase()->IgnoreParenImpCasts();
    if (isa<ArraySubscriptExpr>(B))
      return std::nullopt; // a[i][j]: the inner subscript is visited on its own
    const VarDecl *V = referencedVar(B);
    if (V && isa<DeclRefExpr>(B) &&
        (Inner.count(V) || V->hasAttr<CUDAConstantAttr>() || V->getType()->isPointerType() ||
         (!V->hasLocalStorage() && V->getType().isConstQualified())))
      return std::nullopt;
    return "a subscript of '" + sourceText(B->getSourceRange(), Ctx) + "'" + atLine(AS->getBeginLoc(), Ctx) +
           ", which is not a kernel pointer, a local pointer based on one, or an array the body declares";
  }

  std::string notIndependent(const DeclRefExpr *E, const VarDecl *V) {
    return "a write, address or reference of '" + V->getNameAsString() + "', declared outside the loop" +
           atLine(E->getBeginLoc(), Ctx) + ", that is not an accumulation (v += e, v = fmaxf(v, e), ...): its "
           "iterations would not be independent";
  }

  /// The kernel pointer parameter local pointer \p V is based on: its initializer is `P` or `P + offset`
  /// and the kernel never assigns it again (nor takes its address); else null.
  const VarDecl *pointerRoot(const VarDecl *V) {
    if (!V->hasLocalStorage() || isa<ParmVarDecl>(V) || !V->getInit() || V->getType()->isReferenceType())
      return nullptr;
    const Expr *Init = V->getInit()->IgnoreParenImpCasts();
    if (auto Sum = operands(Init, BO_Add)) {
      bool FirstIsBase = Sum->first->getType()->isPointerType();
      // The offset must be one for all threads that share the loop's elements: the block's (a row) for a
      // block-stride loop, the grid's for a grid-stride one.
      if (nonUniform(FirstIsBase ? Sum->second : Sum->first, Grid, KernelBody, Ctx))
        return nullptr;
      Init = FirstIsBase ? Sum->first : Sum->second;
    }
    const VarDecl *Root = referencedVar(Init);
    if (!Root || !isa<ParmVarDecl>(Root) || !Root->getType()->isPointerType() ||
        !isa<DeclRefExpr>(Init->IgnoreParenImpCasts()) || !neverWritten(Root, KernelBody, Ctx))
      return nullptr;
    RefFinder R(V);
    R.TraverseStmt(const_cast<Stmt *>(KernelBody));
    for (const DeclRefExpr *E : R.Refs)
      if (!isPlainRead(E, Ctx))
        return nullptr;
    return Root;
  }

  /// The reduction operation \p E (a use of \p V) is part of: `V op= e` ("+" for += and -=, "*", "&", "|",
  /// "^"), or `V = f(V, e)` with f a min or max function ("max", "min"), \p E being either V; else nullopt.
  std::optional<std::string> updateOp(const DeclRefExpr *E, const VarDecl *V) {
    const Stmt *Child = nullptr;
    const Stmt *P = semanticParent(E, Child, Ctx);
    // The update's own value must be unused (`y[c] = (s += x[c])` would store each running partial).
    auto Statement = [&](const Stmt *Update) {
      const Stmt *Up = parentOf(Update, Ctx);
      return Up && !isa<Expr>(Up);
    };
    if (const auto *C = dyn_cast_or_null<CompoundAssignOperator>(P); C && C->getLHS()->IgnoreParens() == E) {
      if (!Statement(C))
        return std::nullopt;
      // `s += e` computes in the type of s + e, then converts: with a conversion (an int sum of floats)
      // each step rounds, and the order matters.
      if (!Ctx.hasSameUnqualifiedType(C->getComputationResultType(), V->getType()))
        return std::nullopt;
      switch (C->getOpcode()) {
      case BO_AddAssign:
      case BO_SubAssign: return std::string("+");
      case BO_MulAssign: return std::string("*");
      case BO_AndAssign: return std::string("&");
      case BO_OrAssign: return std::string("|");
      case BO_XorAssign: return std::string("^");
      default: return std::nullopt;
      }
    }
    const BinaryOperator *Assign = dyn_cast_or_null<BinaryOperator>(P);
    if (Assign && Assign->getLHS()->IgnoreParens() != E)
      Assign = nullptr; // E is not the assigned variable
    const CallExpr *Call = nullptr;
    if (Assign && Assign->getOpcode() == BO_Assign && Statement(Assign)) {
      Call = dyn_cast<CallExpr>(Assign->getRHS()->IgnoreParenImpCasts());
    } else if (!Assign && isPlainRead(E, Ctx)) { // V as an argument of its own update's call
      Call = dyn_cast_or_null<CallExpr>(semanticParent(parentOf(E, Ctx), Child, Ctx));
      const auto *Up = Call ? dyn_cast_or_null<BinaryOperator>(semanticParent(Call, Child, Ctx)) : nullptr;
      if (!Up || Up->getOpcode() != BO_Assign || referencedVar(Up->getLHS()) != V || !Statement(Up))
        Call = nullptr;
    }
    return Call ? minMaxOf(Call, V) : std::nullopt;
  }

  /// "max" or "min" when \p C is a two-argument min or max function with exactly one argument \p V.
  std::optional<std::string> minMaxOf(const CallExpr *C, const VarDecl *V) {
    const FunctionDecl *F = C->getDirectCallee();
    if (!F || C->getNumArgs() != 2)
      return std::nullopt;
    unsigned Self = 0;
    for (const Expr *A : C->arguments())
      Self += isa<DeclRefExpr>(A->IgnoreParenImpCasts()) && referencedVar(A) == V;
    if (Self != 1)
      return std::nullopt;
    if (!Ctx.hasSameUnqualifiedType(C->getType(), V->getType()))
      return std::nullopt;
    std::string Name = F->getNameAsString();
    for (const char *Max : {"fmaxf", "fmax", "max"})
      if (Name == Max)
        return std::string("max");
    for (const char *Min : {"fminf", "fmin", "min"})
      if (Name == Min)
        return std::string("min");
    return std::nullopt;
  }

  /// \p E names pointer \p P (based on parameter \p Root): it must be the base of `P[i]`.
  std::optional<std::string> access(const DeclRefExpr *E, const VarDecl *P, const VarDecl *Root) {
    if (P == Root && !neverWritten(P, KernelBody, Ctx))
      return "a use of '" + P->getNameAsString() + "', a parameter the kernel writes" + atLine(E->getBeginLoc(), Ctx);
    if (P->getType()->getPointeeType().isVolatileQualified())
      return "a use of '" + P->getNameAsString() + "', a pointer to volatile" + atLine(E->getBeginLoc(), Ctx);
    const Stmt *Child = nullptr;
    const auto *AS = dyn_cast_or_null<ArraySubscriptExpr>(semanticParent(E, Child, Ctx));
    std::string Name = P->getNameAsString();
    if (!AS || AS->getBase()->IgnoreParenImpCasts() != E)
      return "a use of pointer '" + Name + "' other than " + Name + "[" + Var->getNameAsString() + "]" +
             atLine(E->getBeginLoc(), Ctx);
    if (referencedVar(AS->getIdx()) != Var || !isa<DeclRefExpr>(AS->getIdx()->IgnoreParenImpCasts()))
      return sourceText(AS->getSourceRange(), Ctx) + atLine(AS->getBeginLoc(), Ctx) + ": not indexed by the loop variable '" +
             Var->getNameAsString() + "' itself (a non-unit stride, or an offset another thread may own)";
    return element(AS, P, Root);
  }

  /// Records the access \p AS to parameter \p P: how it is used and where it is in the body.
  std::optional<std::string> element(const ArraySubscriptExpr *AS, const VarDecl *P, const VarDecl *Root) {
    QualType T = P->getType()->getPointeeType();
    if (T->isIncompleteType() || T->isDependentType())
      return "an access to '" + P->getNameAsString() + "' whose element type is not complete" + atLine(AS->getBeginLoc(), Ctx);
    const SourceManager &SM = Ctx.getSourceManager();
    if (AS->getBeginLoc().isMacroID() || AS->getEndLoc().isMacroID())
      return "an access from a macro expansion" + atLine(AS->getBeginLoc(), Ctx);
    if (SM.getFileID(AS->getBeginLoc()) != SM.getFileID(SM.getExpansionLoc(Body->getBeginLoc())))
      return "an access written in another file (an #include in the loop body)" + atLine(AS->getBeginLoc(), Ctx);
    json A = {{"param", P->getNameAsString()}, {"root", Root->getNameAsString()},
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
    bool &Writes = Roots[Root->getNameAsString()];
    if (const auto *C = dyn_cast_or_null<ImplicitCastExpr>(Use); C && C->getCastKind() == CK_LValueToRValue) {
      A["read"] = true;
    } else if (const auto *B = dyn_cast_or_null<BinaryOperator>(Use); B && B->isAssignmentOp() && B->getLHS() == Child) {
      A["written"] = Writes = true;
      A["read"] = B->isCompoundAssignmentOp();
      A["unconditional"] = !B->isCompoundAssignmentOp() && isDirectStatement(B);
    } else if (const auto *U = dyn_cast_or_null<UnaryOperator>(Use); U && U->isIncrementDecrementOp()) {
      A["written"] = A["read"] = Writes = true;
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

  std::optional<std::string> callRefusal(const CallExpr *E) { return threadDependentCall(E, Ctx); }

  const VarDecl *Var;
  const Stmt *LoopStmt, *Body, *KernelBody;
  const Expr *Extent;
  bool Grid;
  ASTContext &Ctx;
  unsigned BodyOffset = 0;
  std::set<const VarDecl *> Inner;
  /// Uses of the scalars declared outside the loop, in source order, the variables in order of first use.
  llvm::MapVector<const VarDecl *, std::vector<const DeclRefExpr *>> Outside;
};
} // namespace

/// threadIdx.x, or a const local initialized with it.
static bool isThreadIndexX(const Expr *E, ASTContext &Ctx) {
  if (textIsOneOf(E, {"threadIdx.x"}, Ctx))
    return true;
  const VarDecl *V = isa<DeclRefExpr>(E->IgnoreParenImpCasts()) ? referencedVar(E) : nullptr;
  return V && V->hasLocalStorage() && V->getType().isConstQualified() && V->getInit() &&
         textIsOneOf(V->getInit(), {"threadIdx.x"}, Ctx);
}

/// Whether \p E has one value for the whole launch: blockDim.x, an integer constant (a literal, a macro) or a
/// non-type template parameter.
static bool isLaunchConstant(const Expr *E, ASTContext &Ctx) {
  if (textIsOneOf(E, {"blockDim.x"}, Ctx))
    return true;
  E = E->IgnoreParenImpCasts();
  if (const auto *R = dyn_cast<DeclRefExpr>(E); R && isa<NonTypeTemplateParmDecl>(R->getDecl()))
    return true;
  return !E->isValueDependent() && E->getType()->isIntegerType() && E->isIntegerConstantExpr(Ctx);
}

/// The factor multiplying \p Named in \p E (`Named * X` or `X * Named`), or null.
static const Expr *factorOf(const Expr *E, const char *Named, ASTContext &Ctx) {
  auto M = operands(E, BO_Mul);
  if (!M)
    return nullptr;
  if (textIsOneOf(M->first, {Named}, Ctx))
    return M->second;
  return textIsOneOf(M->second, {Named}, Ctx) ? M->first : nullptr;
}

/// B when \p E is `blockIdx.x * B + threadIdx.x` (factors and terms in either order), else null.
static const Expr *gridStart(const Expr *E, ASTContext &Ctx) {
  auto A = operands(E, BO_Add);
  if (!A)
    return nullptr;
  if (isThreadIndexX(A->second, Ctx))
    return factorOf(A->first, "blockIdx.x", Ctx);
  return isThreadIndexX(A->first, Ctx) ? factorOf(A->second, "blockIdx.x", Ctx) : nullptr;
}

/// \p E, or the initializer of the const local \p E names.
static const Expr *throughConstLocal(const Expr *E) {
  const VarDecl *V = isa<DeclRefExpr>(E->IgnoreParenImpCasts()) ? referencedVar(E) : nullptr;
  if (V && V->hasLocalStorage() && V->getType().isConstQualified() && V->getInit())
    return V->getInit();
  return E;
}

/// Why stride \p S does not step the loop of start extent \p B over the grid (`B * gridDim.x`) or, with
/// \p Block, over the block (`B`), or nullopt.
static std::optional<std::string> strideRefusal(const Expr *S, const Expr *B, bool Block, ASTContext &Ctx) {
  std::string Want = squeezed(sourceText(B->IgnoreParenImpCasts()->getSourceRange(), Ctx));
  const Expr *Step = throughConstLocal(S);
  const Expr *Factor = Block ? Step : factorOf(Step, "gridDim.x", Ctx);
  if (Factor && squeezed(sourceText(Factor->IgnoreParenImpCasts()->getSourceRange(), Ctx)) == Want)
    return std::nullopt;
  std::string Is = Block ? Want : Want + " * gridDim.x";
  return "its stride '" + sourceText(S->getSourceRange(), Ctx) + "' is not " + Is + ": not a " +
         (Block ? "block" : "grid") + "-stride loop";
}

/// Why \p F is not `for (T i = blockIdx.x * B + threadIdx.x; i < n; i += B * gridDim.x)` (a grid-stride
/// loop) or `for (T i = threadIdx.x; i < n; i += B)` (a block-stride loop), B blockDim.x or a launch
/// constant, or nullopt; fills \p H.
static std::optional<std::string> headerRefusal(const ForStmt *F, Header &H, ASTContext &Ctx) {
  const auto *Init = dyn_cast_or_null<DeclStmt>(F->getInit());
  H.Var = Init && Init->isSingleDecl() ? dyn_cast<VarDecl>(Init->getSingleDecl()) : nullptr;
  if (!H.Var || !H.Var->getInit() || !H.Var->getType()->isIntegerType())
    return std::string("it does not declare one integer loop variable with an initializer");
  H.Init = H.Var->getInit();
  H.Block = isThreadIndexX(H.Init, Ctx);
  H.Extent = H.Block ? nullptr : gridStart(H.Init, Ctx);
  if (!H.Block && (!H.Extent || !isLaunchConstant(H.Extent, Ctx)))
    return "it starts at '" + sourceText(H.Init->getSourceRange(), Ctx) +
           "', not at blockIdx.x * blockDim.x + threadIdx.x (a grid-stride loop) or threadIdx.x (a block-stride "
           "loop)";
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
  if (H.Block) {
    H.Extent = throughConstLocal(H.Stride);
    if (!isLaunchConstant(H.Extent, Ctx))
      return "its stride '" + sourceText(H.Stride->getSourceRange(), Ctx) +
             "' is not blockDim.x or a constant: not a block-stride loop";
  }
  return strideRefusal(H.Stride, H.Extent, H.Block, Ctx);
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

namespace {
/// The first statement of a kernel body before a loop that may keep some threads from reaching it: a
/// return. The rewrites give each element to another thread, so every thread must run the loop.
class EarlyReturn : public RecursiveASTVisitor<EarlyReturn> {
public:
  bool VisitReturnStmt(ReturnStmt *S) {
    Found = S;
    return false;
  }
  const ReturnStmt *Found = nullptr;
};

/// Finds, outside one loop, the uses of pointers: kernel pointer parameters, and local pointers with the
/// parameter their initializer is based on (`const float *x = in + off;`; "" when it is not so).
class RootUses : public RecursiveASTVisitor<RootUses> {
public:
  explicit RootUses(const ForStmt *Loop) : Loop(Loop) {}
  bool TraverseForStmt(ForStmt *F) { return F == Loop || RecursiveASTVisitor::TraverseForStmt(F); }
  bool TraverseVarDecl(VarDecl *V) {
    if (!V->hasLocalStorage() || isa<ParmVarDecl>(V) || !V->getType()->isPointerType())
      return RecursiveASTVisitor::TraverseVarDecl(V);
    const Expr *Init = V->getInit() ? V->getInit()->IgnoreParenImpCasts() : nullptr;
    if (Init)
      if (auto Sum = operands(Init, BO_Add))
        Init = Sum->first->getType()->isPointerType() ? Sum->first : Sum->second;
    const auto *R = Init ? dyn_cast<DeclRefExpr>(Init->IgnoreParenImpCasts()) : nullptr;
    const auto *P = R ? dyn_cast<ParmVarDecl>(R->getDecl()) : nullptr;
    Root[V] = P ? P->getNameAsString() : "";
    return true; // the initializer only names the parameter; accesses go through V
  }
  bool VisitDeclRefExpr(DeclRefExpr *E) {
    if (const auto *V = dyn_cast<VarDecl>(E->getDecl()); V && V->getType()->isPointerType())
      Uses.push_back(E);
    return true;
  }
  /// The parameter \p V stands for: itself, a local's root, "" when unknown.
  std::string rootOf(const VarDecl *V) const {
    if (isa<ParmVarDecl>(V))
      return V->getNameAsString();
    auto It = Root.find(V);
    return It == Root.end() ? "" : It->second;
  }
  std::vector<const DeclRefExpr *> Uses;

private:
  const ForStmt *Loop;
  std::map<const VarDecl *, std::string> Root;
};
} // namespace

/// Why the kernel may reach the memory loop \p F accesses elsewhere, with no barrier between, or nullopt: the
/// rewrite gives the loop's elements to other threads, so an element that another statement of the same
/// thread reads or writes would be another thread's. A pointer the loop only reads may be read elsewhere;
/// a local pointer of unknown base counts as any.
static std::optional<std::string> sharedElsewhere(const ForStmt *F, const FunctionDecl *Kernel,
                                                  const std::map<std::string, bool> &Roots, ASTContext &Ctx) {
  bool Writes = llvm::any_of(Roots, [](const auto &R) { return R.second; });
  // A written parameter without __restrict__ may be the same memory as any other pointer of the kernel.
  bool Unrestricted = llvm::any_of(Kernel->parameters(), [&](const ParmVarDecl *P) {
    auto It = Roots.find(P->getNameAsString());
    return It != Roots.end() && It->second && !P->getType().isRestrictQualified();
  });
  RootUses U(F);
  U.TraverseStmt(Kernel->getBody());
  for (const DeclRefExpr *E : U.Uses) {
    const auto *V = cast<VarDecl>(E->getDecl());
    if (!V->hasLocalStorage() && !isa<ParmVarDecl>(V))
      continue;
    std::string Root = U.rootOf(V);
    auto It = Roots.find(Root);
    if (It == Roots.end() && Unrestricted)
      return "'" + V->getNameAsString() + "' is used" + atLine(E->getBeginLoc(), Ctx) +
             ", and a pointer the loop writes is not __restrict__, so it may reach the same memory: the rewrite "
             "gives the loop's elements to other threads";
    if (It == Roots.end() && !(Root.empty() && Writes))
      continue;
    bool Written = It == Roots.end() ? true : It->second;
    bool ReadOnly = false;
    const Stmt *Child = nullptr;
    if (const auto *AS = dyn_cast_or_null<ArraySubscriptExpr>(semanticParent(E, Child, Ctx)))
      ReadOnly = isPlainRead(AS, Ctx);
    if (Written || !ReadOnly)
      return "'" + V->getNameAsString() + "' is also used" + atLine(E->getBeginLoc(), Ctx) +
             (Written ? ", and the loop writes the memory it may reach" : " other than read, and the loop reads " + Root) +
             ": the rewrite gives the loop's elements to other threads";
  }
  return std::nullopt;
}

/// The member with every field, as the typed model writes it back.
static json facts(json Refusal) {
  return {{"refusal", std::move(Refusal)}, {"var", ""},  {"var_type", ""}, {"init", ""},
          {"bound", ""},                   {"stride", ""}, {"body", ""},   {"accesses", json::array()},
          {"other_effects", nullptr},      {"stride_kind", "grid"}, {"block_extent", nullptr},
          {"reductions", json::array()}};
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
  // The bound is read on every iteration: it must be one value for all threads, never written (which also
  // keeps it fixed while the loop runs).
  if (std::optional<std::string> Why = nonUniformVar(H.Bound, !H.Block, KernelBody, Direct, Ctx))
    return refused("its bound " + *Why + ": the rewrite gives its elements to other threads");
  if (!findAll<GotoStmt>(KernelBody).empty() || !findAll<IndirectGotoStmt>(KernelBody).empty())
    return refused("a goto in the kernel: its statements may run more than once, which the rewrites' proofs "
                   "do not allow");
  EarlyReturn Ret;
  for (const Stmt *S : KernelBody->body()) {
    if (S == Direct)
      break;
    if (!Ret.TraverseStmt(const_cast<Stmt *>(S)))
      return refused("a return before it" + atLine(Ret.Found->getBeginLoc(), Ctx) +
                     ": threads that return never run the loop, whose elements the rewrites give to other threads");
  }
  std::string Body = sourceText(F->getBody()->getSourceRange(), Ctx);
  if (!isa<CompoundStmt>(F->getBody()))
    Body += ";"; // a statement's source range ends before its semicolon
  if (Body.find("kloop_") != std::string::npos)
    return refused("its body uses names that begin with kloop_, which the rewrites declare");
  BodyCheck Check(H.Var, Direct, F->getBody(), KernelBody, H.Extent, !H.Block, Ctx);
  Check.TraverseStmt(const_cast<Stmt *>(F->getBody()));
  Check.finishReductions();
  if (Check.Refusal)
    return refused(*Check.Refusal);
  if (Check.Accesses.empty())
    return refused("the body reads and writes no kernel pointer parameter as p[i]");
  if (std::optional<std::string> Why = sharedElsewhere(F, Kernel, Check.Roots, Ctx))
    return refused(*Why);
  json Out = facts(nullptr);
  Out["var"] = H.Var->getNameAsString();
  Out["var_type"] = H.Var->getType().getUnqualifiedType().getAsString(Ctx.getPrintingPolicy());
  Out["init"] = sourceText(H.Init->getSourceRange(), Ctx);
  Out["bound"] = sourceText(H.BoundExpr->getSourceRange(), Ctx);
  Out["stride"] = sourceText(H.Stride->getSourceRange(), Ctx);
  Out["body"] = Body;
  Out["accesses"] = Check.Accesses;
  Out["reductions"] = Check.Reductions;
  Out["stride_kind"] = H.Block ? "block" : "grid";
  if (!textIsOneOf(H.Extent, {"blockDim.x"}, Ctx))
    Out["block_extent"] = sourceText(H.Extent->IgnoreParenImpCasts()->getSourceRange(), Ctx);
  Out["other_effects"] = otherEffects(KernelBody, Direct, Ctx);
  return Out;
}

} // namespace kloop
