//===- BlockCombine.cpp - Where a loop's per-thread partials are folded -----===//
//
// Follows a reduction loop's accumulator to the halving tree that folds it, in the kernel or in a device
// function the kernel calls, and proves that the tree takes every thread's slot and that nothing reads a
// slot but the total before the array is filled again (BlockCombine.h).
//
//===----------------------------------------------------------------------===//
#include "BlockCombine.h"
#include "ElementwiseLoops.h"
#include "SourceText.h"
#include "TreeReductions.h"
#include "kloop/Support/Text.h"

#include "clang/AST/Attr.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Basic/SourceManager.h"

#include <algorithm>
#include <vector>

using namespace clang;

namespace kloop {

namespace {
/// A halving tree over an array and, for a device function that stores its value parameter first, that
/// parameter.
struct Fold {
  const VarDecl *Array = nullptr;
  const ParmVarDecl *Value = nullptr;
  HalvingTree Tree;
};
} // namespace

static const VarDecl *varOf(const Expr *E) {
  const auto *D = dyn_cast_or_null<DeclRefExpr>(E ? E->IgnoreParenImpCasts() : nullptr);
  return D ? dyn_cast<VarDecl>(D->getDecl()) : nullptr;
}

static bool isBarrier(const Stmt *S) {
  const auto *C = dyn_cast_or_null<CallExpr>(S);
  const FunctionDecl *F = C ? C->getDirectCallee() : nullptr;
  return F && F->getName() == "__syncthreads" && C->getNumArgs() == 0;
}

static bool isZero(const Expr *E, ASTContext &Ctx) {
  Expr::EvalResult R;
  return !E->isValueDependent() && E->EvaluateAsInt(R, Ctx) && R.Val.getInt() == 0;
}

/// Whether every use of parameter \p P in its function only reads it.
static bool onlyRead(const ParmVarDecl *P, ASTContext &Ctx) {
  const auto *F = dyn_cast<FunctionDecl>(P->getDeclContext());
  RefFinder R(P);
  R.TraverseStmt(F ? F->getBody() : nullptr);
  return llvm::all_of(R.Refs, [&](const DeclRefExpr *E) { return isPlainRead(E, Ctx); });
}

/// Whether \p E is threadIdx.x: directly, a const local initialised with it, or a parameter of the callee of
/// \p Call (null: \p E is in the kernel) that the callee only reads and \p Call passes one of those.
static bool threadIndex(const Expr *E, const CallExpr *Call, ASTContext &Ctx) {
  if (isThreadIdxX(E, Ctx))
    return true;
  const VarDecl *V = varOf(E);
  if (!V)
    return false;
  const auto *P = dyn_cast<ParmVarDecl>(V);
  if (!P)
    return V->hasLocalStorage() && V->getType().isConstQualified() && V->getInit() && isThreadIdxX(V->getInit(), Ctx);
  unsigned I = P->getFunctionScopeIndex();
  return Call && I < Call->getNumArgs() && onlyRead(P, Ctx) && threadIndex(Call->getArg(I), nullptr, Ctx);
}

/// Whether \p E (a reference to array \p A) is the base of a read of A[0].
static bool readsSlotZero(const DeclRefExpr *E, ASTContext &Ctx) {
  const Stmt *Child = nullptr;
  const auto *AS = dyn_cast_or_null<ArraySubscriptExpr>(semanticParent(E, Child, Ctx));
  return AS && AS->getBase()->IgnoreParenImpCasts() == E && isZero(AS->getIdx(), Ctx) && isPlainRead(AS, Ctx);
}

/// Whether the tree's operation \p TreeOp ("+", "fmaxf", ...) is the reduction's \p Op ("+", "max", ...).
static bool sameOp(const std::string &TreeOp, const std::string &Op) {
  if (Op == "max")
    return TreeOp == "fmaxf" || TreeOp == "fmax" || TreeOp == "max";
  if (Op == "min")
    return TreeOp == "fminf" || TreeOp == "fmin" || TreeOp == "min";
  return TreeOp == Op;
}

/// The text of the explicit template argument \p I of \p Call's callee, or nullopt.
static std::optional<std::string> templateArg(const CallExpr *Call, unsigned I, ASTContext &Ctx) {
  const Expr *E = Call->getCallee()->IgnoreParenImpCasts();
  ArrayRef<TemplateArgumentLoc> Args;
  if (const auto *U = dyn_cast<UnresolvedLookupExpr>(E))
    Args = U->template_arguments();
  else if (const auto *D = dyn_cast<DeclRefExpr>(E))
    Args = D->template_arguments();
  if (I >= Args.size())
    return std::nullopt;
  return sourceText(Args[I].getSourceRange(), Ctx);
}

static std::string parenthesized(const std::string &T) {
  bool Simple = llvm::all_of(T, [](char C) { return std::isalnum((unsigned char)C) || C == '_' || C == '.'; });
  return Simple ? T : "(" + T + ")";
}

/// \p Start as the caller would write it: the callee's template and (only read) function parameters replaced
/// by what \p Call passes them; nullopt when one is not known. \p Call null: \p Start is in the kernel.
static std::optional<std::string> startInCaller(const Expr *Start, const CallExpr *Call, ASTContext &Ctx) {
  std::string Text = sourceText(Start->getSourceRange(), Ctx);
  if (!Call)
    return Text;
  CharSourceRange Range = fileRangeOf(Start->getSourceRange(), Ctx);
  std::vector<const DeclRefExpr *> Refs = findAll<DeclRefExpr>(Start);
  std::reverse(Refs.begin(), Refs.end());
  for (const DeclRefExpr *D : Refs) {
    std::optional<std::string> By;
    if (const auto *T = dyn_cast<NonTypeTemplateParmDecl>(D->getDecl()))
      By = templateArg(Call, T->getIndex(), Ctx);
    else if (const auto *P = dyn_cast<ParmVarDecl>(D->getDecl()))
      if (P->getFunctionScopeIndex() < Call->getNumArgs() && onlyRead(P, Ctx))
        By = sourceText(Call->getArg(P->getFunctionScopeIndex())->getSourceRange(), Ctx);
    if (!By && (isa<NonTypeTemplateParmDecl>(D->getDecl()) || isa<ParmVarDecl>(D->getDecl())))
      return std::nullopt;
    std::optional<unsigned> At = offsetIn(D->getBeginLoc(), Range, Ctx);
    if (By && !At)
      return std::nullopt;
    if (By)
      Text.replace(*At, D->getNameInfo().getAsString().size(), parenthesized(*By));
  }
  return Text;
}

/// Why a tree whose stride starts at \p Start (in the callee of \p Call, or the kernel) does not start at half
/// of \p Extent, or nullopt.
static std::optional<std::string> startProblem(const Expr *Start, const CallExpr *Call, const Expr *Extent,
                                               ASTContext &Ctx) {
  std::string Ext = withoutSpaces(sourceText(Extent->IgnoreParenImpCasts()->getSourceRange(), Ctx));
  std::optional<std::string> Text = startInCaller(Start, Call, Ctx);
  if (Text && (withoutSpaces(*Text) == Ext + "/2" || withoutSpaces(*Text) == "(" + Ext + ")/2"))
    return std::nullopt;
  Expr::EvalResult S, E;
  if (!Call && !Start->isValueDependent() && !Extent->isValueDependent() && Start->EvaluateAsInt(S, Ctx) &&
      Extent->EvaluateAsInt(E, Ctx) && S.Val.getInt() * 2 == E.Val.getInt())
    return std::nullopt;
  return "the tree starts at '" + Text.value_or(sourceText(Start->getSourceRange(), Ctx)) + "', not " + Ext +
         "/2: it would not fold every thread's slot";
}

/// Whether \p S declares only const locals.
static bool constLocals(const Stmt *S) {
  const auto *D = dyn_cast<DeclStmt>(S);
  return D && llvm::all_of(D->decls(), [](const Decl *X) {
           const auto *V = dyn_cast<VarDecl>(X);
           return V && V->getType().isConstQualified();
         });
}

/// Why the statements of \p F after its tree (from \p It) may read a slot of \p F.Array but 0, or use the
/// value parameter, or nullopt.
static std::optional<std::string> afterFoldProblem(const Fold &F, CompoundStmt::const_body_iterator It,
                                                   CompoundStmt::const_body_iterator End, ASTContext &Ctx) {
  for (; It != End; ++It)
    for (const DeclRefExpr *E : findAll<DeclRefExpr>(*It)) {
      if (E->getDecl() == F.Value)
        return "it uses '" + F.Value->getNameAsString() + "' again" + atLine(E->getBeginLoc(), Ctx);
      if (E->getDecl() == F.Array && !readsSlotZero(E, Ctx))
        return "it uses '" + F.Array->getNameAsString() + "'" + atLine(E->getBeginLoc(), Ctx) +
               " other than reading its slot 0 after the tree";
    }
  return std::nullopt;
}

/// Why device function \p F (called by \p Call) is not, after const locals, [with \p WithValue: `A[t] = v;
/// __syncthreads();`, A and v its parameters] a halving tree on its array parameter A indexed by threadIdx.x
/// and then only reads of A[0]; or nullopt with \p Out filled.
static std::optional<std::string> foldFunctionProblem(const FunctionDecl *F, const CallExpr *Call, bool WithValue,
                                                      Fold &Out, ASTContext &Ctx) {
  std::string Name = "'" + F->getNameAsString() + "'";
  const auto *Body = dyn_cast_or_null<CompoundStmt>(F->getBody());
  if (!Body)
    return Name + " has no body";
  auto It = Body->body_begin(), End = Body->body_end();
  while (It != End && constLocals(*It))
    ++It;
  if (WithValue) {
    const auto *Store = It != End ? dyn_cast<BinaryOperator>(*It) : nullptr;
    const auto *Slot = Store && Store->getOpcode() == BO_Assign
                           ? dyn_cast<ArraySubscriptExpr>(Store->getLHS()->IgnoreParenImpCasts())
                           : nullptr;
    Out.Value = Slot && isa<DeclRefExpr>(Store->getRHS()->IgnoreParenImpCasts())
                    ? dyn_cast_or_null<ParmVarDecl>(varOf(Store->getRHS()))
                    : nullptr;
    Out.Array = Slot ? dyn_cast_or_null<ParmVarDecl>(varOf(Slot->getBase())) : nullptr;
    if (!Out.Value || !Out.Array || !threadIndex(Slot->getIdx(), Call, Ctx))
      return Name + " does not begin (after const locals) with `a[threadIdx.x] = v;`, a and v its parameters";
    if (++It == End || !isBarrier(*It))
      return Name + " does not follow its store `a[threadIdx.x] = v;` with __syncthreads()";
    ++It;
  }
  const auto *Tree = It != End ? dyn_cast<ForStmt>(*It) : nullptr;
  if (!Tree)
    return Name + " does not go on with a loop (the halving tree)";
  if (std::optional<std::string> Why = halvingTreeProblem(Tree, Out.Tree, Ctx))
    return "the loop in " + Name + ": " + *Why;
  if (!WithValue)
    Out.Array = dyn_cast_or_null<ParmVarDecl>(varOf(Out.Tree.Array));
  if (!Out.Array || varOf(Out.Tree.Array) != Out.Array)
    return "the tree in " + Name + " does not fold an array parameter" +
           (WithValue ? " (the one it stores into)" : std::string());
  if (!threadIndex(Out.Tree.Thread, Call, Ctx))
    return "the tree in " + Name + " is indexed by '" + sourceText(Out.Tree.Thread->getSourceRange(), Ctx) +
           "', not proved threadIdx.x";
  RefFinder Arr(Out.Array);
  Arr.TraverseStmt(const_cast<Stmt *>(F->getBody()));
  for (const DeclRefExpr *E : Arr.Refs) {
    const Stmt *Child = nullptr;
    const auto *AS = dyn_cast_or_null<ArraySubscriptExpr>(semanticParent(E, Child, Ctx));
    if (!AS || AS->getBase()->IgnoreParenImpCasts() != E)
      return Name + " uses '" + Out.Array->getNameAsString() + "'" + atLine(E->getBeginLoc(), Ctx) +
             " other than as a[i]";
  }
  return afterFoldProblem(Out, ++It, End, Ctx);
}

/// The device function \p C calls, with a body outside the system headers, or null.
static const FunctionDecl *deviceCallee(const CallExpr *C, ASTContext &Ctx) {
  const FunctionDecl *F = calleePattern(C);
  if (!F || !F->hasAttr<CUDADeviceAttr>() || !F->hasBody() ||
      Ctx.getSourceManager().isInSystemHeader(F->getLocation()))
    return nullptr;
  return F;
}

/// Why \p C is not a call of a fold function of the \p WithValue form whose array argument is \p A, or
/// nullopt with \p Out filled.
static std::optional<std::string> foldCallProblem(const CallExpr *C, const VarDecl *A, bool WithValue, Fold &Out,
                                                  ASTContext &Ctx) {
  const FunctionDecl *F = deviceCallee(C, Ctx);
  if (!F)
    return "a call" + atLine(C->getBeginLoc(), Ctx) + " of no device function kloop can read";
  if (std::optional<std::string> Why = foldFunctionProblem(F, C, WithValue, Out, Ctx))
    return Why;
  unsigned I = cast<ParmVarDecl>(Out.Array)->getFunctionScopeIndex();
  if (I >= C->getNumArgs() || varOf(C->getArg(I)) != A || !isa<DeclRefExpr>(C->getArg(I)->IgnoreParenImpCasts()))
    return "the call" + atLine(C->getBeginLoc(), Ctx) + " does not pass '" + A->getNameAsString() + "' as '" +
           Out.Array->getNameAsString() + "'";
  return std::nullopt;
}

/// Why statement \p S is not a halving tree of \p Op on \p A from \p Extent / 2 (in the kernel, or a call of a
/// device function that is one), or nullopt.
static std::optional<std::string> foldStmtProblem(const Stmt *S, const VarDecl *A, const std::string &Op,
                                                  const Expr *Extent, ASTContext &Ctx) {
  Fold F;
  const CallExpr *Call = dyn_cast<CallExpr>(S);
  if (const auto *Tree = dyn_cast<ForStmt>(S)) {
    if (std::optional<std::string> Why = halvingTreeProblem(Tree, F.Tree, Ctx))
      return "the loop" + atLine(S->getBeginLoc(), Ctx) + " is not the halving tree: " + *Why;
    if (varOf(F.Tree.Array) != A || !threadIndex(F.Tree.Thread, nullptr, Ctx))
      return "the tree" + atLine(S->getBeginLoc(), Ctx) + " does not fold '" + A->getNameAsString() +
             "' indexed by threadIdx.x";
  } else if (!Call) {
    return "the statement" + atLine(S->getBeginLoc(), Ctx) + " is not a halving tree nor a call of a function that is one";
  } else if (std::optional<std::string> Why = foldCallProblem(Call, A, false, F, Ctx)) {
    return Why;
  }
  if (!sameOp(F.Tree.Op, Op))
    return "the tree" + atLine(S->getBeginLoc(), Ctx) + " applies " + F.Tree.Op + ", not the loop's " + Op;
  return startProblem(F.Tree.Stride->getInit(), Call, Extent, Ctx);
}

/// `A[t] = E;` with t threadIdx.x (in the kernel): A, else null.
static const VarDecl *storedArray(const Stmt *S, ASTContext &Ctx) {
  const auto *Store = dyn_cast_or_null<BinaryOperator>(S);
  const auto *Slot = Store && Store->getOpcode() == BO_Assign
                         ? dyn_cast<ArraySubscriptExpr>(Store->getLHS()->IgnoreParenImpCasts())
                         : nullptr;
  const VarDecl *A = Slot ? varOf(Slot->getBase()) : nullptr;
  return A && A->hasAttr<CUDASharedAttr>() && threadIndex(Slot->getIdx(), nullptr, Ctx) ? A : nullptr;
}

/// Why a statement of \p Stmts from \p From on may read a slot of \p A that holds a value derived from the
/// loop's partials, or nullopt. Reads of A[0] (the total) are fine; `A[t] = e; __syncthreads();` and a call
/// of a fold function that stores into A first overwrite every slot, and end the check.
static std::optional<std::string> laterUsesProblem(const VarDecl *A, const std::vector<const Stmt *> &Stmts,
                                                   size_t From, ASTContext &Ctx) {
  for (size_t J = From; J < Stmts.size(); ++J) {
    bool Refilled = false;
    const DeclRefExpr *Stored = nullptr;
    if (storedArray(Stmts[J], Ctx) == A && J + 1 < Stmts.size() && isBarrier(Stmts[J + 1])) {
      const auto *Slot = cast<ArraySubscriptExpr>(cast<BinaryOperator>(Stmts[J])->getLHS()->IgnoreParenImpCasts());
      Stored = dyn_cast<DeclRefExpr>(Slot->getBase()->IgnoreParenImpCasts());
      Refilled = true;
    }
    for (const DeclRefExpr *E : findAll<DeclRefExpr>(Stmts[J])) {
      if (E->getDecl() != A || E == Stored || readsSlotZero(E, Ctx))
        continue;
      const Stmt *Child = nullptr;
      const auto *Call = dyn_cast_or_null<CallExpr>(semanticParent(E, Child, Ctx));
      Fold F;
      if (Call && !foldCallProblem(Call, A, true, F, Ctx)) {
        Refilled = true;
        continue;
      }
      return "'" + A->getNameAsString() + "' is used" + atLine(E->getBeginLoc(), Ctx) +
             " other than reading its slot 0 (the total) before it is filled again: its other slots would hold "
             "other partial values";
    }
    if (Refilled)
      return std::nullopt;
  }
  return std::nullopt;
}

static bool within(const Stmt *Inner, const Stmt *Outer, ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  return SM.isPointWithin(Inner->getBeginLoc(), Outer->getBeginLoc(), Outer->getEndLoc());
}

/// Why \p V is used outside \p Loop other than by \p Allowed (and, with \p Later, anywhere after statement
/// \p Fold), or nullopt.
static std::optional<std::string> otherUseProblem(const VarDecl *V, const CompoundStmt *Body, const Stmt *Loop,
                                                  const std::vector<const Expr *> &Allowed, const Stmt *Fold,
                                                  bool Later, ASTContext &Ctx) {
  RefFinder R(V);
  R.TraverseStmt(const_cast<CompoundStmt *>(Body));
  const SourceManager &SM = Ctx.getSourceManager();
  for (const DeclRefExpr *E : R.Refs) {
    if (within(E, Loop, Ctx) || llvm::is_contained(Allowed, E) ||
        (Later && SM.isBeforeInTranslationUnit(Fold->getEndLoc(), E->getBeginLoc())))
      continue;
    return "'" + V->getNameAsString() + "' is used" + atLine(E->getBeginLoc(), Ctx) +
           ": after the loop, each thread's own partial may only be handed to the block's fold (each thread "
           "would hold another partial)";
  }
  return std::nullopt;
}

/// The first form of BlockCombine.h: `A[t] = V; __syncthreads();` then the fold, from statement \p I + 1.
static std::optional<std::string> storedFormProblem(const VarDecl *V, const std::string &Op, size_t I,
                                                    const std::vector<const Stmt *> &S, const CompoundStmt *Body,
                                                    const Expr *Extent, ASTContext &Ctx, BlockCombine &Out) {
  const VarDecl *A = storedArray(S[I + 1], Ctx);
  const Expr *Value = cast<BinaryOperator>(S[I + 1])->getRHS()->IgnoreParenImpCasts();
  if (varOf(Value) != V || !isa<DeclRefExpr>(Value))
    return "the statement after the loop stores another value than '" + V->getNameAsString() + "' into '" +
           A->getNameAsString() + "'";
  const ArrayType *AT = A->getType()->getAsArrayTypeUnsafe();
  if (!AT || !Ctx.hasSameUnqualifiedType(AT->getElementType(), V->getType()))
    return "'" + A->getNameAsString() + "' has elements of another type than '" + V->getNameAsString() + "'";
  if (I + 3 >= S.size() || !isBarrier(S[I + 2]))
    return "the store into '" + A->getNameAsString() + "' is not followed by __syncthreads() and the fold";
  if (std::optional<std::string> Why = foldStmtProblem(S[I + 3], A, Op, Extent, Ctx))
    return Why;
  if (std::optional<std::string> Why = otherUseProblem(V, Body, S[I], {cast<Expr>(Value)}, nullptr, false, Ctx))
    return Why;
  Out.Array = A->getNameAsString();
  Out.FoldStmt = unsigned(I + 4);
  return laterUsesProblem(A, S, I + 4, Ctx);
}

/// The second form of BlockCombine.h: a call `f(V, A)` in statement \p I + 1.
static std::optional<std::string> calledFormProblem(const VarDecl *V, const std::string &Op, size_t I,
                                                    const std::vector<const Stmt *> &S, const CompoundStmt *Body,
                                                    const Expr *Extent, ASTContext &Ctx, BlockCombine &Out) {
  const Stmt *Next = S[I + 1];
  std::string Name = V->getNameAsString();
  for (const CallExpr *C : findAll<CallExpr>(Next)) {
    auto Arg = llvm::find_if(C->arguments(), [&](const Expr *X) {
      return varOf(X) == V && isa<DeclRefExpr>(X->IgnoreParenImpCasts());
    });
    if (Arg == C->arg_end())
      continue;
    Fold F;
    const FunctionDecl *Callee = deviceCallee(C, Ctx);
    unsigned Index = unsigned(Arg - C->arg_begin());
    if (!Callee || Index >= Callee->getNumParams())
      return "'" + Name + "' is passed" + atLine(C->getBeginLoc(), Ctx) + " to no device function kloop can read";
    const ParmVarDecl *P = Callee->getParamDecl(Index);
    if (std::optional<std::string> Why = foldFunctionProblem(Callee, C, true, F, Ctx))
      return "'" + Name + "' is passed" + atLine(C->getBeginLoc(), Ctx) + " to a function that is not a block fold: " + *Why;
    const auto *ArrayArg = varOf(C->getArg(cast<ParmVarDecl>(F.Array)->getFunctionScopeIndex()));
    const ArrayType *AT = ArrayArg ? ArrayArg->getType()->getAsArrayTypeUnsafe() : nullptr;
    if (F.Value != P || !Ctx.hasSameUnqualifiedType(P->getType(), V->getType()) || !AT ||
        !ArrayArg->hasAttr<CUDASharedAttr>() || !Ctx.hasSameUnqualifiedType(AT->getElementType(), V->getType()))
      return "the call" + atLine(C->getBeginLoc(), Ctx) + " does not pass '" + Name + "' (by value, of its type) " +
             "as the value the function stores, with a __shared__ array of that type";
    if (!sameOp(F.Tree.Op, Op))
      return "the tree in '" + Callee->getNameAsString() + "' applies " + F.Tree.Op + ", not the loop's " + Op;
    if (std::optional<std::string> Why = startProblem(F.Tree.Stride->getInit(), C, Extent, Ctx))
      return Why;
    const auto *Assign = dyn_cast<BinaryOperator>(Next);
    Out.Reassigned = Assign && Assign->getOpcode() == BO_Assign && isa<DeclRefExpr>(Assign->getLHS()) &&
                     varOf(Assign->getLHS()) == V;
    std::vector<const Expr *> Allowed{(*Arg)->IgnoreParenImpCasts()};
    if (Out.Reassigned)
      Allowed.push_back(Assign->getLHS());
    if (std::optional<std::string> Why = otherUseProblem(V, Body, S[I], Allowed, Next, Out.Reassigned, Ctx))
      return Why;
    for (const DeclRefExpr *E : findAll<DeclRefExpr>(Next))
      if (E->getDecl() == ArrayArg && E != C->getArg(cast<ParmVarDecl>(F.Array)->getFunctionScopeIndex())->IgnoreParenImpCasts())
        return "'" + ArrayArg->getNameAsString() + "' is used" + atLine(E->getBeginLoc(), Ctx) +
               " beside the fold of '" + Name + "' into it";
    Out.Array = ArrayArg->getNameAsString();
    Out.FoldStmt = unsigned(I + 2);
    return laterUsesProblem(ArrayArg, S, I + 2, Ctx);
  }
  return "the loop is followed neither by `A[threadIdx.x] = " + Name + "; __syncthreads();` nor by a call that "
         "passes '" + Name + "' to a device function: its partials are not shown to go to a block fold";
}

std::optional<std::string> blockCombineProblem(const VarDecl *V, const std::string &Op, const Stmt *Loop,
                                               const CompoundStmt *Body, const Expr *Extent, ASTContext &Ctx,
                                               BlockCombine &Out) {
  std::vector<const Stmt *> S(Body->body_begin(), Body->body_end());
  size_t I = size_t(std::find(S.begin(), S.end(), Loop) - S.begin());
  if (I + 1 >= S.size())
    return std::string("nothing follows the loop: its partials are not combined");
  if (storedArray(S[I + 1], Ctx))
    return storedFormProblem(V, Op, I, S, Body, Extent, Ctx, Out);
  return calledFormProblem(V, Op, I, S, Body, Extent, Ctx, Out);
}

bool returnsBlockTotal(const CallExpr *C, ASTContext &Ctx) {
  const FunctionDecl *F = deviceCallee(C, Ctx);
  Fold Fd;
  if (!F || foldFunctionProblem(F, C, true, Fd, Ctx))
    return false;
  std::vector<const ReturnStmt *> Returns = findAll<ReturnStmt>(F->getBody());
  return !Returns.empty() && llvm::all_of(Returns, [&](const ReturnStmt *R) {
    const Expr *E = R->getRetValue() ? R->getRetValue()->IgnoreParenImpCasts() : nullptr;
    const VarDecl *L = varOf(E);
    if (L && !isa<ParmVarDecl>(L) && L->hasLocalStorage() && L->getInit()) {
      RefFinder Uses(L);
      Uses.TraverseStmt(const_cast<Stmt *>(F->getBody()));
      if (llvm::any_of(Uses.Refs, [&](const DeclRefExpr *U) { return !isPlainRead(U, Ctx); }))
        return false;
      E = L->getInit()->IgnoreParenImpCasts();
    }
    const auto *AS = dyn_cast_or_null<ArraySubscriptExpr>(E);
    return AS && varOf(AS->getBase()) == Fd.Array && isZero(AS->getIdx(), Ctx);
  });
}

} // namespace kloop
