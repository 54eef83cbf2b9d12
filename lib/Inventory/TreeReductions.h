//===- TreeReductions.h - Shared-memory tree reductions of a kernel -*- C++ -*-===//
//
// Private to kloopInventory. The facts rule warp-shuffle-reductions needs
// (docs/rules/warp-shuffle-reductions.md; docs/inventory.md,
// "tree_reductions"): every `for` loop with a `__syncthreads()` in its body,
// in a kernel or in a device function the kernel calls, and whether it is the
// halving tree `for (int s = START; s > 0; s >>= 1) { if (tid < s) a[tid] op=
// a[tid + s]; __syncthreads(); }` with tid = threadIdx.x; with the text a
// rewrite needs.
//
//===----------------------------------------------------------------------===//
#ifndef KLOOP_LIB_INVENTORY_TREEREDUCTIONS_H
#define KLOOP_LIB_INVENTORY_TREEREDUCTIONS_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "nlohmann/json.hpp"

#include <optional>
#include <string>

namespace kloop {

/// What the form check learns of a loop that is the halving tree.
struct HalvingTree {
  const clang::VarDecl *Stride = nullptr; ///< s
  const clang::Expr *Thread = nullptr;    ///< T of `if (T < s)` (not yet proved threadIdx.x)
  const clang::Expr *Array = nullptr;     ///< A of `A[T]`
  /// "+", "*", "&", "|", "^", or the function "fmaxf", "fminf", "fmax", "fmin", "max", "min"; A[T]'s type.
  std::string Op, ElementType;
};

/// Why \p L is not `for (int s = START; s > 0; s >>= 1) { if (T < s) A[T] op= A[T + s]; __syncthreads(); }`
/// (the first part that differs), or nullopt with \p T filled.
std::optional<std::string> halvingTreeProblem(const clang::ForStmt *L, HalvingTree &T, clang::ASTContext &Ctx);

/// The function \p C names (a template's pattern), also through an unresolved (dependent) call; null
/// for an indirect call.
const clang::FunctionDecl *calleePattern(const clang::CallExpr *C);

/// The function \p C certainly calls, as calleePattern gives it, or null when that is not known from the
/// code as written: an unresolved (dependent) call with more than one candidate, or whose arguments may
/// bring others by argument-dependent lookup (anything but builtin types and pointers to or arrays of
/// them), or a function template with an explicit specialization (which may be the one instantiated).
const clang::FunctionDecl *soleCallee(const clang::CallExpr *C);

/// Whether \p S is a call of `__syncthreads()`.
bool isSyncthreads(const clang::Stmt *S);

/// Whether every use of parameter \p P in the body of \p Fn only reads it.
bool onlyRead(const clang::ParmVarDecl *P, const clang::FunctionDecl *Fn, clang::ASTContext &Ctx);

/// The tree-reduction candidates of kernel \p Kernel (ID \p KernelID), as the
/// inventory's "tree_reductions" array: one object per `for` loop with a
/// `__syncthreads()` in its body, in the kernel's body or in the body of a
/// device function the kernel calls directly (its template pattern), with
/// "form" null when the loop is the recognised tree and else why not
/// (docs/inventory.md lists every member).
nlohmann::json treeReductions(const clang::FunctionDecl *Kernel, const std::string &KernelID,
                              clang::ASTContext &Ctx);

} // namespace kloop

#endif
