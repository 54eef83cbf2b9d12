//===- LaunchFormulaBuilder.cpp - A launch site's config_formula from the AST -===//
//
// Walks the grid, block and shared-memory expressions of a `<<<>>>` launch,
// and each argument of its call, into inv::Formula trees:
//   - what clang folds to an integer is a constant;
//   - integral conversions, arithmetic, comparisons, ?:, min/max are nodes;
//   - a variable is what the statements before the launch made it: the
//     straight-line code from the start of the enclosing function down to the
//     launch is run symbolically (declarations, `v = e`, `if (c) v = e;`
//     becomes c ? e : v); a statement of any other kind forgets the variables
//     it may modify (ExprMutationAnalyzer), and so does a loop around the
//     launch. A variable without a known value is a Var leaf: its value at
//     the launch, which the kernel's arguments may give away;
//   - a call to a function whose body is straight-line code ending in its
//     only `return E;` is run the same way, its parameters bound to the
//     call's arguments (at most 8 calls deep).
// Anything else stops the walk, and the first reason is kept.
//
//===----------------------------------------------------------------------===//
#include "LaunchFormulaBuilder.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Analysis/Analyses/ExprMutationAnalyzer.h"
#include "clang/Lex/Lexer.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <map>
#include <memory>
#include <set>

using namespace clang;
using kloop::inv::Formula;
using kloop::inv::IntType;

namespace kloop {
namespace {

using Dim3 = std::array<Formula, 3>;

class Builder {
public:
  Builder(const FunctionDecl *Enclosing, ASTContext &Ctx) : Enclosing(Enclosing), Ctx(Ctx) {}

  /// Why the last walk stopped ("" when it did not).
  std::string Why;
  std::nullopt_t fail(const std::string &Reason) {
    if (Why.empty())
      Why = Reason;
    return std::nullopt;
  }

  std::optional<Formula> scalar(const Expr *E);
  std::optional<Dim3> dim3(const Expr *E);
  std::string text(const Expr *E) const {
    CharSourceRange R = CharSourceRange::getTokenRange(E->getSourceRange());
    StringRef T = Lexer::getSourceText(R, Ctx.getSourceManager(), Ctx.getLangOpts());
    return T.empty() ? std::string("<expression>") : T.str();
  }

private:
public:
  /// Runs the enclosing function's statements before \p Launch symbolically (the header comment).
  void runTo(const Stmt *Launch) {
    if (std::string W = unfollowable(Enclosing); !W.empty())
      Blocked = W;
    else if (Enclosing && Enclosing->getBody())
      walkTo(Enclosing->getBody(), Launch);
    if (InLambda)
      Blocked = "the launch is in a lambda, whose body runs when it is called";
    AtLaunch = true;
  }
  /// Why nothing at the launch can be followed ("" when it can).
  std::string Blocked;

private:
  /// What the symbolic run knows of a variable: an integer formula, a dim3, or neither (its value is
  /// unknown: a Var leaf at the launch).
  struct Value {
    std::optional<Formula> Int;
    std::optional<Dim3> D;
    /// Neither: why the value is unknown.
    std::string Why;
  };
  static Value unknown(std::string Why) {
    Value V;
    V.Why = std::move(Why);
    return V;
  }
  const FunctionDecl *Enclosing;
  ASTContext &Ctx;
  std::map<const VarDecl *, Value> Env;
  /// False while the statements before the launch run: a Var leaf then stands for the variable's value
  /// at that point, which only a local or parameter can keep until the launch.
  bool AtLaunch = false;
  bool InLambda = false;
  /// Why \p FD's body is not code the symbolic run follows: goto, labels, switch, try, inline assembly.
  static std::string unfollowable(const FunctionDecl *FD) {
    if (!FD || !FD->getBody())
      return "";
    std::string Out;
    std::function<void(const Stmt *)> Walk = [&](const Stmt *S) {
      if (!S || !Out.empty())
        return;
      if (isa<GotoStmt, IndirectGotoStmt, LabelStmt>(S))
        Out = "goto";
      else if (isa<SwitchStmt>(S))
        Out = "switch";
      else if (isa<CXXTryStmt>(S))
        Out = "try";
      else if (isa<AsmStmt>(S))
        Out = "inline assembly";
      else if (isa<LambdaExpr>(S))
        return; // its body is its own
      for (const Stmt *C : S->children())
        Walk(C);
    };
    Walk(FD->getBody());
    if (isa<CXXTryStmt>(FD->getBody()))
      Out = "try";
    return Out.empty() ? "" : FD->getNameAsString() + " has " + Out + ", and kloop follows straight-line code only";
  }

