//===- SourceText.cpp - Source text and locations for rewrite facts -------===//
#include "SourceText.h"

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

/// The variable \p E names when it is `threadIdx` of a system header.
static bool isThreadIdxVar(const Expr *E, ASTContext &Ctx) {
  E = E->IgnoreParenImpCasts();
  if (const auto *O = dyn_cast<OpaqueValueExpr>(E)) // the base of a property reference
    E = O->getSourceExpr() ? O->getSourceExpr()->IgnoreParenImpCasts() : E;
  const auto *D = dyn_cast<DeclRefExpr>(E);
  const auto *V = D ? dyn_cast<VarDecl>(D->getDecl()) : nullptr;
  return V && V->getNameAsString() == "threadIdx" && Ctx.getSourceManager().isInSystemHeader(V->getLocation());
}

bool isThreadIdxX(const Expr *E, ASTContext &Ctx) {
  E = E->IgnoreParenImpCasts();
  if (const auto *PO = dyn_cast<PseudoObjectExpr>(E))
    E = PO->getSyntacticForm()->IgnoreParens();
  if (const auto *P = dyn_cast<MSPropertyRefExpr>(E))
    return P->getPropertyDecl()->getNameAsString() == "x" && isThreadIdxVar(P->getBaseExpr(), Ctx);
  if (const auto *M = dyn_cast<MemberExpr>(E))
    return M->getMemberDecl()->getNameAsString() == "x" && isThreadIdxVar(M->getBase(), Ctx);
  return false;
}

} // namespace kloop
