//===- DotProducts.cpp - Dot-product loop nests of a kernel ---------------===//
//
// Takes the kernel body apart into prelude (declarations and early returns),
// the k loop and the statements after it, and follows every value the loop's
// operands and the early returns read back to the thread indexes it depends on
// (threadIdx.x, threadIdx.y, the loop variable; blockIdx, blockDim, gridDim,
// parameters and constants are the same for every thread of a block).
//
//===----------------------------------------------------------------------===//
#include "DotProducts.h"
#include "SourceText.h"
#include "kloop/Support/Text.h"

#include "clang/AST/Attr.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <string>

using namespace clang;
using nlohmann::json;

namespace kloop {

namespace {
/// What a value depends on within a block: threadIdx.x, threadIdx.y, the loop variable.
enum Axis : unsigned { AxisX = 1, AxisY = 2, AxisK = 4 };

/// The kernel body taken apart, and the dependences of its locals.
class DotProduct {
public:
  DotProduct(const ForStmt *F, const FunctionDecl *Kernel, ASTContext &Ctx) : F(F), Kernel(Kernel), Ctx(Ctx) {}

  json run();

private:
  const ForStmt *F;
  const FunctionDecl *Kernel;
  ASTContext &Ctx;
  const CompoundStmt *Body = nullptr;
  const VarDecl *Var = nullptr, *Acc = nullptr;
  const Expr *Init = nullptr, *Bound = nullptr, *Row = nullptr, *Col = nullptr;
  std::map<const VarDecl *, unsigned> LocalAxes;
  std::map<const VarDecl *, std::set<const ParmVarDecl *>> LocalRoots;
  std::vector<const Stmt *> Prelude, After;
  std::vector<const Expr *> RowTerms, ColTerms;
  const Expr *TileX = nullptr, *TileY = nullptr;
  std::optional<std::string> Refusal;
  /// [begin, end) file offsets of every threadIdx.y and blockDim.y in the body, and its replacement.
  std::map<unsigned, std::pair<unsigned, const char *>> Renames;

  bool refuse(std::string Why) {
    if (!Refusal)
      Refusal = std::move(Why);
    return false;
  }
  /// The source text of \p S; "" for a missing one (a `for (;;)` has no bound).
  std::string text(const Stmt *S) const { return S ? sourceText(S->getSourceRange(), Ctx) : std::string(); }
  std::string at(const Stmt *S) const { return S ? atLine(S->getBeginLoc(), Ctx) : std::string(); }