  static bool contains(const Stmt *S, const Stmt *T) {
    if (S == T)
      return true;
    for (const Stmt *C : S->children())
      if (C && contains(C, T))
        return true;
    return false;
  }
  void walkTo(const Stmt *S, const Stmt *T);
  void exec(const Stmt *S);
  void execIf(const IfStmt *If);
  void assign(const VarDecl *V, Value New);
  Value valueOf(const Expr *Init, QualType T);
  /// Forgets what \p S may modify.
  void forget(const Stmt *S);
  /// The variables of the enclosing function whose address is taken, or that a non-const reference is
  /// bound to (a declaration, a call's argument, a lambda's capture): an alias may change them anywhere.
  std::optional<std::set<const VarDecl *>> Escaped;
  bool escapes(const VarDecl *V);
  static void collectEscapes(const Stmt *S, std::set<const VarDecl *> &Out);
  std::string firstLine(const Stmt *S) const;
  static bool names(const Formula &F, const std::string &Var) {
    if (F.K == Formula::Op::Var && F.Var == Var)
      return true;
    for (const Formula &A : F.Args)
      if (names(A, Var))
        return true;
    return false;
  }
  static bool names(const Value &V, const std::string &Var) {
    if (V.Int && names(*V.Int, Var))
      return true;
    if (V.D)
      for (const Formula &F : *V.D)
        if (names(F, Var))
          return true;
    return false;
  }
  /// Parameters of the functions being inlined, bound to the call's arguments.
  std::map<const ParmVarDecl *, Formula> Bound;
  unsigned Depth = 0;

  std::optional<IntType> intType(QualType T) const {
    T = T.getCanonicalType().getNonReferenceType();
    if (T->isBooleanType())
      return IntType{1, false};
    if (!T->isIntegralOrEnumerationType() || T->isDependentType())
      return std::nullopt;
    unsigned W = unsigned(Ctx.getIntWidth(T));
    if (W != 8 && W != 16 && W != 32 && W != 64)
      return std::nullopt; // __int128, _BitInt(N): not a type formulas hold
    return IntType{W, T->isSignedIntegerOrEnumerationType()};
  }
  /// Formulas are kept small: a chain of clamps would otherwise double one at each step.
  static constexpr size_t MaxNodes = 256;
  static size_t nodes(const Formula &F) {
    size_t N = 1;
    for (const Formula &A : F.Args)
      N += nodes(A);
    return N;
  }
  static bool tooLarge(const Formula &F) { return nodes(F) > MaxNodes; }
  static Formula node(Formula::Op K, IntType T, std::vector<Formula> Args) {
    Formula F;
    F.K = K;
    F.Type = T;
    F.Args = std::move(Args);
    return F;
  }
  static Formula cast(Formula F, IntType T) { return F.Type == T ? F : node(Formula::Op::Cast, T, {std::move(F)}); }

