//===- PrivatizeAtomics.cpp - Rule privatize-atomics ----------------------===//
//
// Match: a kernel whose body updates one pointer parameter p only with
//        atomicAdd on integers, atomicMin or atomicMax (`atomicAdd(&p[i], v)`,
//        `atomicAdd(p + i, v)`), inventory "atomic_targets".
// Legal: every index has a compile-time bound N (0 <= i < N) and N elements fit
//        in static shared memory beside the kernel's own; nothing else uses p;
//        no atomic's returned value is used; the body has no `return` (every
//        thread reaches both barriers); p is __restrict__ or the only pointer
//        parameter. Integer add, min and max are associative and commutative,
//        so merging per-block results gives the same values.
// Edit:  replace_body: a shared copy of N elements set to the operation's
//        identity, __syncthreads(), the body with each atomic's p replaced by
//        the copy, __syncthreads(), one atomic per non-identity element.
// docs/rules/privatize-atomics.md.
//
//===----------------------------------------------------------------------===//
#include "kloop/Edit/Rules.h"

#include <algorithm>
#include <optional>

namespace kloop {

/// The identity of \p Function on \p Type (a value that leaves any element unchanged), or "" when the rule
/// does not privatize that pair.
static std::string identity(const std::string &Function, const std::string &Type) {
  bool Unsigned = Type == "unsigned int", Int = Type == "int";
  if (Function == "atomicAdd" && (Unsigned || Int || Type == "unsigned long long"))
    return "0";
  if (Function == "atomicMin" && (Unsigned || Int))
    return Unsigned ? "0xffffffffu" : "2147483647";
  if (Function == "atomicMax" && (Unsigned || Int))
    return Unsigned ? "0u" : "(-2147483647 - 1)";
  return "";
}

/// Why the atomics of \p A cannot be merged per block (operation, type, returned value, bound).
static std::optional<std::string> atomicsRefusal(const inv::AtomicTarget &A) {
  const std::string &F = A.Atomics.front().Function;
  for (const inv::AtomicSite &S : A.Atomics) {
    std::string At = " at line " + std::to_string(S.Line);
    if (S.Function != F)
      return "it is updated by both " + F + " and " + S.Function + At + ": one merge cannot replay two operations";
    if (S.Function == "atomicAdd" && (A.ElementType == "float" || A.ElementType == "double"))
      return S.Function + At + " adds " + A.ElementType + "s: per-block partial sums regroup the additions, which "
             "changes rounding (a precision change this rule does not make)";
    if (identity(S.Function, A.ElementType).empty())
      return S.Function + At + " on " + A.ElementType + " is not one the rule privatizes (atomicAdd on int, unsigned "
             "int and unsigned long long; atomicMin and atomicMax on int and unsigned int)";
    if (S.ResultUsed)
      return "the value " + S.Function + At + " returns is used: privatized, it would be the block's, not the global "
             "one";
    if (!S.Bound)
      return "the index `" + S.Index + "`" + At + " has no bound the analysis proves (it recognises an unsigned char "
             "or short value, `x & M`, `x % M` in unsigned arithmetic, `x >> k` of a bounded x, a constant)";
    if (!S.BaseOffset || *S.BaseOffset + A.Name.size() > A.BodyText->size() ||
        A.BodyText->compare(*S.BaseOffset, A.Name.size(), A.Name) != 0)
      return S.Function + At + " is written through a macro: its target cannot be rewritten";
  }
  return std::nullopt;
}

/// The largest index bound of \p A's atomics.
static int64_t binCount(const inv::AtomicTarget &A) {
  int64_t N = 0;
  for (const inv::AtomicSite &S : A.Atomics)
    N = std::max(N, S.Bound.value_or(0));
  return N;
}

/// Why \p A's parameter may be seen by other code while the block works on its copy.
static std::optional<std::string> aliasRefusal(const inv::Kernel &K, const inv::AtomicTarget &A) {
  if (A.OtherUse)
    return "`" + A.Name + "` is also used other than as an atomic's target (" + *A.OtherUse +
           "): that use would miss the counts merged only at the block's end";
  const inv::Param *Target = nullptr;
  bool OtherPointer = false;
  for (const inv::Param &P : K.Params) {
    if (P.ID == A.Param)
      Target = &P;
    else
      OtherPointer |= P.Pointer;
  }
  if (Target && !Target->Restrict && OtherPointer)
    return "`" + A.Name + "` is not __restrict__ and the kernel has other pointer parameters: one of them may "
           "point into it and see the counts at other times";
  if (Target && !Target->Restrict && K.IndirectPointer)
    return "`" + A.Name + "` is not __restrict__ and the kernel reaches memory other than through its pointer "
           "parameters, which may point into it: " + *K.IndirectPointer;
  return std::nullopt;
}

/// Why \p A cannot be privatized, or nullopt.
static std::optional<std::string> refusal(const inv::Kernel &K, const inv::AtomicTarget &A) {
  if (!K.Edit.Editable)
    return "its kernel is not editable: " + K.Edit.NotEditableReason.value_or("");
  if (K.AtomicTargets.size() > 1)
    return "the kernel updates " + std::to_string(K.AtomicTargets.size()) + " parameters with atomics; the rule "
           "privatizes kernels that update one";
  if (A.Atomics.empty() || !A.BodyText || !A.ElementBytes)
    return std::string("the kernel body or the element type cannot be read (a macro, or a dependent type)");
  if (A.Returns)
    return "the kernel body has a " + *A.Returns + ": a thread that returns early would skip the __syncthreads() "
           "before the merge";
  if (std::optional<std::string> Why = aliasRefusal(K, A))
    return Why;
  if (std::optional<std::string> Why = atomicsRefusal(A))
    return Why;
  long long Total = staticSharedBytes(K) + binCount(A) * *A.ElementBytes;
  if (Total > StaticSharedLimit)
    return "a private copy of " + std::to_string(binCount(A)) + " elements would bring the kernel's static shared "
           "memory to " + std::to_string(Total) + " bytes, over the " + std::to_string(StaticSharedLimit) +
           "-byte static limit per block";
  return std::nullopt;
}

/// The kernel body with the private copy, its merge, and each atomic's target renamed to the copy.
static std::string privatizedBody(const inv::AtomicTarget &A) {
  const std::string Copy = "kloop_priv_" + A.Name, N = std::to_string(binCount(A)), &E = A.ElementType;
  const std::string &F = A.Atomics.front().Function, Id = identity(F, E);
  std::string Inner = A.BodyText->substr(1, A.BodyText->size() - 2);
  std::vector<unsigned> Offsets;
  for (const inv::AtomicSite &S : A.Atomics)
    Offsets.push_back(*S.BaseOffset - 1); // BodyText begins with `{`
  std::sort(Offsets.rbegin(), Offsets.rend());
  for (unsigned At : Offsets)
    Inner.replace(At, A.Name.size(), Copy);
  std::string Loop = "for (unsigned kloop_b = kloop_tid; kloop_b < " + N + "; kloop_b += kloop_threads)";
  return "{\n__shared__ " + E + " " + Copy + "[" + N + "];\n" +
         "const unsigned kloop_tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);\n" +
         "const unsigned kloop_threads = blockDim.x * blockDim.y * blockDim.z;\n" + Loop + " " + Copy +
         "[kloop_b] = " + Id + ";\n__syncthreads();\n{" + Inner + "}\n__syncthreads();\n" + Loop + " {\nconst " + E +
         " kloop_v = " + Copy + "[kloop_b];\nif (kloop_v != " + Id + ") " + F + "(&" + A.Name +
         "[kloop_b], kloop_v);\n}\n}";
}

std::vector<RuleSite> explainPrivatizeAtomics(const inv::Inventory &Inv) {
  std::vector<RuleSite> Out;
  for (const inv::Kernel &K : Inv.Kernels)
    for (const inv::AtomicTarget &A : K.AtomicTargets) {
      RuleSite S;
      S.Site = A.Param;
      if (std::optional<std::string> Why = refusal(K, A)) {
        S.Why = *Why;
      } else {
        Edit E;
        E.Kind = EditKind::ReplaceBody;
        E.ID = K.ID;
        E.Code = privatizedBody(A);
        S.Edits.push_back(E);
        S.Why = std::to_string(A.Atomics.size()) + " " + A.Atomics.front().Function + " on `" + A.Name +
                "` with indexes below " + std::to_string(binCount(A)) + " go to a per-block shared copy (" +
                std::to_string(binCount(A) * *A.ElementBytes) + " bytes), merged with one " +
                A.Atomics.front().Function + " per element after __syncthreads()";
      }
      Out.push_back(std::move(S));
    }
  return Out;
}

std::vector<Edit> matchPrivatizeAtomics(const inv::Inventory &Inv) { return editsOf(explainPrivatizeAtomics(Inv)); }

} // namespace kloop
