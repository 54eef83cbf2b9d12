//===- BlockCombine.h - Where a loop's per-thread partials are folded -*- C++ -*-===//
//
// Private to kloopInventory. The proof rule vectorize-global-access needs before it gives a reduction
// loop's elements to other threads (docs/rules/vectorize-global-access.md, "Reductions"): each thread's
// accumulator then holds another partial value, which is right only when the partials of all the block's
// threads are folded into one total before anything reads them. kloop proves it for a halving tree over a
// __shared__ array, in the kernel or in a device function it calls, in the forms below; anything else is
// refused with the first condition that fails.
//
//===----------------------------------------------------------------------===//
#ifndef KLOOP_LIB_INVENTORY_BLOCKCOMBINE_H
#define KLOOP_LIB_INVENTORY_BLOCKCOMBINE_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"

#include <optional>
#include <string>

namespace kloop {

/// Where the partials are folded: the __shared__ array, and the 1-based index among the kernel body's direct
/// statements of the one that folds them (the tree, or the call of the device function that holds it).
struct BlockCombine {
  std::string Array;
  unsigned FoldStmt = 0;
  /// The accumulator is assigned the block's total by the folding statement (`m = block_max(m, red);`): its
  /// later uses read that total, the same for every thread of the block.
  bool Reassigned = false;
};

/// Why the partials that accumulator \p V of reduction \p Op ("+", "*", "&", "|", "^", "max", "min") holds
/// after \p Loop (a direct statement of kernel body \p Body, whose threads share their elements in blocks of
/// \p Extent threads) are not proved to be folded, or nullopt with \p Out filled. The forms proved:
///   - `A[t] = V; __syncthreads();` right after the loop, then a halving tree of the same operation on A
///     in the kernel, or a call `g(A, t)` of a device function whose body is that tree (const locals
///     before it, then only reads of A[0]);
///   - a call `f(V, A)` in the statement right after the loop, f a device function whose body is
///     `A[t] = V; __syncthreads();` and the tree (const locals before, only reads of A[0] after);
/// with A a __shared__ array of V's type, t threadIdx.x (directly, a const local, or a parameter every such
/// call passes it), and the tree starting at half of \p Extent (so it folds every thread's slot: `B / 2`
/// with B the callee's template parameter that the call passes Extent). V has no other use outside the loop,
/// but later reads when the folding statement assigns it the total; A's later uses read only A[0], refill
/// it the same way (store, barrier, tree), or pass it to such an f.
std::optional<std::string> blockCombineProblem(const clang::VarDecl *V, const std::string &Op,
                                               const clang::Stmt *Loop, const clang::CompoundStmt *Body,
                                               const clang::Expr *Extent, clang::ASTContext &Ctx,
                                               BlockCombine &Out);

/// Whether \p C calls a device function of the second form above (its start not checked) that returns
/// A[0] after the tree: its result is the block's total, one value for every thread of the block.
bool returnsBlockTotal(const clang::CallExpr *C, clang::ASTContext &Ctx);

} // namespace kloop

#endif