  std::optional<Formula> constant(const Expr *E, IntType T);
  std::optional<Formula> castExpr(const CastExpr *C, IntType T);
  std::optional<Formula> binary(const BinaryOperator *B, IntType T);
  std::optional<Formula> unary(const UnaryOperator *U, IntType T);
  std::optional<Formula> call(const CallExpr *C, IntType T);
  std::optional<Formula> variable(const VarDecl *V, IntType T);
  std::optional<Formula> member(const MemberExpr *M, IntType T);
  std::optional<std::vector<Formula>> operands(std::initializer_list<const Expr *> Es);
};

std::optional<Formula> Builder::constant(const Expr *E, IntType T) {
  Expr::EvalResult R;
  if (!E->EvaluateAsInt(R, Ctx) || R.Val.getInt().getBitWidth() > 64)
    return std::nullopt;
  const llvm::APSInt &V = R.Val.getInt();
  return Formula::constant(T, V.isSigned() ? uint64_t(V.getSExtValue()) : V.getZExtValue());
}

std::optional<std::vector<Formula>> Builder::operands(std::initializer_list<const Expr *> Es) {
  std::vector<Formula> Out;
  for (const Expr *E : Es) {
    std::optional<Formula> F = scalar(E);
    if (!F)
      return std::nullopt;
    Out.push_back(std::move(*F));
  }
  return Out;
}

std::optional<Formula> Builder::scalar(const Expr *E) {
  if (!E)
    return fail("a missing expression");
  if (E->isValueDependent() || E->isTypeDependent() || E->containsErrors())
    return fail(text(E) + ": depends on a template parameter");
  std::optional<IntType> T = intType(E->getType());
  if (!T)
    return fail(text(E) + ": not an integer (" + E->getType().getAsString() + ")");
  E = E->IgnoreParens();
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
    if (const auto *P = dyn_cast<ParmVarDecl>(DRE->getDecl()); P && Bound.count(P) && !Env.count(P))
      return cast(Bound.at(P), *T);
  if (std::optional<Formula> C = constant(E, *T))
    return C;
  if (const auto *C = dyn_cast<CastExpr>(E))
    return castExpr(C, *T);
  if (const auto *B = dyn_cast<BinaryOperator>(E))
    return binary(B, *T);
  if (const auto *U = dyn_cast<UnaryOperator>(E))
    return unary(U, *T);
  if (const auto *C = dyn_cast<ConditionalOperator>(E)) {
    std::optional<std::vector<Formula>> Ops = operands({C->getCond(), C->getTrueExpr(), C->getFalseExpr()});
    if (!Ops)
      return std::nullopt;
    return node(Formula::Op::Cond, *T, std::move(*Ops));
  }
  if (const auto *C = dyn_cast<CallExpr>(E))
    return call(C, *T);
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
    if (const auto *V = dyn_cast<VarDecl>(DRE->getDecl()))
      return variable(V, *T);
  if (const auto *M = dyn_cast<MemberExpr>(E))
    return member(M, *T);
  if (const auto *D = dyn_cast<CXXDefaultArgExpr>(E))
    return scalar(D->getExpr());
  return fail(text(E) + ": kloop does not evaluate this kind of expression");
}

std::optional<Formula> Builder::castExpr(const CastExpr *C, IntType T) {
  switch (C->getCastKind()) {
  case CK_NoOp:
  case CK_LValueToRValue: {
    std::optional<Formula> F = scalar(C->getSubExpr());
    return F ? std::optional<Formula>(cast(std::move(*F), T)) : std::nullopt;
  }
  case CK_IntegralCast:
  case CK_IntegralToBoolean: {
    std::optional<Formula> F = scalar(C->getSubExpr());
    return F ? std::optional<Formula>(cast(std::move(*F), T)) : std::nullopt;
  }
  default:
    return fail(text(C) + ": a conversion from " + C->getSubExpr()->getType().getAsString() +
                " (kloop evaluates integer formulas only)");
  }
}

std::optional<Formula> Builder::binary(const BinaryOperator *B, IntType T) {
  using Op = Formula::Op;
  static const std::map<BinaryOperatorKind, Op> Ops = {
      {BO_Add, Op::Add}, {BO_Sub, Op::Sub}, {BO_Mul, Op::Mul}, {BO_Div, Op::Div}, {BO_Rem, Op::Rem},
      {BO_Shl, Op::Shl}, {BO_Shr, Op::Shr}, {BO_And, Op::And}, {BO_Or, Op::Or},   {BO_Xor, Op::Xor},
      {BO_LT, Op::Lt},   {BO_GT, Op::Gt},   {BO_LE, Op::Le},   {BO_GE, Op::Ge},   {BO_EQ, Op::Eq},
      {BO_NE, Op::Ne},   {BO_LAnd, Op::LAnd}, {BO_LOr, Op::LOr}};
  auto It = Ops.find(B->getOpcode());
  if (It == Ops.end())
    return fail(text(B) + ": operator " + B->getOpcodeStr().str() + " (an assignment or a comma)");
  std::optional<std::vector<Formula>> Args = operands({B->getLHS(), B->getRHS()});
  if (!Args)
    return std::nullopt;
  return node(It->second, T, std::move(*Args));
}

std::optional<Formula> Builder::unary(const UnaryOperator *U, IntType T) {
  using Op = Formula::Op;
  std::optional<Op> K;
  switch (U->getOpcode()) {
  case UO_Minus: K = Op::Neg; break;
  case UO_Not: K = Op::BitNot; break;
  case UO_LNot: K = Op::LNot; break;
  case UO_Plus: {
    std::optional<Formula> F = scalar(U->getSubExpr());
    return F ? std::optional<Formula>(cast(std::move(*F), T)) : std::nullopt;
  }
  default: return fail(text(U) + ": operator " + UnaryOperator::getOpcodeStr(U->getOpcode()).str());
  }
  std::optional<std::vector<Formula>> Args = operands({U->getSubExpr()});
  if (!Args)
    return std::nullopt;
  return node(*K, T, std::move(*Args));
}

/// The return statement that ends \p FD's body when it is the body's only one; null otherwise.
static const ReturnStmt *lastReturn(const FunctionDecl *FD) {
  const auto *Body = dyn_cast_or_null<CompoundStmt>(FD->getBody());
  if (!Body || Body->body_empty())
    return nullptr;
  const auto *R = dyn_cast<ReturnStmt>(Body->body_back());
  if (!R || !R->getRetValue())
    return nullptr;
  std::function<bool(const Stmt *)> OtherReturn = [&](const Stmt *S) {
    if (!S || S == R)
      return false;
    if (isa<ReturnStmt>(S))
      return true;
    return llvm::any_of(S->children(), OtherReturn);
  };
  return OtherReturn(Body) ? nullptr : R;
}

std::optional<Formula> Builder::call(const CallExpr *C, IntType T) {
  const FunctionDecl *FD = C->getDirectCallee();
  if (!FD || !FD->getIdentifier())
    return fail(text(C) + ": a call kloop cannot resolve");
  StringRef Name = FD->getName();
  // min/max of the standard library or CUDA's headers; a user's own is inlined like any other function.
  bool Library = FD->isInStdNamespace() || Ctx.getSourceManager().isInSystemHeader(FD->getLocation());
  if ((Name == "min" || Name == "max") && C->getNumArgs() == 2 && Library) {
    std::optional<std::vector<Formula>> Args = operands({C->getArg(0), C->getArg(1)});
    if (!Args)
      return std::nullopt;
    for (Formula &A : *Args)
      A = cast(std::move(A), T);
    return node(Name == "min" ? Formula::Op::Min : Formula::Op::Max, T, std::move(*Args));
  }
  if (const auto *M = dyn_cast<CXXMethodDecl>(FD); M && M->isVirtual())
    return fail(text(C) + ": a virtual call, which another class may override");
  if (std::string Why = unfollowable(FD); !Why.empty())
    return fail(text(C) + ": " + Why);
  const ReturnStmt *Ret = lastReturn(FD);
  if (!Ret || Depth >= 8 || C->getNumArgs() != FD->getNumParams())
    return fail(text(C) + ": a call to " + Name.str() +
                ", whose body is not straight-line code ending in its only return statement");
  // The callee's body runs symbolically with its parameters bound to the arguments' formulas.
  Builder Inner(FD, Ctx);
  Inner.Depth = Depth + 1;
  for (unsigned I = 0; I < C->getNumArgs(); ++I) {
    std::optional<Formula> A = scalar(C->getArg(I));
    if (!A)
      return std::nullopt;
    Inner.Bound[FD->getParamDecl(I)] = std::move(*A);
  }
  Inner.runTo(Ret);
  std::optional<Formula> R = Inner.scalar(Ret->getRetValue());
  if (!R)
    return fail(Inner.Why);
  return cast(std::move(*R), T);
}

std::optional<Formula> Builder::variable(const VarDecl *V, IntType T) {
  if (auto It = Env.find(V); It != Env.end()) {
    if (It->second.Int)
      return cast(*It->second.Int, T);
    return fail(It->second.Why);
  }
  std::optional<IntType> VT = intType(V->getType());
  if (!VT)
    return fail(V->getNameAsString() + ": not an integer variable");
  // A name stands for a value the launch may give away only when no candidate can change it here: a
  // parameter of the enclosing function that nothing before the launch changes (its callers are
  // outside what kloop follows, docs/inventory.md).
  const auto *P = dyn_cast<ParmVarDecl>(V);
  if (P && P->getType()->isReferenceType())
    return fail(V->getNameAsString() + ": a reference parameter, which may name what other code changes");
  if (P && escapes(P))
    return fail(V->getNameAsString() + " has its address taken or a reference bound to it in " +
                Enclosing->getNameAsString() + ", so kloop cannot follow its value");
  if (!P || P->getDeclContext() != Enclosing)
    return fail(V->getNameAsString() + ": " + (V->hasLocalStorage() ? "a local kloop does not follow"
                                                                     : "a global, which host code elsewhere may set"));
  Formula F;
  F.K = Formula::Op::Var;
  F.Type = *VT;
  F.Var = V->getNameAsString();
  return cast(std::move(F), T);
}

std::optional<Formula> Builder::member(const MemberExpr *M, IntType T) {
  StringRef Field = M->getMemberDecl()->getName();
  const Expr *Base = M->getBase();
  const CXXRecordDecl *R = Base->getType()->getAsCXXRecordDecl();
  if (!R || !R->getIdentifier() || (R->getName() != "dim3" && R->getName() != "uint3") || M->isArrow() ||
      (Field != "x" && Field != "y" && Field != "z"))
    return fail(text(M) + ": a member kloop does not evaluate (only .x, .y, .z of a dim3)");
  std::optional<Dim3> D = dim3(Base);
  if (!D)
    return std::nullopt;
  return cast((*D)[Field == "x" ? 0 : Field == "y" ? 1 : 2], T);
}

} // namespace

const Expr *stripDim3(const Expr *E) {
  for (;;) {
    const Expr *Prev = E;
    E = E->IgnoreImplicit()->IgnoreParens();
    if (const auto *T = dyn_cast<MaterializeTemporaryExpr>(E))
      E = T->getSubExpr();
    if (const auto *F = dyn_cast<CXXFunctionalCastExpr>(E))
      E = F->getSubExpr();
    if (const auto *C = dyn_cast<CXXConstructExpr>(E))
      if (C->getNumArgs() == 1 && C->getConstructor()->isCopyOrMoveConstructor())
        E = C->getArg(0);
    if (E == Prev)
      return E;
  }
}

namespace {

std::optional<Dim3> Builder::dim3(const Expr *E) {
  if (!E)
    return fail("a missing dimension");
  if (E->isValueDependent() || E->isTypeDependent() || E->containsErrors())
    return fail(text(E) + ": depends on a template parameter");
  const Expr *S = stripDim3(E);
  if (intType(S->getType())) {
    std::optional<Formula> X = scalar(S);
    if (!X)
      return std::nullopt;
    return Dim3{cast(*X, {32, false}), Formula::constant({32, false}, 1), Formula::constant({32, false}, 1)};
  }
  if (const auto *C = dyn_cast<CXXConstructExpr>(S)) {
    if (C->getNumArgs() > 3)
      return fail(text(E) + ": a dim3 constructor kloop does not know");
    Dim3 D{Formula::constant({32, false}, 1), Formula::constant({32, false}, 1), Formula::constant({32, false}, 1)};
    for (unsigned I = 0; I < C->getNumArgs(); ++I) {
      if (!intType(C->getArg(I)->getType()))
        return fail(text(E) + ": a dim3 built from a " + C->getArg(I)->getType().getAsString());
      std::optional<Formula> X = scalar(C->getArg(I));
      if (!X)
        return std::nullopt;
      D[I] = cast(std::move(*X), {32, false});
    }
    return D;
  }
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S))
    if (const auto *V = dyn_cast<VarDecl>(DRE->getDecl())) {
      auto It = Env.find(V);
      if (It != Env.end() && It->second.D)
        return It->second.D;
      return fail(It != Env.end() && !It->second.Why.empty() ? It->second.Why
                                                             : V->getNameAsString() + ": a dim3 kloop does not follow");
    }
  return fail(text(E) + ": kloop does not evaluate this dimension");
}


