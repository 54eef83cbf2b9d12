//===- FastMath.cpp - Rule fast-math (a precision change) -----------------===//
//
// Match: the float operations of a kernel body that CUDA has a faster, less
//        precise intrinsic for (inventory "float_ops": expf, x / y, ...).
// Legal: the value may reach any output the kernel writes, so every pointer
//        parameter it writes must be a workload output with a tolerance, and
//        the tightest of them must allow the documented maximum error of the
//        intrinsic plus that of the function it replaces (both from the exact
//        result, so their sum bounds the distance from the baseline). Bounds:
//        CUDA C Programming Guide, "Mathematical Functions" (expf 2 ulp, IEEE
//        division 0 ulp) and "Intrinsic Functions" (__expf 2 + floor(|1.173 x|)
//        ulp, __fdividef 2 ulp for |y| in [2^-126, 2^126]).
// Edit:  replace_body of the kernel with the operations renamed.
// docs/rules/fast-math.md.
//
//===----------------------------------------------------------------------===//
#include "kloop/Edit/Rules.h"
#include "kloop/Inventory/WorkloadScope.h"

#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace kloop {

namespace {
/// What the CUDA C Programming Guide documents for one replacement.
struct Intrinsic {
  const char *Function; ///< the operation as in the inventory: "expf", "/"
  const char *Name;     ///< the intrinsic
  const char *Bound;    ///< the intrinsic's documented maximum error, as the guide states it
  double Ulp;           ///< its constant part, ulp
  double UlpPerArg;     ///< ulp added per unit of |x| (argument-dependent bounds), else 0
  double ReplacedUlp;   ///< the maximum error of the function it replaces, ulp
  const char *Refusal;  ///< set: the rule never makes this replacement, because...
};

constexpr Intrinsic Table[] = {
    {"expf", "__expf", "2 + floor(|1.173 x|) ulp", 2, 1.173, 2, nullptr},
    {"exp10f", "__exp10f", "2 + floor(|2.97 x|) ulp", 2, 2.97, 2, nullptr},
    {"/", "__fdividef", "2 ulp for |y| in [2^-126, 2^126]", 2, 0, 0, nullptr},
    {"logf", "__logf", "", 0, 0, 0,
     "the guide bounds __logf by an absolute error of 2^-21.41 on [0.5, 2] (3 ulp elsewhere): near x = 1, where "
     "log x is near 0, that is no bound relative to the result, and clang cannot keep x away from 1"},
    {"log2f", "__log2f", "", 0, 0, 0,
     "the guide bounds __log2f by an absolute error of 2^-22 on [0.5, 2] (2 ulp elsewhere): near x = 1 that is no "
     "bound relative to the result, and clang cannot keep x away from 1"},
    {"log10f", "__log10f", "", 0, 0, 0,
     "the guide bounds __log10f by an absolute error of 2^-24 on [0.5, 2] (3 ulp elsewhere): near x = 1 that is no "
     "bound relative to the result, and clang cannot keep x away from 1"},
    {"sinf", "__sinf", "", 0, 0, 0,
     "the guide bounds __sinf only on [-pi, pi] (absolute error 2^-21.41) and says it is larger outside; clang "
     "cannot bound the argument"},
    {"cosf", "__cosf", "", 0, 0, 0,
     "the guide bounds __cosf only on [-pi, pi] (absolute error 2^-21.19) and says it is larger outside; clang "
     "cannot bound the argument"},
    {"tanf", "__tanf", "", 0, 0, 0,
     "the guide derives __tanf from __sinf and __cosf with no bound of its own, and the quotient's error near a "
     "zero of the cosine is unbounded"},
    {"powf", "__powf", "", 0, 0, 0,
     "the guide gives __powf no bound of its own (it is computed as exp2f(y * __log2f(x))), so its error cannot be "
     "compared with a tolerance"},
};

/// One ulp of a normal float is at most 2^-23 of its magnitude: a relative tolerance v allows v * 2^23 ulp.
constexpr double UlpsPerUnitRel = 8388608.0;

const Intrinsic *intrinsicOf(const std::string &Function) {
  for (const Intrinsic &I : Table)
    if (Function == I.Function)
      return &I;
  return nullptr;
}

std::string number(double V) {
  std::ostringstream OS;
  OS << V;
  return OS.str();
}

/// The tightest tolerance of kernel \p K's outputs, as an error budget in ulp.
struct Budget {
  double Ulp = 0;
  std::string Source; ///< "rel 1e-05 on out (arg 2)"
};

/// The budget of \p K, or why the rule cannot change its precision.
std::optional<std::string> budgetOf(const inv::Kernel &K, const std::vector<OutputTolerance> *Outputs, Budget &B) {
  if (!Outputs)
    return std::string("no workload tolerances (give --config): the rule changes precision only where an output's "
                       "tolerance allows it");
  bool First = true;
  for (unsigned Arg = 0; Arg < K.Params.size(); ++Arg) {
    const inv::Param &P = K.Params[Arg];
    if (!P.Pointer || P.Written != true)
      continue;
    const OutputTolerance *T = nullptr;
    for (const OutputTolerance &O : *Outputs)
      if (O.Arg == Arg && kernelNameMatches(K, O.Kernel))
        T = &O;
    std::string Where = P.Name + " (arg " + std::to_string(Arg) + ")";
    if (!T)
      return "the kernel writes " + Where + ", which the workload's outputs: do not list: no tolerance says how "
             "much precision it may lose";
    if (T->Kind == "exact")
      return "the tolerance of " + Where + " is exact: any changed bit fails it";
    if (T->Kind == "abs")
      return "the tolerance of " + Where + " is absolute (" + number(T->Value) + "): the intrinsics' bounds are in "
             "ulp, relative to the value, whose magnitude clang cannot bound";
    double Ulp = T->Kind == "ulp" ? T->Value : T->Value * UlpsPerUnitRel;
    if (First || Ulp < B.Ulp)
      B = {Ulp, T->Kind + " " + number(T->Value) + " on " + Where};
    First = false;
  }
  if (First)
    return std::string("the kernel writes no pointer parameter: nothing says what precision it may lose");
  return std::nullopt;
}

/// Why \p Op may not become its intrinsic under \p B, or nullopt (\p Note: what the bound allows).
std::optional<std::string> opRefusal(const Intrinsic *I, const Budget &B, std::string &Note) {
  if (!I)
    return std::string("no intrinsic the rule knows");
  if (I->Refusal)
    return std::string(I->Refusal);
  double Least = I->Ulp + I->ReplacedUlp;
  std::string Bound = std::string(I->Name) + "'s documented maximum error is " + I->Bound + " (" +
                      number(I->ReplacedUlp) + " ulp for the operation it replaces)";
  if (Least > B.Ulp)
    return Bound + ": at least " + number(Least) + " ulp from the baseline, over the tightest tolerance (" + B.Source +
           ", " + number(std::floor(B.Ulp * 10) / 10) + " ulp)";
  Note = std::string(I->Name) + " (" + I->Bound + ")";
  if (I->UlpPerArg > 0)
    Note += ", within " + B.Source + " while |x| <= " + number(std::floor((B.Ulp - Least) / I->UlpPerArg)) +
            " (x's range is not analysed)";
  return std::nullopt;
}

/// \p Text[\p From, \p To) with the operations of \p Ops (sorted by begin, outer first) from \p At on replaced.
std::string rewritten(const std::string &Text, const std::vector<const inv::FloatOp *> &Ops, size_t &At,
                      unsigned From, unsigned To) {
  std::string Out;
  unsigned Pos = From;
  while (At < Ops.size() && Ops[At]->Begin < To) {
    const inv::FloatOp &O = *Ops[At++];
    Out += Text.substr(Pos, O.Begin - Pos);
    const char *Name = intrinsicOf(O.Function)->Name;
    if (O.Function == "/") {
      std::string L = rewritten(Text, Ops, At, O.Begin, O.Split);
      std::string R = rewritten(Text, Ops, At, O.Split + 1, O.End);
      Out += std::string(Name) + "(" + llvm::StringRef(L).trim().str() + ", " + llvm::StringRef(R).trim().str() + ")";
    } else {
      Out += Name + rewritten(Text, Ops, At, O.Split, O.End);
    }
    Pos = O.End;
  }
  return Out + Text.substr(Pos, To - Pos);
}

/// The sites of kernel \p K: one per refused operation, then the kernel's own.
void kernelSites(const inv::Kernel &K, const std::vector<OutputTolerance> *Outputs, std::vector<RuleSite> &Out) {
  RuleSite S;
  S.Site = K.ID + "/float_ops";
  Budget B;
  std::optional<std::string> Why;
  if (!K.Edit.Editable)
    Why = "the kernel is not editable: " + K.Edit.NotEditableReason.value_or("");
  else if (!K.FloatMath->BodyText)
    Why = "a macro hides the kernel body";
  if (!Why)
    Why = budgetOf(K, Outputs, B);
  if (Why) {
    S.Why = *Why;
    Out.push_back(S);
    return;
  }
  std::vector<const inv::FloatOp *> Chosen;
  std::string Notes;
  for (const inv::FloatOp &O : K.FloatMath->Ops) {
    std::string Note;
    if (std::optional<std::string> No = opRefusal(intrinsicOf(O.Function), B, Note)) {
      Out.push_back({K.ID + "/" + (O.Function == "/" ? "division" : O.Function) + "@" + std::to_string(O.Line), {},
                     "precision change refused: " + *No});
      continue;
    }
    Chosen.push_back(&O);
    Notes += std::string(Notes.empty() ? "" : "; ") + (O.Function == "/" ? "x / y" : O.Function) + " at line " +
             std::to_string(O.Line) + " -> " + Note;
  }
  if (Chosen.empty()) {
    S.Why = "no float operation whose intrinsic fits the tolerance (" + B.Source + ")";
    Out.push_back(S);
    return;
  }
  std::stable_sort(Chosen.begin(), Chosen.end(), [](const inv::FloatOp *A, const inv::FloatOp *C) {
    return A->Begin != C->Begin ? A->Begin < C->Begin : A->End > C->End;
  });
  const std::string &Text = *K.FloatMath->BodyText;
  size_t At = 0;
  Edit E;
  E.Kind = EditKind::ReplaceBody;
  E.ID = K.ID;
  E.Code = rewritten(Text, Chosen, At, 0, Text.size());
  S.Edits.push_back(E);
  S.Why = "precision change: " + Notes + "; each within the tightest tolerance (" + B.Source + ")";
  Out.push_back(S);
}
} // namespace

std::vector<RuleSite> explainFastMath(const inv::Inventory &Inv, const std::vector<OutputTolerance> *Outputs) {
  std::vector<RuleSite> Out;
  for (const inv::Kernel &K : Inv.Kernels)
    if (K.FloatMath && !K.FloatMath->Ops.empty())
      kernelSites(K, Outputs, Out);
  return Out;
}

} // namespace kloop
