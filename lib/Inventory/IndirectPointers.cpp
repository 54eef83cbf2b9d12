//===- IndirectPointers.cpp - Memory a kernel reaches past its parameters ---===//
//
// `__restrict__` on a parameter promises that what it points to is reached
// through no other pointer. kloop's alias check reads the pointer arguments of
// each launch; it cannot see a pointer the kernel finds elsewhere: `o.p` of a
// struct argument (`k<<<...>>>(buf, Out{buf})`), `outs[0]` of a pointer table,
// a `__device__` pointer. nvcc then reads through the restricted pointer with
// the non-coherent cache and folds its loads across the other pointer's stores
// (a break test on ggml, docs/results.md). This walk finds the first such way
// in, in the kernel and in every function it calls directly, transitively.
//
//===----------------------------------------------------------------------===//
#include "IndirectPointers.h"
#include "SourceText.h"

#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/Support/Path.h"

#include <set>
#include <vector>

using namespace clang;
using nlohmann::json;

namespace kloop {

namespace {

/// A variable of the function itself, by value: reading a pointer from it reads what the function
/// was passed or computed (a reference variable reads memory elsewhere).
bool isAutomatic(const Expr *E) {
  const auto *DR = dyn_cast<DeclRefExpr>(E->IgnoreParens());
  const auto *V = DR ? dyn_cast<VarDecl>(DR->getDecl()) : nullptr;
  return V && V->hasLocalStorage() && !V->getType()->isReferenceType();
}

/// A variable in global device memory that a kernel may write: `__device__` (a static local of device
/// code included) or managed, neither `__constant__`, `__shared__` nor const.
bool isWritableDeviceGlobal(const VarDecl &V) {
  return V.hasGlobalStorage() && (V.hasAttr<CUDADeviceAttr>() || V.hasAttr<HIPManagedAttr>()) &&
         !V.hasAttr<CUDAConstantAttr>() && !V.hasAttr<CUDASharedAttr>() && !V.getType().isConstQualified();
}

class Walk : public RecursiveASTVisitor<Walk> {
public:
  explicit Walk(ASTContext &Ctx) : Ctx(Ctx) {}

  /// The first way in, over \p Roots and the functions they call; "" when there is none.
  std::string run(const std::vector<const FunctionDecl *> &Roots) {
    for (const FunctionDecl *F : Roots)
      enqueue(F);
    while (!Work.empty() && Found.empty()) {
      In = Work.back();
      Work.pop_back();
      TraverseStmt(const_cast<Stmt *>(In->getBody()));
    }
    return Found;
  }

  bool shouldVisitTemplateInstantiations() const { return false; }

  bool VisitCastExpr(CastExpr *E) {
    if (E->getCastKind() == CK_LValueToRValue && E->getType()->isPointerType() && !isAutomatic(E->getSubExpr()))
      return found(E->getSubExpr(), "a pointer read from memory");
    if (E->getCastKind() == CK_IntegralToPointer)
      return found(E, "a pointer made from an integer");
    return true;
  }
  bool VisitDeclRefExpr(DeclRefExpr *E) {
    const auto *V = dyn_cast<VarDecl>(E->getDecl());
    if (V && isWritableDeviceGlobal(*V))
      return found(E, "the __device__ variable '" + V->getNameAsString() +
                          "', whose address a pointer argument may hold (cudaGetSymbolAddress)");
    return true;
  }
  bool VisitCallExpr(CallExpr *C) {
    if (const FunctionDecl *F = C->getDirectCallee())
      enqueue(F);
    else if (!C->isTypeDependent() && !C->getCallee()->isTypeDependent() && !isa<CXXPseudoDestructorExpr>(C->getCallee()))
      return found(C, "a call through a function pointer, whose callee is not read");
    return true;
  }
  bool VisitCXXConstructExpr(CXXConstructExpr *C) {
    enqueue(C->getConstructor());
    return true;
  }

private:
  ASTContext &Ctx;
  const FunctionDecl *In = nullptr;
  std::vector<const FunctionDecl *> Work;
  std::set<const FunctionDecl *> Seen;
  std::string Found;

  /// \p F's definition, to walk once, unless it lies in a system header (the CUDA and C++ libraries:
  /// intrinsics and math read only what their arguments point to).
  void enqueue(const FunctionDecl *F) {
    const FunctionDecl *Def = nullptr;
    if (!F || !F->hasBody(Def) || !Def || Ctx.getSourceManager().isInSystemHeader(Def->getLocation()))
      return;
    if (Seen.insert(Def).second)
      Work.push_back(Def);
  }

  bool found(const Expr *E, const std::string &Why) {
    const SourceManager &SM = Ctx.getSourceManager();
    SourceLocation L = SM.getExpansionLoc(E->getBeginLoc());
    std::string Text = sourceText(E->getSourceRange(), Ctx);
    Found = (Text.empty() ? std::string("an expression in a macro") : "`" + Text + "`") + " (" +
            llvm::sys::path::filename(SM.getFilename(L)).str() + ":" + std::to_string(SM.getExpansionLineNumber(L)) +
            ", in '" + In->getNameAsString() + "'): " + Why;
    return false;
  }
};

} // namespace

json indirectPointer(const FunctionDecl *Kernel, ASTContext &Ctx) {
  if (!Kernel->getBody())
    return nullptr;
  std::string Found = Walk(Ctx).run(instancesOf(Kernel));
  return Found.empty() ? json(nullptr) : json(Found);
}

} // namespace kloop
