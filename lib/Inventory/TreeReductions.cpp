//===- TreeReductions.cpp - Shared-memory tree reductions of a kernel -----===//
//
// Recognises `for (int s = START; s > 0; s >>= 1) { if (T < s) A[T] op= A[T + s];
// __syncthreads(); }` and says which part differs when a loop with a
// `__syncthreads()` is not that; proves that T is threadIdx.x (directly, a
// const local initialised with it, or a parameter every call of the kernel
// passes it); records the text a rewrite needs.
//
//===----------------------------------------------------------------------===//
#include "TreeReductions.h"
#include "SourceText.h"

#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"

#include <algorithm>
#include <optional>
#include <vector>

using namespace clang;
using nlohmann::json;

namespace kloop {

using Tree = HalvingTree;

bool isSyncthreads(const Stmt *S) {
  const auto *CE = dyn_cast_or_null<CallExpr>(S);
  const FunctionDecl *F = CE ? CE->getDirectCallee() : nullptr;
  return F && F->getNameAsString() == "__syncthreads" && CE->getNumArgs() == 0;
}


/// `s > 0`, `s >= 1`, `0 < s`, `s != 0`.
static bool runsToOne(const Expr *C, const VarDecl *S, ASTContext &Ctx) {
  const auto *B = dyn_cast_or_null<BinaryOperator>(C ? C->IgnoreParenImpCasts() : nullptr);
  if (!B)
    return false;
  bool L = referencedVar(B->getLHS()) == S, R = referencedVar(B->getRHS()) == S;
  switch (B->getOpcode()) {
  case BO_GT: case BO_NE: return (L && isIntConstant(B->getRHS(), Ctx, 0)) || (R && isIntConstant(B->getLHS(), Ctx, 0));
  case BO_GE: return L && isIntConstant(B->getRHS(), Ctx, 1);
  case BO_LT: return R && isIntConstant(B->getLHS(), Ctx, 0);
  default: return false;
  }
}

/// `s >>= 1`, `s /= 2`, `s = s >> 1`, `s = s / 2`.
static bool halves(const Expr *Inc, const VarDecl *S, ASTContext &Ctx) {
  const auto *B = dyn_cast_or_null<BinaryOperator>(Inc ? Inc->IgnoreParenImpCasts() : nullptr);
  if (!B || referencedVar(B->getLHS()) != S)
    return false;
  if (B->getOpcode() == BO_ShrAssign)
    return isIntConstant(B->getRHS(), Ctx, 1);
  if (B->getOpcode() == BO_DivAssign)
    return isIntConstant(B->getRHS(), Ctx, 2);
  const auto *R = dyn_cast<BinaryOperator>(B->getRHS()->IgnoreParenImpCasts());
  if (B->getOpcode() != BO_Assign || !R || referencedVar(R->getLHS()) != S)
    return false;
  return (R->getOpcode() == BO_Shr && isIntConstant(R->getRHS(), Ctx, 1)) ||
         (R->getOpcode() == BO_Div && isIntConstant(R->getRHS(), Ctx, 2));
}

/// Same thread index: one variable, or threadIdx.x both.
static bool sameIndex(const Expr *A, const Expr *B, ASTContext &Ctx) {
  if (isThreadIdxX(A, Ctx) && isThreadIdxX(B, Ctx))
    return true;
  return referencedVar(A) && referencedVar(A) == referencedVar(B);
}

/// `A[T]` with T the tree's thread index; the array expression, or nullptr.
static const Expr *atThread(const Expr *E, const Tree &T, ASTContext &Ctx) {
  const auto *AS = dyn_cast<ArraySubscriptExpr>(E->IgnoreParenImpCasts());
  if (!AS || !referencedVar(AS->getBase()) || !sameIndex(AS->getIdx(), T.Thread, Ctx))
    return nullptr;
  return AS->getBase()->IgnoreParenImpCasts();
}

/// `A[T + s]` or `A[s + T]` on the same array as \p Array.
static bool atPartner(const Expr *E, const Expr *Array, const Tree &T, ASTContext &Ctx) {
  const auto *AS = dyn_cast<ArraySubscriptExpr>(E->IgnoreParenImpCasts());
  const auto *Add = AS ? dyn_cast<BinaryOperator>(AS->getIdx()->IgnoreParenImpCasts()) : nullptr;
  if (!Add || Add->getOpcode() != BO_Add || referencedVar(AS->getBase()) != referencedVar(Array))
    return false;
  return (sameIndex(Add->getLHS(), T.Thread, Ctx) && referencedVar(Add->getRHS()) == T.Stride) ||
         (sameIndex(Add->getRHS(), T.Thread, Ctx) && referencedVar(Add->getLHS()) == T.Stride);
}

static const char *reductionOp(BinaryOperatorKind K) {
  switch (K) {
  case BO_Add: case BO_AddAssign: return "+";
  case BO_Mul: case BO_MulAssign: return "*";
  case BO_And: case BO_AndAssign: return "&";
  case BO_Or: case BO_OrAssign: return "|";
  case BO_Xor: case BO_XorAssign: return "^";
  default: return nullptr;
  }
}

/// The update `A[T] op= A[T + s]`, `A[T] = A[T] op A[T + s]` or `A[T] = f(A[T], A[T + s])` with f one of
/// fmaxf, fminf, fmax, fmin, max, min; fills T.Op, T.Array, T.ElementType. Else why not.
static std::optional<std::string> updateProblem(const Expr *U, Tree &T, ASTContext &Ctx) {
  const auto *B = dyn_cast<BinaryOperator>(U->IgnoreParenImpCasts());
  const Expr *Array = B ? atThread(B->getLHS(), T, Ctx) : nullptr;
  std::string Text = "`" + sourceText(U->getSourceRange(), Ctx) + "`";
  if (!Array)
    return "the update " + Text + " does not assign a[tid] for the thread index tid of the test";
  const Expr *L = nullptr, *R = nullptr;
  const char *Op = nullptr;
  if (B->isCompoundAssignmentOp()) {
    L = B->getLHS(), R = B->getRHS(), Op = reductionOp(B->getOpcode());
  } else if (const auto *Rhs = dyn_cast<BinaryOperator>(B->getRHS()->IgnoreParenImpCasts());
             B->getOpcode() == BO_Assign && Rhs) {
    L = Rhs->getLHS(), R = Rhs->getRHS(), Op = reductionOp(Rhs->getOpcode());
  } else if (const auto *C = dyn_cast<CallExpr>(B->getRHS()->IgnoreParenImpCasts());
             B->getOpcode() == BO_Assign && C && C->getNumArgs() == 2 && C->getDirectCallee()) {
    static const char *const Calls[] = {"fmaxf", "fminf", "fmax", "fmin", "max", "min"};
    for (const char *Name : Calls)
      if (C->getDirectCallee()->getNameAsString() == Name)
        Op = Name;
    L = C->getArg(0), R = C->getArg(1);
  }
  if (!Op)
    return "the update " + Text + " is not a reduction the rule replays (a[tid] op= a[tid + s] with op one of + * & "
           "| ^, or a[tid] = f(a[tid], a[tid + s]) with f one of fmaxf fminf fmax fmin max min)";
  if (!atThread(L, T, Ctx) || referencedVar(atThread(L, T, Ctx)) != referencedVar(Array) || !atPartner(R, Array, T, Ctx))
    return "the update " + Text + " does not combine a[tid] (left) with a[tid + s] (right) of one array";
  T.Op = Op, T.Array = Array;
  T.ElementType = B->getLHS()->getType().getUnqualifiedType().getAsString(Ctx.getPrintingPolicy());
  return std::nullopt;
}

/// `if (T < s) update;` (or `s > T`): fills T.Thread and, through updateProblem, the rest.
static std::optional<std::string> testProblem(const Stmt *S, Tree &T, ASTContext &Ctx) {
  const auto *If = dyn_cast<IfStmt>(S);
  if (!If || If->getElse() || If->getInit() || If->getConditionVariable())
    return std::string("its first statement is not `if (tid < s) <update>;` without else");
  const auto *C = dyn_cast<BinaryOperator>(If->getCond()->IgnoreParenImpCasts());
  if (C && C->getOpcode() == BO_LT && referencedVar(C->getRHS()) == T.Stride)
    T.Thread = C->getLHS()->IgnoreParenImpCasts();
  else if (C && C->getOpcode() == BO_GT && referencedVar(C->getLHS()) == T.Stride)
    T.Thread = C->getRHS()->IgnoreParenImpCasts();
  if (!T.Thread || (!referencedVar(T.Thread) && !isThreadIdxX(T.Thread, Ctx)))
    return "the test `" + sourceText(If->getCond()->getSourceRange(), Ctx) + "` is not `tid < s`";
  const Stmt *Then = If->getThen();
  if (const auto *CS = dyn_cast<CompoundStmt>(Then))
    Then = CS->size() == 1 ? CS->body_front() : nullptr;
  const auto *U = dyn_cast_or_null<Expr>(Then);
  if (!U)
    return std::string("the if does not hold exactly one update statement");
  return updateProblem(U, T, Ctx);
}

std::optional<std::string> halvingTreeProblem(const ForStmt *L, Tree &T, ASTContext &Ctx) {
  const auto *Init = dyn_cast_or_null<DeclStmt>(L->getInit());
  T.Stride = Init && Init->isSingleDecl() ? dyn_cast<VarDecl>(Init->getSingleDecl()) : nullptr;
  if (!T.Stride || !T.Stride->getInit() || !T.Stride->getType()->isIntegerType())
    return std::string("the loop does not declare one integer stride variable");
  if (!halves(L->getInc(), T.Stride, Ctx))
    return "the stride does not halve each step (`" +
           (L->getInc() ? sourceText(L->getInc()->getSourceRange(), Ctx) : std::string()) +
           "`): the rule recognises `s >>= 1` and `s /= 2`, the tree whose pairs a warp shuffle down replays";
  if (!runsToOne(L->getCond(), T.Stride, Ctx))
    return "the loop does not run down to a stride of 1 (`" +
           (L->getCond() ? sourceText(L->getCond()->getSourceRange(), Ctx) : std::string()) + "`, not `s > 0`)";
  const auto *Body = dyn_cast<CompoundStmt>(L->getBody());
  if (!Body || Body->size() != 2)
    return std::string("the body is not the two statements `if (tid < s) <update>; __syncthreads();`");
  if (!isSyncthreads(Body->body_back()))
    return std::string("the statement after the if is not `__syncthreads();` (every step of the tree must end with "
                       "one barrier that every thread reaches)");
  return testProblem(Body->body_front(), T, Ctx);
}

/// How the thread index \p E of a tree in \p Fn is threadIdx.x: sets "thread_index_proof" or
/// "thread_index_unproved" of \p Out. \p Calls: the kernel's calls of \p Fn (empty for the kernel).
static void proveThreadIndex(const Expr *E, const FunctionDecl *Fn, const std::vector<const CallExpr *> &Calls,
                             json &Out, ASTContext &Ctx);

static std::optional<std::string> localProof(const Expr *E, ASTContext &Ctx) {
  if (isThreadIdxX(E, Ctx))
    return std::string("threadIdx.x");
  const VarDecl *V = referencedVar(E);
  if (V && !isa<ParmVarDecl>(V) && V->getType().isConstQualified() && V->getInit() &&
      isThreadIdxX(V->getInit(), Ctx))
    return "`" + V->getNameAsString() + "`, a const local initialised with threadIdx.x" +
           atLine(V->getLocation(), Ctx);
  return std::nullopt;
}

bool onlyRead(const ParmVarDecl *P, const FunctionDecl *Fn, ASTContext &Ctx) {
  for (const DeclRefExpr *R : findAll<DeclRefExpr>(Fn->getBody())) {
    if (R->getDecl() != P)
      continue;
    DynTypedNodeList Ps = Ctx.getParents(*R);
    const auto *IC = Ps.empty() ? nullptr : Ps[0].get<ImplicitCastExpr>();
    if (!IC || IC->getCastKind() != CK_LValueToRValue)
      return false;
  }
  return true;
}

static void proveThreadIndex(const Expr *E, const FunctionDecl *Fn, const std::vector<const CallExpr *> &Calls,
                             json &Out, ASTContext &Ctx) {
  std::string Name = "`" + sourceText(E->getSourceRange(), Ctx) + "`";
  if (std::optional<std::string> P = localProof(E, Ctx)) {
    Out["thread_index_proof"] = *P;
    return;
  }
  const auto *P = dyn_cast_or_null<ParmVarDecl>(referencedVar(E));
  if (!P || P->getDeclContext() != Fn || Calls.empty()) {
    Out["thread_index_unproved"] = Name + " is neither threadIdx.x nor a const local initialised with it";
    return;
  }
  if (!onlyRead(P, Fn, Ctx)) {
    Out["thread_index_unproved"] = "parameter " + Name + " is assigned in the function";
    return;
  }
  for (const CallExpr *C : Calls) {
    const Expr *Arg = P->getFunctionScopeIndex() < C->getNumArgs() ? C->getArg(P->getFunctionScopeIndex()) : nullptr;
    if (!Arg || !localProof(Arg, Ctx)) {
      Out["thread_index_unproved"] = "the call" + atLine(C->getBeginLoc(), Ctx) + " passes `" +
                                     (Arg ? sourceText(Arg->getSourceRange(), Ctx) : std::string()) +
                                     "` as parameter " + Name + ", not threadIdx.x";
      return;
    }
  }
  Out["thread_index_proof"] = "parameter " + Name + ", passed threadIdx.x by every call of the kernel";
}

/// Facts of one loop with a barrier in function \p Fn (ID \p FnID).
static json describeLoop(const ForStmt *L, const FunctionDecl *Fn, const std::string &FnID,
                         const std::vector<const CallExpr *> &Calls, ASTContext &Ctx) {
  json Out = {{"function", FnID},     {"line", lineOf(L->getBeginLoc(), Ctx)}, {"form", nullptr},
              {"op", nullptr},        {"element_type", nullptr},             {"array", nullptr},
              {"thread_index", nullptr}, {"thread_index_proof", nullptr},    {"thread_index_unproved", nullptr},
              {"start", nullptr},     {"stride_var", nullptr},               {"pragma", false},
              {"loop_text", ""},      {"cond_offset", 0},                    {"cond_length", 0},
              {"stmt", nullptr},      {"function_name", nullptr},            {"function_text", nullptr},
              {"name_offset", nullptr}, {"loop_offset", nullptr},            {"calls", json::array()}};
  DynTypedNodeList Ps = Ctx.getParents(*L);
  Out["pragma"] = !Ps.empty() && Ps[0].get<AttributedStmt>() != nullptr;
  Tree T;
  std::optional<std::string> Why = halvingTreeProblem(L, T, Ctx);
  CharSourceRange R = fileRangeOf(L->getSourceRange(), Ctx);
  std::optional<unsigned> Cond = L->getCond() ? offsetIn(L->getCond()->getBeginLoc(), R, Ctx) : std::nullopt;
  if (!Why && (R.isInvalid() || !Cond))
    Why = "the loop is written through a macro: its text cannot be rewritten";
  if (Why) {
    Out["form"] = *Why;
    return Out;
  }
  Out["loop_text"] = sourceText(L->getSourceRange(), Ctx);
  Out["cond_offset"] = *Cond;
  Out["cond_length"] = sourceText(L->getCond()->getSourceRange(), Ctx).size();
  Out["op"] = T.Op;
  Out["element_type"] = T.ElementType;
  Out["array"] = sourceText(T.Array->getSourceRange(), Ctx);
  Out["thread_index"] = sourceText(T.Thread->getSourceRange(), Ctx);
  Out["stride_var"] = T.Stride->getNameAsString();
  Expr::EvalResult V;
  const Expr *Start = T.Stride->getInit();
  bool Known = !Start->isValueDependent() && Start->EvaluateAsInt(V, Ctx);
  Out["start"] = {{"expr", sourceText(Start->getSourceRange(), Ctx)},
                  {"value", Known ? json(V.Val.getInt().getExtValue()) : json(nullptr)}};
  proveThreadIndex(T.Thread, Fn, Calls, Out, Ctx);
  return Out;
}

/// The `for` loops of \p Body with a `__syncthreads()` call in their body.
static std::vector<const ForStmt *> loopsWithBarrier(const Stmt *Body) {
  std::vector<const ForStmt *> Out;
  for (const ForStmt *F : findAll<ForStmt>(Body))
    for (const CallExpr *C : findAll<CallExpr>(F->getBody()))
      if (isSyncthreads(C)) {
        Out.push_back(F);
        break;
      }
  return Out;
}

const FunctionDecl *calleePattern(const CallExpr *C) {
  const FunctionDecl *F = C->getDirectCallee();
  if (!F)
    if (const auto *U = dyn_cast<UnresolvedLookupExpr>(C->getCallee()->IgnoreParenImpCasts()))
      for (const NamedDecl *N : U->decls())
        if (const auto *FT = dyn_cast<FunctionTemplateDecl>(N->getUnderlyingDecl()))
          F = FT->getTemplatedDecl();
  if (F && F->getTemplateInstantiationPattern())
    F = F->getTemplateInstantiationPattern();
  return F;
}

/// Whether an argument of type \p T can bring no function into an argument-dependent lookup: a builtin type,
/// or a pointer to or array of one.
static bool noAssociatedNamespace(QualType T) {
  while (true) {
    if (const ArrayType *A = T->getAsArrayTypeUnsafe())
      T = A->getElementType();
    else if (T->isPointerType())
      T = T->getPointeeType();
    else
      return T->isBuiltinType();
  }
}

const FunctionDecl *soleCallee(const CallExpr *C) {
  if (const auto *U = dyn_cast<UnresolvedLookupExpr>(C->getCallee()->IgnoreParenImpCasts())) {
    if (U->getNumDecls() != 1)
      return nullptr;
    if (U->requiresADL() &&
        !llvm::all_of(C->arguments(), [](const Expr *A) { return noAssociatedNamespace(A->getType()); }))
      return nullptr;
  }
  const FunctionDecl *F = calleePattern(C);
  const FunctionTemplateDecl *FT = F ? F->getDescribedFunctionTemplate() : nullptr;
  if (FT && llvm::any_of(FT->specializations(), [](const FunctionDecl *S) {
        return S->getTemplateSpecializationKind() == TSK_ExplicitSpecialization;
      }))
    return nullptr;
  return F;
}

/// The name's location of the callee of \p C.
static SourceLocation calleeNameLoc(const CallExpr *C) {
  const Expr *E = C->getCallee()->IgnoreParenImpCasts();
  if (const auto *D = dyn_cast<DeclRefExpr>(E))
    return D->getLocation();
  if (const auto *U = dyn_cast<UnresolvedLookupExpr>(E))
    return U->getNameLoc();
  return SourceLocation();
}

/// "calls": the direct statement of the kernel body that holds each call of the device function, its
/// text and where the callee's name begins in it (null when a macro hides it).
static json describeCalls(const std::vector<const CallExpr *> &Calls, const CompoundStmt *Body, ASTContext &Ctx) {
  json Out = json::array();
  for (const CallExpr *C : Calls) {
    json J = {{"line", lineOf(C->getBeginLoc(), Ctx)}, {"stmt", nullptr}, {"text", nullptr}, {"name_offset", nullptr}};
    unsigned Index = 0;
    for (const Stmt *S : Body->body()) {
      ++Index;
      std::vector<const CallExpr *> Inner = findAll<CallExpr>(S);
      if (std::find(Inner.begin(), Inner.end(), C) == Inner.end())
        continue;
      std::optional<unsigned> At = offsetIn(calleeNameLoc(C), fileRangeOf(S->getSourceRange(), Ctx), Ctx);
      J["stmt"] = Index;
      J["text"] = statementText(S, Ctx);
      J["name_offset"] = At ? json(*At) : json(nullptr);
    }
    Out.push_back(J);
  }
  return Out;
}

/// The device functions \p Body calls (patterns, with a body, outside system headers) and the calls of each.
static std::vector<std::pair<const FunctionDecl *, std::vector<const CallExpr *>>> deviceCallees(const Stmt *Body,
                                                                                                ASTContext &Ctx) {
  std::vector<std::pair<const FunctionDecl *, std::vector<const CallExpr *>>> Out;
  for (const CallExpr *C : findAll<CallExpr>(Body)) {
    const FunctionDecl *F = calleePattern(C);
    if (!F || !F->hasAttr<CUDADeviceAttr>() || !F->hasBody() || F->getBuiltinID() ||
        Ctx.getSourceManager().isInSystemHeader(F->getLocation()))
      continue;
    auto It = std::find_if(Out.begin(), Out.end(), [&](const auto &P) { return P.first == F; });
    if (It == Out.end())
      Out.push_back({F, {C}});
    else
      It->second.push_back(C);
  }
  return Out;
}

/// The function's whole text (template header included) and where its name and \p L begin in it.
static void describeFunctionText(const FunctionDecl *F, const ForStmt *L, json &Out, ASTContext &Ctx) {
  const FunctionTemplateDecl *FT = F->getDescribedFunctionTemplate();
  SourceRange Whole = FT ? FT->getSourceRange() : F->getSourceRange();
  CharSourceRange R = fileRangeOf(Whole, Ctx);
  std::optional<unsigned> Name = offsetIn(F->getLocation(), R, Ctx), Loop = offsetIn(L->getBeginLoc(), R, Ctx);
  Out["function_name"] = F->getNameAsString();
  Out["function_text"] = Name && Loop ? json(sourceText(Whole, Ctx)) : json(nullptr);
  Out["name_offset"] = Name ? json(*Name) : json(nullptr);
  Out["loop_offset"] = Loop ? json(*Loop) : json(nullptr);
}

json treeReductions(const FunctionDecl *Kernel, const std::string &KernelID, ASTContext &Ctx) {
  json Out = json::array();
  const auto *Body = dyn_cast_or_null<CompoundStmt>(Kernel ? Kernel->getBody() : nullptr);
  if (!Body)
    return Out;
  for (const ForStmt *L : loopsWithBarrier(Body)) {
    json J = describeLoop(L, Kernel, KernelID, {}, Ctx);
    unsigned Index = 0;
    for (const Stmt *S : Body->body())
      if (++Index && S == L)
        J["stmt"] = Index;
    Out.push_back(J);
  }
  for (const auto &[F, Calls] : deviceCallees(Body, Ctx))
    for (const ForStmt *L : loopsWithBarrier(F->getBody())) {
      json J = describeLoop(L, F, "device:" + F->getQualifiedNameAsString(), Calls, Ctx);
      describeFunctionText(F, L, J, Ctx);
      J["calls"] = describeCalls(Calls, Body, Ctx);
      Out.push_back(J);
    }
  return Out;
}

} // namespace kloop
