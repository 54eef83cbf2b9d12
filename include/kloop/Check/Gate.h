//===- kloop/Check/Gate.h - `kloop check`'s performance gate --------------===//
///
/// \file
/// The performance gate of the pre-commit pass (issue 16, item 4;
/// docs/check.md, "Performance gate"): the GPU durations a kloop optimize
/// journal recorded in its final check are the reference; the working tree's
/// target kernels are timed on the same shapes; a kernel slower than its
/// reference by more than the confidence interval allows is an error naming
/// the kernel, the shape and the figures. Nothing here runs a program or
/// prints: lib/Driver/CheckCommand.cpp measures (kloop/Measure/Measure.h) and
/// renders.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_CHECK_GATE_H
#define KLOOP_CHECK_GATE_H

#include "kloop/Decide/Bootstrap.h"
#include "kloop/Journal/Journal.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace kloop {
namespace check {

/// GPU durations of one target kernel at one shape.
struct KernelTimings {
  std::string Kernel; ///< the kernel's name as measured (CUPTI's demangled name)
  std::string Shape;  ///< the workload shape's name
  std::vector<double> Ns; ///< launch durations, ns (throttled and foreign-load launches already left out)
  /// The run (placement) each of Ns came from, parallel to it; empty: one group (the journal's reference,
  /// whose samples do not say their timing round).
  std::vector<uint32_t> Groups;
};

/// What a journal holds as the reference of the gate.
struct GateReference {
  int64_t Run = 0;
  /// The run's workload description (.kloop.yaml), as the final check recorded it.
  std::string ConfigPath;
  /// Which version the durations are of: "baseline" (the code the run
  /// started from; issue 16 gates against the recorded baseline).
  std::string Version;
  /// The smallest gain the run's decisions required (compare settings'
  /// "min_gain", a fraction; 0.02 when the journal does not say).
  double MinGain = 0.02;
  std::vector<KernelTimings> Timings;
};

/// The reference of the latest run of \p J whose final check journaled its
/// samples (kloop optimize, docs/journal.md "samples"; a final check runs
/// only when a candidate won): the baseline's durations per kernel and
/// shape, throttled and foreign-load launches left out. Errors, naming the
/// journal: no run finished with a final check (a run without a GPU, without
/// a win, or stopped before it), no baseline samples.
llvm::Expected<GateReference> gateReference(Journal &J);

/// The gate's verdict on one kernel and shape.
struct GateResult {
  std::string Kernel, Shape;
  double ReferenceMedianNs = 0, CurrentMedianNs = 0;
  /// Bootstrap interval of median(reference) / median(current): below 1 the
  /// working tree is slower.
  decide::SpeedupInterval Speedup;
  /// The whole interval lies below 1 / (1 + MinGain): slower than the
  /// reference by more than the noise and the decision threshold allow.
  bool Slower = false;
};

/// Compares \p Current with \p Ref kernel by kernel and shape by shape (the
/// pairs present on both sides; a pair on one side only is skipped), by
/// decide::bootstrapSpeedupUnpaired over each side's Groups: the working
/// tree's runs, each at a placement of its own, are resampled before their
/// launches, so one run at a slow placement does not pass for a regression.
/// \p MinGain is the tolerance (a fraction >= 0). Errors: a bootstrap error
/// (an empty or non-positive side), naming the kernel and shape.
llvm::Expected<std::vector<GateResult>> gateTimings(const std::vector<KernelTimings> &Ref,
                                                    const std::vector<KernelTimings> &Current, double MinGain);

/// One sentence: "kernel K shape S: 12.3% slower than the journal's <version>
/// (median 45.10 us against 40.16 us; speed-up 0.890x, 95% CI [0.884, 0.897])".
std::string describeGateResult(const GateResult &R, llvm::StringRef Version);

} // namespace check
} // namespace kloop

#endif