/// The first line of \p S's source text, for messages.
std::string Builder::firstLine(const Stmt *S) const {
  CharSourceRange R = CharSourceRange::getTokenRange(S->getSourceRange());
  StringRef T = Lexer::getSourceText(R, Ctx.getSourceManager(), Ctx.getLangOpts());
  T = T.split('\n').first.trim();
  return T.empty() ? std::string("a statement") : T.str();
}

void Builder::walkTo(const Stmt *S, const Stmt *T) {
  if (S == T)
    return;
  if (const auto *C = dyn_cast<CompoundStmt>(S)) {
    for (const Stmt *X : C->body()) {
      if (contains(X, T))
        return walkTo(X, T);
      exec(X);
    }
    return;
  }
  if (isa<LambdaExpr>(S)) {
    InLambda = true; // the lambda's body runs when it is called, not where it is written
    return;
  }
  if (const auto *F = dyn_cast<ForStmt>(S); F && F->getInit() && !contains(F->getInit(), T))
    exec(F->getInit());
  // A statement around the launch (a loop, an if, an expression with a comma, && or ?:): what it may
  // change, it may change before the launch.
  forget(S);
  for (const Stmt *C : S->children())
    if (C && contains(C, T))
      return walkTo(C, T);
}

Builder::Value Builder::valueOf(const Expr *Init, QualType T) {
  Value V;
  std::string Before = Why;
  if (intType(T))
    V.Int = scalar(Init);
  else if (const CXXRecordDecl *R = T->getAsCXXRecordDecl(); R && R->getIdentifier() && R->getName() == "dim3")
    V.D = dim3(Init);
  if ((V.Int && tooLarge(*V.Int)) || (V.D && llvm::any_of(*V.D, tooLarge)))
    V = unknown("the formula of " + text(Init) + " grows past " + std::to_string(MaxNodes) + " nodes");
  if (!V.Int && !V.D)
    V.Why = Why.empty() ? "a " + T.getAsString() + ", not an integer or a dim3" : Why;
  Why = Before; // a value kloop cannot follow only makes the variable unknown
  if (V.Int && !(V.Int->Type == *intType(T)))
    V.Int = cast(std::move(*V.Int), *intType(T));
  return V;
}

