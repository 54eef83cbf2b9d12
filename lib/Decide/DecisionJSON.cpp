//===- DecisionJSON.cpp - Verdicts as JSON --------------------------------===//
#include "kloop/Decide/DecisionJSON.h"
#include "llvm/Support/FormatVariadic.h"

using namespace llvm;
using nlohmann::json;

namespace kloop {
namespace decide {

namespace {

Error fieldError(const std::string &Path, StringRef What) {
  return createStringError(inconvertibleErrorCode(),
                           formatv("verdict JSON: {0}: {1}",
                                   Path.empty() ? "<root>" : Path, What));
}

std::string childPath(const std::string &Path, StringRef Key) {
  return Path.empty() ? Key.str() : Path + "." + Key.str();
}

/// Member \p Key of object \p J, or an error naming the path.
Expected<const json *> member(const json &J, StringRef Key,
                              const std::string &Path) {
  if (!J.is_object())
    return fieldError(Path, "expected an object");
  auto It = J.find(Key.str());
  if (It == J.end())
    return fieldError(childPath(Path, Key), "missing");
  return &*It;
}

Error getNumber(const json &J, StringRef Key, const std::string &Path,
                double &Out) {
  auto M = member(J, Key, Path);
  if (!M)
    return M.takeError();
  if (!(*M)->is_number())
    return fieldError(childPath(Path, Key), "expected a number");
  Out = (*M)->get<double>();
  return Error::success();
}

template <typename UInt>
Error getUnsigned(const json &J, StringRef Key, const std::string &Path,
                  UInt &Out) {
  auto M = member(J, Key, Path);
  if (!M)
    return M.takeError();
  if (!(*M)->is_number_unsigned())
    return fieldError(childPath(Path, Key), "expected a non-negative integer");
  Out = static_cast<UInt>((*M)->get<uint64_t>());
  return Error::success();
}

/// Like getUnsigned, but an absent member reads as 0: a verdict written before
/// the member existed (the foreign-load counts).
template <typename UInt>
Error getUnsignedOrZero(const json &J, StringRef Key, const std::string &Path,
                        UInt &Out) {
  if (J.is_object() && !J.contains(Key.str())) {
    Out = 0;
    return Error::success();
  }
  return getUnsigned(J, Key, Path, Out);
}

Error getBool(const json &J, StringRef Key, const std::string &Path,
              bool &Out) {
  auto M = member(J, Key, Path);
  if (!M)
    return M.takeError();
  if (!(*M)->is_boolean())
    return fieldError(childPath(Path, Key), "expected true or false");
  Out = (*M)->get<bool>();
  return Error::success();
}

Error getString(const json &J, StringRef Key, const std::string &Path,
                std::string &Out) {
  auto M = member(J, Key, Path);
  if (!M)
    return M.takeError();
  if (!(*M)->is_string())
    return fieldError(childPath(Path, Key), "expected a string");
  Out = (*M)->get<std::string>();
  return Error::success();
}

Error getStrings(const json &J, StringRef Key, const std::string &Path,
                 std::vector<std::string> &Out) {
  auto M = member(J, Key, Path);
  if (!M)
    return M.takeError();
  if (!(*M)->is_array())
    return fieldError(childPath(Path, Key), "expected an array of strings");
  Out.clear();
  for (size_t I = 0; I < (*M)->size(); ++I) {
    const json &E = (**M)[I];
    if (!E.is_string())
      return fieldError(formatv("{0}[{1}]", childPath(Path, Key), I).str(),
                        "expected a string");
    Out.push_back(E.get<std::string>());
  }
  return Error::success();
}

/// Optional member: absent or null gives std::nullopt.
template <typename T, typename Fn>
Error getOptional(const json &J, StringRef Key, const std::string &Path,
                  std::optional<T> &Out, Fn Parse) {
  if (!J.is_object())
    return fieldError(Path, "expected an object");
  auto It = J.find(Key.str());
  if (It == J.end() || It->is_null()) {
    Out.reset();
    return Error::success();
  }
  auto V = Parse(*It, childPath(Path, Key));
  if (!V)
    return V.takeError();
  Out = std::move(*V);
  return Error::success();
}

template <typename T> json optionalJSON(const std::optional<T> &V) {
  return V ? toJSON(*V) : json(nullptr);
}

Expected<Summary> summaryAt(const json &J, const std::string &P) {
  Summary S;
  if (Error E = getUnsigned(J, "n", P, S.N))
    return E;
  for (auto [Key, Field] :
       {std::pair<const char *, double *>{"min_ns", &S.Min},
        {"max_ns", &S.Max},
        {"mean_ns", &S.Mean},
        {"median_ns", &S.Median},
        {"p10_ns", &S.P10},
        {"p90_ns", &S.P90},
        {"p99_ns", &S.P99},
        {"stddev_ns", &S.StdDev},
        {"cv", &S.CV}})
    if (Error E = getNumber(J, Key, P, *Field))
      return E;
  return S;
}

Expected<SpeedupInterval> intervalAt(const json &J, const std::string &P) {
  SpeedupInterval I;
  if (Error E = getNumber(J, "estimate", P, I.Estimate))
    return E;
  if (Error E = getNumber(J, "lower", P, I.Lower))
    return E;
  if (Error E = getNumber(J, "upper", P, I.Upper))
    return E;
  if (Error E = getNumber(J, "confidence", P, I.Confidence))
    return E;
  if (Error E = getUnsigned(J, "resamples", P, I.Resamples))
    return E;
  if (Error E = getUnsigned(J, "seed", P, I.Seed))
    return E;
  if (J.contains("groups")) // absent from verdicts written before groups
    if (Error E = getUnsigned(J, "groups", P, I.Groups))
      return E;
  return I;
}

Expected<DecisionThresholds> thresholdsAt(const json &J, const std::string &P) {
  DecisionThresholds T;
  if (Error E = getNumber(J, "min_gain", P, T.MinGain))
    return E;
  if (Error E = getNumber(J, "p99_tolerance", P, T.P99Tolerance))
    return E;
  if (Error E = getUnsigned(J, "min_samples", P, T.MinSamples))
    return E;
  if (Error E = getBool(J, "require_held_out_seed", P, T.RequireHeldOutSeed))
    return E;
  if (Error E = getBool(J, "require_determinism_evidence", P,
                        T.RequireDeterminismEvidence))
    return E;
  if (Error E = getNumber(J, "confidence", P, T.Bootstrap.Confidence))
    return E;
  if (Error E = getUnsigned(J, "resamples", P, T.Bootstrap.Resamples))
    return E;
  if (Error E = getUnsigned(J, "bootstrap_seed", P, T.Bootstrap.Seed))
    return E;
  return T;
}

Expected<Verdict> verdictAt(const json &J, const std::string &P) {
  std::string Name;
  if (Error E = getString(J, "verdict", P, Name))
    return E;
  auto V = parseVerdict(Name);
  if (!V)
    return fieldError(childPath(P, "verdict"), toString(V.takeError()));
  return *V;
}

Expected<ShapeVerdict> shapeVerdictAt(const json &J, const std::string &P) {
  ShapeVerdict V;
  if (Error E = getString(J, "kernel", P, V.Kernel))
    return E;
  if (Error E = getString(J, "shape", P, V.Shape))
    return E;
  if (Error E = getBool(J, "held_out_shape", P, V.HeldOutShape))
    return E;
  auto O = verdictAt(J, P);
  if (!O)
    return O.takeError();
  V.Outcome = *O;
  if (Error E = getUnsigned(J, "baseline_discarded", P, V.BaselineDiscarded))
    return E;
  if (Error E = getUnsigned(J, "candidate_discarded", P, V.CandidateDiscarded))
    return E;
  if (Error E = getUnsignedOrZero(J, "baseline_foreign", P, V.BaselineForeign))
    return E;
  if (Error E = getUnsignedOrZero(J, "candidate_foreign", P, V.CandidateForeign))
    return E;
  if (Error E = getOptional(J, "baseline", P, V.Baseline, summaryAt))
    return E;
  if (Error E = getOptional(J, "candidate", P, V.Candidate, summaryAt))
    return E;
  if (Error E = getOptional(J, "speedup", P, V.Speedup, intervalAt))
    return E;
  if (Error E = getOptional(
          J, "p99_change", P, V.P99Change,
          [](const json &X, const std::string &Q) -> Expected<double> {
            if (!X.is_number())
              return fieldError(Q, "expected a number or null");
            return X.get<double>();
          }))
    return E;
  if (Error E = getBool(J, "speedup_ok", P, V.SpeedupOk))
    return E;
  if (Error E = getBool(J, "tail_ok", P, V.TailOk))
    return E;
  if (Error E = getBool(J, "outputs_ok", P, V.OutputsOk))
    return E;
  if (Error E = getBool(J, "determinism_ok", P, V.DeterminismOk))
    return E;
  if (Error E = getUnsigned(J, "seeds_checked", P, V.SeedsChecked))
    return E;
  if (Error E =
          getUnsigned(J, "held_out_seeds_checked", P, V.HeldOutSeedsChecked))
    return E;
  if (Error E = getStrings(J, "reasons", P, V.Reasons))
    return E;
  if (Error E = getString(J, "explanation", P, V.Explanation))
    return E;
  auto M = member(J, "thresholds", P);
  if (!M)
    return M.takeError();
  auto T = thresholdsAt(**M, childPath(P, "thresholds"));
  if (!T)
    return T.takeError();
  V.Thresholds = *T;
  return V;
}

} // namespace

json toJSON(const Summary &S) {
  return json{{"n", S.N},           {"min_ns", S.Min},   {"max_ns", S.Max},
              {"mean_ns", S.Mean},  {"median_ns", S.Median},
              {"p10_ns", S.P10},    {"p90_ns", S.P90},   {"p99_ns", S.P99},
              {"stddev_ns", S.StdDev}, {"cv", S.CV}};
}

json toJSON(const SpeedupInterval &I) {
  return json{{"estimate", I.Estimate},     {"lower", I.Lower},
              {"upper", I.Upper},           {"confidence", I.Confidence},
              {"resamples", I.Resamples},   {"seed", I.Seed},
              {"groups", I.Groups}};
}

json toJSON(const DecisionThresholds &T) {
  return json{{"min_gain", T.MinGain},
              {"p99_tolerance", T.P99Tolerance},
              {"min_samples", T.MinSamples},
              {"require_held_out_seed", T.RequireHeldOutSeed},
              {"require_determinism_evidence", T.RequireDeterminismEvidence},
              {"confidence", T.Bootstrap.Confidence},
              {"resamples", T.Bootstrap.Resamples},
              {"bootstrap_seed", T.Bootstrap.Seed}};
}

json toJSON(const ShapeVerdict &V) {
  return json{{"kernel", V.Kernel},
              {"shape", V.Shape},
              {"held_out_shape", V.HeldOutShape},
              {"verdict", verdictName(V.Outcome).str()},
              {"baseline_discarded", V.BaselineDiscarded},
              {"candidate_discarded", V.CandidateDiscarded},
              {"baseline_foreign", V.BaselineForeign},
              {"candidate_foreign", V.CandidateForeign},
              {"baseline", optionalJSON(V.Baseline)},
              {"candidate", optionalJSON(V.Candidate)},
              {"speedup", optionalJSON(V.Speedup)},
              {"p99_change", V.P99Change ? json(*V.P99Change) : json(nullptr)},
              {"speedup_ok", V.SpeedupOk},
              {"tail_ok", V.TailOk},
              {"outputs_ok", V.OutputsOk},
              {"determinism_ok", V.DeterminismOk},
              {"seeds_checked", V.SeedsChecked},
              {"held_out_seeds_checked", V.HeldOutSeedsChecked},
              {"reasons", V.Reasons},
              {"explanation", V.Explanation},
              {"thresholds", toJSON(V.Thresholds)}};
}

json toJSON(const CombinedVerdict &V) {
  json Shapes = json::array();
  for (const ShapeVerdict &S : V.Shapes)
    Shapes.push_back(toJSON(S));
  return json{{"schema", VerdictSchema},
              {"verdict", verdictName(V.Outcome).str()},
              {"shapes", std::move(Shapes)},
              {"geomean_speedup_informational",
               V.GeomeanSpeedup ? json(*V.GeomeanSpeedup) : json(nullptr)},
              {"explanation", V.Explanation},
              {"thresholds", toJSON(V.Thresholds)}};
}

Expected<Summary> summaryFromJSON(const json &J) { return summaryAt(J, ""); }
Expected<SpeedupInterval> speedupIntervalFromJSON(const json &J) {
  return intervalAt(J, "");
}
Expected<DecisionThresholds> thresholdsFromJSON(const json &J) {
  return thresholdsAt(J, "");
}
Expected<ShapeVerdict> shapeVerdictFromJSON(const json &J) {
  return shapeVerdictAt(J, "");
}

Expected<CombinedVerdict> combinedVerdictFromJSON(const json &J) {
  CombinedVerdict V;
  std::string Schema;
  if (Error E = getString(J, "schema", "", Schema))
    return E;
  if (Schema != VerdictSchema)
    return fieldError("schema", formatv("expected '{0}', found '{1}'",
                                        VerdictSchema, Schema)
                                    .str());
  auto O = verdictAt(J, "");
  if (!O)
    return O.takeError();
  V.Outcome = *O;
  auto M = member(J, "shapes", "");
  if (!M)
    return M.takeError();
  if (!(*M)->is_array())
    return fieldError("shapes", "expected an array");
  for (size_t I = 0; I < (*M)->size(); ++I) {
    auto S = shapeVerdictAt((**M)[I], formatv("shapes[{0}]", I).str());
    if (!S)
      return S.takeError();
    V.Shapes.push_back(std::move(*S));
  }
  if (Error E = getOptional(
          J, "geomean_speedup_informational", "", V.GeomeanSpeedup,
          [](const json &X, const std::string &Q) -> Expected<double> {
            if (!X.is_number())
              return fieldError(Q, "expected a number or null");
            return X.get<double>();
          }))
    return E;
  if (Error E = getString(J, "explanation", "", V.Explanation))
    return E;
  auto T = member(J, "thresholds", "");
  if (!T)
    return T.takeError();
  auto Th = thresholdsAt(**T, "thresholds");
  if (!Th)
    return Th.takeError();
  V.Thresholds = *Th;
  return V;
}

} // namespace decide
} // namespace kloop
