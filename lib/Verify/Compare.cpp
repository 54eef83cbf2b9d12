//===- Compare.cpp - Candidate outputs against the baseline ---------------===//
#include "kloop/Verify/Compare.h"
#include "Elements.h"
#include "KeyNames.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <tuple>

using namespace llvm;

namespace kloop {
namespace verify {

StringRef dtypeName(DType T) {
  switch (T) {
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::F16:
    return "f16";
  case DType::I32:
    return "i32";
  case DType::U8:
    return "u8";
  }
  return "u8";
}

Expected<DType> parseDType(StringRef Name) {
  if (Name == "bytes")
    return DType::U8;
  for (DType T : {DType::F32, DType::F64, DType::F16, DType::I32, DType::U8})
    if (Name == dtypeName(T))
      return T;
  return createStringError(
      inconvertibleErrorCode(),
      formatv("unknown dtype '{0}' (expected f32, f64, f16, i32, u8 or bytes)",
              Name));
}

size_t dtypeSize(DType T) {
  switch (T) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
    return 8;
  case DType::F16:
    return 2;
  case DType::U8:
    return 1;
  }
  return 1;
}

StringRef toleranceKindName(ToleranceKind K) {
  switch (K) {
  case ToleranceKind::Abs:
    return "abs";
  case ToleranceKind::Rel:
    return "rel";
  case ToleranceKind::Ulp:
    return "ulp";
  case ToleranceKind::Exact:
    return "exact";
  }
  return "exact";
}

Expected<ToleranceKind> parseToleranceKind(StringRef Name) {
  for (ToleranceKind K : {ToleranceKind::Abs, ToleranceKind::Rel,
                          ToleranceKind::Ulp, ToleranceKind::Exact})
    if (Name == toleranceKindName(K))
      return K;
  return createStringError(
      inconvertibleErrorCode(),
      formatv("unknown tolerance kind '{0}' (expected abs, rel, ulp or exact)",
              Name));
}

std::string kernelBaseName(StringRef D) {
  // Find the parameter list: the first '(' outside template arguments.
  int Depth = 0;
  size_t Paren = StringRef::npos;
  for (size_t I = 0; I < D.size(); ++I) {
    char C = D[I];
    if (C == '<')
      ++Depth;
    else if (C == '>' && Depth > 0)
      --Depth;
    else if (C == '(' && Depth == 0) {
      Paren = I;
      break;
    }
  }
  if (Paren == StringRef::npos || Paren == 0)
    return D.str();
  StringRef Head = D.substr(0, Paren).rtrim();
  // Strip trailing template arguments.
  if (Head.ends_with(">")) {
    int Dep = 0;
    for (size_t I = Head.size(); I-- > 0;) {
      if (Head[I] == '>')
        ++Dep;
      else if (Head[I] == '<' && --Dep == 0) {
        Head = Head.substr(0, I).rtrim();
        break;
      }
    }
  }
  // Drop qualifiers and the return type.
  size_t Colon = Head.rfind("::");
  if (Colon != StringRef::npos)
    Head = Head.substr(Colon + 2);
  size_t Space = Head.find_last_of(" *&");
  if (Space != StringRef::npos)
    Head = Head.substr(Space + 1);
  return Head.empty() ? D.str() : Head.str();
}

bool kernelMatches(StringRef Spec, StringRef Mangled, StringRef Demangled) {
  if (Spec.empty())
    return false;
  if (Spec == Mangled || Spec == Demangled)
    return true;
  if (!Demangled.empty() && Spec == kernelBaseName(Demangled))
    return true;
  return false;
}

namespace {

/// A pair of distinct finite values: |c - b|, max(|b|, |c|) and their ulp
/// distance (Compare.h).
struct PairError {
  double Abs, Scale;
  uint64_t Ulp;
};

template <typename E>
PairError pairError(typename E::Bits BX, typename E::Bits CX, double BV,
                    double CV) {
  PairError P;
  P.Abs = std::fabs(CV - BV);
  P.Scale = std::max(std::fabs(BV), std::fabs(CV));
  if constexpr (E::Float) {
    // |OB - OC| without a branch (the sign of a last-bit difference is
    // random): negated in two's complement when OB < OC.
    uint64_t OB = detail::orderedBits(BX), OC = detail::orderedBits(CX);
    uint64_t Neg = 0 - static_cast<uint64_t>(OB < OC);
    P.Ulp = ((OB - OC) ^ Neg) - Neg;
  } else {
    P.Ulp = static_cast<uint64_t>(P.Abs);
  }
  return P;
}

void addErrorStats(const PairError &P, BufferComparison &R) {
  R.MaxAbsError = std::max(R.MaxAbsError, P.Abs);
  R.MaxRelError = std::max(R.MaxRelError, P.Abs / P.Scale);
  R.MaxUlpError = std::max(R.MaxUlpError, P.Ulp);
}

bool errorWithin(const PairError &P, const Tolerance &Tol) {
  switch (Tol.Kind) {
  case ToleranceKind::Abs:
    return P.Abs <= Tol.Value;
  case ToleranceKind::Rel:
    return P.Abs <= Tol.Value * P.Scale;
  case ToleranceKind::Ulp:
    return static_cast<double>(P.Ulp) <= Tol.Value;
  case ToleranceKind::Exact:
    break;
  }
  return false;
}

/// Whether a pair whose bits differ but that is not two distinct finite
/// values is within \p Tol: under exact never; else NaN matches NaN only,
/// +0 matches -0, and an infinity matches nothing else.
bool specialPairWithin(double BV, double CV, const Tolerance &Tol) {
  if (Tol.Kind == ToleranceKind::Exact)
    return false;
  if (std::isnan(BV) || std::isnan(CV))
    return std::isnan(BV) && std::isnan(CV);
  return BV == CV;
}

/// Adds element \p I, whose baseline bits \p BX differ from the candidate's
/// \p CX, to \p R: error statistics, verdict, and the anti-cheat counts of
/// countLeftPoison() (when \p Poisoned) and countNewNaNs().
template <typename E>
void addDifferingPair(uint64_t I, typename E::Bits BX, typename E::Bits CX,
                      const Tolerance &Tol, bool Poisoned,
                      BufferComparison &R) {
  double BV = E::value(BX), CV = E::value(CX);
  bool Ok;
  if (std::isfinite(BV) && std::isfinite(CV) && BV != CV) {
    PairError P = pairError<E>(BX, CX, BV, CV);
    addErrorStats(P, R);
    Ok = errorWithin(P, Tol);
  } else {
    Ok = specialPairWithin(BV, CV, Tol);
  }
  if (!Ok && R.Mismatched++ == 0) {
    R.FirstMismatch = I;
    R.FirstBaseline = BV;
    R.FirstCandidate = CV;
  }
  bool LeftPoison = Poisoned && detail::isPoisonBits(CX);
  if (LeftPoison && !detail::isPoisonBits(BX))
    ++R.Poison;
  if (E::Float && std::isnan(CV) && !std::isnan(BV) && !LeftPoison)
    ++R.NewNaNs;
}

/// Compares the \p N elements of type E at \p B and \p C into \p R. A pair
/// of bitwise-equal elements adds nothing: it matches under every tolerance,
/// its values are equal or both NaN (no error statistics), and neither side
/// is poison or NaN alone. So runs of equal bytes are skipped a chunk at a
/// time (memcmp), and the rest of the work is done for differing pairs only.
template <typename E>
void compareElements(const uint8_t *B, const uint8_t *C, uint64_t N,
                     const Tolerance &Tol, bool Poisoned, BufferComparison &R) {
  using Bits = typename E::Bits;
  constexpr uint64_t Chunk = 4096 / sizeof(Bits);
  for (uint64_t Begin = 0; Begin < N; Begin += Chunk) {
    uint64_t End = std::min(N, Begin + Chunk);
    if (std::memcmp(B + Begin * sizeof(Bits), C + Begin * sizeof(Bits),
                    (End - Begin) * sizeof(Bits)) == 0)
      continue;
    for (uint64_t I = Begin; I < End; ++I) {
      Bits BX = detail::bitsAt<E>(B, I), CX = detail::bitsAt<E>(C, I);
      if (BX != CX)
        addDifferingPair<E>(I, BX, CX, Tol, Poisoned, R);
    }
  }
}

Error checkBufferShapes(ArrayRef<uint8_t> B, ArrayRef<uint8_t> C, DType T) {
  if (B.size() != C.size())
    return createStringError(
        inconvertibleErrorCode(),
        formatv("buffer sizes differ: baseline {0} bytes, candidate {1} bytes",
                B.size(), C.size()));
  if (B.size() % dtypeSize(T))
    return createStringError(
        inconvertibleErrorCode(),
        formatv("buffer of {0} bytes is not a whole number of {1} elements",
                B.size(), dtypeName(T)));
  return Error::success();
}

} // namespace

Expected<BufferComparison> compareBuffers(ArrayRef<uint8_t> B,
                                          ArrayRef<uint8_t> C, DType T,
                                          Tolerance Tol,
                                          bool CandidatePoisoned) {
  if (Error E = checkBufferShapes(B, C, T))
    return E;
  BufferComparison R;
  R.Elements = B.size() / dtypeSize(T);
  // Bitwise-equal buffers (the usual case): all elements match, and, as
  // compareElements() says of equal pairs, nothing else is counted.
  if (B.empty() || std::memcmp(B.data(), C.data(), B.size()) == 0)
    return R;
  detail::withElement(T, [&](auto E) {
    compareElements<decltype(E)>(B.data(), C.data(), R.Elements, Tol,
                                 CandidatePoisoned, R);
  });
  return R;
}

namespace {

std::string launchName(const std::string &Kernel, uint64_t Ordinal,
                       uint64_t Arg) {
  return formatv("{0} #{1} arg {2}", Kernel, Ordinal, Arg).str();
}

/// printf-style %g (formatv has no shortest-form style for doubles).
std::string num(double V, int Precision = 6) {
  char Buf[64];
  snprintf(Buf, sizeof Buf, "%.*g", Precision, V);
  return Buf;
}

std::string toleranceText(const Tolerance &T) {
  if (T.Kind == ToleranceKind::Exact)
    return "exact";
  return (toleranceKindName(T.Kind) + " " + num(T.Value)).str();
}

using Key = std::tuple<std::string, uint64_t, uint64_t>; // name, ordinal, arg

/// An error when the baseline's capture \p BC of output \p S holds nothing to
/// compare against (vacuousOutput(), from \p Dump when there is one, else from
/// the hash). \p Launch names the launch ("gemm #0"). It is the workload's
/// problem, not the candidate's: see docs/verify.md "A baseline with nothing
/// to compare".
Error requireInformativeBaseline(const CaptureRecord &BC, const OutputSpec &S,
                                 const std::string &Launch,
                                 const MemoryBuffer *Dump) {
  VacuousOutput V =
      Dump ? vacuousOutput(dumpBytes(*Dump), S.Type, BC.Poisoned)
           : vacuousOutputFromHash(BC.Hash, BC.Bytes, S.Type, BC.Poisoned);
  if (V == VacuousOutput::No)
    return Error::success();
  uint64_t N = BC.Bytes / dtypeSize(S.Type);
  std::string Seen = Dump ? "from the dump" : "seen from the hash";
  std::string State =
      V == VacuousOutput::AllNaN
          ? formatv("entirely NaN after the launch ({0} of {0} {1} elements, "
                    "{2})",
                    N, dtypeName(S.Type), Seen)
                .str()
          : formatv("entirely poison after the launch ({0} of {0} {1} "
                    "elements still hold the bytes kloop wrote before it, {2})",
                    N, dtypeName(S.Type), Seen)
                .str();
  std::string Why =
      BC.Poisoned
          ? "the kernel reads this buffer (declare it `access: readwrite` in "
            "the .kloop.yaml outputs, so that kloop does not poison it) or "
            "writes nothing to it; no candidate can be verified against it, "
            "since equal NaNs or poison on both sides would match"
          : "the buffer was not poisoned, so the workload itself computes only "
            "NaN here (check its inputs, and that arg is the output); no "
            "candidate can be verified against it, since equal NaNs would "
            "match";
  return createStringError(
      inconvertibleErrorCode(),
      formatv("compare: baseline output {0} arg {1} ({2}) is {3}: {4}", S.Kernel,
              S.Arg, Launch, State, Why));
}

} // namespace

Expected<CompareReport> compareProfiles(const Profile &Baseline,
                                        const Profile &Candidate,
                                        ArrayRef<OutputSpec> Outputs,
                                        ArrayRef<std::string> TargetKernels) {
  if (Outputs.empty())
    return createStringError(inconvertibleErrorCode(),
                             "compare: no outputs declared; nothing would be "
                             "verified");
  detail::KeyNamer Keys(Baseline, Candidate);
  auto keyOf = [&](const CaptureRecord &C) {
    return Key{Keys.key(C.Kernel, C.Name), C.KernelOrdinal, C.Arg};
  };
  std::map<Key, const CaptureRecord *> CandIndex;
  for (const CaptureRecord &C : Candidate.Captures)
    CandIndex[keyOf(C)] = &C;

  CompareReport R;
  std::vector<std::string> Problems;
  auto addFinding = [&](FindingKind K, const Key &At, std::string Msg,
                        bool Fatal = true) {
    Finding F;
    F.Kind = K;
    F.Fatal = Fatal;
    F.Kernel = std::get<0>(At);
    F.KernelOrdinal = std::get<1>(At);
    F.Arg = std::get<2>(At);
    F.Message = std::move(Msg);
    if (Fatal)
      Problems.push_back(F.Message);
    R.Findings.push_back(std::move(F));
  };

  auto specFor = [&](const CaptureRecord &C) -> const OutputSpec * {
    for (const OutputSpec &S : Outputs)
      if (S.Arg == C.Arg && kernelMatches(S.Kernel, C.Kernel, C.Name))
        return &S;
    return nullptr;
  };

  std::vector<bool> SpecSeen(Outputs.size(), false);
  uint64_t ByDumps = 0;
  for (const CaptureRecord &BC : Baseline.Captures) {
    const OutputSpec *S = specFor(BC);
    Key K = keyOf(BC);
    std::string Where = launchName(std::get<0>(K), BC.KernelOrdinal, BC.Arg);
    auto It = CandIndex.find(K);
    if (!S) {
      // Not a checked output: inputs and workspaces. A bitwise difference is
      // worth a note, not a refusal.
      if (It != CandIndex.end() && It->second->Hash != BC.Hash)
        addFinding(FindingKind::OtherArgumentChanged, K,
                   Where + ": argument is not a declared output but its "
                           "bytes differ from the baseline's",
                   /*Fatal=*/false);
      continue;
    }
    SpecSeen[S - Outputs.data()] = true;
    std::unique_ptr<MemoryBuffer> BaseDump;
    if (!BC.DumpPath.empty()) {
      auto BB = readDump(BC);
      if (!BB)
        return BB.takeError();
      BaseDump = std::move(*BB);
    }
    if (Error E = requireInformativeBaseline(
            BC, *S, formatv("{0} #{1}", std::get<0>(K), BC.KernelOrdinal),
            BaseDump.get()))
      return E;
    LaunchComparison L;
    L.Kernel = std::get<0>(K);
    L.KernelOrdinal = BC.KernelOrdinal;
    L.Arg = BC.Arg;
    L.BaselineSeq = BC.Seq;
    if (It == CandIndex.end()) {
      L.Method = CompareMethod::Missing;
      L.Message = Where + ": capture missing in the candidate (kernel "
                          "launched fewer times, or the output not passed)";
      addFinding(FindingKind::MissingCapture, K, L.Message);
      ++R.Mismatched;
      R.Launches.push_back(std::move(L));
      continue;
    }
    const CaptureRecord &CC = *It->second;
    L.CandidateSeq = CC.Seq;
    if (CC.Bytes != BC.Bytes) {
      L.Method = CompareMethod::Hashes;
      L.Message = formatv("{0}: buffer size changed from {1} to {2} bytes",
                          Where, BC.Bytes, CC.Bytes)
                      .str();
      addFinding(FindingKind::SizeChanged, K, L.Message);
    } else if (BaseDump && !CC.DumpPath.empty()) {
      auto CB = readDump(CC);
      if (!CB)
        return CB.takeError();
      auto St = compareBuffers(dumpBytes(*BaseDump), dumpBytes(**CB), S->Type,
                               S->Tol, CC.Poisoned);
      if (!St)
        return createStringError(inconvertibleErrorCode(),
                                 Where + ": " + toString(St.takeError()));
      L.Method = CompareMethod::Dumps;
      ++ByDumps;
      L.Matched = St->Mismatched == 0;
      if (L.Matched)
        L.Message = formatv("{0}: {1} {2} elements within {3} (max abs error "
                            "{4}, max rel error {5}, max ulp {6})",
                            Where, St->Elements, dtypeName(S->Type),
                            toleranceText(S->Tol), num(St->MaxAbsError, 3),
                            num(St->MaxRelError, 3), St->MaxUlpError)
                        .str();
      else
        L.Message =
            formatv("{0}: {1} of {2} {3} elements outside {4} (max abs error "
                    "{5}, max rel error {6}, max ulp {7}; first at [{8}]: "
                    "baseline {9} vs candidate {10})",
                    Where, St->Mismatched, St->Elements, dtypeName(S->Type),
                    toleranceText(S->Tol), num(St->MaxAbsError, 3),
                    num(St->MaxRelError, 3), St->MaxUlpError,
                    *St->FirstMismatch, num(St->FirstBaseline, 9),
                    num(St->FirstCandidate, 9))
                .str();
      if (St->Poison)
        addFinding(FindingKind::UnwrittenOutput, K,
                   formatv("{0}: output not fully written: {1} of {2} "
                           "elements still poison",
                           Where, St->Poison, St->Elements)
                       .str());
      if (St->NewNaNs)
        addFinding(FindingKind::NewNaN, K,
                   formatv("{0}: {1} of {2} elements are NaN where the "
                           "baseline has a number",
                           Where, St->NewNaNs, St->Elements)
                       .str());
      L.Stats = *St;
    } else {
      L.Method = CompareMethod::Hashes;
      L.Matched = CC.Hash == BC.Hash;
      if (L.Matched)
        L.Message = Where + ": bitwise equal (hashes match)";
      else if (S->Tol.Kind == ToleranceKind::Exact)
        L.Message = Where + ": bitwise different (hashes differ)";
      else
        L.Message = Where + ": hashes differ and a dump is missing: without "
                            "dumps only a bitwise (exact) comparison is "
                            "possible, so the " +
                    toleranceText(S->Tol) +
                    " tolerance cannot be applied (rerun with "
                    "KLOOP_CUPTI_DUMP=1)";
      uint64_t Elements = CC.Bytes / dtypeSize(S->Type);
      if (!L.Matched && CC.Poisoned && CC.Bytes > 0 &&
          hashIsAllPoison(CC.Hash, CC.Bytes) &&
          !hashIsAllPoison(BC.Hash, BC.Bytes))
        addFinding(FindingKind::UnwrittenOutput, K,
                   formatv("{0}: output not fully written: {1} of {1} "
                           "elements still poison (seen from the hash)",
                           Where, Elements)
                       .str());
    }
    if (L.Matched)
      ++R.Matched;
    else {
      ++R.Mismatched;
      Problems.push_back(L.Message);
    }
    R.Launches.push_back(std::move(L));
  }

  for (size_t I = 0; I < Outputs.size(); ++I)
    if (!SpecSeen[I])
      return createStringError(
          inconvertibleErrorCode(),
          formatv("compare: output {0} arg {1} has no capture in the baseline "
                  "{2}; the check would be vacuous (is the kernel a target in "
                  "KLOOP_CUPTI_TARGETS?)",
                  Outputs[I].Kernel, Outputs[I].Arg, Baseline.Path));

  // Candidate captures of checked outputs that the baseline does not have.
  std::map<Key, bool> BaseKeys;
  for (const CaptureRecord &BC : Baseline.Captures)
    BaseKeys[keyOf(BC)] = true;
  for (const CaptureRecord &CC : Candidate.Captures) {
    Key K = keyOf(CC);
    if (specFor(CC) && !BaseKeys.count(K))
      addFinding(FindingKind::ExtraCapture, K,
                 launchName(std::get<0>(K), CC.KernelOrdinal, CC.Arg) +
                     ": captured in the candidate but not in the baseline "
                     "(kernel launched more times)");
  }

  std::vector<std::string> Targets(TargetKernels.begin(), TargetKernels.end());
  if (Targets.empty())
    for (const OutputSpec &S : Outputs)
      Targets.push_back(S.Kernel);
  std::vector<Finding> Structural = checkLaunchCounts(Baseline, Candidate, Targets);
  for (std::vector<Finding> More :
       {checkStreams(Baseline, Candidate, Targets), checkLeaks(Baseline, Candidate)})
    for (Finding &F : More)
      Structural.push_back(std::move(F));
  for (Finding &F : Structural) {
    Problems.push_back(F.Message);
    R.Findings.push_back(std::move(F));
  }

  R.Passed = Problems.empty();
  if (R.Passed)
    R.Explanation = formatv("outputs match: {0} launch captures of {1} "
                            "output(s) ({2} compared element-wise from dumps, "
                            "{3} by hash)",
                            R.Matched, Outputs.size(), ByDumps,
                            R.Matched - ByDumps)
                        .str();
  else {
    // Deduplicate while keeping order; cap the list so the text stays
    // readable.
    std::vector<std::string> Uniq;
    for (const std::string &P : Problems)
      if (std::find(Uniq.begin(), Uniq.end(), P) == Uniq.end())
        Uniq.push_back(P);
    size_t Shown = std::min<size_t>(Uniq.size(), 5);
    std::string Text = join(Uniq.begin(), Uniq.begin() + Shown, "; ");
    if (Uniq.size() > Shown)
      Text += formatv("; and {0} more", Uniq.size() - Shown).str();
    R.Explanation = formatv("outputs differ: {0}", Text).str();
  }
  return R;
}

} // namespace verify
} // namespace kloop