void Builder::assign(const VarDecl *V, Value New) {
  std::string Name = V->getNameAsString();
  if (escapes(V))
    New = unknown(Name + " has its address taken or a reference bound to it in " +
                  (Enclosing ? Enclosing->getNameAsString() : std::string("its function")) +
                  ", so kloop cannot follow its value");
  if (names(New, Name))
    New = unknown(Name + " is set from its own earlier value"); // the Var leaf would stand for the new value
  for (auto &[W, Val] : Env)
    if (names(Val, Name))
      Val = unknown(W->getNameAsString() + " was computed from " + Name + ", which changes before the launch");
  Env[V] = std::move(New);
}

/// The variables \p S names.
static void namedIn(const Stmt *S, std::set<const VarDecl *> &Out) {
  if (!S)
    return;
  if (const auto *D = dyn_cast<DeclRefExpr>(S))
    if (const auto *V = dyn_cast<VarDecl>(D->getDecl()))
      Out.insert(V);
  for (const Stmt *C : S->children())
    namedIn(C, Out);
}

void Builder::forget(const Stmt *S) {
  // A statement can change a variable it does not name only through an alias, and a variable with an
  // alias is never known (escapes()); so only the variables S names are asked about.
  std::set<const VarDecl *> Named;
  namedIn(S, Named);
  std::vector<const VarDecl *> Changed;
  std::unique_ptr<ExprMutationAnalyzer> A;
  for (const VarDecl *V : Named) {
    bool Tracked = Env.count(V) || (isa<ParmVarDecl>(V) && (V->getDeclContext() == Enclosing ||
                                                           Bound.count(llvm::cast<ParmVarDecl>(V))));
    if (!Tracked)
      continue;
    if (!A)
      A = std::make_unique<ExprMutationAnalyzer>(*S, Ctx);
    if (A->isMutated(V))
      Changed.push_back(V);
  }
  for (const VarDecl *V : Changed)
    assign(V, unknown(V->getNameAsString() + " is changed by `" + firstLine(S) + "`, which kloop does not follow"));
}

