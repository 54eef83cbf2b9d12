//===- TestSamples.h - Seeded synthetic duration samples for the tests ----===//
#ifndef KLOOP_UNITTESTS_DECIDE_TESTSAMPLES_H
#define KLOOP_UNITTESTS_DECIDE_TESTSAMPLES_H

#include "kloop/Decide/Decision.h"
#include <cmath>
#include <random>
#include <vector>

namespace kloop {
namespace decide {
namespace test {

/// N lognormal durations with median MedianNs and log-sd Sigma.
inline std::vector<Sample> lognormal(std::mt19937_64 &Rng, size_t N,
                                     double MedianNs, double Sigma) {
  std::normal_distribution<double> Z(0.0, 1.0);
  std::vector<Sample> Out;
  for (size_t I = 0; I < N; ++I)
    Out.push_back({MedianNs * std::exp(Sigma * Z(Rng)), false});
  return Out;
}

/// N normal durations (mean, sd), clamped to stay positive.
inline std::vector<Sample> normal(std::mt19937_64 &Rng, size_t N, double Mean,
                                  double Sd) {
  std::normal_distribution<double> D(Mean, Sd);
  std::vector<Sample> Out;
  for (size_t I = 0; I < N; ++I)
    Out.push_back({std::max(1.0, D(Rng)), false});
  return Out;
}

inline std::vector<double> durations(const std::vector<Sample> &S) {
  std::vector<double> D;
  for (const Sample &X : S)
    D.push_back(X.DurationNs);
  return D;
}

/// Evidence whose output and determinism checks all pass (one search seed,
/// one held-out seed, one deterministic output).
inline ShapeEvidence passingEvidence(std::vector<Sample> Baseline,
                                     std::vector<Sample> Candidate,
                                     std::string Shape = "n16M") {
  ShapeEvidence E;
  E.Kernel = "saxpy";
  E.Shape = std::move(Shape);
  E.Baseline = std::move(Baseline);
  E.Candidate = std::move(Candidate);
  E.Seeds = {{0, false, true, ""}, {3, true, true, ""}};
  E.Determinism = {{"saxpy arg 1", true, true}};
  return E;
}

} // namespace test
} // namespace decide
} // namespace kloop

#endif
