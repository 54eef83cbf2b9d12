//===- Agreement.cpp - Replay's speed-up against the workload's ----------===//
#include "kloop/Optimize/Agreement.h"
#include "Evidence.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

namespace kloop {
namespace optimize {

using json = nlohmann::json;

const char *agreementVerdictName(AgreementVerdict V) {
  switch (V) {
  case AgreementVerdict::Within:
    return "within";
  case AgreementVerdict::Beyond:
    return "beyond";
  case AgreementVerdict::Undecided:
    return "undecided";
  case AgreementVerdict::NoInterval:
    break;
  }
  return "no interval";
}

/// Row \p R's member \p Key when it is a positive finite number.
static std::optional<double> positive(const json &R, const char *Key) {
  std::optional<double> V = evidenceNumber(R, Key);
  return V && std::isfinite(*V) && *V > 0 ? V : std::nullopt;
}

static std::string text(const json &R, const char *Key) {
  return R.is_object() && R.contains(Key) && R[Key].is_string() ? R[Key].get<std::string>() : std::string();
}

/// Half the width of row \p R's speed-up interval on the log scale; nullopt without one.
static std::optional<double> logHalfWidth(const json &R) {
  std::optional<double> Lo = positive(R, "ci_low"), Hi = positive(R, "ci_high");
  if (!Lo || !Hi || *Hi < *Lo)
    return std::nullopt;
  return std::log(*Hi / *Lo) / 2;
}

/// The workload row of \p Workload that replay row \p R is matched with (matchAgreement), or null.
static const json *workloadRow(const json &R, const json &Workload, const std::vector<std::string> &Targets) {
  std::string Shape = llvm::StringRef(text(R, "shape")).split('#').first.str();
  std::string Kernel = text(R, "kernel");
  auto Target = llvm::find_if(Targets, [&](const std::string &T) { return llvm::StringRef(Kernel).contains(T); });
  if (Target == Targets.end())
    return nullptr;
  for (const json &W : Workload)
    if (text(W, "kernel") == *Target && text(W, "shape") == Shape && positive(W, "speedup"))
      return &W;
  return nullptr;
}

static AgreementVerdict verdictOf(const std::optional<std::pair<double, double>> &I) {
  if (!I)
    return AgreementVerdict::NoInterval;
  if (I->first >= -AgreementPct && I->second <= AgreementPct)
    return AgreementVerdict::Within;
  if (I->first > AgreementPct || I->second < -AgreementPct)
    return AgreementVerdict::Beyond;
  return AgreementVerdict::Undecided;
}

std::vector<AgreementRow> matchAgreement(const json &Replay, const json &Workload,
                                         const std::vector<std::string> &Targets) {
  std::vector<AgreementRow> Out;
  if (!Replay.is_array() || !Workload.is_array())
    return Out;
  for (const json &R : Replay) {
    const json *W = positive(R, "speedup") ? workloadRow(R, Workload, Targets) : nullptr;
    if (!W)
      continue;
    AgreementRow A;
    A.Kernel = text(R, "kernel");
    A.WorkloadKernel = text(*W, "kernel");
    A.Shape = text(R, "shape");
    A.Replay = *positive(R, "speedup");
    A.Workload = *positive(*W, "speedup");
    double D = std::log(A.Replay / A.Workload);
    A.DifferencePct = std::expm1(D) * 100;
    std::optional<double> HR = logHalfWidth(R), HW = logHalfWidth(*W);
    if (HR && HW) {
      double H = std::hypot(*HR, *HW);
      A.IntervalPct = std::pair{std::expm1(D - H) * 100, std::expm1(D + H) * 100};
    }
    A.Verdict = verdictOf(A.IntervalPct);
    Out.push_back(std::move(A));
  }
  return Out;
}

json agreementJSON(const std::vector<AgreementRow> &Rows) {
  json Out = {{"threshold_pct", AgreementPct}, {"rows", json::array()}, {"largest_difference_pct", nullptr}};
  json Counts = json::object();
  for (AgreementVerdict V : {AgreementVerdict::Within, AgreementVerdict::Beyond, AgreementVerdict::Undecided,
                             AgreementVerdict::NoInterval})
    Counts[agreementVerdictName(V)] = 0;
  for (const AgreementRow &A : Rows) {
    Out["rows"].push_back({{"kernel", A.Kernel},
                           {"workload_kernel", A.WorkloadKernel},
                           {"shape", A.Shape},
                           {"replay", A.Replay},
                           {"workload", A.Workload},
                           {"difference_pct", A.DifferencePct},
                           {"interval_pct", A.IntervalPct ? json{A.IntervalPct->first, A.IntervalPct->second}
                                                          : json(nullptr)},
                           {"verdict", agreementVerdictName(A.Verdict)}});
    Counts[agreementVerdictName(A.Verdict)] = Counts[agreementVerdictName(A.Verdict)].get<int>() + 1;
    json &L = Out["largest_difference_pct"];
    if (L.is_null() || std::fabs(A.DifferencePct) > L.get<double>())
      L = std::fabs(A.DifferencePct);
  }
  Out["verdicts"] = std::move(Counts);
  return Out;
}

/// \p Pct with its sign and two decimals: "+1.35%", "-0.47%".
static std::string signedPct(double Pct) { return llvm::formatv("{0}{1:f2}%", Pct < 0 ? "" : "+", Pct).str(); }

std::vector<std::string> agreementLines(const std::vector<AgreementRow> &Rows) {
  std::vector<std::string> Out;
  for (const AgreementRow &A : Rows) {
    std::string Interval = A.IntervalPct
                               ? "[" + signedPct(A.IntervalPct->first) + ", " + signedPct(A.IntervalPct->second) + "]"
                               : std::string("[no interval]");
    Out.push_back(llvm::formatv("agreement: {0}/{1} replay {2:f4}x, workload {3:f4}x, {4} {5}: {6}", A.Kernel,
                                A.Shape, A.Replay, A.Workload, signedPct(A.DifferencePct), Interval,
                                agreementVerdictName(A.Verdict))
                      .str());
  }
  return Out;
}

} // namespace optimize
} // namespace kloop
