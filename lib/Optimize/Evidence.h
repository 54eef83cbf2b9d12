//===- Evidence.h - Evidence rows of a comparison -------------------------===//
///
/// \file
/// Internal to kloopOptimize: one row of CompareOutcome::Evidence
/// (kloop/Optimize/Optimize.h), the same for workload compares and replay.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_LIB_OPTIMIZE_EVIDENCE_H
#define KLOOP_LIB_OPTIMIZE_EVIDENCE_H

#include "kloop/Decide/Decision.h"
#include <nlohmann/json.hpp>

#include <optional>

namespace kloop {
namespace optimize {

/// {"kernel", "shape", "pct_roofline": null, "base_median_ns", "cand_median_ns", "base_p99_ns",
/// "cand_p99_ns", "ci_low", "ci_high", "speedup", "base_n", "cand_n", "groups"} of \p SV (null where
/// decide had too few samples). "groups": the timing rounds (workload) or placements (replay) the
/// interval's bootstrap resampled first (decide::SpeedupInterval::Groups).
inline nlohmann::json evidenceRow(const decide::ShapeVerdict &SV) {
  using json = nlohmann::json;
  json E = {{"kernel", SV.Kernel}, {"shape", SV.Shape}, {"pct_roofline", nullptr}};
  E["base_median_ns"] = SV.Baseline ? json(SV.Baseline->Median) : json(nullptr);
  E["cand_median_ns"] = SV.Candidate ? json(SV.Candidate->Median) : json(nullptr);
  E["base_p99_ns"] = SV.Baseline ? json(SV.Baseline->P99) : json(nullptr);
  E["cand_p99_ns"] = SV.Candidate ? json(SV.Candidate->P99) : json(nullptr);
  E["ci_low"] = SV.Speedup ? json(SV.Speedup->Lower) : json(nullptr);
  E["ci_high"] = SV.Speedup ? json(SV.Speedup->Upper) : json(nullptr);
  E["speedup"] = SV.Speedup ? json(SV.Speedup->Estimate) : json(nullptr);
  E["base_n"] = SV.Baseline ? json(SV.Baseline->N) : json(nullptr);
  E["cand_n"] = SV.Candidate ? json(SV.Candidate->N) : json(nullptr);
  E["groups"] = SV.Speedup ? json(SV.Speedup->Groups) : json(nullptr);
  return E;
}

/// Member \p Key of evidence row \p Row when it is a number ("speedup", "ci_low", ...); nullopt when the
/// row is not an object, lacks it, or holds null there (decide had too few samples).
inline std::optional<double> evidenceNumber(const nlohmann::json &Row, const char *Key) {
  const nlohmann::json &V = Row.is_object() ? Row.value(Key, nlohmann::json()) : nlohmann::json();
  return V.is_number() ? std::optional<double>(V.get<double>()) : std::nullopt;
}

} // namespace optimize
} // namespace kloop

#endif
