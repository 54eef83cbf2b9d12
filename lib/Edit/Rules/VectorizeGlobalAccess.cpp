//===- VectorizeGlobalAccess.cpp - Rule vectorize-global-access ------------===//
//
// Match: an elementwise grid-stride or block-stride loop (inventory
//        "elementwise", computed by lib/Inventory/ElementwiseLoops.cpp): every
//        global access is p[i] of a kernel pointer parameter or of a local
//        pointer based on one, i the loop variable, and the iterations are
//        independent but for reductions into locals.
// Legal: all accessed pointers have elements of one size E dividing 16 bytes;
//        16-byte accesses are taken only when every accessed pointer is 16-byte
//        aligned and blockDim.x is the loop's block extent B (so the threads
//        still visit each vector once), both checked at run time; the last
//        n % (16 / E) elements run the original body in a scalar tail loop;
//        otherwise the original loop runs. A floating-point + or * reduction
//        is reassociated (a precision change): refused when an output the
//        kernel writes must match exactly.
// Edit:  replace_loop of the loop.
// docs/rules/vectorize-global-access.md.
//
//===----------------------------------------------------------------------===//
#include "kloop/Edit/Rules.h"
#include "kloop/Inventory/WorkloadScope.h"
#include "kloop/Support/Text.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <map>

