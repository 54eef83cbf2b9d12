//===- SharedArrayUses.cpp - How a kernel uses a __shared__ array ---------===//
#include "SharedArrayUses.h"
#include "SourceText.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

#include <optional>
#include <string>
#include <vector>

using namespace clang;
using nlohmann::json;

namespace kloop {


/// Why the use \p Ref (not fully subscripted, or an element whose address is taken) sees memory.
static std::string escapeReason(const Stmt *Parent, ASTContext &Ctx) {
  if (!Parent)
    return "used outside an expression";
  if (isa<ExplicitCastExpr>(Parent))
    return "cast to a pointer" + atLine(Parent->getBeginLoc(), Ctx);
  if (const auto *CE = dyn_cast<CallExpr>(Parent)) {
    const FunctionDecl *F = CE->getDirectCallee();
    return "passed to '" + (F ? F->getNameAsString() : std::string("a function")) + "' as a flat pointer" +
           atLine(Parent->getBeginLoc(), Ctx);
  }
  if (isa<UnaryExprOrTypeTraitExpr>(Parent))
    return "its size is taken (sizeof)" + atLine(Parent->getBeginLoc(), Ctx);
  if (const auto *U = dyn_cast<UnaryOperator>(Parent); U && U->getOpcode() == UO_AddrOf)
    return "its address is taken" + atLine(Parent->getBeginLoc(), Ctx);
  return "used as a pointer" + atLine(Parent->getBeginLoc(), Ctx);
}

json sharedArrayUses(const VarDecl *V, const FunctionDecl *Kernel, ASTContext &Ctx) {
  json Out = {{"stmt", nullptr}, {"decl_text", nullptr}, {"escapes", nullptr}, {"column_access", nullptr}};
  const auto *Body = dyn_cast_or_null<CompoundStmt>(Kernel ? Kernel->getBody() : nullptr);
  if (!Body)
    return Out;
  unsigned Index = 0;
  for (const Stmt *S : Body->body()) {
    ++Index;
    const auto *DS = dyn_cast<DeclStmt>(S);
    if (DS && DS->isSingleDecl() && DS->getSingleDecl() == V) {
      Out["stmt"] = Index;
      Out["decl_text"] = sourceText(DS->getSourceRange(), Ctx);
    }
  }
  unsigned Dims = 0;
  for (QualType T = V->getType(); const ArrayType *A = Ctx.getAsArrayType(T); T = A->getElementType())
    ++Dims;
  for (const DeclRefExpr *Ref : findAll<DeclRefExpr>(Body)) {
    if (Ref->getDecl() != V)
      continue;
    // Climb the subscripts whose base is this reference: tile[i][j] is two.
    std::vector<const Expr *> Indexes;
    const Stmt *Child = nullptr;
    const Stmt *Top = Ref;
    const Stmt *P = semanticParent(Ref, Child, Ctx);
    while (const auto *AS = dyn_cast_or_null<ArraySubscriptExpr>(P)) {
      if (AS->getBase()->IgnoreParenImpCasts() != Top && AS->getBase() != Child)
        break;
      Indexes.push_back(AS->getIdx());
      Top = AS;
      P = semanticParent(AS, Child, Ctx);
    }
    bool AddressOfElement = Indexes.size() == Dims && P && isa<UnaryOperator>(P) &&
                            cast<UnaryOperator>(P)->getOpcode() == UO_AddrOf;
    if ((Indexes.size() < Dims || AddressOfElement) && Out["escapes"].is_null()) {
      Out["escapes"] = Indexes.size() < Dims && !Indexes.empty()
                           ? "used with fewer subscripts than dimensions" + atLine(Top->getBeginLoc(), Ctx)
                           : escapeReason(P, Ctx);
      if (AddressOfElement)
        Out["escapes"] = "an element's address is taken" + atLine(P->getBeginLoc(), Ctx);
    }
    if (Indexes.size() != Dims || Dims < 2 || !Out["column_access"].is_null())
      continue;
    auto UsesTidX = [&](const Expr *E) { return sourceText(E->getSourceRange(), Ctx).find("threadIdx.x") != std::string::npos; };
    bool Inner = false;
    for (size_t I = 0; I + 1 < Indexes.size(); ++I) // innermost subscript first: the last is the last dimension's
      Inner |= UsesTidX(Indexes[I]);
    if (Inner && !UsesTidX(Indexes.back()))
      Out["column_access"] = sourceText(Top->getSourceRange(), Ctx) + atLine(Top->getBeginLoc(), Ctx);
  }
  return Out;
}

} // namespace kloop
