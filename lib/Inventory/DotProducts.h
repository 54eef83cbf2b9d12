//===- DotProducts.h - Dot-product loop nests of a kernel -------*- C++ -*-===//
//
// Private to kloopInventory. The facts the rules tile-shared-memory and
// tile-shared-memory-rb4 need about a `for` loop of a kernel (docs/inventory.md,
// "dot_product"; docs/rules/tile-shared-memory.md): the naive matmul pattern,
// one thread per output of a 2-D block, an early return for threads out of
// range, a loop `acc += X * Y` over k with X read by thread row and k only and
// Y by thread column and k only, and the statements that store acc.
//
//===----------------------------------------------------------------------===//
#ifndef KLOOP_LIB_INVENTORY_DOTPRODUCTS_H
#define KLOOP_LIB_INVENTORY_DOTPRODUCTS_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Stmt.h"
#include "nlohmann/json.hpp"

namespace kloop {

/// The "dot_product" member of loop \p F of kernel \p Kernel (kloop::inv::DotProduct):
/// "refusal" null when the kernel body is, in order,
///   - declarations of locals (never written afterwards, the accumulator
///     aside) and early returns `if (C) return;`, all free of memory reads,
///     calls and divisions by a variable;
///   - \p F, `for (int k = A; k < B; ++k) acc += X * Y;` with A and B the same
///     for every thread of a block, X reading only threadIdx.y, k and
///     block-uniform values (locals are followed to their initializers), Y
///     only threadIdx.x, k and block-uniform values (or the other way round);
///   - statements that use acc: no return, call, goto or asm, and no write to
///     a pointer X or Y read or to a parameter or declared local but acc;
///
/// the early returns' conditions are `||` of terms each reading one of
/// threadIdx.x and threadIdx.y, and the row and column are computed with
/// `blockIdx.x * T` and `blockIdx.y * T`, T one compile-time constant (the
/// tile); else the first condition that fails, with its line. Texts have
/// every `threadIdx.y` replaced by `kloop_ty` and `blockDim.y` by `kloop_bdy`.
nlohmann::json dotProductLoop(const clang::ForStmt *F, const clang::FunctionDecl *Kernel, clang::ASTContext &Ctx);

} // namespace kloop

#endif
