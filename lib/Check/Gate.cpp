//===- Gate.cpp - `kloop check`'s performance gate -------------------------===//
#include "kloop/Check/Gate.h"
#include "kloop/Decide/Statistics.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>

using json = nlohmann::json;
using llvm::Expected;

namespace kloop {
namespace check {

static llvm::Error gateError(const Journal &J, const llvm::Twine &Why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), J.path() + ": " + Why);
}

/// The finished "final" step of \p Run, or null.
static Expected<json> finalStep(Journal &J, int64_t Run) {
  Expected<std::vector<StepRecord>> Steps = J.listSteps(Run);
  if (!Steps)
    return Steps.takeError();
  json Out;
  for (const StepRecord &S : *Steps)
    if (S.Round == 0 && S.State == StepState::Done && S.Key == "final" && S.Status == StepStatus::Finished)
      Out = S.Payload;
  return Out;
}

/// The samples as KernelTimings, throttled and foreign-load launches left out.
static std::vector<KernelTimings> timingsOf(const std::vector<SampleRecord> &Samples) {
  std::map<std::pair<std::string, std::string>, std::vector<double>> By;
  for (const SampleRecord &S : Samples)
    if (!S.Throttled && !S.ForeignLoad && S.DurationNs > 0)
      By[{S.Kernel, S.Shape}].push_back(double(S.DurationNs));
  std::vector<KernelTimings> Out;
  for (auto &[Key, Ns] : By)
    Out.push_back({Key.first, Key.second, std::move(Ns), {}});
  return Out;
}

Expected<GateReference> gateReference(Journal &J) {
  Expected<std::vector<RunRecord>> Runs = J.listRuns();
  if (!Runs)
    return Runs.takeError();
  for (auto It = Runs->rbegin(); It != Runs->rend(); ++It) {
    Expected<json> Final = finalStep(J, It->Id);
    if (!Final)
      return Final.takeError();
    const json Check = Final->is_object() ? Final->value("final_check", json()) : json();
    if (!Check.is_object())
      continue; // no final check (no GPU, or no candidate won): nothing was timed
    GateReference R;
    R.Run = It->Id;
    R.ConfigPath = Check.value("config", std::string());
    const json Thresholds = Check.value("settings", json::object()).value("thresholds", json());
    if (Thresholds.is_object() && Thresholds.value("min_gain", json()).is_number())
      R.MinGain = Thresholds["min_gain"].get<double>();
    R.Version = "baseline";
    Expected<std::vector<SampleRecord>> Samples = J.listSamplesOf(It->Id, std::nullopt);
    if (!Samples)
      return Samples.takeError();
    std::vector<SampleRecord> Final0;
    for (const SampleRecord &S : *Samples)
      if (S.Round == 0)
        Final0.push_back(S);
    R.Timings = timingsOf(Final0);
    if (R.Timings.empty())
      return gateError(J, "run " + std::to_string(R.Run) + ": the final check journaled no samples of the " +
                              R.Version + " (a journal from before kloop journaled them?)");
    return R;
  }
  return gateError(J, "no run has a final check with timings (a run without a GPU, or one that stopped before "
                      "its final check, records none)");
}

/// \p T's groups, one per duration: T.Groups, or group 0 for every duration when it has none.
static std::vector<uint32_t> groupsOf(const KernelTimings &T) {
  return T.Groups.size() == T.Ns.size() ? T.Groups : std::vector<uint32_t>(T.Ns.size(), 0);
}

Expected<std::vector<GateResult>> gateTimings(const std::vector<KernelTimings> &Ref,
                                              const std::vector<KernelTimings> &Current, double MinGain) {
  std::vector<GateResult> Out;
  for (const KernelTimings &R : Ref)
    for (const KernelTimings &C : Current) {
      if (R.Kernel != C.Kernel || R.Shape != C.Shape)
        continue;
      Expected<decide::SpeedupInterval> S =
          decide::bootstrapSpeedupUnpaired(R.Ns, groupsOf(R), C.Ns, groupsOf(C));
      if (!S)
        return llvm::createStringError(llvm::inconvertibleErrorCode(), "kernel " + R.Kernel + " shape " +
                                                                           R.Shape + ": " +
                                                                           llvm::toString(S.takeError()));
      GateResult G;
      G.Kernel = R.Kernel;
      G.Shape = R.Shape;
      std::vector<double> A = R.Ns, B = C.Ns;
      G.ReferenceMedianNs = decide::medianInPlace(A);
      G.CurrentMedianNs = decide::medianInPlace(B);
      G.Speedup = *S;
      G.Slower = S->Upper < 1.0 / (1.0 + MinGain);
      Out.push_back(std::move(G));
    }
  return Out;
}

std::string describeGateResult(const GateResult &R, llvm::StringRef Version) {
  double Pct = (R.CurrentMedianNs / R.ReferenceMedianNs - 1.0) * 100.0;
  return llvm::formatv("kernel {0} shape {1}: {2:f1}% {3} than the journal's {4} (median {5:f2} us against "
                       "{6:f2} us; speed-up {7:f3}x, {8:f0}% CI [{9:f3}, {10:f3}])",
                       R.Kernel, R.Shape, std::abs(Pct), Pct >= 0 ? "slower" : "faster", Version,
                       R.CurrentMedianNs / 1e3, R.ReferenceMedianNs / 1e3, R.Speedup.Estimate,
                       R.Speedup.Confidence * 100, R.Speedup.Lower, R.Speedup.Upper)
      .str();
}

} // namespace check
} // namespace kloop
