//===- AtomicTargets.cpp - Global atomics of a kernel ---------------------===//
//
// Finds `atomicF(&p[i], ...)` and `atomicF(p + i, ...)` on the kernel's pointer
// parameters, bounds each index i from the AST (an unsigned char or short
// value, `x & M`, unsigned `x % M`, `x >> k` of a bounded x, a constant), and
// records any other use of the parameter, the first `return` and the body's
// text with the offset of each atomic's `p`.
//
//===----------------------------------------------------------------------===//
#include "AtomicTargets.h"
#include "SourceText.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/Stmt.h"

#include <algorithm>
#include <optional>
#include <set>
#include <vector>

using namespace clang;
using nlohmann::json;

namespace kloop {

namespace {
/// One atomic on a parameter: the call, the parameter's reference in it and the index.
struct AtomicUse {
  const CallExpr *Call = nullptr;
  const DeclRefExpr *Base = nullptr;
  const Expr *Index = nullptr;
  std::string Function;
};
} // namespace

std::string calleeName(const CallExpr *C) {
  if (const FunctionDecl *F = C->getDirectCallee())
    return F->getNameAsString();
  if (const auto *O = dyn_cast<OverloadExpr>(C->getCallee()->IgnoreParenImpCasts()))
    return O->getName().getAsString();
  return "";
}

static bool isAtomicName(llvm::StringRef N) {
  if (!N.consume_back("_block"))
    N.consume_back("_system");
  static const char *const Names[] = {"atomicAdd", "atomicSub", "atomicExch", "atomicMin", "atomicMax", "atomicInc",
                                      "atomicDec", "atomicCAS", "atomicAnd", "atomicOr",  "atomicXor"};
  return std::find(std::begin(Names), std::end(Names), N) != std::end(Names);
}

/// `&p[i]` or `p + i` (`i + p`) with p a pointer parameter of \p Kernel.
static std::optional<AtomicUse> atomicUse(const CallExpr *C, const FunctionDecl *Kernel) {
  std::string Name = calleeName(C);
  if (!isAtomicName(Name) || C->getNumArgs() < 1)
    return std::nullopt;
  const Expr *A = C->getArg(0)->IgnoreParenImpCasts();
  const Expr *Base = nullptr, *Index = nullptr;
  if (const auto *U = dyn_cast<UnaryOperator>(A); U && U->getOpcode() == UO_AddrOf) {
    if (const auto *AS = dyn_cast<ArraySubscriptExpr>(U->getSubExpr()->IgnoreParens()))
      Base = AS->getBase()->IgnoreParenImpCasts(), Index = AS->getIdx();
  } else if (const auto *B = dyn_cast<BinaryOperator>(A); B && B->getOpcode() == BO_Add) {
    bool LeftPtr = B->getLHS()->getType()->isPointerType();
    Base = (LeftPtr ? B->getLHS() : B->getRHS())->IgnoreParenImpCasts();
    Index = LeftPtr ? B->getRHS() : B->getLHS();
  }
  const auto *D = dyn_cast_or_null<DeclRefExpr>(Base);
  const auto *P = D ? dyn_cast<ParmVarDecl>(D->getDecl()) : nullptr;
  if (!P || P->getDeclContext() != Kernel || !P->getType()->isPointerType())
    return std::nullopt;
  return AtomicUse{C, D, Index, Name};
}

static std::optional<int64_t> constantOf(const Expr *E, ASTContext &Ctx) {
  Expr::EvalResult R;
  if (E->isValueDependent() || !E->EvaluateAsInt(R, Ctx))
    return std::nullopt;
  return R.Val.getInt().getExtValue();
}

/// 2^width of an unsigned (or bool) type of at most 16 bits: every value is below it.
static std::optional<int64_t> typeBound(QualType T, ASTContext &Ctx) {
  if (T.isNull() || T->isDependentType() || !T->isIntegerType())
    return std::nullopt;
  if (T->isBooleanType())
    return 2;
  uint64_t W = Ctx.getTypeSize(T);
  if (!T->isUnsignedIntegerType() || W > 16)
    return std::nullopt;
  return int64_t(1) << W;
}

static std::optional<int64_t> smaller(std::optional<int64_t> A, std::optional<int64_t> B) {
  if (!A || !B)
    return A ? A : B;
  return std::min(*A, *B);
}

/// N with 0 <= \p E < N for every value \p E can take, when the analysis proves one.
static std::optional<int64_t> indexBound(const Expr *E, ASTContext &Ctx) {
  E = E->IgnoreParens();
  std::optional<int64_t> N = typeBound(E->getType(), Ctx);
  if (std::optional<int64_t> C = constantOf(E, Ctx))
    return *C >= 0 ? smaller(N, *C + 1) : std::nullopt;
  if (const auto *IC = dyn_cast<ImplicitCastExpr>(E)) {
    QualType From = IC->getSubExpr()->getType();
    bool Widens = From->isIntegerType() && E->getType()->isIntegerType() &&
                  Ctx.getTypeSize(E->getType()) >= Ctx.getTypeSize(From);
    return Widens ? smaller(N, indexBound(IC->getSubExpr(), Ctx)) : N;
  }
  const auto *B = dyn_cast<BinaryOperator>(E);
  if (!B)
    return N;
  std::optional<int64_t> L = constantOf(B->getLHS(), Ctx), R = constantOf(B->getRHS(), Ctx);
  if (B->getOpcode() == BO_And && (L.value_or(-1) >= 0 || R.value_or(-1) >= 0))
    return smaller(N, smaller(L ? std::optional<int64_t>(*L + 1) : std::nullopt,
                              R ? std::optional<int64_t>(*R + 1) : std::nullopt));
  if (B->getOpcode() == BO_Rem && R.value_or(0) > 0 && E->getType()->isUnsignedIntegerType())
    return smaller(N, *R);
  if (B->getOpcode() == BO_Shr && R && *R >= 0 && *R < 63)
    if (std::optional<int64_t> X = indexBound(B->getLHS(), Ctx))
      return smaller(N, ((*X - 1) >> *R) + 1);
  return N;
}

/// Whether the value the atomic returns is used (as an operand, an initializer, a condition).
static bool resultUsed(const CallExpr *C, ASTContext &Ctx) {
  DynTypedNodeList Ps = Ctx.getParents(*C);
  const Stmt *P = Ps.empty() ? nullptr : Ps[0].get<Stmt>();
  if (!P || isa<CompoundStmt>(P))
    return false;
  if (const auto *Cast = dyn_cast<CStyleCastExpr>(P))
    return !Cast->getType()->isVoidType();
  if (isa<Expr>(P))
    return true;
  if (const auto *If = dyn_cast<IfStmt>(P))
    return If->getCond() == C;
  if (const auto *F = dyn_cast<ForStmt>(P))
    return F->getCond() == C;
  if (const auto *W = dyn_cast<WhileStmt>(P))
    return W->getCond() == C;
  if (const auto *D = dyn_cast<DoStmt>(P))
    return D->getCond() == C;
  return isa<DeclStmt>(P); // an initializer
}

static json describeAtomic(const AtomicUse &U, CharSourceRange Body, ASTContext &Ctx) {
  std::optional<int64_t> Bound = indexBound(U.Index, Ctx);
  std::optional<unsigned> At = offsetIn(U.Base->getLocation(), Body, Ctx);
  std::string Index = sourceText(U.Index->getSourceRange(), Ctx);
  return {{"line", lineOf(U.Call->getBeginLoc(), Ctx)},
          {"function", U.Function},
          {"index", Index},
          {"bound", Bound ? json(*Bound) : json(nullptr)},
          {"result_used", resultUsed(U.Call, Ctx)},
          {"base_offset", At ? json(*At) : json(nullptr)}};
}

/// The first use of \p P in \p Body that is not one of \p Bases, as "`text` at line N"; null when none.
static json otherUse(const ParmVarDecl *P, const Stmt *Body, const std::set<const DeclRefExpr *> &Bases,
                     ASTContext &Ctx) {
  for (const DeclRefExpr *R : findAll<DeclRefExpr>(Body)) {
    if (R->getDecl() != P || Bases.count(R))
      continue;
    const Stmt *Shown = R;
    for (DynTypedNodeList Ps = Ctx.getParents(*R); !Ps.empty() && Ps[0].get<Expr>();
         Ps = Ctx.getParents(*Ps[0].get<Expr>())) {
      Shown = Ps[0].get<Expr>();
      if (!isa<ImplicitCastExpr, ParenExpr>(Shown))
        break;
    }
    return "`" + sourceText(Shown->getSourceRange(), Ctx) + "`" + atLine(R->getBeginLoc(), Ctx);
  }
  return nullptr;
}

static json describeTarget(const ParmVarDecl *P, const std::vector<AtomicUse> &Uses, const CompoundStmt *Body,
                           const std::string &KernelID, ASTContext &Ctx) {
  CharSourceRange R = fileRangeOf(Body->getSourceRange(), Ctx);
  QualType Elem = P->getType()->getPointeeType().getUnqualifiedType();
  json Atomics = json::array();
  std::set<const DeclRefExpr *> Bases;
  for (const AtomicUse &U : Uses) {
    Atomics.push_back(describeAtomic(U, R, Ctx));
    Bases.insert(U.Base);
  }
  std::vector<const ReturnStmt *> Returns = findAll<ReturnStmt>(Body);
  bool Sized = !Elem->isDependentType() && !Elem->isIncompleteType();
  std::string Text = sourceText(Body->getSourceRange(), Ctx);
  return {{"param", KernelID + "/param:" + P->getNameAsString()},
          {"name", P->getNameAsString()},
          {"element_type", Elem.getAsString(Ctx.getPrintingPolicy())},
          {"element_bytes", Sized ? json(Ctx.getTypeSizeInChars(Elem).getQuantity()) : json(nullptr)},
          {"other_use", otherUse(P, Body, Bases, Ctx)},
          {"returns", Returns.empty() ? json(nullptr) : json("`return`" + atLine(Returns[0]->getBeginLoc(), Ctx))},
          {"body_text", Text.empty() ? json(nullptr) : json(Text)},
          {"atomics", Atomics}};
}

json atomicTargets(const FunctionDecl *Kernel, const std::string &KernelID, ASTContext &Ctx) {
  json Out = json::array();
  const auto *Body = dyn_cast_or_null<CompoundStmt>(Kernel ? Kernel->getBody() : nullptr);
  if (!Body)
    return Out;
  std::vector<std::pair<const ParmVarDecl *, std::vector<AtomicUse>>> Targets;
  for (const CallExpr *C : findAll<CallExpr>(Body)) {
    std::optional<AtomicUse> U = atomicUse(C, Kernel);
    if (!U)
      continue;
    const auto *P = cast<ParmVarDecl>(U->Base->getDecl());
    auto It = std::find_if(Targets.begin(), Targets.end(), [&](const auto &T) { return T.first == P; });
    if (It == Targets.end())
      Targets.push_back({P, {*U}});
    else
      It->second.push_back(*U);
  }
  for (const auto &[P, Uses] : Targets)
    Out.push_back(describeTarget(P, Uses, Body, KernelID, Ctx));
  return Out;
}

} // namespace kloop
