//===- Canary.cpp - The drift canary: the baseline against itself ---------===//
///
/// Before the final check, kloop optimize measures the baseline against itself
/// on one search shape (Stages::canary). Its speed-up interval should contain 1;
/// when it excludes 1 by more than the minimum gain, the measurement itself can
/// make (or hide) a win of the size the acceptance rule looks for, and the run's
/// verdicts are marked unreliable. docs/optimize.md, "Drift canary".
///
//===----------------------------------------------------------------------===//
#include "kloop/Optimize/Optimize.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using json = nlohmann::json;

namespace kloop {
namespace optimize {

bool canaryDrifted(double Lower, double Upper, double MinGain) {
  return Lower > 1 + MinGain || Upper < 1 / (1 + MinGain);
}

json canaryPayload(const CompareOutcome &AA, double MinGain, double WallS) {
  json Kernels = json::array();
  bool Judged = false, Drifted = false;
  std::string Shape;
  for (const json &E : AA.Evidence) {
    json K = {{"kernel", E.value("kernel", "")},        {"shape", E.value("shape", "")},
              {"samples_base", E.value("base_n", json())}, {"samples_cand", E.value("cand_n", json())},
              {"median_speedup", E.value("speedup", json())}, {"ci_low", E.value("ci_low", json())},
              {"ci_high", E.value("ci_high", json())},     {"drifted", false}};
    if (K["ci_low"].is_number() && K["ci_high"].is_number()) {
      Judged = true;
      K["drifted"] = canaryDrifted(K["ci_low"].get<double>(), K["ci_high"].get<double>(), MinGain);
      Drifted |= K["drifted"].get<bool>();
    }
    if (Shape.empty())
      Shape = K["shape"].get<std::string>();
    Kernels.push_back(std::move(K));
  }
  json Runs = AA.Detail.is_object() ? AA.Detail.value("runs", json()) : json();
  return json{{"shape", Shape},
              {"verdict", Drifted ? "unreliable" : Judged ? "reliable" : "inconclusive"},
              {"reliable", !Drifted},
              {"min_gain", MinGain},
              {"wall_s", WallS},
              {"runs", Runs},
              {"explanation", AA.Explanation},
              {"kernels", Kernels}};
}

/// The pairs of a canary payload that have an interval, furthest from 1 first.
static const json *worstPair(const json &Payload, bool DriftedOnly) {
  const json *Worst = nullptr;
  auto Distance = [](const json &K) { return std::fabs(std::log(K["median_speedup"].get<double>())); };
  if (!Payload.is_object() || !Payload.contains("kernels") || !Payload["kernels"].is_array())
    return nullptr;
  for (const json &K : Payload["kernels"]) {
    if (!K.is_object() || !K.value("median_speedup", json()).is_number() || !K.value("ci_low", json()).is_number() ||
        !K.value("ci_high", json()).is_number() || K["median_speedup"].get<double>() <= 0)
      continue;
    if (DriftedOnly && !K.value("drifted", false))
      continue;
    if (!Worst || Distance(K) > Distance(*Worst))
      Worst = &K;
  }
  return Worst;
}

static std::string interval(const json &K) {
  return llvm::formatv("[{0:f3}, {1:f3}]", K["ci_low"].get<double>(), K["ci_high"].get<double>()).str();
}

std::string canaryWarning(const json &Payload) {
  if (!Payload.is_object() || Payload.value("reliable", true))
    return "";
  const json *K = worstPair(Payload, /*DriftedOnly=*/true);
  if (!K)
    return "verdicts unreliable: the baseline measured against itself drifted";
  double Pct = (K->at("median_speedup").get<double>() - 1) * 100;
  return llvm::formatv("verdicts unreliable: the baseline measured against itself drifted by {0}{1:f1}% (CI {2}) "
                       "on shape {3}",
                       Pct > 0 ? "+" : "", Pct, interval(*K), K->value("shape", std::string("?")))
      .str();
}

std::string canaryFigures(const json &Payload) {
  if (Payload.is_null())
    return "";
  if (Payload.is_object() && Payload.contains("skipped"))
    return "drift canary: skipped (" + Payload.value("skipped", std::string()) + ")";
  if (!Payload.is_object())
    return "drift canary: no figures";
  std::string S = "drift canary: the baseline against itself on shape " + Payload.value("shape", std::string("?"));
  bool Any = false;
  for (const json &K : Payload.value("kernels", json::array())) {
    if (!K.is_object())
      continue;
    Any = true;
    S += "; kernel " + K.value("kernel", std::string("?")) + ": ";
    auto N = [&](const char *F) { return K.value(F, json()).is_number() ? std::to_string(K[F].get<int64_t>()) : "?"; };
    S += N("samples_base") == N("samples_cand") ? N("samples_base") + " samples per side"
                                                : N("samples_base") + " and " + N("samples_cand") + " samples";
    if (K.value("median_speedup", json()).is_number() && K.value("ci_low", json()).is_number() &&
        K.value("ci_high", json()).is_number())
      S += llvm::formatv(", median speed-up {0:f3}x, 95% CI {1}", K["median_speedup"].get<double>(), interval(K)).str();
    else
      S += ", too few samples for an interval";
  }
  if (!Any)
    S += ": no interval (" + Payload.value("explanation", std::string()) + ")";
  double Gain = Payload.value("min_gain", 0.0);
  S += llvm::formatv("; {0} (drift rule: CI beyond [{1:f3}, {2:f3}]); {3:f1} s", Payload.value("verdict", std::string("?")),
                     1 / (1 + Gain), 1 + Gain, Payload.value("wall_s", 0.0))
           .str();
  return S;
}

} // namespace optimize
} // namespace kloop
