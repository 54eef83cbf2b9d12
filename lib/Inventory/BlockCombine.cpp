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


/// Whether parameter \p P is only read by its function.
static bool onlyRead(const ParmVarDecl *P, ASTContext &Ctx) {
  const auto *F = dyn_cast<FunctionDecl>(P->getDeclContext());
  return F && F->hasBody() && onlyRead(P, F, Ctx);
}

/// Whether \p E is threadIdx.x: directly, a const local initialised with it, or a parameter of the callee of
/// \p Call (null: \p E is in the kernel) that the callee only reads and \p Call passes one of those. Unlike
/// ElementwiseLoops' isThreadIndexX, which reads the text, this reads the AST (a tree written through a macro
/// passes).
static bool threadIndex(const Expr *E, const CallExpr *Call, ASTContext &Ctx) {
  if (isThreadIdxX(E, Ctx))
    return true;
  const VarDecl *V = referencedVar(E);
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
  return AS && AS->getBase()->IgnoreParenImpCasts() == E && isIntConstant(AS->getIdx(), Ctx, 0) && isPlainRead(AS, Ctx);
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

/// \p Start as the caller would write it: the callee's template and (only read) function parameters replaced
/// by what \p Call passes them; nullopt when one is not known. \p Call null: \p Start is in the kernel.
static std::optional<std::string> startInCaller(const Expr *Start, const CallExpr *Call, const FunctionDecl *Callee,
                                                ASTContext &Ctx) {
  std::string Text = sourceText(Start->getSourceRange(), Ctx);
  if (!Call)
    return Text;
  CharSourceRange Range = fileRangeOf(Start->getSourceRange(), Ctx);
  std::vector<const DeclRefExpr *> Refs = findAll<DeclRefExpr>(Start);
  std::reverse(Refs.begin(), Refs.end());
  for (const DeclRefExpr *D : Refs) {
    std::optional<std::string> By;
    if (const auto *T = dyn_cast<NonTypeTemplateParmDecl>(D->getDecl())) {
      // Only the callee's own template parameters are what the call's template arguments give (a class
      // template's are not).
      const FunctionTemplateDecl *FT = Callee->getDescribedFunctionTemplate();
      if (FT && llvm::is_contained(*FT->getTemplateParameters(), T))
        By = templateArg(Call, T->getIndex(), Ctx);
    } else if (const auto *P = dyn_cast<ParmVarDecl>(D->getDecl())) {
      if (P->getDeclContext() == Callee && P->getFunctionScopeIndex() < Call->getNumArgs() && onlyRead(P, Ctx))
        By = sourceText(Call->getArg(P->getFunctionScopeIndex())->getSourceRange(), Ctx);
    }
    if (!By && (isa<NonTypeTemplateParmDecl>(D->getDecl()) || isa<ParmVarDecl>(D->getDecl())))
      return std::nullopt;
    std::optional<unsigned> At = offsetIn(D->getBeginLoc(), Range, Ctx);
    if (By && !At)
      return std::nullopt;
    if (By)
      Text.replace(*At, D->getNameInfo().getAsString().size(), asOperand(*By));
  }
  return Text;
}

/// Whether \p E is written with a macro anywhere in it (its text then is not what the compiler reads).
static bool hasMacro(const Expr *E) {
  return llvm::any_of(findAll<Expr>(E), [](const Expr *X) { return X->getBeginLoc().isMacroID(); });
}

/// Why a tree whose stride starts at \p Start (in \p Callee, called by \p Call; both null: in the kernel) does
/// not start at half of \p Extent, or nullopt. Two constants are compared by value; otherwise the texts, in
/// the caller's terms, must read Extent/2 with no macro in either (a macro's expansion may bind otherwise).
static std::optional<std::string> startProblem(const Expr *Start, const CallExpr *Call, const FunctionDecl *Callee,
                                               const Expr *Extent, ASTContext &Ctx) {
  std::string Ext = withoutSpaces(sourceText(Extent->IgnoreParenImpCasts()->getSourceRange(), Ctx));
  std::optional<std::string> Text = startInCaller(Start, Call, Callee, Ctx);
  std::string Why = "the tree starts at '" + Text.value_or(sourceText(Start->getSourceRange(), Ctx)) + "', not " +
                    Ext + "/2: it would not fold every thread's slot";
  Expr::EvalResult S, E;
  if (!Start->isValueDependent() && !Extent->isValueDependent() && Start->EvaluateAsInt(S, Ctx) &&
      Extent->EvaluateAsInt(E, Ctx)) {
    if (S.Val.getInt() * 2 == E.Val.getInt())
      return std::nullopt;
    return "the tree starts at '" + sourceText(Start->getSourceRange(), Ctx) + "' = " +
           std::to_string(S.Val.getInt().getExtValue()) + ", not half of the loop's extent '" + Ext + "' = " +
           std::to_string(E.Val.getInt().getExtValue()) + ": it would not fold every thread's slot";
  }
  if (hasMacro(Start) || hasMacro(Extent))
    return "the tree's start '" + sourceText(Start->getSourceRange(), Ctx) + "' or the loop's extent '" + Ext +
           "' is written with a macro and is not a constant: kloop does not compare them";
  if (Text && (withoutSpaces(*Text) == Ext + "/2" || withoutSpaces(*Text) == "(" + Ext + ")/2"))
    return std::nullopt;
  return Why;
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
  auto Prelude = llvm::make_range(Body->body_begin(), It);
  if (WithValue) {
    const auto *Store = It != End ? dyn_cast<BinaryOperator>(*It) : nullptr;
    const auto *Slot = Store && Store->getOpcode() == BO_Assign
                           ? dyn_cast<ArraySubscriptExpr>(Store->getLHS()->IgnoreParenImpCasts())
                           : nullptr;
    Out.Value = Slot && isa<DeclRefExpr>(Store->getRHS()->IgnoreParenImpCasts())
                    ? dyn_cast_or_null<ParmVarDecl>(referencedVar(Store->getRHS()))
                    : nullptr;
    Out.Array = Slot ? dyn_cast_or_null<ParmVarDecl>(referencedVar(Slot->getBase())) : nullptr;
    if (!Out.Value || !Out.Array || !threadIndex(Slot->getIdx(), Call, Ctx))
      return Name + " does not begin (after const locals) with `a[threadIdx.x] = v;`, a and v its parameters";
    if (++It == End || !isSyncthreads(*It))
      return Name + " does not follow its store `a[threadIdx.x] = v;` with __syncthreads()";
    ++It;
  }
  const auto *Tree = It != End ? dyn_cast<ForStmt>(*It) : nullptr;
  if (!Tree)
    return Name + " does not go on with a loop (the halving tree)";
  if (std::optional<std::string> Why = halvingTreeProblem(Tree, Out.Tree, Ctx))
    return "the loop in " + Name + ": " + *Why;
  if (!WithValue)
    Out.Array = dyn_cast_or_null<ParmVarDecl>(referencedVar(Out.Tree.Array));
  if (!Out.Array || referencedVar(Out.Tree.Array) != Out.Array)
    return "the tree in " + Name + " does not fold an array parameter" +
           (WithValue ? " (the one it stores into)" : std::string());
  if (!threadIndex(Out.Tree.Thread, Call, Ctx))
    return "the tree in " + Name + " is indexed by '" + sourceText(Out.Tree.Thread->getSourceRange(), Ctx) +
           "', not proved threadIdx.x";
  for (const Stmt *S : Prelude)
    for (const DeclRefExpr *E : findAll<DeclRefExpr>(S))
      if (E->getDecl() == Out.Array || (Out.Value && E->getDecl() == Out.Value))
        return Name + " reads '" + E->getDecl()->getNameAsString() + "'" + atLine(E->getBeginLoc(), Ctx) +
               " before its fold";
  if (Out.Value) {
    RefFinder Val(Out.Value);
    Val.TraverseStmt(const_cast<Stmt *>(F->getBody()));
    if (Val.Refs.size() != 1)
      return Name + " uses '" + Out.Value->getNameAsString() + "' besides storing it";
  }
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

/// The device function \p C certainly calls (soleCallee), with a body outside the system headers, not a
/// member function, or null.
static const FunctionDecl *deviceCallee(const CallExpr *C, ASTContext &Ctx) {
  const FunctionDecl *F = soleCallee(C);
  if (!F || isa<CXXMethodDecl>(F) || !F->hasAttr<CUDADeviceAttr>() || !F->hasBody() ||
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
  if (I >= C->getNumArgs() || referencedVar(C->getArg(I)) != A || !isa<DeclRefExpr>(C->getArg(I)->IgnoreParenImpCasts()))
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
    if (referencedVar(F.Tree.Array) != A || !threadIndex(F.Tree.Thread, nullptr, Ctx))
      return "the tree" + atLine(S->getBeginLoc(), Ctx) + " does not fold '" + A->getNameAsString() +
             "' indexed by threadIdx.x";
  } else if (!Call) {
    return "the statement" + atLine(S->getBeginLoc(), Ctx) + " is not a halving tree nor a call of a function that is one";
  } else if (std::optional<std::string> Why = foldCallProblem(Call, A, false, F, Ctx)) {
    return Why;
  }
  if (!sameOp(F.Tree.Op, Op))
    return "the tree" + atLine(S->getBeginLoc(), Ctx) + " applies " + F.Tree.Op + ", not the loop's " + Op;
  return startProblem(F.Tree.Stride->getInit(), Call, Call ? deviceCallee(Call, Ctx) : nullptr, Extent, Ctx);
}

/// `A[t] = E;` with t threadIdx.x (in the kernel): A, else null.
static const VarDecl *storedArray(const Stmt *S, ASTContext &Ctx) {
  const auto *Store = dyn_cast_or_null<BinaryOperator>(S);
  const auto *Slot = Store && Store->getOpcode() == BO_Assign
                         ? dyn_cast<ArraySubscriptExpr>(Store->getLHS()->IgnoreParenImpCasts())
                         : nullptr;
  const VarDecl *A = Slot ? referencedVar(Slot->getBase()) : nullptr;
  return A && A->hasAttr<CUDASharedAttr>() && threadIndex(Slot->getIdx(), nullptr, Ctx) ? A : nullptr;
}

/// Whether call \p C is statement \p S itself, its assigned value (`v = C;`) or its one declaration's initializer:
/// it runs whenever S does.
static bool runsOnce(const CallExpr *C, const Stmt *S) {
  const Expr *Value = dyn_cast<Expr>(S);
  if (const auto *B = dyn_cast_or_null<BinaryOperator>(Value); B && B->getOpcode() == BO_Assign)
    Value = B->getRHS();
  if (const auto *D = dyn_cast<DeclStmt>(S); D && D->isSingleDecl())
    if (const auto *V = dyn_cast<VarDecl>(D->getSingleDecl()))
      Value = V->getInit();
  return Value && Value->IgnoreParenImpCasts() == C;
}

/// Why a statement of \p Stmts from \p From on may read a slot of \p A that holds a value derived from the
/// loop's partials, or nullopt. Reads of A[0] (the total) are fine; `A[t] = e; __syncthreads();` and a call
/// of a fold function that stores into A first overwrite every slot, and end the check.
static std::optional<std::string> laterUsesProblem(const VarDecl *A, const std::vector<const Stmt *> &Stmts,
                                                   size_t From, ASTContext &Ctx) {
  for (size_t J = From; J < Stmts.size(); ++J) {
    bool Refilled = false;
    const DeclRefExpr *Stored = nullptr;
    if (storedArray(Stmts[J], Ctx) == A && J + 1 < Stmts.size() && isSyncthreads(Stmts[J + 1])) {
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
        Refilled |= runsOnce(Call, Stmts[J]); // a call under a condition may not run: it refills nothing
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

/// Why __shared__ array \p A may be reached other than through its name in kernel body \p Body, or nullopt: it
/// must be declared in the kernel (a file-scope array is visible to every function), with a size (`extern
/// __shared__` arrays share one address), and every use of its name must be a subscript or an argument of a
/// fold function (which reads only slot 0 or what it stored): a pointer to it may read any slot.
static std::optional<std::string> arrayProblem(const VarDecl *A, const CompoundStmt *Body, ASTContext &Ctx) {
  std::string Name = "'" + A->getNameAsString() + "'";
  const auto *Fn = dyn_cast<FunctionDecl>(A->getDeclContext());
  if (!Fn || Fn->getBody() != Body)
    return Name + " is not declared in the kernel: other functions may read its slots";
  if (A->hasExternalStorage() || !A->getType()->isConstantArrayType() && !A->getType()->isDependentSizedArrayType())
    return Name + " has no size of its own (extern __shared__ arrays share one address)";
  RefFinder R(A);
  R.TraverseStmt(const_cast<CompoundStmt *>(Body));
  for (const DeclRefExpr *E : R.Refs) {
    const Stmt *Child = nullptr;
    const Stmt *P = semanticParent(E, Child, Ctx);
    const auto *AS = dyn_cast_or_null<ArraySubscriptExpr>(P);
    const auto *Call = dyn_cast_or_null<CallExpr>(P);
    Fold F;
    if ((AS && AS->getBase()->IgnoreParenImpCasts() == E) ||
        (Call && (!foldCallProblem(Call, A, true, F, Ctx) || !foldCallProblem(Call, A, false, F, Ctx))))
      continue;
    return Name + " is used" + atLine(E->getBeginLoc(), Ctx) +
           " other than as a[i] or as the array of a fold: a pointer to it may read any slot";
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
  if (referencedVar(Value) != V || !isa<DeclRefExpr>(Value))
    return "the statement after the loop stores another value than '" + V->getNameAsString() + "' into '" +
           A->getNameAsString() + "'";
  const ArrayType *AT = A->getType()->getAsArrayTypeUnsafe();
  if (!AT || !Ctx.hasSameUnqualifiedType(AT->getElementType(), V->getType()))
    return "'" + A->getNameAsString() + "' has elements of another type than '" + V->getNameAsString() + "'";
  if (I + 3 >= S.size() || !isSyncthreads(S[I + 2]))
    return "the store into '" + A->getNameAsString() + "' is not followed by __syncthreads() and the fold";
  if (std::optional<std::string> Why = foldStmtProblem(S[I + 3], A, Op, Extent, Ctx))
    return Why;
  if (std::optional<std::string> Why = otherUseProblem(V, Body, S[I], {cast<Expr>(Value)}, nullptr, false, Ctx))
    return Why;
  if (std::optional<std::string> Why = arrayProblem(A, Body, Ctx))
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
      return referencedVar(X) == V && isa<DeclRefExpr>(X->IgnoreParenImpCasts());
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
    unsigned ArrayIndex = cast<ParmVarDecl>(F.Array)->getFunctionScopeIndex();
    if (ArrayIndex >= C->getNumArgs())
      return "the call" + atLine(C->getBeginLoc(), Ctx) + " passes no argument for '" + F.Array->getNameAsString() +
             "' (a default argument)";
    const auto *ArrayArg = referencedVar(C->getArg(ArrayIndex));
    const ArrayType *AT = ArrayArg ? ArrayArg->getType()->getAsArrayTypeUnsafe() : nullptr;
    if (F.Value != P || !Ctx.hasSameUnqualifiedType(P->getType(), V->getType()) || !AT ||
        !ArrayArg->hasAttr<CUDASharedAttr>() || !Ctx.hasSameUnqualifiedType(AT->getElementType(), V->getType()))
      return "the call" + atLine(C->getBeginLoc(), Ctx) + " does not pass '" + Name + "' (by value, of its type) " +
             "as the value the function stores, with a __shared__ array of that type";
    if (!sameOp(F.Tree.Op, Op))
      return "the tree in '" + Callee->getNameAsString() + "' applies " + F.Tree.Op + ", not the loop's " + Op;
    if (std::optional<std::string> Why = startProblem(F.Tree.Stride->getInit(), C, Callee, Extent, Ctx))
      return Why;
    const auto *Assign = dyn_cast<BinaryOperator>(Next);
    Out.Reassigned = Assign && Assign->getOpcode() == BO_Assign && isa<DeclRefExpr>(Assign->getLHS()) &&
                     referencedVar(Assign->getLHS()) == V;
    std::vector<const Expr *> Allowed{(*Arg)->IgnoreParenImpCasts()};
    if (Out.Reassigned)
      Allowed.push_back(Assign->getLHS());
    if (std::optional<std::string> Why = otherUseProblem(V, Body, S[I], Allowed, Next, Out.Reassigned, Ctx))
      return Why;
    for (const DeclRefExpr *E : findAll<DeclRefExpr>(Next))
      if (E->getDecl() == ArrayArg && E != C->getArg(ArrayIndex)->IgnoreParenImpCasts())
        return "'" + ArrayArg->getNameAsString() + "' is used" + atLine(E->getBeginLoc(), Ctx) +
               " beside the fold of '" + Name + "' into it";
    if (std::optional<std::string> Why = arrayProblem(ArrayArg, Body, Ctx))
      return Why;
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
  unsigned I = cast<ParmVarDecl>(Fd.Array)->getFunctionScopeIndex();
  const VarDecl *A = I < C->getNumArgs() ? referencedVar(C->getArg(I)) : nullptr;
  if (!A || !A->hasAttr<CUDASharedAttr>() || !isa<FunctionDecl>(A->getDeclContext()))
    return false; // one array for the block: a __shared__ array of the caller
  // After the tree: `T r = a[0]; __syncthreads(); return r;`. The barrier keeps every thread's read of slot 0
  // before any thread can write the array again.
  const auto *Body = cast<CompoundStmt>(F->getBody());
  std::vector<const Stmt *> S(Body->body_begin(), Body->body_end());
  if (S.size() < 3)
    return false;
  const auto *Decl = dyn_cast<DeclStmt>(S[S.size() - 3]);
  const auto *Local = Decl && Decl->isSingleDecl() ? dyn_cast<VarDecl>(Decl->getSingleDecl()) : nullptr;
  const auto *Ret = dyn_cast<ReturnStmt>(S.back());
  const auto *Read = Local && Local->getInit() ? dyn_cast<ArraySubscriptExpr>(Local->getInit()->IgnoreParenImpCasts())
                                              : nullptr;
  return Read && referencedVar(Read->getBase()) == Fd.Array && isIntConstant(Read->getIdx(), Ctx, 0) &&
         isSyncthreads(S[S.size() - 2]) && Ret && Ret->getRetValue() && referencedVar(Ret->getRetValue()) == Local &&
         findAll<ReturnStmt>(Body).size() == 1;
}

} // namespace kloop
