//===- AtomicTargets.h - Global atomics of a kernel -------------*- C++ -*-===//
//
// Private to kloopInventory. The facts rule privatize-atomics needs
// (docs/rules/privatize-atomics.md; docs/inventory.md, "atomic_targets"):
// each pointer parameter of a kernel that the kernel's own body updates with
// an atomic function (`atomicAdd(&bins[i], v)` or `atomicAdd(bins + i, v)`),
// the atomics with the bound of their index, whether anything else uses the
// parameter, and the body's text a rewrite needs.
//
//===----------------------------------------------------------------------===//
#ifndef KLOOP_LIB_INVENTORY_ATOMICTARGETS_H
#define KLOOP_LIB_INVENTORY_ATOMICTARGETS_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "nlohmann/json.hpp"

#include <string>

namespace kloop {

/// The inventory's "atomic_targets" array of kernel \p Kernel (ID \p KernelID):
/// one object per pointer parameter that an atomic function in the kernel's
/// body updates (docs/inventory.md lists every member).
nlohmann::json atomicTargets(const clang::FunctionDecl *Kernel, const std::string &KernelID, clang::ASTContext &Ctx);

/// The name of the function \p C calls: its callee's, or in a template's pattern that of the overload
/// set the call resolves only when instantiated (`atomicAddX(&p[i], (T)v)`); "" for an indirect call.
std::string calleeName(const clang::CallExpr *C);

} // namespace kloop

#endif
