//===- HardwareFacts.h - Operands that carry a hardware fact ----*- C++ -*-===//
//
// Private to kloopInventory. Finds the operands of one expression whose value
// is a fact about the GPU rather than a tuning choice: the warp size of a lane
// index (`i % 32`), a lane mask (`i & 31`), the width of a warp shuffle, a
// value compared with `warpSize`. A constant used there is marked
// `hardware_fact` in the inventory and never tuned (docs/inventory.md).
//
//===----------------------------------------------------------------------===//
#ifndef KLOOP_LIB_INVENTORY_HARDWAREFACTS_H
#define KLOOP_LIB_INVENTORY_HARDWAREFACTS_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"

#include <string>
#include <vector>

namespace kloop {

/// The warp size of every NVIDIA GPU kloop targets (CUDA C Programming Guide,
/// "Compute Capabilities", table "Technical Specifications": warp size 32).
constexpr long long WarpSize = 32;

/// One operand of an expression that holds a hardware fact.
struct HardwareOperand {
  const clang::Expr *Operand = nullptr;
  /// Why, one clause: "right operand of `%` equal to 32, the warp size (a lane index)".
  std::string Reason;
};

/// The operands of \p S (not of its children) that hold hardware facts:
/// - the right operand of `%`/`%=` when it evaluates to WarpSize;
/// - an operand of `&`/`&=` that evaluates to WarpSize - 1 (a lane mask);
/// - the width argument of `__shfl_*` (third) and `__shfl_*_sync` (fourth);
/// - the other side of a comparison with `warpSize`.
/// Empty for any other statement.
std::vector<HardwareOperand> hardwareOperands(const clang::Stmt *S, clang::ASTContext &Ctx);

} // namespace kloop

#endif