bool Builder::escapes(const VarDecl *V) {
  if (!Escaped) {
    Escaped.emplace();
    if (Enclosing && Enclosing->getBody())
      collectEscapes(Enclosing->getBody(), *Escaped);
  }
  return Escaped->count(V);
}

/// The variable \p E names, ignoring parentheses (and implicit nodes when \p Implicit); null otherwise.
static const VarDecl *varOf(const Expr *E, bool Implicit) {
  if (!E)
    return nullptr;
  E = Implicit ? E->IgnoreParenImpCasts() : E->IgnoreParens();
  const auto *D = dyn_cast<DeclRefExpr>(E);
  return D ? dyn_cast<VarDecl>(D->getDecl()) : nullptr;
}

void Builder::collectEscapes(const Stmt *S, std::set<const VarDecl *> &Out) {
  if (!S)
    return;
  if (const auto *U = dyn_cast<UnaryOperator>(S); U && U->getOpcode() == UO_AddrOf)
    if (const VarDecl *V = varOf(U->getSubExpr(), true))
      Out.insert(V); // &v
  if (const auto *DS = dyn_cast<DeclStmt>(S))
    for (const Decl *X : DS->decls())
      if (const auto *R = dyn_cast<VarDecl>(X); R && R->getType()->isReferenceType())
        if (const VarDecl *V = varOf(R->getInit(), true))
          Out.insert(V); // T &r = v
  if (const auto *C = dyn_cast<CallExpr>(S))
    if (const FunctionDecl *F = C->getDirectCallee())
      for (unsigned I = 0; I < C->getNumArgs() && I < F->getNumParams(); ++I) {
        QualType P = F->getParamDecl(I)->getType();
        if (P->isReferenceType() && !P.getNonReferenceType().isConstQualified())
          if (const VarDecl *V = varOf(C->getArg(I), false))
            Out.insert(V); // f(int &) called with v
      }
  if (const auto *L = dyn_cast<LambdaExpr>(S))
    for (const LambdaCapture &Cap : L->captures())
      if (Cap.capturesVariable() && Cap.getCaptureKind() == LCK_ByRef)
        if (const auto *V = dyn_cast<VarDecl>(Cap.getCapturedVar()))
          Out.insert(V); // [&v] or [&]
  for (const Stmt *C : S->children())
    collectEscapes(C, Out);
}