  bool header();
  bool update();
  bool prelude();
  bool guard(const IfStmt *If);
  bool after();
  bool writes();
  bool operands(std::set<const ParmVarDecl *> &Roots);
  bool tile();
  bool isTileConstant(const Expr *T) const;
  std::optional<std::string> staleRead(const std::set<const ParmVarDecl *> &Roots) const;
  bool renames();
  std::optional<unsigned> axes(const Expr *E, bool Reads, std::set<const ParmVarDecl *> &Roots);
  std::optional<unsigned> declAxes(const DeclRefExpr *R, std::set<const ParmVarDecl *> &Roots);
  std::string renamed(const Stmt *S, bool Statement) const;
  json texts(const std::vector<const Stmt *> &Stmts, bool Statement) const;
  json texts(const std::vector<const Expr *> &Exprs) const;
  json tileFacts() const;
};
} // namespace

/// The getter call of a builtin index variable's property (threadIdx.x reads `__fetch_builtin_x()`).
static bool isBuiltinFetch(const CallExpr *C, ASTContext &Ctx) {
  const FunctionDecl *F = C->getDirectCallee();
  return F && F->getNameAsString().rfind("__fetch_builtin_", 0) == 0 &&
         Ctx.getSourceManager().isInSystemHeader(F->getLocation());
}

static std::optional<int64_t> constantOf(const Expr *E, ASTContext &Ctx) {
  Expr::EvalResult R;
  if (E->isValueDependent() || !E->EvaluateAsInt(R, Ctx))
    return std::nullopt;
  return R.Val.getInt().getExtValue();
}

/// `for (int k = A; k < B; ++k)` (or `k++`, `k += 1`), k of at most 32 bits and B of k's type.
bool DotProduct::header() {
  const auto *D = dyn_cast_or_null<DeclStmt>(F->getInit());
  Var = D && D->isSingleDecl() ? dyn_cast<VarDecl>(D->getSingleDecl()) : nullptr;
  if (!Var || !Var->getInit() || !Var->getType()->isIntegerType() || Var->getType()->isDependentType() ||
      Ctx.getTypeSize(Var->getType()) > 32)
    return refuse("the loop does not declare one integer loop variable of at most 32 bits with an initializer");
  Init = Var->getInit();
  const auto *C = dyn_cast_or_null<BinaryOperator>(F->getCond());
  if (!C || C->getOpcode() != BO_LT || referencedVar(C->getLHS()) != Var)
    return refuse("its condition is not '" + Var->getNameAsString() + " < <bound>'");
  Bound = C->getRHS()->IgnoreParenImpCasts();
  if (Ctx.getCanonicalType(Bound->getType().getUnqualifiedType()) !=
      Ctx.getCanonicalType(Var->getType().getUnqualifiedType()))
    return refuse("its bound '" + text(Bound) + "' is not of the loop variable's type");
  const Expr *Inc = F->getInc() ? F->getInc()->IgnoreParens() : nullptr;
  const auto *U = dyn_cast_or_null<UnaryOperator>(Inc);
  const auto *A = dyn_cast_or_null<CompoundAssignOperator>(Inc);
  bool Unit = (U && U->isIncrementOp() && referencedVar(U->getSubExpr()) == Var) ||
              (A && A->getOpcode() == BO_AddAssign && referencedVar(A->getLHS()) == Var &&
               constantOf(A->getRHS(), Ctx).value_or(0) == 1);
  return Unit || refuse("its step is not '++" + Var->getNameAsString() + "'");
}

/// The body `acc += X * Y;`: sets Acc, Row and Col (assigned to axes later).
bool DotProduct::update() {
  const Stmt *S = F->getBody();
  if (const auto *B = dyn_cast<CompoundStmt>(S))
    S = B->size() == 1 ? B->body_front() : nullptr;
  const auto *A = dyn_cast_or_null<CompoundAssignOperator>(S);
  const auto *M = A ? dyn_cast<BinaryOperator>(A->getRHS()->IgnoreParenImpCasts()) : nullptr;
  Acc = A ? referencedVar(A->getLHS()) : nullptr;
  if (!A || A->getOpcode() != BO_AddAssign || !M || M->getOpcode() != BO_Mul || !Acc ||
      !isa<DeclRefExpr>(A->getLHS()->IgnoreParenImpCasts()))
    return refuse("its body is not one statement 'acc += x * y' (a dot product)" + at(F->getBody()));
  if (!Acc->hasLocalStorage() || isa<ParmVarDecl>(Acc) || !Acc->getType()->isArithmeticType())
    return refuse("'" + Acc->getNameAsString() + "' is not a local arithmetic accumulator");
  Row = M->getLHS();
  Col = M->getRHS();
  return true;
}

std::optional<unsigned> DotProduct::declAxes(const DeclRefExpr *R, std::set<const ParmVarDecl *> &Roots) {
  const ValueDecl *D = R->getDecl();
  std::string Name = D->getNameAsString();
  if (isa<NonTypeTemplateParmDecl, EnumConstantDecl>(D))
    return 0u;
  const auto *V = dyn_cast<VarDecl>(D);
  if (V && V == Var)
    return unsigned(AxisK);
  if (V && V == Acc) {
    refuse("'" + text(R) + "'" + at(R) + " reads the accumulator outside its update");
    return std::nullopt;
  }
  if (const auto *P = dyn_cast_or_null<ParmVarDecl>(V); P && P->getDeclContext() == Kernel) {
    if (P->getType()->isPointerType())
      Roots.insert(P);
    return 0u;
  }
  if (auto It = LocalAxes.find(V); It != LocalAxes.end()) {
    Roots.insert(LocalRoots[V].begin(), LocalRoots[V].end());
    return It->second;
  }
  if (V && !V->hasLocalStorage() && (V->getType().isConstQualified() || V->isConstexpr()) &&
      !V->hasAttr<CUDASharedAttr>())
    return 0u;
  refuse("'" + Name + "'" + at(R) + " is not a parameter, a constant or a local declared before the loop");
  return std::nullopt;
}

/// What \p E depends on; memory reads only with \p Reads; the pointer parameters it reads through go to
/// \p Roots. Nullopt (and Refusal set) for anything else: calls, writes, divisions by a variable.
std::optional<unsigned> DotProduct::axes(const Expr *E, bool Reads, std::set<const ParmVarDecl *> &Roots) {
  E = E->IgnoreParens();
  std::string B = builtinIndex(E, Ctx);
  if (B == "threadIdx.x" || B == "threadIdx.y")
    return unsigned(B == "threadIdx.x" ? AxisX : AxisY);
  if (B == "threadIdx.z") {
    refuse("threadIdx.z is read" + at(E) + ": the rule tiles 2-D blocks");
    return std::nullopt;
  }
  if (!B.empty())
    return 0u; // blockIdx, blockDim, gridDim: one value per block
  if (const auto *R = dyn_cast<DeclRefExpr>(E))
    return declAxes(R, Roots);
  if (isa<IntegerLiteral, FloatingLiteral, CharacterLiteral, CXXBoolLiteralExpr, UnaryExprOrTypeTraitExpr>(E))
    return 0u;
  bool Read = isa<ArraySubscriptExpr>(E);
  const auto *U = dyn_cast<UnaryOperator>(E);
  const auto *Bin = dyn_cast<BinaryOperator>(E);
  Read |= U && U->getOpcode() == UO_Deref;
  std::optional<std::string> Why;
  if (Read && !Reads)
    Why = "reads memory";
  else if (U && (U->isIncrementDecrementOp() || U->getOpcode() == UO_AddrOf))
    Why = "writes or takes an address";
  else if (Bin && (Bin->isAssignmentOp() || Bin->getOpcode() == BO_Comma))
    Why = "writes a variable";
  else if (Bin && (Bin->getOpcode() == BO_Div || Bin->getOpcode() == BO_Rem) && E->getType()->isIntegerType() &&
           !Bin->getRHS()->isValueDependent() && constantOf(Bin->getRHS(), Ctx).value_or(0) == 0)
    Why = "divides by a value that is not a non-zero constant (the original may skip it for some threads)";
  else if (!Read && !U && !Bin && !isa<CastExpr, ConditionalOperator, ConstantExpr>(E))
    Why = "is an expression the analysis does not follow (" + std::string(E->getStmtClassName()) + ")";
  if (Why) {
    refuse("'" + text(E) + "'" + at(E) + " " + *Why);
    return std::nullopt;
  }
  unsigned Out = 0;
  for (const Stmt *C : E->children()) {
    std::optional<unsigned> A = axes(cast<Expr>(C), Reads, Roots);
    if (!A)
      return std::nullopt;
    Out |= *A;
  }
  return Out;
}

/// `if (C) return;` with C an `||` of terms each on one thread axis.
bool DotProduct::guard(const IfStmt *If) {
  const Stmt *Then = If->getThen();
  if (const auto *B = dyn_cast<CompoundStmt>(Then))
    Then = B->size() == 1 ? B->body_front() : nullptr;
  const auto *Ret = dyn_cast_or_null<ReturnStmt>(Then);
  if (If->getElse() || If->getInit() || If->getConditionVariable() || !Ret || Ret->getRetValue())
    return refuse("the statement" + at(If) + " before the loop is an `if` that is not 'if (...) return;'");
  std::vector<const Expr *> Work{If->getCond()->IgnoreParenImpCasts()};
  while (!Work.empty()) {
    const Expr *T = Work.back();
    Work.pop_back();
    if (const auto *Or = dyn_cast<BinaryOperator>(T); Or && Or->getOpcode() == BO_LOr) {
      Work.push_back(Or->getRHS()->IgnoreParenImpCasts());
      Work.push_back(Or->getLHS()->IgnoreParenImpCasts());
      continue;
    }
    std::set<const ParmVarDecl *> Roots;
    std::optional<unsigned> A = axes(T, /*Reads=*/false, Roots);
    if (!A)
      return false;
    if ((*A & AxisX) && (*A & AxisY))
      return refuse("the early return's condition '" + text(T) + "'" + at(T) +
                    " reads both threadIdx.x and threadIdx.y: it does not split into row and column bounds");
    if (!(*A & AxisX))
      RowTerms.push_back(T);
    if (!(*A & AxisY))
      ColTerms.push_back(T);
  }
  return true;
}

/// The statements before the loop: declarations of locals and early returns.
bool DotProduct::prelude() {
  for (const Stmt *S : Body->body()) {
    if (directStatement(Body, F) == S)
      return true;
    if (isa<NullStmt>(S))
      continue;
    if (const auto *If = dyn_cast<IfStmt>(S)) {
      if (!guard(If))
        return false;
      continue;
    }
    const auto *D = dyn_cast<DeclStmt>(S);
    if (!D)
      return refuse("the statement" + at(S) + " before the loop is neither a declaration nor 'if (...) return;'");
    for (const Decl *X : D->decls()) {
      const auto *V = dyn_cast<VarDecl>(X);
      if (!V || !V->hasLocalStorage() || !V->getInit() || V->hasAttr<CUDASharedAttr>() ||
          !(V->getType()->isScalarType()))
        return refuse("the declaration" + at(S) + " is not of scalar locals with initializers");
      std::set<const ParmVarDecl *> Roots;
      std::optional<unsigned> A = axes(V->getInit(), /*Reads=*/false, Roots);
      if (!A)
        return false;
      LocalAxes[V] = *A;
      LocalRoots[V] = Roots;
    }
    Prelude.push_back(S);
  }
  return refuse("the loop is not a direct statement of the kernel body");
}

/// The statements after the loop: no return, call, goto or asm (they run once per output, under the
/// early return's condition).
bool DotProduct::after() {
  bool Seen = false;
  for (const Stmt *S : Body->body()) {
    if (Seen && !isa<NullStmt>(S))
      After.push_back(S);
    Seen |= directStatement(Body, F) == S;
  }
  for (const Stmt *S : After) {
    if (std::vector<const ReturnStmt *> R = findAll<ReturnStmt>(S); !R.empty())
      return refuse("a return" + at(R.front()) + " after the loop");
    for (const CallExpr *C : findAll<CallExpr>(S))
      if (!isBuiltinFetch(C, Ctx))
        return refuse("a call" + at(C) + " after the loop (it could synchronise, or have effects the rule does "
                      "not follow)");
    if (!findAll<GotoStmt>(S).empty() || !findAll<AsmStmt>(S).empty())
      return refuse("a goto or asm statement" + at(S) + " after the loop");
    for (const DeclStmt *D : findAll<DeclStmt>(S))
      for (const Decl *V : D->decls())
        if (V->hasAttr<CUDASharedAttr>())
          return refuse("a __shared__ declaration" + at(D) + " after the loop");
  }
  return true;
}

/// The pointer parameters \p Roots the operands read are never written; no parameter or prelude local
/// but the accumulator is written anywhere.
bool DotProduct::writes() {
  for (const Expr *E : findAll<Expr>(Body)) {
    const Expr *Target = nullptr;
    if (const auto *B = dyn_cast<BinaryOperator>(E); B && B->isAssignmentOp())
      Target = B->getLHS();
    else if (const auto *U = dyn_cast<UnaryOperator>(E); U && (U->isIncrementDecrementOp() || U->getOpcode() == UO_AddrOf))
      Target = U->getSubExpr();
    const VarDecl *V = Target ? referencedVar(Target) : nullptr;
    if (!V || V == Acc || V == Var || !isa<DeclRefExpr>(Target->IgnoreParenImpCasts()))
      continue;
    if (LocalAxes.count(V) || isa<ParmVarDecl>(V))
      return refuse("'" + V->getNameAsString() + "' is written or its address taken" + at(E) +
                    ": the rule recomputes it for every output");
  }
  return true;
}

/// Why a pointer parameter of \p Roots (read by the product) is written after the loop, or nullopt.
std::optional<std::string> DotProduct::staleRead(const std::set<const ParmVarDecl *> &Roots) const {
  for (const Stmt *S : After)
    for (const Expr *E : findAll<Expr>(S)) {
      const Expr *Target = nullptr;
      if (const auto *B = dyn_cast<BinaryOperator>(E); B && B->isAssignmentOp())
        Target = B->getLHS();
      else if (const auto *U = dyn_cast<UnaryOperator>(E); U && U->isIncrementDecrementOp())
        Target = U->getSubExpr();
      for (const DeclRefExpr *R : Target ? findAll<DeclRefExpr>(Target) : std::vector<const DeclRefExpr *>()) {
        const auto *V = dyn_cast<VarDecl>(R->getDecl());
        std::set<const ParmVarDecl *> Written;
        if (const auto *P = dyn_cast_or_null<ParmVarDecl>(V))
          Written.insert(P);
        if (auto It = LocalRoots.find(V); It != LocalRoots.end())
          Written.insert(It->second.begin(), It->second.end());
        for (const ParmVarDecl *P : Written)
          if (Roots.count(P))
            return "'" + P->getNameAsString() + "' is read by the product and written" + at(E) +
                   ": the tiles would keep stale values";
      }
    }
  return std::nullopt;
}

/// The operands: which one follows the row (threadIdx.y) and which the column; sets \p Roots.
bool DotProduct::operands(std::set<const ParmVarDecl *> &Roots) {
  std::optional<unsigned> A = axes(Row, /*Reads=*/true, Roots);
  std::optional<unsigned> B = A ? axes(Col, /*Reads=*/true, Roots) : std::nullopt;
  if (!A || !B)
    return false;
  if ((*A & AxisX) || (*B & AxisY))
    std::swap(Row, Col), std::swap(A, B);
  for (const Expr *E : {Row, Col})
    if (E->getType()->isDependentType() || !E->getType()->isArithmeticType())
      return refuse("the operand '" + text(E) + "'" + at(E) + " is not of an arithmetic type the rule can stage");
  if ((*A & AxisX) || (*B & AxisY))
    return refuse("the product's operands '" + text(Row) + "' and '" + text(Col) + "'" + at(Row) +
                  " are not one read by row (threadIdx.y and k) and one by column (threadIdx.x and k)");
  return true;
}

/// Whether \p T is a compile-time constant or a template parameter of the kernel.
bool DotProduct::isTileConstant(const Expr *T) const {
  const auto *R = dyn_cast<DeclRefExpr>(T->IgnoreParenImpCasts());
  return constantOf(T, Ctx) || (R && isa<NonTypeTemplateParmDecl>(R->getDecl()));
}

/// `blockIdx.x * T` and `blockIdx.y * T` (either order) in the prelude, T one compile-time constant.
bool DotProduct::tile() {
  for (const Stmt *S : Prelude)
    for (const BinaryOperator *M : findAll<BinaryOperator>(S))
      for (auto [I, T] : {std::pair{M->getLHS(), M->getRHS()}, std::pair{M->getRHS(), M->getLHS()}}) {
        std::string B = M->getOpcode() == BO_Mul && isTileConstant(T) ? builtinIndex(I, Ctx) : "";
        if (B == "blockIdx.x" && !TileX)
          TileX = T->IgnoreParenImpCasts();
        if (B == "blockIdx.y" && !TileY)
          TileY = T->IgnoreParenImpCasts();
      }
  if (!TileX || !TileY)
    return refuse("the kernel computes no 'blockIdx.x * T' and 'blockIdx.y * T' before the loop with T a constant "
                  "or a template parameter: no compile-time tile size names the block's dimensions (the tiles in "
                  "shared memory need one)");
  auto Squeeze = [&](const Expr *E) { return withoutSpaces(text(E)); };
  if (Squeeze(TileX) != Squeeze(TileY))
    return refuse("the row and column use different tile sizes ('" + text(TileY) + "', '" + text(TileX) + "')");
  return true;
}

/// Every threadIdx.y and blockDim.y of the body, to be renamed in the texts; refused behind a macro.
bool DotProduct::renames() {
  const SourceManager &SM = Ctx.getSourceManager();
  for (const Expr *E : findAll<Expr>(Body)) {
    if (isa<ImplicitCastExpr, ParenExpr>(E))
      continue;
    std::string B = builtinIndex(E, Ctx);
    if (B != "threadIdx.y" && B != "blockDim.y")
      continue;
    if (E->getBeginLoc().isMacroID() || E->getEndLoc().isMacroID())
      return refuse(B + " is read through a macro" + at(E));
    SourceLocation End = Lexer::getLocForEndOfToken(E->getEndLoc(), 0, SM, Ctx.getLangOpts());
    const char *To = B == "threadIdx.y" ? "kloop_ty" : "kloop_bdy";
    Renames[SM.getFileOffset(E->getBeginLoc())] = {SM.getFileOffset(End), To};
  }
  return true;
}

/// The text of \p S (a statement: with its `;`) with threadIdx.y and blockDim.y renamed.
std::string DotProduct::renamed(const Stmt *S, bool Statement) const {
  std::string T = Statement ? statementText(S, Ctx) : text(S);
  CharSourceRange R = fileRangeOf(S->getSourceRange(), Ctx);
  unsigned Begin = Ctx.getSourceManager().getFileOffset(R.getBegin());
  for (auto It = Renames.rbegin(); It != Renames.rend(); ++It) {
    auto [From, ToName] = *It;
    auto [To, Name] = ToName;
    if (From >= Begin && To <= Begin + T.size())
      T.replace(From - Begin, To - From, Name);
  }
  return T;
}

json DotProduct::texts(const std::vector<const Stmt *> &Stmts, bool Statement) const {
  json Out = json::array();
  for (const Stmt *S : Stmts)
    Out.push_back(renamed(S, Statement));
  return Out;
}

json DotProduct::texts(const std::vector<const Expr *> &Exprs) const {
  return texts(std::vector<const Stmt *>(Exprs.begin(), Exprs.end()), false);
}

json DotProduct::tileFacts() const {
  std::optional<int64_t> V = constantOf(TileX, Ctx);
  json Param = nullptr;
  if (const FunctionTemplateDecl *T = Kernel->getDescribedFunctionTemplate())
    if (const auto *R = dyn_cast<DeclRefExpr>(TileX))
      for (unsigned I = 0; I < T->getTemplateParameters()->size(); ++I)
        if (T->getTemplateParameters()->getParam(I) == R->getDecl())
          Param = I;
  return {{"tile", {{"expr", text(TileX)}, {"value", V ? json(*V) : json(nullptr)}}}, {"tile_param", Param}};
}

/// The member with every field, as the typed model writes it back.
static json facts(json Refusal) {
  return {{"refusal", std::move(Refusal)}, {"tile", nullptr},   {"tile_param", nullptr}, {"var", ""},
          {"var_type", ""},                {"init", ""},        {"bound", ""},          {"acc", ""}, {"acc_type", ""},
          {"row_operand", ""},             {"col_operand", ""}, {"row_type", ""},       {"col_type", ""},
          {"row_bytes", 0},                {"col_bytes", 0},    {"prelude", json::array()},
          {"row_terms", json::array()},    {"col_terms", json::array()}, {"after", json::array()}};
}

json DotProduct::run() {
  Body = dyn_cast_or_null<CompoundStmt>(Kernel ? Kernel->getBody() : nullptr);
  if (!Body || !directStatement(Body, F))
    return facts("it is not a direct statement of the kernel body");
  if (F->getBeginLoc().isMacroID() || F->getEndLoc().isMacroID())
    return facts("it is written through a macro");
  if (text(Body).find("kloop_") != std::string::npos)
    return facts("the kernel uses names that begin with kloop_, which the rewrite declares");
  std::set<const ParmVarDecl *> Roots;
  bool Ok = header() && update() && prelude() && after() && writes() && operands(Roots) && tile() && renames();
  std::set<const ParmVarDecl *> Unused;
  Ok = Ok && axes(Init, false, Unused).value_or(AxisX) == 0 && axes(Bound, false, Unused).value_or(AxisX) == 0;
  if (Ok && !LocalAxes.count(Acc))
    Ok = refuse("the accumulator '" + Acc->getNameAsString() + "' is not declared before the loop");
  if (!Ok && Refusal)
    return facts(*Refusal);
  if (!Ok)
    return facts("the loop's bounds '" + text(Init) + "', '" + text(Bound) +
                 "' are not the same for every thread of a block");
  if (std::optional<std::string> Why = staleRead(Roots))
    return facts(*Why);
  json Out = facts(nullptr);
  Out.update(tileFacts());
  PrintingPolicy PP = Ctx.getPrintingPolicy();
  Out["var"] = Var->getNameAsString();
  Out["var_type"] = Var->getType().getUnqualifiedType().getAsString(PP);
  Out["init"] = renamed(Init, false);
  Out["bound"] = renamed(Bound, false);
  Out["acc"] = Acc->getNameAsString();
  Out["acc_type"] = Acc->getType().getUnqualifiedType().getAsString(PP);
  Out["row_operand"] = renamed(Row, false);
  Out["col_operand"] = renamed(Col, false);
  Out["row_type"] = Row->getType().getUnqualifiedType().getAsString(PP);
  Out["col_type"] = Col->getType().getUnqualifiedType().getAsString(PP);
  Out["row_bytes"] = Ctx.getTypeSizeInChars(Row->getType()).getQuantity();
  Out["col_bytes"] = Ctx.getTypeSizeInChars(Col->getType()).getQuantity();
  Out["prelude"] = texts(Prelude, true);
  Out["row_terms"] = texts(RowTerms);
  Out["col_terms"] = texts(ColTerms);
  Out["after"] = texts(After, true);
  return Out;
}

json dotProductLoop(const ForStmt *F, const FunctionDecl *Kernel, ASTContext &Ctx) {
  return DotProduct(F, Kernel, Ctx).run();
}

} // namespace kloop
