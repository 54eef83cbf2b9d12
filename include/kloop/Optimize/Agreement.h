//===- kloop/Optimize/Agreement.h - Replay's speed-up against the workload's ===//
///
/// \file
/// Issue 14, item 5: "agreement is measured, not assumed". `kloop optimize
/// --agreement` times every replayed search step a second time by workload
/// runs (the same compare a search step without replay makes) and journals,
/// per kernel and shape, both median speed-ups, their difference and the
/// difference's interval (docs/optimize.md, "Agreement of replay and the
/// workload"). The verdict of the step stays replay's: the option measures
/// replay, it does not change the search.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_OPTIMIZE_AGREEMENT_H
#define KLOOP_OPTIMIZE_AGREEMENT_H

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kloop {
namespace optimize {

/// The largest difference, in percent of the workload's speed-up, that counts
/// as agreement: issue 14, item 5 ("agree within 2%").
constexpr double AgreementPct = 2.0;

/// What one row's interval shows about AgreementPct.
enum class AgreementVerdict {
  Within,     ///< the whole interval lies inside [-AgreementPct, +AgreementPct]
  Beyond,     ///< the whole interval lies outside it (on one side)
  Undecided,  ///< the interval straddles a bound
  NoInterval, ///< a side has no bootstrap interval (too few samples)
};

/// "within", "beyond", "undecided" or "no interval".
const char *agreementVerdictName(AgreementVerdict V);

/// One replayed kernel and shape against the workload's.
struct AgreementRow {
  std::string Kernel;         ///< the replay row's kernel (demangled, up to its parameter list)
  std::string WorkloadKernel; ///< the workload row's kernel (a `targets` entry)
  std::string Shape;          ///< the replay row's shape ("n1M"; "n1M#I" for launch I of several)
  double Replay = 0, Workload = 0; ///< median speed-ups (incumbent's median / candidate's median)
  double DifferencePct = 0;   ///< (Replay / Workload - 1) x 100
  /// The ~95% interval of DifferencePct (percent): each side's bootstrap 95%
  /// interval of its speed-up (decide's ci_low, ci_high) taken as a half-width
  /// on the log scale, the two half-widths added in quadrature around the log
  /// of Replay / Workload (the normal approximation for the difference of two
  /// independent estimates). Absent when a side has no interval.
  std::optional<std::pair<double, double>> IntervalPct;
  AgreementVerdict Verdict = AgreementVerdict::NoInterval;
};

/// Pairs the replay evidence rows \p Replay with the workload's \p Workload
/// (CompareOutcome::Evidence rows: "kernel", "shape", "speedup", "ci_low",
/// "ci_high"). The workload keys its rows by the first entry of \p Targets (the
/// workload's `targets`, in order) that the kernel's demangled name contains
/// (measure::targetKey); a replay row, whose kernel is the demangled name up to
/// its parameter list, is matched the same way: with the workload row of that
/// target and of its shape (its "#I" suffix dropped). Replay rows without a
/// speed-up, without a target, or with no such workload row that has a speed-up
/// are left out.
std::vector<AgreementRow> matchAgreement(const nlohmann::json &Replay, const nlohmann::json &Workload,
                                         const std::vector<std::string> &Targets);

/// The verify payload's "agreement" object: {"threshold_pct", "rows": [{"kernel",
/// "workload_kernel", "shape", "replay", "workload", "difference_pct",
/// "interval_pct": [lo, hi] or null, "verdict"}], "largest_difference_pct" (null
/// without rows), "verdicts": {"within", "beyond", "undecided", "no interval"}
/// counts}. The caller adds the workload compare itself ("workload").
nlohmann::json agreementJSON(const std::vector<AgreementRow> &Rows);

/// One line per row for the progress display: "agreement: KERNEL/SHAPE replay
/// 1.2822x, workload 1.2651x, +1.35% [-0.47%, +3.20%]: undecided".
std::vector<std::string> agreementLines(const std::vector<AgreementRow> &Rows);

} // namespace optimize
} // namespace kloop

#endif
