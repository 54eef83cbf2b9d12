//===- kloop/Inventory/LaunchFormula.h - Launch configurations as formulas -*- C++ -*-===//
///
/// \file
/// A launch site's grid, block and dynamic shared memory as integer formulas
/// over named host values, and what its kernel call passes as arguments
/// (docs/inventory.md, "Launch formulas"). kloop extract writes them as the
/// launch site's "config_formula"; kloop optimize evaluates them on a captured
/// launch's parameter buffer, so that a candidate whose launch configuration
/// differs from the captured one can still be replayed (docs/optimize.md,
/// "Replaying a new launch configuration").
///
/// A formula's leaves are constants (what clang folds: literals, constexpr,
/// macros, enumerators, sizeof) and host variables by name (Var). A variable
/// gets a value only when the kernel call passes it as an argument, possibly
/// converted: its value is then read back from the captured parameter buffer
/// (bindArguments). Locals that are never modified after their initialiser,
/// dim3 locals among them, are replaced by that initialiser; calls to min/max
/// and to functions whose body is straight-line code ending in its only
/// `return` are inlined.
///
/// Values follow C++'s rules for each node's type: unsigned arithmetic wraps;
/// signed overflow, division by zero and shifts by the width or more are
/// evaluation errors (they are undefined behaviour in C++, so the program
/// cannot rely on a value for them).
///
/// This library needs LLVM and nlohmann::json only, not clang.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_INVENTORY_LAUNCHFORMULA_H
#define KLOOP_INVENTORY_LAUNCHFORMULA_H

#include "nlohmann/json.hpp"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kloop {
namespace inv {

/// An integer type: width in bits (1 for bool, else 8, 16, 32 or 64) and
/// signedness. Written "bool", "i8".."i64", "u8".."u64".
struct IntType {
  unsigned Bits = 32;
  bool Signed = true;
  bool operator==(const IntType &O) const { return Bits == O.Bits && Signed == O.Signed; }
};

/// "i32", "u64", "bool".
std::string intTypeName(IntType T);

/// One node of a formula.
struct Formula {
  enum class Op {
    Const, ///< Value
    Var,   ///< the host variable named Var
    Cast,  ///< Args[0] converted to Type
    Neg, BitNot, LNot,
    Add, Sub, Mul, Div, Rem, Shl, Shr, And, Or, Xor,
    Lt, Gt, Le, Ge, Eq, Ne, LAnd, LOr,
    Cond, ///< Args[0] ? Args[1] : Args[2]
    Min, Max
  };
  Op K = Op::Const;
  /// The node's type; its value is a bit pattern of this width.
  IntType Type;
  /// Const: the value's bits (sign-extended to 64 bits when Type is signed).
  uint64_t Value = 0;
  /// Var: the variable's name.
  std::string Var;
  std::vector<Formula> Args;

  static Formula constant(IntType T, uint64_t Bits);
};

/// A kernel call argument: its formula when it is an integer kloop can
/// express, and its source text.
struct ArgFormula {
  std::optional<Formula> F;
  std::string Text;
};

/// "config_formula" of a launch site.
struct LaunchFormula {
  /// Why the configuration is not a formula (names the part kloop cannot
  /// evaluate); "" when Grid, Block and SharedMemory hold it.
  std::string Unknown;
  /// x, y, z, each of type u32.
  std::array<Formula, 3> Grid, Block;
  /// Bytes; the constant 0 when the launch passes none.
  Formula SharedMemory;
  /// The kernel call's arguments, in order.
  std::vector<ArgFormula> Args;
  /// The called kernel with its template arguments, as clang prints it
  /// ("reduce<256>"); another callee means another symbol in the cubin.
  std::string Callee;
  /// That kernel's symbol in the cubin (nvcc's name when kloop can predict
  /// it, else clang's; docs/inventory.md, "Kernel names"); "" when unknown.
  std::string Symbol;
};

/// A launch configuration: grid and block (x, y, z) and dynamic shared
/// memory, bytes.
struct LaunchConfig {
  std::array<uint32_t, 3> Grid{1, 1, 1}, Block{1, 1, 1};
  uint64_t SharedMemory = 0;
  bool operator==(const LaunchConfig &O) const {
    return Grid == O.Grid && Block == O.Block && SharedMemory == O.SharedMemory;
  }
  bool operator!=(const LaunchConfig &O) const { return !(*this == O); }
};

/// "grid (256, 1, 1), block (128, 1, 1), 0 bytes of dynamic shared memory".
std::string describe(const LaunchConfig &C);

/// Values of host variables by name, as bit patterns of each variable's type.
using VarValues = std::map<std::string, uint64_t>;

/// The value of \p F (bits of F.Type, sign-extended when signed). Errors name
/// what failed: "n is not passed to the kernel, so its value is unknown",
/// "division by zero", "signed overflow in ...".
llvm::Expected<uint64_t> evaluate(const Formula &F, const VarValues &Vars);

/// The configuration \p L gives for \p Vars. Errors: L.Unknown, or the
/// evaluation's error.
llvm::Expected<LaunchConfig> evaluateConfig(const LaunchFormula &L, const VarValues &Vars);

/// The variables a captured launch of \p L gives away. An argument whose
/// formula is a variable, possibly converted, binds it to the argument's value
/// (\p ParamBits(I): argument I's bits as the parameter buffer holds them,
/// nullopt when not known); so does a grid, block or shared-memory formula
/// that is a variable, to that part of \p Captured. A variable bound twice to
/// different values is left out (a conversion lost bits).
VarValues bindLaunch(const LaunchFormula &L, const std::function<std::optional<uint64_t>(size_t)> &ParamBits,
                     const LaunchConfig &Captured);

/// The JSON form (docs/inventory.md, "Launch formulas") and back; fromJSON's
/// errors name the member ("config_formula: grid[1]: op: unknown 'pow'").
nlohmann::json toJSON(const Formula &F);
nlohmann::json toJSON(const LaunchFormula &L);
llvm::Expected<Formula> formulaFromJSON(const nlohmann::json &J, const std::string &Where);
llvm::Expected<LaunchFormula> launchFormulaFromJSON(const nlohmann::json &J, const std::string &Where);

} // namespace inv
} // namespace kloop

#endif
