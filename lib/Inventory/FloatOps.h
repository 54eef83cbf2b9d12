//===- FloatOps.h - Single-precision operations with fast intrinsics -*- C++ -*-===//
//
// Private to kloopInventory. The facts rule fast-math needs (docs/rules/fast-math.md;
// docs/inventory.md, "float_ops"): the calls of single-precision math functions that
// CUDA has a faster, less precise intrinsic for (expf -> __expf, ...) and the float
// divisions (-> __fdividef) written in a kernel's own body, with their place in the
// body's text.
//
//===----------------------------------------------------------------------===//
#ifndef KLOOP_LIB_INVENTORY_FLOATOPS_H
#define KLOOP_LIB_INVENTORY_FLOATOPS_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "nlohmann/json.hpp"

namespace kloop {

/// The inventory's "float_ops" object of kernel \p Kernel: {"body_text": the body
/// as written (null when a macro hides it), "ops": [{"function", "line", "begin",
/// "end", "split"}]} (docs/inventory.md lists every member).
nlohmann::json floatOps(const clang::FunctionDecl *Kernel, clang::ASTContext &Ctx);

} // namespace kloop

#endif
