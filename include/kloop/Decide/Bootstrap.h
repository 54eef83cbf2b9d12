//===- kloop/Decide/Bootstrap.h - Bootstrap CI of the median speed-up ------===//
///
/// \file
/// Percentile bootstrap confidence interval (Efron & Tibshirani 1993, "An
/// Introduction to the Bootstrap", ch. 13) for the speed-up of a candidate
/// over a baseline, defined as
///     speed-up = median(baseline durations) / median(candidate durations),
/// so that a value above 1 means the candidate is faster.
///
/// Each of the B resamples draws, with replacement, as many baseline values as
/// the baseline has and as many candidate values as the candidate has (the two
/// sides are resampled independently), and records the ratio of the two
/// resample medians. The interval is the (alpha/2, 1 - alpha/2) type-7
/// percentiles of the B ratios, alpha = 1 - confidence.
///
/// Determinism: the generator is std::mt19937_64, whose output sequence is
/// fixed by the C++ standard for a given seed; indices are drawn from it by
/// unbiased rejection sampling in our own code (std::uniform_int_distribution
/// is implementation-defined and would differ between standard libraries).
/// The same inputs, seed and B therefore give bit-identical intervals on
/// every platform.
///
/// Why B = 2000 is enough: the lower bound is the empirical 2.5% quantile of
/// B ratios. The Monte Carlo error of the tail probability it represents is
/// sqrt(p(1-p)/B) = sqrt(0.025 * 0.975 / 2000) = 0.0035, i.e. the bound sits
/// at the 2.5% +- 0.35% point of the bootstrap distribution, well below the
/// sampling error of the data itself for the n (tens to hundreds) we measure.
/// Efron & Tibshirani (ch. 19) recommend B >= 1000 for percentile intervals.
/// The cost is B * (nb + nc) draws plus two nth_element calls per resample:
/// about 4e6 draws for 1000 samples per side, a few ms.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_DECIDE_BOOTSTRAP_H
#define KLOOP_DECIDE_BOOTSTRAP_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>

namespace kloop {
namespace decide {

/// Settings of the bootstrap.
struct BootstrapOptions {
  /// Two-sided confidence level in (0,1). Default 0.95 (issue 4).
  double Confidence = 0.95;
  /// Number of resamples B, >= 100. Default 2000 (see file comment).
  unsigned Resamples = 2000;
  /// Seed of the std::mt19937_64 generator. Recorded in the result so a
  /// verdict can be reproduced exactly.
  uint64_t Seed = 0x6b6c6f6f70ULL; // "kloop"
};

/// A speed-up with its bootstrap confidence interval.
struct SpeedupInterval {
  /// Point estimate median(baseline) / median(candidate) on the full samples
  /// (dimensionless; > 1 means the candidate is faster).
  double Estimate = 0;
  /// Lower and upper bound of the interval (dimensionless).
  double Lower = 0, Upper = 0;
  /// Confidence level used, e.g. 0.95.
  double Confidence = 0;
  /// Number of resamples B used.
  unsigned Resamples = 0;
  /// Seed of the generator used.
  uint64_t Seed = 0;
  /// Groups (timing rounds) the first stage of bootstrapSpeedupGrouped drew
  /// from; 0 when launches were drawn independently (one group, or
  /// bootstrapSpeedup).
  unsigned Groups = 0;
};

/// Computes the percentile bootstrap interval of median(Baseline) /
/// median(Candidate) (durations in ns, already throttle-filtered).
/// Errors: an empty side; a value that is not finite and > 0; Confidence not
/// in (0,1); Resamples < 100.
llvm::Expected<SpeedupInterval>
bootstrapSpeedup(llvm::ArrayRef<double> BaselineNs,
                 llvm::ArrayRef<double> CandidateNs,
                 const BootstrapOptions &Options = BootstrapOptions());

/// The interval of bootstrapSpeedup when launches come in groups (timing
/// rounds, Sample::Group; \p BaselineGroups[i] is the group of
/// \p BaselineNs[i], likewise for the candidate). With launches of two or
/// more groups, each resample is two-stage (Davison & Hinkley 1997,
/// "Bootstrap Methods and their Application", sec. 3.8, resampling at both
/// stages): it draws as many groups as there are, with replacement, from the
/// groups of either side, and for each drawn group as many launches of each
/// side as that group holds, with replacement from that group's launches of
/// that side. The baseline and candidate launches of a round are drawn
/// together, as they share its conditions (the placement of the program's
/// buffers, docs/measure.md). Why: launches of one round are not independent
/// draws; on the H200 one candidate's per-round speed-up spread by 1.5%
/// (standard deviation) over nine rounds while the launch-level interval was
/// +-0.6% (docs/results.md, "Twenty-fourth GPU session"). Resampling both
/// stages overstates the variance slightly when groups are few, which errs
/// toward refusing. A resample in which one side drew no launch is drawn
/// again. With one group this is bootstrapSpeedup, bit for bit.
/// Errors: those of bootstrapSpeedup; a group list whose length differs from
/// its durations'.
llvm::Expected<SpeedupInterval>
bootstrapSpeedupGrouped(llvm::ArrayRef<double> BaselineNs,
                        llvm::ArrayRef<uint32_t> BaselineGroups,
                        llvm::ArrayRef<double> CandidateNs,
                        llvm::ArrayRef<uint32_t> CandidateGroups,
                        const BootstrapOptions &Options = BootstrapOptions());

/// The interval of bootstrapSpeedup when each side's launches come in groups
/// of their own, measured apart (the performance gate of `kloop check`: the
/// reference from a journal, the working tree's runs now; docs/check.md): each
/// resample draws, independently per side, as many of that side's groups as it
/// has, with replacement, and within each drawn group as many launches as it
/// holds (the two-stage bootstrap of bootstrapSpeedupGrouped, Davison & Hinkley
/// 1997, sec. 3.8, without pairing groups across sides, since no condition is
/// shared). \p BaselineGroups[i] is the group of \p BaselineNs[i], likewise
/// for the candidate; group numbers of one side mean nothing to the other.
/// With one group on each side this is bootstrapSpeedup, bit for bit. The
/// interval's Groups is the number of groups of both sides together when
/// either has two or more, else 0.
/// Errors: those of bootstrapSpeedup; a group list whose length differs from
/// its durations'.
llvm::Expected<SpeedupInterval>
bootstrapSpeedupUnpaired(llvm::ArrayRef<double> BaselineNs,
                         llvm::ArrayRef<uint32_t> BaselineGroups,
                         llvm::ArrayRef<double> CandidateNs,
                         llvm::ArrayRef<uint32_t> CandidateGroups,
                         const BootstrapOptions &Options = BootstrapOptions());

} // namespace decide
} // namespace kloop

#endif
