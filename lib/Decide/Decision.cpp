//===- Decision.cpp - Accept or refuse a candidate ------------------------===//
#include "kloop/Decide/Decision.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include <cmath>

using namespace llvm;

namespace kloop {
namespace decide {

StringRef verdictName(Verdict V) {
  switch (V) {
  case Verdict::Accepted:
    return "accepted";
  case Verdict::Rejected:
    return "rejected";
  case Verdict::InsufficientSamples:
    return "insufficient samples";
  }
  return "rejected";
}

Expected<Verdict> parseVerdict(StringRef Name) {
  for (Verdict V :
       {Verdict::Accepted, Verdict::Rejected, Verdict::InsufficientSamples})
    if (Name == verdictName(V))
      return V;
  return createStringError(
      inconvertibleErrorCode(),
      formatv("unknown verdict '{0}' (expected accepted, rejected or "
              "insufficient samples)",
              Name));
}

namespace {

std::string pct(double Fraction) {
  return formatv("{0:f1}%", Fraction * 100).str();
}

std::string pctTol(double Fraction) {
  // Thresholds are usually round numbers: print 5% rather than 5.0%.
  double P = Fraction * 100;
  if (std::fabs(P - std::round(P)) < 1e-9)
    return formatv("{0}%", static_cast<long long>(std::llround(P))).str();
  return formatv("{0:f2}%", P).str();
}

Error checkThresholds(const DecisionThresholds &T) {
  if (!(T.MinGain >= 0) || !std::isfinite(T.MinGain))
    return createStringError(inconvertibleErrorCode(),
                             formatv("min gain {0} must be >= 0", T.MinGain));
  if (!(T.P99Tolerance >= 0) || !std::isfinite(T.P99Tolerance))
    return createStringError(
        inconvertibleErrorCode(),
        formatv("p99 tolerance {0} must be >= 0", T.P99Tolerance));
  if (T.MinSamples < 2)
    return createStringError(
        inconvertibleErrorCode(),
        formatv("minimum sample count {0} must be >= 2", T.MinSamples));
  return Error::success();
}

Error checkDurations(const ShapeEvidence &E, ArrayRef<Sample> S,
                     const char *Side) {
  for (size_t I = 0; I < S.size(); ++I)
    if (!std::isfinite(S[I].DurationNs) || S[I].DurationNs <= 0)
      return createStringError(
          inconvertibleErrorCode(),
          formatv("kernel {0} shape {1}: {2} sample #{3} has duration {4} ns; "
                  "durations must be finite and > 0",
                  E.Kernel, E.Shape, Side, I, S[I].DurationNs));
  return Error::success();
}

/// What the filter left of one side: "3 of 30 kept (27 discarded: 27
/// foreign GPU load, 0 throttled)", or "30 of 30 kept".
std::string keptText(const FilteredSamples &F) {
  std::string S =
      formatv("{0} of {1} kept", F.KeptNs.size(), F.KeptNs.size() + F.discarded())
          .str();
  if (F.discarded())
    S += formatv(" ({0} discarded: {1} foreign GPU load, {2} throttled)",
                 F.discarded(), F.DiscardedForeign, F.DiscardedThrottled)
             .str();
  return S;
}

/// "; <what> samples discarded: baseline B, candidate C", or "" when both are 0.
std::string discardedSuffix(const char *What, size_t Base, size_t Cand) {
  if (!Base && !Cand)
    return "";
  return formatv("; {0} samples discarded: baseline {1}, candidate {2}", What,
                 Base, Cand)
      .str();
}

} // namespace

Expected<ShapeVerdict> decide(const ShapeEvidence &E,
                              const DecisionThresholds &T) {
  if (Error Err = checkThresholds(T))
    return Err;
  if (Error Err = checkDurations(E, E.Baseline, "baseline"))
    return Err;
  if (Error Err = checkDurations(E, E.Candidate, "candidate"))
    return Err;

  ShapeVerdict V;
  V.Kernel = E.Kernel;
  V.Shape = E.Shape;
  V.HeldOutShape = E.HeldOutShape;
  V.Thresholds = T;

  FilteredSamples FB = filterSamples(E.Baseline);
  FilteredSamples FC = filterSamples(E.Candidate);
  V.BaselineDiscarded = FB.DiscardedThrottled;
  V.CandidateDiscarded = FC.DiscardedThrottled;
  V.BaselineForeign = FB.DiscardedForeign;
  V.CandidateForeign = FC.DiscardedForeign;
  if (!FB.KeptNs.empty()) {
    auto S = summarize(FB.KeptNs);
    if (!S)
      return S.takeError();
    V.Baseline = *S;
  }
  if (!FC.KeptNs.empty()) {
    auto S = summarize(FC.KeptNs);
    if (!S)
      return S.takeError();
    V.Candidate = *S;
  }

  // Rule 4: outputs.
  std::vector<std::string> OutputReasons;
  for (const SeedCheck &S : E.Seeds) {
    ++V.SeedsChecked;
    if (S.HeldOut)
      ++V.HeldOutSeedsChecked;
    if (!S.Matched)
      OutputReasons.push_back(
          formatv("outputs differ on seed {0}{1}{2}{3}", S.Seed,
                  S.HeldOut ? " (held out)" : "", S.Detail.empty() ? "" : ": ",
                  S.Detail)
              .str());
  }
  if (E.Seeds.empty())
    OutputReasons.push_back("no output check: outputs were not verified on "
                            "any seed");
  else if (T.RequireHeldOutSeed && V.HeldOutSeedsChecked == 0)
    OutputReasons.push_back("no held-out seed was verified");
  V.OutputsOk = OutputReasons.empty();

  // Rule 5: determinism not worse than the baseline.
  std::vector<std::string> DetReasons;
  for (const DeterminismCheck &D : E.Determinism)
    if (D.BaselineDeterministic && !D.CandidateDeterministic)
      DetReasons.push_back(
          formatv("output {0} was bitwise deterministic in the baseline but "
                  "not in the candidate",
                  D.Output)
              .str());
  if (E.Determinism.empty() && T.RequireDeterminismEvidence)
    DetReasons.push_back("no determinism check: no output was run twice with "
                         "the same seed");
  V.DeterminismOk = DetReasons.empty();

  // Rules 1-3: speed and tail, when there are enough samples.
  std::vector<std::string> PerfReasons;
  bool Enough = FB.KeptNs.size() >= T.MinSamples &&
                FC.KeptNs.size() >= T.MinSamples;
  if (Enough) {
    auto CI = bootstrapSpeedupGrouped(FB.KeptNs, FB.KeptGroups, FC.KeptNs, FC.KeptGroups, T.Bootstrap);
    if (!CI)
      return CI.takeError();
    V.Speedup = *CI;
    V.SpeedupOk = CI->Lower > 1 + T.MinGain;
    if (!V.SpeedupOk)
      PerfReasons.push_back(
          formatv("speed-up {0:f3}x, {1} CI [{2:f3}x, {3:f3}x]: lower bound "
                  "does not exceed {4:f3}x (1 + min gain {5})",
                  CI->Estimate, pctTol(CI->Confidence),
                  CI->Lower, CI->Upper, 1 + T.MinGain, pctTol(T.MinGain))
              .str());
    V.P99Change = V.Candidate->P99 / V.Baseline->P99 - 1;
    V.TailOk = V.Candidate->P99 <= V.Baseline->P99 * (1 + T.P99Tolerance);
    if (!V.TailOk)
      PerfReasons.push_back(formatv("shape {0} p99 regressed {1} > {2} "
                                    "tolerance ({3:f0} ns -> {4:f0} ns)",
                                    E.Shape, pct(*V.P99Change),
                                    pctTol(T.P99Tolerance), V.Baseline->P99,
                                    V.Candidate->P99)
                                .str());
  }

  std::string Throttle =
      discardedSuffix("throttled", V.BaselineDiscarded, V.CandidateDiscarded) +
      discardedSuffix("foreign-load", V.BaselineForeign, V.CandidateForeign);

  for (auto &R : PerfReasons)
    V.Reasons.push_back(R);
  for (auto &R : OutputReasons)
    V.Reasons.push_back(R);
  for (auto &R : DetReasons)
    V.Reasons.push_back(R);

  std::string Head = formatv("kernel {0} shape {1}{2}", E.Kernel, E.Shape,
                             E.HeldOutShape ? " (held out)" : "")
                         .str();
  if (!V.OutputsOk || !V.DeterminismOk || (Enough && !PerfReasons.empty())) {
    V.Outcome = Verdict::Rejected;
    V.Explanation = formatv("rejected: {0}: {1}{2}", Head,
                            join(V.Reasons, "; "), Throttle)
                        .str();
    return V;
  }
  if (!Enough) {
    V.Outcome = Verdict::InsufficientSamples;
    std::string R = formatv("too few samples: baseline {0}, candidate {1}; "
                            "need >= {2} per side",
                            keptText(FB), keptText(FC), T.MinSamples)
                        .str();
    V.Reasons.insert(V.Reasons.begin(), R);
    V.Explanation = formatv("insufficient samples: {0}: {1}{2}", Head,
                            join(V.Reasons, "; "), Throttle)
                        .str();
    return V;
  }
  V.Outcome = Verdict::Accepted;
  V.Explanation =
      formatv("accepted: {0}: speed-up {1:f3}x, {2} CI [{3:f3}x, {4:f3}x] "
              "above {5:f3}x; p99 {6}{7} within {8} tolerance; outputs matched "
              "on {9} seeds ({10} held out); determinism kept on {11} "
              "output(s){12}",
              Head, V.Speedup->Estimate,
              pctTol(V.Speedup->Confidence),
              V.Speedup->Lower, V.Speedup->Upper, 1 + T.MinGain,
              *V.P99Change >= 0 ? "+" : "", pct(*V.P99Change),
              pctTol(T.P99Tolerance), V.SeedsChecked, V.HeldOutSeedsChecked,
              E.Determinism.size(), Throttle)
          .str();
  return V;
}

Expected<CombinedVerdict> decideAll(ArrayRef<ShapeEvidence> Evidence,
                                    const DecisionThresholds &T) {
  if (Evidence.empty())
    return createStringError(inconvertibleErrorCode(),
                             "no evidence: nothing to decide (no kernel and "
                             "shape was measured)");
  CombinedVerdict C;
  C.Thresholds = T;
  double LogSum = 0;
  size_t WithSpeedup = 0;
  size_t Rejected = 0, Insufficient = 0;
  for (const ShapeEvidence &E : Evidence) {
    auto V = decide(E, T);
    if (!V)
      return V.takeError();
    if (V->Speedup) {
      LogSum += std::log(V->Speedup->Estimate);
      ++WithSpeedup;
    }
    if (V->Outcome == Verdict::Rejected)
      ++Rejected;
    else if (V->Outcome == Verdict::InsufficientSamples)
      ++Insufficient;
    C.Shapes.push_back(std::move(*V));
  }
  if (WithSpeedup)
    C.GeomeanSpeedup = std::exp(LogSum / WithSpeedup);

  std::string Geo =
      C.GeomeanSpeedup
          ? formatv(" (geomean speed-up {0:f3}x over {1} shapes, "
                    "informational only)",
                    *C.GeomeanSpeedup, WithSpeedup)
                .str()
          : std::string();
  size_t N = C.Shapes.size();
  if (Rejected) {
    C.Outcome = Verdict::Rejected;
    std::vector<std::string> Parts;
    for (const ShapeVerdict &V : C.Shapes)
      if (V.Outcome == Verdict::Rejected)
        Parts.push_back(V.Explanation);
    C.Explanation = formatv("rejected: {0} of {1} kernel/shape pairs refused"
                            "{2}: {3}",
                            Rejected, N, Geo, join(Parts, " | "))
                        .str();
  } else if (Insufficient) {
    C.Outcome = Verdict::InsufficientSamples;
    std::vector<std::string> Parts;
    for (const ShapeVerdict &V : C.Shapes)
      if (V.Outcome == Verdict::InsufficientSamples)
        Parts.push_back(V.Explanation);
    C.Explanation =
        formatv("insufficient samples: {0} of {1} kernel/shape pairs cannot "
                "be judged yet{2}: {3}",
                Insufficient, N, Geo, join(Parts, " | "))
            .str();
  } else {
    C.Outcome = Verdict::Accepted;
    C.Explanation =
        formatv("accepted: all {0} kernel/shape pairs accepted{1}", N, Geo)
            .str();
  }
  return C;
}

} // namespace decide
} // namespace kloop
