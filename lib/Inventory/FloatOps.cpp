//===- FloatOps.cpp - Single-precision operations with fast intrinsics ----===//
//
// A call of one of the float math functions of FastMathFunctions (declared in a
// system header: the CUDA math API) or a division whose type is float, written in
// the kernel's body (not through a macro). A template kernel is read in its
// instantiations (where a dependent expression has a type): an operation is listed
// when it is one in every instantiation the translation unit makes.
//
//===----------------------------------------------------------------------===//
#include "FloatOps.h"
#include "SourceText.h"

#include "clang/AST/Expr.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

#include <map>

using namespace clang;
using nlohmann::json;

namespace kloop {

/// The float math functions the CUDA C Programming Guide lists with an intrinsic
/// ("Intrinsic Functions"): the rule fast-math decides which it may replace.
static constexpr const char *FastMathFunctions[] = {"expf", "exp10f", "logf", "log2f", "log10f",
                                                     "sinf", "cosf",   "tanf", "powf"};

static bool isFloat(QualType T) { return !T.isNull() && T->isSpecificBuiltinType(BuiltinType::Float); }

/// The name of \p C's callee when it is one of FastMathFunctions from a system header, else "".
static std::string mathFunction(const CallExpr *C, ASTContext &Ctx) {
  const FunctionDecl *F = C->getDirectCallee();
  if (!F || !F->getIdentifier() || !Ctx.getSourceManager().isInSystemHeader(F->getLocation()))
    return "";
  for (const char *Name : FastMathFunctions)
    if (F->getName() == Name && isFloat(F->getReturnType()))
      return Name;
  return "";
}

namespace {
/// Offsets in the kernel body's text.
struct Place {
  CharSourceRange Body;
  ASTContext &Ctx;
  /// The op's [begin, end) offsets and its member (with the offset of \p Split), or nullopt when a macro
  /// hides one.
  std::optional<std::pair<std::pair<unsigned, unsigned>, json>> op(const std::string &Function, const Expr *E, SourceLocation Split, bool SplitAfterToken) {
    const SourceManager &SM = Ctx.getSourceManager();
    SourceLocation EndTok = Lexer::getLocForEndOfToken(E->getEndLoc(), 0, SM, Ctx.getLangOpts());
    if (SplitAfterToken)
      Split = Lexer::getLocForEndOfToken(Split, 0, SM, Ctx.getLangOpts());
    std::optional<unsigned> B = offsetIn(E->getBeginLoc(), Body, Ctx), En = offsetIn(EndTok, Body, Ctx),
                            S = offsetIn(Split, Body, Ctx);
    if (!B || !En || !S || E->getBeginLoc().isMacroID() || E->getEndLoc().isMacroID())
      return std::nullopt;
    return std::make_pair(std::make_pair(*B, *En), json{{"function", Function}, {"line", lineOf(E->getBeginLoc(), Ctx)},
                                   {"begin", *B}, {"end", *En}, {"split", *S}});
  }
};
} // namespace

/// The operations of body \p Body (of the kernel or of one of its instantiations), keyed by their begin
/// and end offsets in the kernel's text.
static std::map<std::pair<unsigned, unsigned>, json> opsOf(const Stmt *Body, Place &P) {
  std::map<std::pair<unsigned, unsigned>, json> Out;
  auto Add = [&](std::optional<std::pair<std::pair<unsigned, unsigned>, json>> Op) {
    if (Op)
      Out[Op->first] = std::move(Op->second);
  };
  for (const CallExpr *C : findAll<CallExpr>(Body))
    if (std::string F = mathFunction(C, P.Ctx); !F.empty())
      Add(P.op(F, C, C->getCallee()->getEndLoc(), /*SplitAfterToken=*/true));
  for (const BinaryOperator *B : findAll<BinaryOperator>(Body))
    if (B->getOpcode() == BO_Div && !B->isTypeDependent() && isFloat(B->getType()))
      Add(P.op("/", B, B->getOperatorLoc(), /*SplitAfterToken=*/false));
  return Out;
}

json floatOps(const FunctionDecl *Kernel, ASTContext &Ctx) {
  const Stmt *Body = Kernel->getBody();
  json Out = {{"body_text", nullptr}, {"ops", json::array()}};
  if (!Body)
    return Out;
  Place P{fileRangeOf(Body->getSourceRange(), Ctx), Ctx};
  if (P.Body.isInvalid())
    return Out;
  Out["body_text"] = sourceText(Body->getSourceRange(), Ctx);
  // An operation of a template counts when it is one in every instantiation.
  std::optional<std::map<std::pair<unsigned, unsigned>, json>> Common;
  for (const FunctionDecl *F : instancesOf(Kernel)) {
    std::map<std::pair<unsigned, unsigned>, json> Ops = opsOf(F->getBody(), P);
    if (Common)
      for (auto It = Common->begin(); It != Common->end();)
        It = Ops.count(It->first) && Ops[It->first] == It->second ? std::next(It) : Common->erase(It);
    else
      Common = std::move(Ops);
  }
  for (auto &O : *Common)
    Out["ops"].push_back(std::move(O.second));
  return Out;
}

} // namespace kloop