namespace kloop {

namespace {
/// How the loop body uses one parameter, over all its accesses.
struct ParamUse {
  std::string ElementType;
  bool Read = false, Written = false, Unconditional = false;
  /// Its lanes start with the elements' values: read, or written only on some paths.
  bool load() const { return Read || !Unconditional; }
};
} // namespace

static constexpr unsigned VectorBytes = 16; // one uint4: the widest global load and store (LDG.128)

static std::map<std::string, ParamUse> paramUses(const inv::Elementwise &E) {
  std::map<std::string, ParamUse> Out;
  for (const inv::ElementwiseAccess &A : E.Accesses) {
    ParamUse &U = Out[A.Param];
    U.ElementType = A.ElementType;
    U.Read |= A.Read;
    U.Written |= A.Written;
    U.Unconditional |= A.Unconditional;
  }
  return Out;
}

/// Why the accesses of \p E cannot share one vector width, or nullopt; \p Lanes gets elements per vector.
static std::optional<std::string> widthRefusal(const inv::Elementwise &E, unsigned &Lanes) {
  unsigned Bytes = E.Accesses.front().ElementBytes;
  for (const inv::ElementwiseAccess &A : E.Accesses)
    if (A.ElementBytes != Bytes)
      return "elements of " + std::to_string(Bytes) + " and " + std::to_string(A.ElementBytes) +
             " bytes: one vector cannot hold the same number of each";
  if (Bytes == 0 || Bytes >= VectorBytes || VectorBytes % Bytes != 0)
    return "elements of " + std::to_string(Bytes) + " bytes: no wider access holds a whole number of them";
  Lanes = VectorBytes / Bytes;
  return std::nullopt;
}

/// Why a written pointer may overlap another accessed one, or nullopt: a 16-byte store covers elements that,
/// through an overlapping pointer, other iterations read. Pointers based on distinct `__restrict__`
/// parameters do not overlap; two based on one parameter may.
static std::optional<std::string> overlapRefusal(const inv::Kernel &K, const inv::Elementwise &E) {
  std::map<std::string, ParamUse> Uses = paramUses(E);
  if (Uses.size() < 2)
    return std::nullopt;
  std::map<std::string, std::string> RootOf;
  for (const inv::ElementwiseAccess &A : E.Accesses)
    RootOf[A.Param] = A.Root;
  for (const auto &[P, U] : Uses) {
    if (!U.Written)
      continue;
    for (const inv::Param &KP : K.Params)
      if (KP.Name == RootOf[P] && !KP.Restrict)
        return "'" + P + "' is written and not __restrict__: it may overlap another accessed pointer, whose "
               "elements other threads own (add __restrict__ first: rule restrict-const-params)";
    for (const auto &[Q, Root] : RootOf)
      if (Q != P && Root == RootOf[P])
        return "'" + P + "' is written and '" + Q + "' is also based on '" + Root + "': they may overlap";
  }
  return std::nullopt;
}

/// Why a reduction of \p E may not be given other elements per thread, or nullopt. Each thread's
/// accumulator then ends with another partial value; that is right only when the partials of all the
/// threads that share the elements are folded before anything uses them, which the inventory proves
/// ("combined_in"; lib/Inventory/BlockCombine.h lists the forms). A grid-stride loop keeps each block's
/// elements in the block (vectorizedInBlocks), so the fold of each block still sees the same elements.
static std::optional<std::string> combineRefusal(const inv::Elementwise &E) {
  for (const inv::ElementwiseReduction &R : E.Reductions)
    if (!R.CombinedIn)
      return "the " + R.Op + "-reduction into '" + R.Var + "' is not combined across threads: " +
             R.NotCombined.value_or("");
  return std::nullopt;
}

/// Why a reassociated reduction of \p E may not change \p K's outputs' bits, or nullopt (\p Outputs null:
/// no workload; verification still compares the outputs with their tolerances).
static std::optional<std::string> precisionRefusal(const inv::Kernel &K, const inv::Elementwise &E,
                                                   const std::vector<OutputTolerance> *Outputs) {
  auto R = llvm::find_if(E.Reductions, [](const inv::ElementwiseReduction &X) { return X.Reassociates; });
  if (R == E.Reductions.end() || !Outputs)
    return std::nullopt;
  for (const OutputTolerance &O : *Outputs)
    if (O.Kind == "exact" && kernelNameMatches(K, O.Kernel))
      return "the " + R->Type + " " + R->Op + "-reduction into '" + R->Var +
             "' would be reassociated (a precision change), and output arg " + std::to_string(O.Arg) +
             " of the kernel must match exactly";
  return std::nullopt;
}

/// The body with each `p[i]` written `kloop_p[kloop_l]`.
static std::string laneBody(const inv::Elementwise &E) {
  std::string Out = E.Body;
  std::vector<const inv::ElementwiseAccess *> Back;
  for (const inv::ElementwiseAccess &A : E.Accesses)
    Back.push_back(&A);
  std::sort(Back.begin(), Back.end(), [](auto *L, auto *R) { return L->Begin > R->Begin; });
  for (const inv::ElementwiseAccess *A : Back)
    Out.replace(A->Begin, A->End - A->Begin, "kloop_" + A->Param + "[kloop_l]");
  return Out;
}

/// `for (T i = init; i < n; i += stride) body` starting at \p From.
static std::string scalarLoop(const inv::Elementwise &E, const std::string &From) {
  return "for (" + E.VarType + " " + E.Var + " = " + From + "; " + E.Var + " < " + E.Bound + "; " + E.Var +
         " += " + E.Stride + ") " + E.Body;
}

/// The body of a vector loop over vector index kloop_v: loads, the lanes, stores.
static std::string vectorBody(const inv::Elementwise &E, const std::map<std::string, ParamUse> &Uses,
                              unsigned Lanes) {
  std::string L = std::to_string(Lanes);
  std::string Code;
  for (const auto &[P, U] : Uses) {
    Code += "    alignas(16) " + U.ElementType + " kloop_" + P + "[" + L + "];\n";
    if (U.load())
      Code += "    *reinterpret_cast<uint4 *>(kloop_" + P + ") = reinterpret_cast<const uint4 *>(" + P +
              ")[kloop_v];\n";
  }
  Code += "#pragma unroll\n    for (int kloop_l = 0; kloop_l < " + L + "; ++kloop_l) {\n      const " + E.VarType +
          " " + E.Var + " = kloop_v * " + L + " + kloop_l;\n      (void)" + E.Var + ";\n      " + laneBody(E) +
          "\n    }\n";
  for (const auto &[P, U] : Uses)
    if (U.Written)
      Code += "    reinterpret_cast<uint4 *>(" + P + ")[kloop_v] = *reinterpret_cast<const uint4 *>(kloop_" + P +
              ");\n";
  return Code;
}

/// The vector loop: thread t of the grid takes vectors t, t + stride, ...
static std::string vectorLoop(const inv::Elementwise &E, const std::map<std::string, ParamUse> &Uses,
                              unsigned Lanes) {
  std::string L = std::to_string(Lanes);
  return "  for (" + E.VarType + " kloop_v = " + E.Init + "; kloop_v < (" + E.Bound + ") / " + L +
         "; kloop_v += " + E.Stride + ") {\n" + vectorBody(E, Uses, Lanes) + "  }\n";
}

/// The 16-byte alignment test of every accessed pointer.
static std::string alignedTest(const std::map<std::string, ParamUse> &Uses) {
  std::string Aligned;
  for (const auto &[P, U] : Uses)
    Aligned += (Aligned.empty() ? "" : " | ") + std::string("reinterpret_cast<unsigned long long>(") + P + ")";
  return "((" + Aligned + ") % " + std::to_string(VectorBytes) + ") == 0";
}

/// The run-time test that extent \p B is a power of two: a halving tree from B / 2 folds every one of B slots
/// only then (from 48 of 96 slots, slot 2 is never added into slot 0).
static std::string powerOfTwo(const std::string &B) { return "(" + B + " & (" + B + " - 1)) == 0"; }

/// A grid-stride loop that accumulates, its elements kept in their block: in grid step k, block b owns the
/// B elements from k * B * gridDim.x + b * B (its chunk). The vector loop takes L chunks per round, thread t
/// vector t % (B / L) of chunk t / (B / L), while the chunk is whole; the block's first chunk that is not
/// (at most one) runs the original body from its start. So each block sums the same elements as before, and
/// its fold (BlockCombine.h) only reassociates.
static std::string vectorizedInBlocks(const inv::Elementwise &E, unsigned Lanes) {
  std::map<std::string, ParamUse> Uses = paramUses(E);
  std::string L = std::to_string(Lanes), B = "(" + E.BlockExtent.value_or("blockDim.x") + ")", N = "(" + E.Bound + ")";
  std::string Whole = "(" + N + " - kloop_b >= " + B + " ? (" + N + " - kloop_b - " + B + ") / kloop_s + 1 : 0)";
  return "if (blockDim.x == (unsigned)" + B + " && " + B + " % " + L + " == 0 && " + powerOfTwo(B) + " && " +
         alignedTest(Uses) + ") {\n" +
         "  const long long kloop_s = (long long)" + B + " * gridDim.x, kloop_b = (long long)blockIdx.x * " + B + ";\n" +
         "  for (long long kloop_k = threadIdx.x / (" + B + " / " + L + "); kloop_k * kloop_s + kloop_b + " + B +
         " <= " + N + "; kloop_k += " + L + ") {\n" + "    const long long kloop_v = (kloop_k * kloop_s + kloop_b) / " + L +
         " + threadIdx.x % (" + B + " / " + L + ");\n" + vectorBody(E, Uses, Lanes) + "  }\n  " +
         scalarLoop(E, "(" + E.VarType + ")(" + Whole + " * kloop_s + kloop_b + threadIdx.x)") + "\n} else {\n  " +
         scalarLoop(E, E.Init) + "\n}";
}

/// The whole replacement of the loop.
static std::string vectorized(const inv::Elementwise &E, unsigned Lanes) {
  if (E.StrideKind == "grid" && !E.Reductions.empty())
    return vectorizedInBlocks(E, Lanes);
  std::map<std::string, ParamUse> Uses = paramUses(E);
  std::string L = std::to_string(Lanes);
  std::string Extent = E.BlockExtent ? "blockDim.x == (unsigned)(" + *E.BlockExtent + ") && " : "";
  if (!E.Reductions.empty())
    Extent += powerOfTwo("(" + E.BlockExtent.value_or("blockDim.x") + ")") + " && ";
  return "if (" + Extent + alignedTest(Uses) + ") {\n" + vectorLoop(E, Uses, Lanes) +
         "  " + scalarLoop(E, "(" + E.Bound + ") / " + L + " * " + L + " + (" + E.Init + ")") + "\n} else {\n  " +
         scalarLoop(E, E.Init) + "\n}";
}

/// What the rewrite of \p E does, for the explanation.
static std::string why(const inv::Elementwise &E, unsigned Lanes) {
  std::string W = "unit-stride accesses of " + std::to_string(VectorBytes / Lanes) + "-byte elements; " +
                  std::to_string(Lanes) + " per 16-byte access when every pointer is 16-byte aligned";
  bool InBlocks = E.StrideKind == "grid" && !E.Reductions.empty();
  std::string L = std::to_string(Lanes);
  if (E.BlockExtent)
    W += " and blockDim.x == " + *E.BlockExtent;
  if (InBlocks)
    W += (E.BlockExtent ? ", a multiple of " : " and blockDim.x a multiple of ") + L;
  if (!E.Reductions.empty())
    W += std::string(E.BlockExtent || InBlocks ? "," : " and blockDim.x") + " a power of two";
  W += " (checked at run time), a scalar tail for " +
       (InBlocks ? "each block's last chunk; each block keeps its elements (its chunk of " + L +
                       " grid steps per round)"
                 : "the last " + E.Bound + " % " + L + " elements");
  for (const inv::ElementwiseReduction &R : E.Reductions)
    W += "; the " + R.Op + "-reduction into '" + R.Var + "' takes its elements in another order" +
         (R.Reassociates ? " (a precision change: " + R.Type + " " + R.Op + " is not associative)" : " (exact)");
  return W;
}

/// Rule vectorize-global-access on loop \p L of kernel \p K.
static RuleSite loopSite(const inv::Kernel &K, const inv::Loop &L, const std::vector<OutputTolerance> *Outputs) {
  unsigned Lanes = 0;
  std::optional<std::string> Why = elementwiseRefusal(K, L);
  if (!Why)
    Why = widthRefusal(*L.ElementwiseFacts, Lanes);
  if (!Why)
    Why = overlapRefusal(K, *L.ElementwiseFacts);
  if (!Why)
    Why = combineRefusal(*L.ElementwiseFacts);
  if (!Why)
    Why = precisionRefusal(K, *L.ElementwiseFacts, Outputs);
  if (!Why && L.UnrollPragma)
    Why = std::string("an unroll pragma stands in front of the loop, which the rewrite would leave before an if");
  return replaceLoopSite(
      L, Why, [&] { return vectorized(*L.ElementwiseFacts, Lanes); }, [&] { return why(*L.ElementwiseFacts, Lanes); });
}

std::vector<RuleSite> explainVectorizeGlobalAccess(const inv::Inventory &Inv,
                                                   const std::vector<OutputTolerance> *Outputs) {
  std::vector<RuleSite> Out;
  for (const inv::Kernel &K : Inv.Kernels) {
    std::vector<RuleSite> Fired; // one site per kernel: one candidate moves all its loops to 16-byte accesses
    for (const inv::Loop &L : K.Loops) {
      RuleSite S = loopSite(K, L, Outputs);
      (S.Edits.empty() ? Out : Fired).push_back(std::move(S));
    }
    if (Fired.size() == 1)
      Out.push_back(std::move(Fired.front()));
    if (Fired.size() < 2)
      continue;
    RuleSite All;
    for (RuleSite &S : Fired) {
      All.Site += (All.Site.empty() ? "" : "+") + S.Site;
      All.Why += (All.Why.empty() ? "" : "; ") + S.Site + ": " + S.Why;
      All.Edits.push_back(std::move(S.Edits.front()));
    }
    Out.push_back(std::move(All));
  }
  return Out;
}

} // namespace kloop
