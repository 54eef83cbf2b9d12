//===- LaunchFormulaTest.cpp - Evaluating launch formulas -----------------===//
#include "kloop/Inventory/LaunchFormula.h"
#include "gtest/gtest.h"

using namespace kloop::inv;
using json = nlohmann::json;
using Op = Formula::Op;

namespace {

const IntType I32{32, true}, U32{32, false}, I64{64, true}, U64{64, false}, Bool{1, false};

Formula k(IntType T, int64_t V) { return Formula::constant(T, uint64_t(V)); }
Formula var(IntType T, const std::string &N) {
  Formula F;
  F.K = Op::Var;
  F.Type = T;
  F.Var = N;
  return F;
}
Formula op(Op K, IntType T, std::vector<Formula> Args) {
  Formula F;
  F.K = K;
  F.Type = T;
  F.Args = std::move(Args);
  return F;
}

uint64_t eval(const Formula &F, const VarValues &V = {}) {
  llvm::Expected<uint64_t> R = evaluate(F, V);
  EXPECT_TRUE(bool(R)) << (R ? "" : llvm::toString(R.takeError()));
  return R ? *R : ~uint64_t(0);
}

std::string evalError(const Formula &F, const VarValues &V = {}) {
  llvm::Expected<uint64_t> R = evaluate(F, V);
  if (R)
    return "no error, value " + std::to_string(*R);
  return llvm::toString(R.takeError());
}

/// (n + 255) / 256 in i32, n a variable.
Formula blocks() { return op(Op::Div, I32, {op(Op::Sub, I32, {op(Op::Add, I32, {var(I32, "n"), k(I32, 256)}), k(I32, 1)}), k(I32, 256)}); }

TEST(LaunchFormula, CeilDivisionWithABoundVariable) {
  EXPECT_EQ(eval(blocks(), {{"n", 1000}}), 4u);
  EXPECT_EQ(eval(blocks(), {{"n", 1 << 24}}), uint64_t(1 << 16));
  EXPECT_EQ(evalError(blocks()), "n is not passed to the kernel, so its value is unknown");
}

TEST(LaunchFormula, CxxIntegerRules) {
  // Signed division truncates toward zero; unsigned arithmetic wraps; signed overflow is an error.
  EXPECT_EQ(int64_t(eval(op(Op::Div, I32, {k(I32, -7), k(I32, 2)}))), -3);
  EXPECT_EQ(int64_t(eval(op(Op::Rem, I32, {k(I32, -7), k(I32, 2)}))), -1);
  EXPECT_EQ(eval(op(Op::Sub, U32, {k(U32, 0), k(U32, 1)})), 0xffffffffu);
  EXPECT_EQ(evalError(op(Op::Add, I32, {k(I32, 0x7fffffff), k(I32, 1)})), "signed overflow in + (i32)");
  EXPECT_EQ(evalError(op(Op::Div, I32, {k(I32, 1), k(I32, 0)})), "division by zero");
  EXPECT_EQ(evalError(op(Op::Shl, I32, {k(I32, 1), k(I32, 32)})), "a shift by 32 of a i32");
  EXPECT_EQ(eval(op(Op::Shr, I32, {k(I32, -8), k(I32, 1)})), uint64_t(-4));
  // Conversions: truncation, sign extension, and bool.
  EXPECT_EQ(eval(op(Op::Cast, U32, {k(I64, -1)})), 0xffffffffu);
  EXPECT_EQ(int64_t(eval(op(Op::Cast, I64, {k(I32, -5)}))), -5);
  EXPECT_EQ(eval(op(Op::Cast, U64, {k(U32, 0xffffffffu)})), 0xffffffffu);
  EXPECT_EQ(eval(op(Op::Cast, Bool, {k(I32, 7)})), 1u);
  // Comparisons by the operands' signedness.
  EXPECT_EQ(eval(op(Op::Lt, Bool, {k(I32, -1), k(I32, 0)})), 1u);
  EXPECT_EQ(eval(op(Op::Lt, Bool, {k(U32, 0xffffffffu), k(U32, 0)})), 0u);
  EXPECT_EQ(int64_t(eval(op(Op::Min, I32, {k(I32, -3), k(I32, 2)}))), -3);
  EXPECT_EQ(eval(op(Op::Max, U32, {k(U32, 0xffffffffu), k(U32, 2)})), 0xffffffffu);
}

TEST(LaunchFormula, ConditionalAndLogicalShortCircuit) {
  // blocks > 65535 ? 65535 : blocks, the clamp of a grid-stride launch.
  Formula Clamp = op(Op::Cond, I32, {op(Op::Gt, Bool, {blocks(), k(I32, 65535)}), k(I32, 65535), blocks()});
  EXPECT_EQ(eval(Clamp, {{"n", 1 << 24}}), 65535u);
  EXPECT_EQ(eval(Clamp, {{"n", 1000}}), 4u);
  // The branch not taken is not evaluated: its unknown variable and its division by zero do not matter.
  EXPECT_EQ(eval(op(Op::Cond, I32, {k(Bool, 1), k(I32, 3), var(I32, "unknown")})), 3u);
  EXPECT_EQ(eval(op(Op::LAnd, Bool, {k(Bool, 0), op(Op::Div, I32, {k(I32, 1), k(I32, 0)})})), 0u);
  EXPECT_EQ(eval(op(Op::LOr, Bool, {k(Bool, 1), var(I32, "unknown")})), 1u);
}

TEST(LaunchFormula, BindFromArgumentsAndConfiguration) {
  LaunchFormula L;
  L.Grid = {op(Op::Cast, U32, {blocks()}), k(U32, 1), k(U32, 1)};
  L.Block = {var(U32, "threads"), k(U32, 1), k(U32, 1)};
  L.SharedMemory = k(U64, 0);
  // n (i32) is passed as a 64-bit parameter; a pointer argument has no formula.
  L.Args = {{op(Op::Cast, I64, {var(I32, "n")}), "n"}, {std::nullopt, "x"}};
  LaunchConfig Captured;
  Captured.Grid = {4, 1, 1};
  Captured.Block = {256, 1, 1};
  VarValues V = bindLaunch(L, [](size_t I) { return I == 0 ? std::optional<uint64_t>(1000) : std::nullopt; }, Captured);
  EXPECT_EQ(V, (VarValues{{"n", 1000}, {"threads", 256}}));
  llvm::Expected<LaunchConfig> C = evaluateConfig(L, V);
  ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
  EXPECT_EQ(*C, Captured);
  EXPECT_EQ(describe(*C), "grid (4, 1, 1), block (256, 1, 1), 0 bytes of dynamic shared memory");
  // A negative i32 passed as i64 reads back the same.
  V = bindLaunch(L, [](size_t) { return std::optional<uint64_t>(uint64_t(-2)); }, Captured);
  EXPECT_EQ(int64_t(V.at("n")), -2);
  // A narrowing conversion cannot be undone: the variable is not bound from it.
  LaunchFormula Narrow = L;
  Narrow.Args[0] = {op(Op::Cast, IntType{8, false}, {var(I32, "n")}), "n"};
  Narrow.Block[0] = k(U32, 256);
  EXPECT_FALSE(bindLaunch(Narrow, [](size_t) { return std::optional<uint64_t>(44); }, Captured).count("n"));
  // One variable given two values (a conversion lost bits) is not bound at all.
  L.Args.push_back({var(I32, "threads"), "threads"});
  V = bindLaunch(L, [](size_t I) { return std::optional<uint64_t>(I == 2 ? 128 : 1000); }, Captured);
  EXPECT_FALSE(V.count("threads"));
  EXPECT_TRUE(V.count("n"));
  // An unknown configuration names why.
  L.Unknown = "ceil(n / 256.0): a conversion from double";
  llvm::Expected<LaunchConfig> U = evaluateConfig(L, V);
  ASSERT_FALSE(bool(U));
  EXPECT_EQ(llvm::toString(U.takeError()), "ceil(n / 256.0): a conversion from double");
}

TEST(LaunchFormula, JSONRoundTripAndErrors) {
  LaunchFormula L;
  L.Grid = {op(Op::Cast, U32, {blocks()}), k(U32, 1), k(U32, 1)};
  L.Block = {k(U32, 256), k(U32, 1), k(U32, 1)};
  L.SharedMemory = op(Op::Mul, U64, {k(U64, 4), k(U64, 256)});
  L.Args = {{var(I32, "n"), "n"}, {std::nullopt, "x"}};
  L.Callee = "saxpy";
  json J = toJSON(L);
  llvm::Expected<LaunchFormula> Back = launchFormulaFromJSON(J, "f");
  ASSERT_TRUE(bool(Back)) << llvm::toString(Back.takeError());
  EXPECT_EQ(toJSON(*Back), J);
  // A negative signed constant and a large unsigned one survive.
  for (Formula F : {k(I64, -1), k(U64, -1), k(I32, -2147483647 - 1)}) {
    llvm::Expected<Formula> G = formulaFromJSON(toJSON(F), "c");
    ASSERT_TRUE(bool(G));
    EXPECT_EQ(G->Value, F.Value);
  }
  auto error = [](const json &X) {
    llvm::Expected<Formula> F = formulaFromJSON(X, "f");
    return F ? std::string("parsed") : llvm::toString(F.takeError());
  };
  EXPECT_EQ(error({{"op", "pow"}, {"type", "i32"}, {"args", json::array()}}),
            "f: op: expected one of the operators of docs/inventory.md, found \"pow\"");
  EXPECT_EQ(error({{"op", "+"}, {"type", "i32"}, {"args", json::array({toJSON(k(I32, 1))})}}),
            "f: args: operator + takes 2 operands");
  EXPECT_EQ(error({{"const", 1}, {"type", "i33"}}), "f: type: expected bool, i8..i64 or u8..u64, found 'i33'");
  EXPECT_EQ(error({{"var", ""}, {"type", "i32"}}), "f: var: expected a name");
  json Bad = J;
  Bad["grid"].erase(2);
  llvm::Expected<LaunchFormula> B = launchFormulaFromJSON(Bad, "site");
  ASSERT_FALSE(bool(B));
  EXPECT_EQ(llvm::toString(B.takeError()), "site: grid: expected three formulas (x, y, z)");
}

} // namespace
