//===- kloop/Decide/Statistics.h - Summaries of duration samples ----------===//
///
/// \file
/// Descriptive statistics of a sample of kernel durations (ns) and the
/// filter applied before any statistic is computed (throttled launches and
/// launches that shared the GPU with another process are discarded).
///
/// Percentile definition: Hyndman & Fan (1996) "Sample quantiles in
/// statistical packages", The American Statistician 50(4), definition 7, the
/// default of R's quantile(), NumPy's percentile() and Excel's PERCENTILE.INC:
/// for a sorted sample x[0..n-1] and probability p in [0,1],
///   h = (n - 1) * p,  Q(p) = x[floor(h)] + (h - floor(h)) * (x[floor(h)+1] - x[floor(h)]).
/// It interpolates linearly between order statistics, returns the minimum at
/// p = 0 and the maximum at p = 1, and is defined for every n >= 1.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_DECIDE_STATISTICS_H
#define KLOOP_DECIDE_STATISTICS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kloop {
namespace decide {

/// One timed launch of a kernel.
struct Sample {
  /// GPU duration of the launch in ns (CUPTI end - start). Must be finite and > 0.
  double DurationNs = 0;
  /// True when the GPU reported a throttle reason (NVML clocks-throttle /
  /// clocks-event reasons other than idle) while the launch ran. Such samples
  /// are discarded by filterSamples() and counted.
  bool Throttled = false;
  /// True when another process (one outside the workload's process group)
  /// had a compute context on the GPU while the launch ran ("foreign GPU
  /// load", NVML's running compute processes; docs/measure.md). Such samples
  /// are discarded by filterSamples() and counted apart from throttled ones.
  bool Foreign = false;
  /// The timing round that took the launch: kloop compare numbers its rounds
  /// seed x rounds + round, the same for the baseline's and the candidate's
  /// run of a round (which share a placement of the program's buffers,
  /// placement_pad_mib). The bootstrap resamples groups before launches
  /// (bootstrapSpeedupGrouped). 0 for every sample: one group.
  uint32_t Group = 0;
};

/// The durations that survive the filter and how many were dropped, per cause.
struct FilteredSamples {
  /// Durations (ns) of the samples neither throttled nor foreign, in input
  /// order.
  std::vector<double> KeptNs;
  /// Sample::Group of each kept duration, parallel to KeptNs.
  std::vector<uint32_t> KeptGroups;
  /// Samples discarded because Sample::Foreign was set (whether or not they
  /// were also throttled: another process on the GPU is the likelier cause).
  size_t DiscardedForeign = 0;
  /// Samples discarded because Sample::Throttled was set and Foreign was not.
  size_t DiscardedThrottled = 0;
  /// All discarded samples: DiscardedForeign + DiscardedThrottled.
  size_t discarded() const { return DiscardedForeign + DiscardedThrottled; }
};

/// Drops every sample flagged as foreign or throttled and counts each cause;
/// a sample flagged both is counted once, as foreign.
/// Never fails; validation of the durations happens in summarize().
FilteredSamples filterSamples(llvm::ArrayRef<Sample> Samples);

/// Descriptive statistics of one sample of durations (all values in ns,
/// except N and CV).
struct Summary {
  /// Number of values summarised.
  size_t N = 0;
  /// Smallest and largest value, ns.
  double Min = 0, Max = 0;
  /// Arithmetic mean, ns.
  double Mean = 0;
  /// Median (percentile 0.5, type 7), ns.
  double Median = 0;
  /// Percentiles 0.10, 0.90 and 0.99 (type 7), ns.
  double P10 = 0, P90 = 0, P99 = 0;
  /// Sample standard deviation with Bessel's correction (divides by N-1);
  /// 0 when N == 1. ns.
  double StdDev = 0;
  /// Coefficient of variation StdDev / Mean (dimensionless); 0 when N == 1.
  double CV = 0;
};

/// Percentile \p P (a probability in [0,1]) of \p Sorted, which must be
/// non-empty and sorted ascending, by Hyndman-Fan definition 7 (see file
/// comment). Precondition violations are programming errors (asserted).
double percentileSorted(llvm::ArrayRef<double> Sorted, double P);

/// Percentile \p P in [0,1] of an unsorted sample (copies and sorts).
/// Errors: empty sample, P outside [0,1], or a non-finite value.
llvm::Expected<double> percentile(llvm::ArrayRef<double> Values, double P);

/// Median (type 7 percentile 0.5) of a sample, computed in place with
/// std::nth_element (reorders \p Values). \p Values must be non-empty.
double medianInPlace(std::vector<double> &Values);

/// Summarises \p DurationsNs.
/// Errors: empty sample; a value that is NaN, infinite, or <= 0 (a duration
/// must be positive), naming the index of the first bad value.
llvm::Expected<Summary> summarize(llvm::ArrayRef<double> DurationsNs);

} // namespace decide
} // namespace kloop

#endif
