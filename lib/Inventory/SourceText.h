//===- SourceText.h - Source text and locations for rewrite facts -*- C++ -*-===//
//
// Private to kloopInventory. What the rewrite-fact analyses (SharedArrayUses,
// TreeReductions, AtomicTargets) need of the source: the text of a node as
// written in its file, its line, offsets of one location inside a range, and
// whether an expression is `threadIdx.x`.
//
//===----------------------------------------------------------------------===//
#ifndef KLOOP_LIB_INVENTORY_SOURCETEXT_H
#define KLOOP_LIB_INVENTORY_SOURCETEXT_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceLocation.h"

#include <optional>
#include <string>
#include <vector>

namespace kloop {

/// The file range of the tokens of \p R (invalid when a macro hides it).
clang::CharSourceRange fileRangeOf(clang::SourceRange R, clang::ASTContext &Ctx);

/// The text of \p R as written in its file ("" when a macro hides it).
std::string sourceText(clang::SourceRange R, clang::ASTContext &Ctx);

/// " at line N" for \p L (its expansion line).
std::string atLine(clang::SourceLocation L, clang::ASTContext &Ctx);

/// \p L's expansion line, 1-based.
unsigned lineOf(clang::SourceLocation L, clang::ASTContext &Ctx);

/// The byte offset of \p L from the start of \p Outer, when \p L is a file
/// location (not in a macro body) inside \p Outer's file range; else nullopt.
std::optional<unsigned> offsetIn(clang::SourceLocation L, clang::CharSourceRange Outer, clang::ASTContext &Ctx);

/// The text of statement \p S with the `;` that ends it (expression and
/// return statements' ranges stop before it), "" when a macro hides it.
std::string statementText(const clang::Stmt *S, clang::ASTContext &Ctx);

/// The variable \p E names, past parentheses and implicit casts (`v`), or null (also for null \p E).
const clang::VarDecl *referencedVar(const clang::Expr *E);

/// True when \p E is an integer constant equal to \p Want (null and value-dependent \p E are not).
bool isIntConstant(const clang::Expr *E, clang::ASTContext &Ctx, int64_t Want);

/// True when \p E, past parentheses and implicit casts, is `threadIdx.x` of
/// the CUDA headers (a system header's `threadIdx`, through its property or
/// a plain member).
bool isThreadIdxX(const clang::Expr *E, clang::ASTContext &Ctx);

/// "threadIdx.x", "blockIdx.y", "blockDim.z", "gridDim.x", ... when \p E, past
/// parentheses and implicit casts, reads a component of one of CUDA's builtin
/// index variables (a system header's, through its property or a plain
/// member); else "".
std::string builtinIndex(const clang::Expr *E, clang::ASTContext &Ctx);

/// The direct statement of \p Body that is \p S or that \p S's attributes
/// (`#pragma unroll`) wrap, or nullptr.
const clang::Stmt *directStatement(const clang::CompoundStmt *Body, const clang::Stmt *S);

/// The functions to read for kernel \p Kernel: a template's instantiations in this translation unit (where
/// the types of dependent expressions are known; they keep the template's source locations), explicit
/// specializations aside, else the kernel itself.
std::vector<const clang::FunctionDecl *> instancesOf(const clang::FunctionDecl *Kernel);

/// Every node of type \p Node below \p S (\p S included), in source order; template
/// instantiations are not visited (the analyses read the code as written).
template <typename Node> std::vector<const Node *> findAll(const clang::Stmt *S) {
  struct Finder : clang::RecursiveASTVisitor<Finder> {
    bool shouldVisitTemplateInstantiations() const { return false; }
    bool VisitStmt(clang::Stmt *X) {
      if (auto *N = llvm::dyn_cast<Node>(X))
        Found.push_back(N);
      return true;
    }
    std::vector<const Node *> Found;
  } F;
  F.TraverseStmt(const_cast<clang::Stmt *>(S));
  return F.Found;
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
