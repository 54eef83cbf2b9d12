//===- Statistics.cpp - Summaries of duration samples ---------------------===//
#include "kloop/Decide/Statistics.h"
#include "llvm/Support/FormatVariadic.h"
#include <algorithm>
#include <cassert>
#include <cmath>

using namespace llvm;

namespace kloop {
namespace decide {

FilteredSamples filterSamples(ArrayRef<Sample> Samples) {
  FilteredSamples Out;
  Out.KeptNs.reserve(Samples.size());
  for (const Sample &S : Samples) {
    if (S.Foreign)
      ++Out.DiscardedForeign;
    else if (S.Throttled)
      ++Out.DiscardedThrottled;
    else {
      Out.KeptNs.push_back(S.DurationNs);
      Out.KeptGroups.push_back(S.Group);
    }
  }
  return Out;
}

double percentileSorted(ArrayRef<double> Sorted, double P) {
  assert(!Sorted.empty() && "percentile of an empty sample");
  assert(P >= 0 && P <= 1 && "probability outside [0,1]");
  // Hyndman-Fan definition 7: h = (n-1)p, linear interpolation.
  double H = (Sorted.size() - 1) * P;
  size_t Lo = static_cast<size_t>(std::floor(H));
  if (Lo + 1 >= Sorted.size())
    return Sorted.back();
  double Frac = H - static_cast<double>(Lo);
  return Sorted[Lo] + Frac * (Sorted[Lo + 1] - Sorted[Lo]);
}

Expected<double> percentile(ArrayRef<double> Values, double P) {
  if (Values.empty())
    return createStringError(inconvertibleErrorCode(),
                             "percentile of an empty sample");
  if (!(P >= 0 && P <= 1))
    return createStringError(inconvertibleErrorCode(),
                             formatv("percentile probability {0} is outside [0,1]", P));
  for (size_t I = 0; I < Values.size(); ++I)
    if (!std::isfinite(Values[I]))
      return createStringError(inconvertibleErrorCode(),
                               formatv("sample value {0} is not finite", I));
  std::vector<double> Sorted(Values.begin(), Values.end());
  std::sort(Sorted.begin(), Sorted.end());
  return percentileSorted(Sorted, P);
}

double medianInPlace(std::vector<double> &V) {
  assert(!V.empty() && "median of an empty sample");
  size_t N = V.size();
  size_t Mid = N / 2;
  std::nth_element(V.begin(), V.begin() + Mid, V.end());
  double Upper = V[Mid];
  if (N % 2 == 1)
    return Upper;
  // Even n: type 7 at p = 0.5 is the mean of the two middle values; the lower
  // one is the maximum of the left partition.
  double Lower = *std::max_element(V.begin(), V.begin() + Mid);
  return Lower + 0.5 * (Upper - Lower);
}

Expected<Summary> summarize(ArrayRef<double> D) {
  if (D.empty())
    return createStringError(inconvertibleErrorCode(),
                             "cannot summarise an empty sample");
  for (size_t I = 0; I < D.size(); ++I)
    if (!std::isfinite(D[I]) || D[I] <= 0)
      return createStringError(
          inconvertibleErrorCode(),
          formatv("duration #{0} is {1} ns; durations must be finite and > 0",
                  I, D[I]));
  std::vector<double> S(D.begin(), D.end());
  std::sort(S.begin(), S.end());
  Summary R;
  R.N = S.size();
  R.Min = S.front();
  R.Max = S.back();
  // Two-pass mean and variance (numerically stable enough for durations).
  double Sum = 0;
  for (double X : S)
    Sum += X;
  R.Mean = Sum / R.N;
  double SS = 0;
  for (double X : S)
    SS += (X - R.Mean) * (X - R.Mean);
  R.StdDev = R.N > 1 ? std::sqrt(SS / (R.N - 1)) : 0.0;
  R.CV = R.N > 1 ? R.StdDev / R.Mean : 0.0;
  R.Median = percentileSorted(S, 0.5);
  R.P10 = percentileSorted(S, 0.10);
  R.P90 = percentileSorted(S, 0.90);
  R.P99 = percentileSorted(S, 0.99);
  return R;
}

} // namespace decide
} // namespace kloop
