//===- ASTText.h - Source text and parents of AST nodes ---------*- C++ -*-===//
//
// Private to kloopInventory: what the analyses that carry AST facts into the
// inventory (SharedArrayUses.cpp, ElementwiseLoops.cpp) share: a node's text
// as written, its line, and its parent past parentheses and implicit casts.
//
//===----------------------------------------------------------------------===//
#ifndef KLOOP_LIB_INVENTORY_ASTTEXT_H
#define KLOOP_LIB_INVENTORY_ASTTEXT_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

#include <string>
#include <vector>

namespace kloop {

/// The text of \p R as written (a macro's expansion: the text of the macro use).
inline std::string sourceText(clang::SourceRange R, clang::ASTContext &Ctx) {
  clang::CharSourceRange C = clang::Lexer::makeFileCharRange(clang::CharSourceRange::getTokenRange(R),
                                                             Ctx.getSourceManager(), Ctx.getLangOpts());
  return clang::Lexer::getSourceText(C, Ctx.getSourceManager(), Ctx.getLangOpts()).str();
}

/// " at line N", N the line where \p S begins (the expansion's line inside a macro).
inline std::string lineOf(const clang::Stmt *S, clang::ASTContext &Ctx) {
  return " at line " + std::to_string(Ctx.getSourceManager().getExpansionLineNumber(S->getBeginLoc()));
}

/// The first parent of \p S that is a statement, or nullptr.
inline const clang::Stmt *parentOf(const clang::Stmt *S, clang::ASTContext &Ctx) {
  clang::DynTypedNodeList P = Ctx.getParents(*S);
  return P.empty() ? nullptr : P[0].get<clang::Stmt>();
}

/// The parent of \p S past parentheses and implicit casts, setting \p Child to the node below it.
inline const clang::Stmt *semanticParent(const clang::Stmt *S, const clang::Stmt *&Child, clang::ASTContext &Ctx) {
  Child = S;
  const clang::Stmt *P = parentOf(S, Ctx);
  while (P && (clang::isa<clang::ParenExpr>(P) || clang::isa<clang::ImplicitCastExpr>(P))) {
    Child = P;
    P = parentOf(P, Ctx);
  }
  return P;
}

/// Every reference to one variable in a body.
class RefFinder : public clang::RecursiveASTVisitor<RefFinder> {
public:
  explicit RefFinder(const clang::VarDecl *V) : V(V) {}
  bool VisitDeclRefExpr(clang::DeclRefExpr *E) {
    if (E->getDecl() == V)
      Refs.push_back(E);
    return true;
  }
  const clang::VarDecl *V;
  std::vector<const clang::DeclRefExpr *> Refs;
};

} // namespace kloop

#endif
