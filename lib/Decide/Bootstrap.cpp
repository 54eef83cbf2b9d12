//===- Bootstrap.cpp - Bootstrap CI of the median speed-up ----------------===//
#include "kloop/Decide/Bootstrap.h"
#include "kloop/Decide/Statistics.h"
#include "llvm/Support/FormatVariadic.h"
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace llvm;

namespace kloop {
namespace decide {

namespace {

/// Uniform index in [0, N) from a 64-bit generator, by rejection of the
/// incomplete top bucket: unbiased and identical on every standard library.
size_t drawIndex(std::mt19937_64 &Rng, uint64_t N) {
  const uint64_t Max = std::numeric_limits<uint64_t>::max();
  const uint64_t Limit = Max - (Max % N); // multiple of N
  uint64_t R;
  do {
    R = Rng();
  } while (R >= Limit);
  return static_cast<size_t>(R % N);
}

Error checkSide(ArrayRef<double> V, const char *Side) {
  if (V.empty())
    return createStringError(inconvertibleErrorCode(),
                             formatv("bootstrap: the {0} sample is empty", Side));
  for (size_t I = 0; I < V.size(); ++I)
    if (!std::isfinite(V[I]) || V[I] <= 0)
      return createStringError(
          inconvertibleErrorCode(),
          formatv("bootstrap: {0} duration #{1} is {2} ns; durations must be "
                  "finite and > 0",
                  Side, I, V[I]));
  return Error::success();
}

} // namespace

Expected<SpeedupInterval> bootstrapSpeedup(ArrayRef<double> B,
                                           ArrayRef<double> C,
                                           const BootstrapOptions &O) {
  if (Error E = checkSide(B, "baseline"))
    return E;
  if (Error E = checkSide(C, "candidate"))
    return E;
  if (!(O.Confidence > 0 && O.Confidence < 1))
    return createStringError(
        inconvertibleErrorCode(),
        formatv("bootstrap: confidence {0} is outside (0,1)", O.Confidence));
  if (O.Resamples < 100)
    return createStringError(
        inconvertibleErrorCode(),
        formatv("bootstrap: {0} resamples are too few (need >= 100)",
                O.Resamples));

  std::vector<double> Tmp(B.begin(), B.end());
  double MedB = medianInPlace(Tmp);
  Tmp.assign(C.begin(), C.end());
  double MedC = medianInPlace(Tmp);

  std::mt19937_64 Rng(O.Seed);
  std::vector<double> Ratios;
  Ratios.reserve(O.Resamples);
  std::vector<double> RB(B.size()), RC(C.size());
  for (unsigned K = 0; K < O.Resamples; ++K) {
    for (double &X : RB)
      X = B[drawIndex(Rng, B.size())];
    for (double &X : RC)
      X = C[drawIndex(Rng, C.size())];
    Ratios.push_back(medianInPlace(RB) / medianInPlace(RC));
  }
  std::sort(Ratios.begin(), Ratios.end());
  double Alpha = 1 - O.Confidence;

  SpeedupInterval R;
  R.Estimate = MedB / MedC;
  R.Lower = percentileSorted(Ratios, Alpha / 2);
  R.Upper = percentileSorted(Ratios, 1 - Alpha / 2);
  R.Confidence = O.Confidence;
  R.Resamples = O.Resamples;
  R.Seed = O.Seed;
  return R;
}

} // namespace decide
} // namespace kloop
