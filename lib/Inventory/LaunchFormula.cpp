//===- LaunchFormula.cpp - Evaluate and serialise launch formulas ---------===//
#include "kloop/Inventory/LaunchFormula.h"
#include "kloop/Support/Error.h"

#include "llvm/ADT/StringExtras.h"

#include <limits>
#include <set>

using json = nlohmann::json;
using llvm::Expected;

namespace kloop {
namespace inv {

namespace {

using Op = Formula::Op;

/// The JSON spelling of each operator.
const std::pair<Op, const char *> OpNames[] = {
    {Op::Cast, "cast"}, {Op::Neg, "neg"}, {Op::BitNot, "~"}, {Op::LNot, "!"},  {Op::Add, "+"},  {Op::Sub, "-"},
    {Op::Mul, "*"},     {Op::Div, "/"},   {Op::Rem, "%"},    {Op::Shl, "<<"},  {Op::Shr, ">>"}, {Op::And, "&"},
    {Op::Or, "|"},      {Op::Xor, "^"},   {Op::Lt, "<"},     {Op::Gt, ">"},    {Op::Le, "<="},  {Op::Ge, ">="},
    {Op::Eq, "=="},     {Op::Ne, "!="},   {Op::LAnd, "&&"},  {Op::LOr, "||"},  {Op::Cond, "?:"}, {Op::Min, "min"},
    {Op::Max, "max"}};

const char *opName(Op K) {
  for (auto [O, N] : OpNames)
    if (O == K)
      return N;
  return "?";
}

std::optional<Op> opNamed(const std::string &S) {
  for (auto [O, N] : OpNames)
    if (S == N)
      return O;
  return std::nullopt;
}

/// How many operands each operator takes.
size_t arity(Op K) {
  switch (K) {
  case Op::Const:
  case Op::Var: return 0;
  case Op::Cast:
  case Op::Neg:
  case Op::BitNot:
  case Op::LNot: return 1;
  case Op::Cond: return 3;
  default: return 2;
  }
}

/// \p Bits as a value of \p T: truncated to the width, then sign-extended when signed.
uint64_t normalize(uint64_t Bits, IntType T) {
  if (T.Bits >= 64)
    return Bits;
  if (T.Bits == 1)
    return Bits & 1;
  uint64_t Mask = (uint64_t(1) << T.Bits) - 1;
  uint64_t V = Bits & Mask;
  if (T.Signed && (V >> (T.Bits - 1)) & 1)
    V |= ~Mask;
  return V;
}

__int128 wide(uint64_t Bits, IntType T) { return T.Signed ? __int128(int64_t(Bits)) : __int128(Bits); }

/// \p V as a value of \p T, or an error when \p T is signed and cannot hold it.
Expected<uint64_t> signedResult(__int128 V, IntType T, const char *What) {
  if (T.Signed) {
    __int128 Max = T.Bits >= 64 ? __int128(std::numeric_limits<int64_t>::max()) : (__int128(1) << (T.Bits - 1)) - 1;
    if (V > Max || V < -Max - 1)
      return makeError(llvm::Twine("signed overflow in ") + What + " (" + intTypeName(T) + ")");
  }
  return normalize(uint64_t(V), T);
}

bool less(uint64_t A, uint64_t B, IntType T) { return T.Signed ? int64_t(A) < int64_t(B) : A < B; }

Expected<uint64_t> binary(Op K, IntType T, uint64_t A, uint64_t B, IntType OperandT, IntType RightT) {
  __int128 X = wide(A, OperandT), Y = wide(B, RightT);
  switch (K) {
  case Op::Add: return signedResult(X + Y, T, "+");
  case Op::Sub: return signedResult(X - Y, T, "-");
  case Op::Mul: return signedResult(X * Y, T, "*");
  case Op::Div:
  case Op::Rem:
    if (Y == 0)
      return makeError("division by zero");
    return signedResult(K == Op::Div ? X / Y : X % Y, T, K == Op::Div ? "/" : "%");
  case Op::Shl:
  case Op::Shr:
    if (Y < 0 || Y >= T.Bits)
      return makeError("a shift by " + std::to_string(int64_t(Y)) + " of a " + intTypeName(T));
    if (K == Op::Shl)
      return normalize(A << unsigned(Y), T);
    return normalize(T.Signed ? uint64_t(int64_t(A) >> unsigned(Y)) : A >> unsigned(Y), T);
  case Op::And: return normalize(A & B, T);
  case Op::Or: return normalize(A | B, T);
  case Op::Xor: return normalize(A ^ B, T);
  case Op::Lt: return uint64_t(X < Y);
  case Op::Gt: return uint64_t(X > Y);
  case Op::Le: return uint64_t(X <= Y);
  case Op::Ge: return uint64_t(X >= Y);
  case Op::Eq: return uint64_t(X == Y);
  case Op::Ne: return uint64_t(X != Y);
  case Op::Min: return less(B, A, T) ? B : A;
  case Op::Max: return less(A, B, T) ? B : A;
  default: return makeError(llvm::Twine("operator ") + opName(K) + " is not binary");
  }
}

Expected<uint64_t> unary(Op K, IntType T, uint64_t A, IntType OperandT) {
  switch (K) {
  case Op::Cast: return T.Bits == 1 ? uint64_t(A != 0) : normalize(A, T);
  case Op::Neg: return signedResult(-wide(A, OperandT), T, "unary -");
  case Op::BitNot: return normalize(~A, T);
  case Op::LNot: return uint64_t(A == 0);
  default: return makeError(llvm::Twine("operator ") + opName(K) + " is not unary");
  }
}

Expected<IntType> intTypeNamed(const std::string &S, const std::string &Where) {
  if (S == "bool")
    return IntType{1, false};
  if (S.size() >= 2 && (S[0] == 'i' || S[0] == 'u')) {
    unsigned Bits = 0;
    if (!llvm::StringRef(S).drop_front().getAsInteger(10, Bits) && (Bits == 8 || Bits == 16 || Bits == 32 || Bits == 64))
      return IntType{Bits, S[0] == 'i'};
  }
  return makeError(Where + ": type: expected bool, i8..i64 or u8..u64, found '" + S + "'");
}

} // namespace

std::string intTypeName(IntType T) {
  if (T.Bits == 1)
    return "bool";
  return (T.Signed ? "i" : "u") + std::to_string(T.Bits);
}

Formula Formula::constant(IntType T, uint64_t Bits) {
  Formula F;
  F.Type = T;
  F.Value = normalize(Bits, T);
  return F;
}

std::string describe(const LaunchConfig &C) {
  auto Dim = [](const std::array<uint32_t, 3> &D) {
    return "(" + std::to_string(D[0]) + ", " + std::to_string(D[1]) + ", " + std::to_string(D[2]) + ")";
  };
  return "grid " + Dim(C.Grid) + ", block " + Dim(C.Block) + ", " + std::to_string(C.SharedMemory) +
         " bytes of dynamic shared memory";
}

Expected<uint64_t> evaluate(const Formula &F, const VarValues &Vars) {
  if (F.Args.size() != arity(F.K))
    return makeError(llvm::Twine("operator ") + opName(F.K) + " with " + llvm::Twine(F.Args.size()) + " operands");
  switch (F.K) {
  case Op::Const: return normalize(F.Value, F.Type);
  case Op::Var: {
    auto It = Vars.find(F.Var);
    if (It == Vars.end())
      return makeError(F.Var + " is not passed to the kernel, so its value is unknown");
    return normalize(It->second, F.Type);
  }
  case Op::LAnd:
  case Op::LOr:
  case Op::Cond: {
    Expected<uint64_t> C = evaluate(F.Args[0], Vars);
    if (!C)
      return C.takeError();
    if (F.K == Op::Cond)
      return evaluate(F.Args[*C ? 1 : 2], Vars);
    if ((F.K == Op::LAnd) != (*C != 0)) // false && x, true || x
      return uint64_t(F.K == Op::LOr);
    Expected<uint64_t> R = evaluate(F.Args[1], Vars);
    if (!R)
      return R.takeError();
    return uint64_t(*R != 0);
  }
  default: break;
  }
  Expected<uint64_t> A = evaluate(F.Args[0], Vars);
  if (!A)
    return A.takeError();
  if (F.Args.size() == 1)
    return unary(F.K, F.Type, *A, F.Args[0].Type);
  Expected<uint64_t> B = evaluate(F.Args[1], Vars);
  if (!B)
    return B.takeError();
  return binary(F.K, F.Type, *A, *B, F.Args[0].Type, F.Args[1].Type);
}

Expected<LaunchConfig> evaluateConfig(const LaunchFormula &L, const VarValues &Vars) {
  if (!L.Unknown.empty())
    return makeError(L.Unknown);
  LaunchConfig C;
  for (auto [Out, In] : {std::pair{&C.Grid, &L.Grid}, {&C.Block, &L.Block}})
    for (size_t I = 0; I < 3; ++I) {
      Expected<uint64_t> V = evaluate((*In)[I], Vars);
      if (!V)
        return V.takeError();
      (*Out)[I] = uint32_t(*V);
    }
  Expected<uint64_t> S = evaluate(L.SharedMemory, Vars);
  if (!S)
    return S.takeError();
  C.SharedMemory = *S;
  return C;
}

/// The variable \p F names, peeling conversions back from a value \p Bits of F's type, into \p Out (and
/// \p Conflicts when it is there with another value); nothing when F is not a converted variable.
static void bindVar(const Formula &F, uint64_t Bits, VarValues &Out, std::set<std::string> &Conflicts) {
  const Formula *X = &F;
  uint64_t V = normalize(Bits, X->Type);
  // Only conversions that keep every bit of their operand can be undone (a narrowing one, or one to
  // bool, loses what the variable held).
  while (X->K == Op::Cast && X->Args.size() == 1 && X->Type.Bits != 1 && X->Args[0].Type.Bits != 1 &&
         X->Args[0].Type.Bits <= X->Type.Bits) {
    X = &X->Args[0];
    V = normalize(V, X->Type);
  }
  if (X->K != Op::Var)
    return;
  auto [It, New] = Out.emplace(X->Var, V);
  if (!New && It->second != V)
    Conflicts.insert(X->Var);
}

VarValues bindLaunch(const LaunchFormula &L, const std::function<std::optional<uint64_t>(size_t)> &ParamBits,
                     const LaunchConfig &Captured) {
  VarValues Out;
  std::set<std::string> Conflicts;
  for (size_t I = 0; I < L.Args.size(); ++I)
    if (std::optional<uint64_t> Bits = L.Args[I].F ? ParamBits(I) : std::nullopt)
      bindVar(*L.Args[I].F, *Bits, Out, Conflicts);
  if (L.Unknown.empty()) {
    for (size_t I = 0; I < 3; ++I) {
      bindVar(L.Grid[I], Captured.Grid[I], Out, Conflicts);
      bindVar(L.Block[I], Captured.Block[I], Out, Conflicts);
    }
    bindVar(L.SharedMemory, Captured.SharedMemory, Out, Conflicts);
  }
  for (const std::string &V : Conflicts)
    Out.erase(V);
  return Out;
}

json toJSON(const Formula &F) {
  json J;
  if (F.K == Op::Const)
    J["const"] = F.Type.Signed ? json(int64_t(F.Value)) : json(F.Value);
  else if (F.K == Op::Var)
    J["var"] = F.Var;
  else
    J["op"] = opName(F.K);
  J["type"] = intTypeName(F.Type);
  if (!F.Args.empty()) {
    J["args"] = json::array();
    for (const Formula &A : F.Args)
      J["args"].push_back(toJSON(A));
  }
  return J;
}

json toJSON(const LaunchFormula &L) {
  json J = json::object();
  if (!L.Unknown.empty()) {
    J["unknown"] = L.Unknown;
  } else {
    for (auto [Key, D] : {std::pair{"grid", &L.Grid}, {"block", &L.Block}}) {
      J[Key] = json::array();
      for (const Formula &F : *D)
        J[Key].push_back(toJSON(F));
    }
    J["shared_memory"] = toJSON(L.SharedMemory);
  }
  J["callee"] = L.Callee;
  if (!L.Symbol.empty())
    J["symbol"] = L.Symbol;
  J["args"] = json::array();
  for (const ArgFormula &A : L.Args)
    J["args"].push_back({{"text", A.Text}, {"formula", A.F ? toJSON(*A.F) : json(nullptr)}});
  return J;
}

Expected<Formula> formulaFromJSON(const json &J, const std::string &Where) {
  if (!J.is_object() || !J.contains("type") || !J["type"].is_string())
    return makeError(Where + ": expected an object with a type");
  Expected<IntType> T = intTypeNamed(J["type"].get<std::string>(), Where);
  if (!T)
    return T.takeError();
  Formula F;
  F.Type = *T;
  if (J.contains("const")) {
    if (!J["const"].is_number_integer())
      return makeError(Where + ": const: expected an integer");
    F.Value = normalize(J["const"].is_number_unsigned() ? J["const"].get<uint64_t>() : uint64_t(J["const"].get<int64_t>()), F.Type);
    return F;
  }
  if (J.contains("var")) {
    if (!J["var"].is_string() || J["var"].get<std::string>().empty())
      return makeError(Where + ": var: expected a name");
    F.K = Op::Var;
    F.Var = J["var"].get<std::string>();
    return F;
  }
  std::optional<Op> K = J.contains("op") && J["op"].is_string() ? opNamed(J["op"].get<std::string>()) : std::nullopt;
  if (!K)
    return makeError(Where + ": op: expected one of the operators of docs/inventory.md, found " +
                     (J.contains("op") ? J["op"].dump() : std::string("none")));
  F.K = *K;
  const json &Args = J.contains("args") ? J["args"] : json();
  if (!Args.is_array() || Args.size() != arity(F.K))
    return makeError(Where + ": args: operator " + opName(F.K) + " takes " + std::to_string(arity(F.K)) + " operands");
  for (size_t I = 0; I < Args.size(); ++I) {
    Expected<Formula> A = formulaFromJSON(Args[I], Where + ".args[" + std::to_string(I) + "]");
    if (!A)
      return A.takeError();
    F.Args.push_back(std::move(*A));
  }
  return F;
}

Expected<LaunchFormula> launchFormulaFromJSON(const json &J, const std::string &Where) {
  if (!J.is_object())
    return makeError(Where + ": expected an object");
  LaunchFormula L;
  L.Callee = J.value("callee", std::string());
  L.Symbol = J.value("symbol", std::string());
  if (J.contains("unknown")) {
    if (!J["unknown"].is_string())
      return makeError(Where + ": unknown: expected a string");
    L.Unknown = J["unknown"].get<std::string>();
  } else {
    for (auto [Key, D] : {std::pair{"grid", &L.Grid}, {"block", &L.Block}}) {
      if (!J.contains(Key) || !J[Key].is_array() || J[Key].size() != 3)
        return makeError(Where + ": " + Key + ": expected three formulas (x, y, z)");
      for (size_t I = 0; I < 3; ++I) {
        Expected<Formula> F = formulaFromJSON(J[Key][I], Where + ": " + Key + "[" + std::to_string(I) + "]");
        if (!F)
          return F.takeError();
        (*D)[I] = std::move(*F);
      }
    }
    Expected<Formula> S = formulaFromJSON(J.value("shared_memory", json()), Where + ": shared_memory");
    if (!S)
      return S.takeError();
    L.SharedMemory = std::move(*S);
  }
  const json &Args = J.contains("args") ? J["args"] : json::array();
  if (!Args.is_array())
    return makeError(Where + ": args: expected an array");
  for (size_t I = 0; I < Args.size(); ++I) {
    std::string W = Where + ": args[" + std::to_string(I) + "]";
    if (!Args[I].is_object() || !Args[I].contains("text") || !Args[I]["text"].is_string())
      return makeError(W + ": expected {\"text\", \"formula\"}");
    ArgFormula A;
    A.Text = Args[I]["text"].get<std::string>();
    if (Args[I].contains("formula") && !Args[I]["formula"].is_null()) {
      Expected<Formula> F = formulaFromJSON(Args[I]["formula"], W + ": formula");
      if (!F)
        return F.takeError();
      A.F = std::move(*F);
    }
    L.Args.push_back(std::move(A));
  }
  return L;
}

} // namespace inv
} // namespace kloop
