//===- SourceText.cpp - Source text and locations for rewrite facts -------===//
#include "SourceText.h"

#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

using namespace clang;

namespace kloop {

CharSourceRange fileRangeOf(SourceRange R, ASTContext &Ctx) {
  return Lexer::makeFileCharRange(CharSourceRange::getTokenRange(R), Ctx.getSourceManager(), Ctx.getLangOpts());
}

std::string sourceText(SourceRange R, ASTContext &Ctx) {
  CharSourceRange F = fileRangeOf(R, Ctx);
  if (F.isInvalid())
    return "";
  bool Invalid = false;
  StringRef T = Lexer::getSourceText(F, Ctx.getSourceManager(), Ctx.getLangOpts(), &Invalid);
  return Invalid ? std::string() : T.str();
}

unsigned lineOf(SourceLocation L, ASTContext &Ctx) { return Ctx.getSourceManager().getExpansionLineNumber(L); }

std::string atLine(SourceLocation L, ASTContext &Ctx) { return " at line " + std::to_string(lineOf(L, Ctx)); }

std::optional<unsigned> offsetIn(SourceLocation L, CharSourceRange Outer, ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  if (!L.isFileID() || Outer.isInvalid() || SM.getFileID(L) != SM.getFileID(Outer.getBegin()))
    return std::nullopt;
  unsigned At = SM.getFileOffset(L), Begin = SM.getFileOffset(Outer.getBegin()),
           End = SM.getFileOffset(Outer.getEnd());
  if (At < Begin || At >= End)
    return std::nullopt;
  return At - Begin;
}

std::string statementText(const Stmt *S, ASTContext &Ctx) {
  CharSourceRange F = fileRangeOf(S->getSourceRange(), Ctx);
  std::string T = sourceText(S->getSourceRange(), Ctx);
  if (T.empty() || T.back() == ';' || T.back() == '}')
    return T;
  const SourceManager &SM = Ctx.getSourceManager();
  StringRef After = SM.getBufferData(SM.getFileID(F.getEnd())).substr(SM.getFileOffset(F.getEnd()));
  return After.ltrim().starts_with(";") ? T + ";" : T;
}

/// The name of the variable \p E names when it is one of CUDA's builtin index variables of a system
/// header (threadIdx, blockIdx, blockDim, gridDim), else "".
static std::string builtinVar(const Expr *E, ASTContext &Ctx) {
  E = E->IgnoreParenImpCasts();
  if (const auto *O = dyn_cast<OpaqueValueExpr>(E)) // the base of a property reference
    E = O->getSourceExpr() ? O->getSourceExpr()->IgnoreParenImpCasts() : E;
  const auto *D = dyn_cast<DeclRefExpr>(E);
  const auto *V = D ? dyn_cast<VarDecl>(D->getDecl()) : nullptr;
  if (!V || !Ctx.getSourceManager().isInSystemHeader(V->getLocation()))
    return "";
  std::string N = V->getNameAsString();
  return N == "threadIdx" || N == "blockIdx" || N == "blockDim" || N == "gridDim" ? N : "";
}

std::string builtinIndex(const Expr *E, ASTContext &Ctx) {
  E = E->IgnoreParenImpCasts();
  if (const auto *PO = dyn_cast<PseudoObjectExpr>(E))
    E = PO->getSyntacticForm()->IgnoreParens();
  std::string Var, Member;
  if (const auto *P = dyn_cast<MSPropertyRefExpr>(E))
    Var = builtinVar(P->getBaseExpr(), Ctx), Member = P->getPropertyDecl()->getNameAsString();
  else if (const auto *M = dyn_cast<MemberExpr>(E))
    Var = builtinVar(M->getBase(), Ctx), Member = M->getMemberDecl()->getNameAsString();
  return Var.empty() || Member.empty() ? "" : Var + "." + Member;
}

const VarDecl *referencedVar(const Expr *E) {
  const auto *R = dyn_cast_or_null<DeclRefExpr>(E ? E->IgnoreParenImpCasts() : nullptr);
  return R ? dyn_cast<VarDecl>(R->getDecl()) : nullptr;
}

bool isIntConstant(const Expr *E, ASTContext &Ctx, int64_t Want) {
  Expr::EvalResult R;
  return E && !E->isValueDependent() && E->EvaluateAsInt(R, Ctx) && R.Val.getInt() == Want;
}

bool isThreadIdxX(const Expr *E, ASTContext &Ctx) { return builtinIndex(E, Ctx) == "threadIdx.x"; }

const Stmt *directStatement(const CompoundStmt *Body, const Stmt *S) {
  for (const Stmt *D : Body->body()) {
    const auto *A = dyn_cast<AttributedStmt>(D);
    if (D == S || (A && A->getSubStmt() == S))
      return D;
  }
  return nullptr;
}

std::vector<const FunctionDecl *> instancesOf(const FunctionDecl *Kernel) {
  std::vector<const FunctionDecl *> Out;
  if (const FunctionTemplateDecl *T = Kernel->getDescribedFunctionTemplate())
    for (const FunctionDecl *S : T->specializations())
      if (S->getBody() && S->getTemplateSpecializationKind() != TSK_ExplicitSpecialization)
        Out.push_back(S);
  if (Out.empty())
    Out.push_back(Kernel);
  return Out;
}

} // namespace kloop
