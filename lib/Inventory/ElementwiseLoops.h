//===- ElementwiseLoops.h - Grid-stride loops over independent elements -*- C++ -*-===//
//
// Private to kloopInventory. The facts the rules vectorize-global-access and
// coarsen-grid-stride need about a `for` loop of a kernel (docs/inventory.md,
// "loop"; docs/rules/vectorize-global-access.md, docs/rules/coarsen-grid-stride.md).
//
//===----------------------------------------------------------------------===//
#ifndef KLOOP_LIB_INVENTORY_ELEMENTWISELOOPS_H
#define KLOOP_LIB_INVENTORY_ELEMENTWISELOOPS_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Stmt.h"
#include "nlohmann/json.hpp"

#include <optional>
#include <string>

namespace kloop {

/// The "elementwise" member of loop \p F of kernel \p Kernel (kloop::inv::Elementwise):
/// "refusal" null when \p F is a direct statement of the kernel body written
/// `for (T i = blockIdx.x * B + threadIdx.x; i < n; i += B * gridDim.x)` (a grid-stride loop) or
/// `for (T i = threadIdx.x; i < n; i += B)` (a block-stride loop), B blockDim.x, an integer constant
/// or a non-type template parameter, the same text in start and stride (factors and terms in either
/// order; threadIdx.x and the stride may be const locals so initialized; `n` an integer parameter or
/// local of uniform value that is never written) whose body
///   - reads or writes pointers only as `p[i]`, i the loop variable itself, p a kernel pointer
///     parameter or a local pointer initialized to one (plus an offset) and never assigned again;
///   - writes no variable declared outside it but reduction accumulators (every use of one is an
///     update `v op= e` or `v = fmaxf(v, e)`-like of one operation), not `i`, no memory but `p[i]`;
///   - reads no thread or block index, no `__shared__` or non-const global variable;
///   - has no break, continue, return or goto, no asm, no dereference, no `->`;
///   - calls only functions of system headers that are not barriers, shuffles, votes,
///     atomics or printf;
/// else the first condition that fails, with its line. Then also "var", "var_type",
/// "init", "bound", "stride", "stride_kind" ("grid" or "block"), "block_extent" (B when it is
/// not blockDim.x, else null), "body" (the text of each; a body that is not a compound statement
/// gets its `;`), "accesses" (one per `p[i]`, its offsets in "body", its root parameter),
/// "reductions" and "other_effects".
nlohmann::json elementwiseLoop(const clang::ForStmt *F, const clang::FunctionDecl *Kernel,
                               clang::ASTContext &Ctx);

/// True when \p E is written `blockIdx.D * blockDim.D + threadIdx.D` (factors and terms in either order), D
/// the component \p Dim ('x', 'y' or 'z').
bool isGlobalThreadIndex(const clang::Expr *E, clang::ASTContext &Ctx, char Dim = 'x');

/// Whether \p E is only read: its value is loaded (an lvalue-to-rvalue conversion).
bool isPlainRead(const clang::Expr *E, clang::ASTContext &Ctx);

/// Why call \p E may touch memory or synchronize threads (a function outside the system headers, a barrier,
/// shuffle, vote, atomic or printf), as "a call of 'f' at line N, ...", or nullopt (math functions, CUDA's
/// builtin-variable accessors).
std::optional<std::string> callProblem(const clang::CallExpr *E, clang::ASTContext &Ctx);

} // namespace kloop

#endif
