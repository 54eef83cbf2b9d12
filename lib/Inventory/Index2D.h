//===- Index2D.h - Two-dimensional thread indexes of a kernel -----*- C++ -*-===//
//
// Private to kloopInventory. The facts rule coalesce-thread-index needs
// (docs/rules/coalesce-thread-index.md; docs/inventory.md, "index_2d"): the two
// index declarations `X = blockIdx.x * blockDim.x + threadIdx.x` and
// `Y = blockIdx.y * blockDim.y + threadIdx.y` of a kernel body, whether a global
// access strides memory with X (`p[X * ld + Y]`), and what would make swapping
// threadIdx.x and threadIdx.y change more than the order of the threads.
//
//===----------------------------------------------------------------------===//
#ifndef KLOOP_LIB_INVENTORY_INDEX2D_H
#define KLOOP_LIB_INVENTORY_INDEX2D_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "nlohmann/json.hpp"

namespace kloop {

/// The inventory's "index_2d" member of kernel \p Kernel: null when its body declares no pair of X and Y
/// indexes as above (direct statements, one integer variable each); else {"refusal", "x_var", "y_var",
/// "x_stmt", "y_stmt", "x_text", "y_text", "x_thread", "y_thread", "strided"} (docs/inventory.md).
nlohmann::json index2D(const clang::FunctionDecl *Kernel, clang::ASTContext &Ctx);

} // namespace kloop

#endif
