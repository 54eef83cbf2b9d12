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

/// The variable \p E names, past parentheses, or null.
const VarDecl *namedVar(const Expr *E) {
  const auto *DR = dyn_cast<DeclRefExpr>(E->IgnoreParens());
  return DR ? dyn_cast<VarDecl>(DR->getDecl()) : nullptr;
}

/// The variables \p Body writes other than by assignment: whose address it takes (`&p`: a pointer read
/// from one may have been written through that address, `memcpy(&p, &o, 8)`, `*(uintptr_t *)&p = a`)
/// and the outputs of its inline asm (`asm("mov.b64 %0, %1;" : "=l"(p) : "l"(a))`).
std::set<const VarDecl *> addressTaken(const Stmt *Body) {
  std::set<const VarDecl *> Out;
  for (const UnaryOperator *U : findAll<UnaryOperator>(Body))
    if (const VarDecl *V = U->getOpcode() == UO_AddrOf ? namedVar(U->getSubExpr()) : nullptr)
      Out.insert(V);
  for (const GCCAsmStmt *A : findAll<GCCAsmStmt>(Body))
    for (unsigned I = 0; I < A->getNumOutputs(); ++I)
      if (const VarDecl *V = namedVar(A->getOutputExpr(I)))
        Out.insert(V);
  return Out;
}

/// Inline asm that may write memory: a "memory" clobber, or a PTX store, atomic, reduction or copy in
/// its text (`st.global`, `atom.`, `red.`, `cp.async`).
bool asmWritesMemory(const GCCAsmStmt &A) {
  for (unsigned I = 0; I < A.getNumClobbers(); ++I)
    if (A.getClobber(I) == "memory")
      return true;
  std::string Text = A.getAsmString();
  for (StringRef Op : {"st.", "atom.", "red.", "cp."})
    if (StringRef(Text).contains(Op))
      return true;
  return false;
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
      if (Seen.insert(F).second)
        Work.push_back(F);
    while (!Work.empty() && Found.empty()) {
      In = Work.back();
      Work.pop_back();
      Escaped = addressTaken(In->getBody());
      TraverseStmt(const_cast<Stmt *>(In->getBody()));
    }
    return Found;
  }

  bool shouldVisitTemplateInstantiations() const { return false; }
  /// Default arguments and member initializers are code of the call or construction that uses them.
  bool shouldVisitImplicitCode() const { return true; }

  bool VisitCastExpr(CastExpr *E) {
    if (E->getCastKind() == CK_LValueToRValue && E->getType()->isPointerType() && !isAutomatic(E->getSubExpr()))
      return found(E->getSubExpr(), "a pointer read from memory");
    if (E->getCastKind() == CK_IntegralToPointer)
      return found(E, "a pointer made from an integer");
    if (E->getCastKind() == CK_LValueToRValueBitCast && E->getType()->isPointerType())
      return found(E, "a pointer made from other bytes (a bit cast)");
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
    const FunctionDecl *F = C->getDirectCallee();
    if (!F && !C->isTypeDependent() && !C->getCallee()->isTypeDependent() && !isa<CXXPseudoDestructorExpr>(C->getCallee()))
      return found(C, "a call through a function pointer, whose callee is not read");
    if (const auto *M = dyn_cast_or_null<CXXMethodDecl>(F);
        M && M->isVirtual() && !M->hasAttr<FinalAttr>() && !M->getParent()->hasAttr<FinalAttr>())
      return found(C, "a virtual call, whose overrides are not read");
    return F ? enqueue(C, F) : true;
  }
  bool VisitCXXConstructExpr(CXXConstructExpr *C) { return enqueue(C, C->getConstructor()); }
  /// A local object's destructor runs at the end of its scope, a temporary's at the end of its expression.
  bool VisitVarDecl(VarDecl *V) {
    const CXXRecordDecl *R = V->hasLocalStorage() ? V->getType()->getAsCXXRecordDecl() : nullptr;
    const CXXDestructorDecl *D = R && R->hasDefinition() ? R->getDestructor() : nullptr;
    return D && !D->isTrivial() ? enqueue(nullptr, D, V) : true;
  }
  bool VisitCXXBindTemporaryExpr(CXXBindTemporaryExpr *T) {
    const CXXDestructorDecl *D = T->getTemporary()->getDestructor();
    return D && !D->isTrivial() ? enqueue(T, D) : true;
  }
  bool VisitGCCAsmStmt(GCCAsmStmt *A) {
    if (asmWritesMemory(*A))
      return foundAt(A->getAsmLoc(), "inline asm", "inline asm that may write memory, which is not read");
    return true;
  }

private:
  ASTContext &Ctx;
  const FunctionDecl *In = nullptr;
  std::set<const VarDecl *> Escaped; ///< addressTaken of In's body
  std::vector<const FunctionDecl *> Work;
  std::set<const FunctionDecl *> Seen;
  std::string Found;

  /// A variable of the function itself, by value, whose address it never takes: reading a pointer from
  /// it reads what the function was passed or computed (a reference variable reads memory elsewhere).
  bool isAutomatic(const Expr *E) const {
    const auto *DR = dyn_cast<DeclRefExpr>(E->IgnoreParens());
    const auto *V = DR ? dyn_cast<VarDecl>(DR->getDecl()) : nullptr;
    return V && V->hasLocalStorage() && !V->getType()->isReferenceType() && !Escaped.count(V);
  }

  /// \p F's definition, to walk once, unless it lies in a system header (the CUDA and C++ libraries:
  /// intrinsics and math read only what their arguments point to). A function of the project without a
  /// definition here (another unit's, `-rdc`) is a way in, named at \p At (\p Var for a destructor).
  bool enqueue(const Expr *At, const FunctionDecl *F, const VarDecl *Var = nullptr) {
    const FunctionDecl *Def = nullptr;
    const SourceManager &SM = Ctx.getSourceManager();
    if (!F || F->getBuiltinID() || SM.isInSystemHeader(F->getLocation()))
      return true;
    if (!F->hasBody(Def) || !Def) {
      std::string Why = "a call of '" + F->getQualifiedNameAsString() + "', whose body is not in this translation unit";
      return At ? found(At, Why) : foundAt(Var->getLocation(), Var->getNameAsString(), Why);
    }
    if (!SM.isInSystemHeader(Def->getLocation()) && Seen.insert(Def).second)
      Work.push_back(Def);
    return true;
  }

  bool found(const Expr *E, const std::string &Why) {
    return foundAt(E->getBeginLoc(), sourceText(E->getSourceRange(), Ctx), Why);
  }

  bool foundAt(SourceLocation At, const std::string &Text, const std::string &Why) {
    const SourceManager &SM = Ctx.getSourceManager();
    SourceLocation L = SM.getExpansionLoc(At);
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