/// True when \p A and \p B hold the same knowledge (both unknown counts).
static bool sameValue(const std::optional<Formula> &A, const std::optional<Formula> &B) {
  return A.has_value() == B.has_value() && (!A || inv::toJSON(*A) == inv::toJSON(*B));
}

void Builder::execIf(const IfStmt *If) {
  if (If->getInit() || If->getConditionVariable() || If->isConsteval())
    return forget(If);
  std::string Before = Why;
  std::optional<Formula> Cond = scalar(If->getCond());
  Why = Before;
  forget(If->getCond());
  std::map<const VarDecl *, Value> Start = Env;
  exec(If->getThen());
  std::map<const VarDecl *, Value> Then = std::move(Env);
  Env = Start;
  exec(If->getElse());
  std::map<const VarDecl *, Value> Else = std::move(Env);
  // The variables either branch changed; a variable declared inside a branch is out of scope after it.
  auto Of = [](const std::map<const VarDecl *, Value> &M, const VarDecl *V) {
    auto It = M.find(V);
    return It == M.end() ? unknown(V->getNameAsString() + " is changed in one branch of an if") : It->second;
  };
  auto Same = [&](const Value &A, const Value &B) {
    bool DSame = A.D.has_value() == B.D.has_value();
    for (size_t I = 0; DSame && A.D && I < 3; ++I)
      DSame = sameValue((*A.D)[I], (*B.D)[I]);
    return DSame && sameValue(A.Int, B.Int);
  };
  std::set<const VarDecl *> Changed;
  for (const auto *M : {&Then, &Else})
    for (const auto &[V, Val] : *M)
      if (!If->getSourceRange().fullyContains(V->getSourceRange()) && !Same(Val, Of(Start, V)))
        Changed.insert(V);
  bool CondStale = !Cond;
  for (const VarDecl *V : Changed)
    CondStale |= Cond && names(*Cond, V->getNameAsString());
  Env = std::move(Start);
  for (const VarDecl *V : Changed) {
    Value A = Of(Then, V), B = Of(Else, V);
    if (Same(A, B))
      Env[V] = A;
    else if (A.Int && B.Int && !CondStale) {
      Formula C = node(Formula::Op::Cond, A.Int->Type, {*Cond, *A.Int, *B.Int});
      Env[V] = tooLarge(C) ? unknown(V->getNameAsString() + "'s formula grows past " + std::to_string(MaxNodes) +
                                     " nodes at `" + firstLine(If) + "`")
                           : Value{std::move(C), std::nullopt};
    }
    else if (!A.Int && !A.D && !A.Why.empty())
      Env[V] = A; // why one branch leaves it unknown
    else if (!B.Int && !B.D && !B.Why.empty())
      Env[V] = B;
    else
      Env[V] = unknown(V->getNameAsString() + " is set differently in the branches of an if kloop cannot evaluate");
  }
  // What names a changed variable's old value is stale; the branches have forgotten it on their side.
  for (auto &[W, Val] : Env)
    if (!Changed.count(W))
      for (const VarDecl *V : Changed)
        if (names(Val, V->getNameAsString()))
          Val = unknown(W->getNameAsString() + " was computed from " + V->getNameAsString() +
                        ", which changes before the launch");
}

void Builder::exec(const Stmt *S) {
  if (!S || isa<NullStmt>(S))
    return;
  if (const auto *C = dyn_cast<CompoundStmt>(S)) {
    for (const Stmt *X : C->body())
      exec(X);
    return;
  }
  if (const auto *D = dyn_cast<DeclStmt>(S)) {
    for (const Decl *X : D->decls())
      if (const auto *V = dyn_cast<VarDecl>(X); V && V->hasLocalStorage())
        assign(V, V->getInit() && !V->getType()->isReferenceType()
                      ? valueOf(V->getInit(), V->getType())
                      : unknown(V->getNameAsString() + " is declared without an initialiser"));
    return forget(S); // what the initialisers modify besides
  }
  if (const auto *If = dyn_cast<IfStmt>(S))
    return execIf(If);
  const Expr *E = dyn_cast<Expr>(S);
  const auto *B = E ? dyn_cast<BinaryOperator>(E->IgnoreParenImpCasts()) : nullptr;
  const auto *Op = E ? dyn_cast<CXXOperatorCallExpr>(E->IgnoreParenImpCasts()) : nullptr;
  const Expr *LHS = nullptr, *RHS = nullptr;
  if (B && B->getOpcode() == BO_Assign)
    LHS = B->getLHS(), RHS = B->getRHS();
  else if (Op && Op->getOperator() == OO_Equal && Op->getNumArgs() == 2)
    LHS = Op->getArg(0), RHS = Op->getArg(1); // a dim3's copy assignment
  const auto *DRE = LHS ? dyn_cast<DeclRefExpr>(LHS->IgnoreParenImpCasts()) : nullptr;
  const auto *V = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  if (V && V->hasLocalStorage() && !V->getType()->isReferenceType()) {
    Value New = valueOf(RHS, V->getType());
    forget(RHS); // v = f(&w)
    return assign(V, std::move(New));
  }
  forget(S);
}

} // namespace

inv::LaunchFormula launchFormula(const CUDAKernelCallExpr *Call, const FunctionDecl *Enclosing, ASTContext &Ctx) {
  inv::LaunchFormula L;
  Builder B(Enclosing, Ctx);
  B.runTo(Call);
  if (!B.Blocked.empty()) {
    L.Unknown = B.Blocked;
    for (const Expr *A : Call->arguments())
      L.Args.push_back({std::nullopt, B.text(A)});
    return L;
  }
  if (const FunctionDecl *FD = Call->getDirectCallee()) {
    llvm::raw_string_ostream OS(L.Callee);
    FD->getNameForDiagnostic(OS, Ctx.getPrintingPolicy(), /*Qualified=*/true);
  }
  for (const Expr *A : Call->arguments()) {
    inv::ArgFormula F;
    F.Text = B.text(A);
    if (!A->getType()->isPointerType() && !A->getType()->isRecordType())
      F.F = B.scalar(A);
    B.Why.clear();
    L.Args.push_back(std::move(F));
  }
  const CallExpr *Cfg = Call->getConfig();
  std::optional<Dim3> G = Cfg && Cfg->getNumArgs() > 1 ? B.dim3(Cfg->getArg(0)) : B.fail("no configuration");
  std::optional<Dim3> Bl = G ? B.dim3(Cfg->getArg(1)) : std::nullopt;
  std::optional<Formula> S;
  if (Bl)
    S = Cfg->getNumArgs() > 2 && !isa<CXXDefaultArgExpr>(Cfg->getArg(2)) ? B.scalar(Cfg->getArg(2))
                                                                         : Formula::constant({64, false}, 0);
  if (!S) {
    L.Unknown = B.Why.empty() ? "the launch configuration" : B.Why;
    return L;
  }
  L.Grid = std::move(*G);
  L.Block = std::move(*Bl);
  L.SharedMemory = std::move(*S);
  return L;
}

} // namespace kloop
