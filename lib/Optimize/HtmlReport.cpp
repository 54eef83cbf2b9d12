//===- HtmlReport.cpp - report.html from the journal ----------------------===//
///
/// The page is static HTML (every text from the journal HTML-escaped) plus a
/// JSON blob of chart data read by web/report.js, which draws the charts with
/// the inlined Chart.js. A Content-Security-Policy allows only the page's own
/// scripts (by their SHA-256) and no fetch at all. docs/report.md.
///
//===----------------------------------------------------------------------===//
#include "kloop/Optimize/HtmlReport.h"
#include "kloop/Optimize/Optimize.h"
#include "kloop/Support/Error.h"
#include "kloop/Support/Path.h"
#include "RunSteps.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Base64.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

using json = nlohmann::json;
using llvm::Expected;
using llvm::StringRef;

namespace kloop {
namespace optimize {

namespace {

const char PageScript[] =
#include "ReportJs.inc"
    ;
const char PageStyle[] =
#include "ReportCss.inc"
    ;

std::string readOr(StringRef Path, StringRef Otherwise) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> B = llvm::MemoryBuffer::getFile(Path);
  return B ? StringRef((*B)->getBuffer()).rtrim().str() : Otherwise.str();
}

/// The assets directory: KLOOP_REPORT_ASSETS_DIR, else under the installation prefix.
Expected<std::string> assetsDir(StringRef Argv0) {
  if (const char *Env = std::getenv("KLOOP_REPORT_ASSETS_DIR"))
    return std::string(Env);
  std::string Prefix = Argv0.empty() ? "" : installPrefix(Argv0.str().c_str(), nullptr);
  if (Prefix.empty())
    return makeError("cannot find the HTML report's charting library (the kloop executable's own path is "
                     "unknown): set KLOOP_REPORT_ASSETS_DIR");
  llvm::SmallString<256> P(Prefix);
  llvm::sys::path::append(P, ReportAssetsSubdir);
  return std::string(P);
}

/// 'sha256-...' of a script's text, for the Content-Security-Policy.
std::string cspHash(StringRef Script) {
  return "'sha256-" + llvm::encodeBase64(llvm::SHA256::hash(llvm::arrayRefFromStringRef(Script))) + "'";
}

/// JSON that can sit inside a <script> element: '<' (only ever inside strings) as \u003c.
std::string scriptSafeJSON(const json &V) {
  std::string Out;
  for (char C : V.dump(-1, ' ', false, json::error_handler_t::replace))
    Out += C == '<' ? std::string("\\u003c") : std::string(1, C);
  return Out;
}

std::string cell(StringRef Text) { return "<td>" + htmlEscape(Text) + "</td>"; }
std::string numCell(const json &V, const char *Fmt = "{0:f0}") { return "<td class=\"num\">" + num(V, Fmt) + "</td>"; }

std::string ciText(const json &E) {
  return "[" + num(E.value("ci_low", json()), "{0:f3}") + ", " + num(E.value("ci_high", json()), "{0:f3}") + "]";
}

/// Everything the page shows, read from the journal once.
struct RunData {
  int64_t Run = 0;
  RunRecord Record;
  json Final, Canary;
  std::vector<ProposalSummary> Proposals;
  std::vector<StepRecord> Steps;
  std::vector<SampleRecord> BaseSamples, CandSamples;
};

Expected<RunData> readRun(Journal &J, int64_t Run) {
  RunData D;
  Expected<int64_t> R = resolveRun(J, Run);
  if (!R)
    return R.takeError();
  D.Run = *R;
  Expected<RunRecord> RR = J.getRun(D.Run);
  Expected<json> F = finalPayload(J, D.Run);
  Expected<json> C = canaryOf(J, D.Run);
  Expected<std::vector<ProposalSummary>> Ps = J.listProposals(D.Run);
  Expected<std::vector<StepRecord>> Ss = J.listSteps(D.Run);
  if (!RR || !F || !C || !Ps || !Ss)
    return llvm::joinErrors(
        llvm::joinErrors(RR.takeError(), F.takeError()),
        llvm::joinErrors(C.takeError(), llvm::joinErrors(Ps.takeError(), Ss.takeError())));
  D.Record = *RR;
  D.Final = *F;
  D.Canary = *C;
  D.Proposals = std::move(*Ps);
  D.Steps = std::move(*Ss);
  if (!D.Final.is_object() || !D.Final.value("best", json()).is_string())
    return D;
  // The final check's samples (round 0): the baseline's, and the accepted candidate's proposal's.
  std::string Best = D.Final["best"].get<std::string>();
  std::optional<int64_t> BestId;
  for (const ProposalSummary &P : D.Proposals)
    if ("cand-" + std::to_string(P.Proposal.Round) == Best)
      BestId = P.Proposal.Id;
  auto read = [&](std::optional<int64_t> Proposal, std::vector<SampleRecord> &Out) -> llvm::Error {
    Expected<std::vector<SampleRecord>> S = J.listSamplesOf(D.Run, Proposal);
    if (!S)
      return S.takeError();
    for (SampleRecord &X : *S)
      if (X.Round == 0)
        Out.push_back(std::move(X));
    return llvm::Error::success();
  };
  if (llvm::Error E = read(std::nullopt, D.BaseSamples))
    return E;
  if (BestId)
    if (llvm::Error E = read(BestId, D.CandSamples))
      return E;
  return D;
}

json evidenceOf(const RunData &D) {
  return D.Final.is_object() && D.Final.value("evidence", json()).is_array() ? D.Final["evidence"] : json::array();
}

/// Unthrottled, not foreign durations of \p Kernel at \p Shape (what decide judged on).
json durations(const std::vector<SampleRecord> &S, StringRef Kernel, StringRef Shape) {
  json Out = json::array();
  for (const SampleRecord &X : S)
    if (X.Kernel == Kernel && X.Shape == Shape && !X.Throttled && !X.ForeignLoad)
      Out.push_back(X.DurationNs);
  return Out;
}

void summarySection(llvm::raw_ostream &OS, Journal &J, const RunData &D) {
  OS << "<h1>kloop optimize report</h1>\n<p>Journal <code>" << htmlEscape(J.path()) << "</code>, run " << D.Run
     << ", kloop " << htmlEscape(D.Record.KloopVersion) << ".</p>\n";
  if (D.Final.is_null()) {
    OS << "<p class=\"warning\">The run has not finished (resume it with <code>kloop optimize --resume</code>).</p>\n";
    return;
  }
  OS << "<p>Stop reason: " << htmlEscape(D.Final.value("stop_reason", "")) << "</p>\n";
  if (std::string W = canaryWarning(D.Canary); !W.empty())
    OS << "<p class=\"warning\">WARNING: " << htmlEscape(W)
       << ". The drift canary fired: the verdicts below may be wrong.</p>\n";
  if (D.Final.value("gpu_skipped", false))
    OS << "<p class=\"warning\">Verification and measurement skipped: no GPU. Nothing was accepted.</p>\n";
  json Best = D.Final.value("best", json());
  OS << "<p>Accepted: " << (Best.is_string() ? htmlEscape(Best.get<std::string>()) : std::string("nothing"))
     << "; " << D.Proposals.size() << " candidates tried.</p>\n";
}

/// Per kernel and shape: the evidence row and a canvas for its distribution; the chart data in \p Data.
void timingSection(llvm::raw_ostream &OS, const RunData &D, json &Data) {
  OS << "<h2>Timing per kernel and shape</h2>\n";
  json Ev = evidenceOf(D);
  if (Ev.empty()) {
    OS << "<p class=\"note\">No accepted change, so no final check: nothing to show.</p>\n";
    return;
  }
  OS << "<p class=\"note\">The final check: the baseline against the accepted version on every search and held-out "
        "shape and seed. Speed-up = median(baseline) / median(accepted), with its bootstrap 95% CI.</p>\n";
  unsigned I = 0;
  for (const json &E : Ev) {
    std::string Kernel = E.value("kernel", ""), Shape = E.value("shape", "");
    OS << "<h3>" << htmlEscape(Kernel) << " at " << htmlEscape(Shape) << "</h3>\n<table><tr><th></th><th>launches</th>"
       << "<th>median ns</th><th>p99 ns</th></tr>\n<tr><th>baseline</th>" << numCell(E.value("base_n", json()))
       << numCell(E.value("base_median_ns", json())) << numCell(E.value("base_p99_ns", json()))
       << "</tr>\n<tr><th>accepted</th>" << numCell(E.value("cand_n", json())) << numCell(E.value("cand_median_ns", json()))
       << numCell(E.value("cand_p99_ns", json())) << "</tr>\n</table>\n<p>Speed-up "
       << num(E.value("speedup", json()), "{0:f3}") << "x, 95% CI " << ciText(E) << ".</p>\n";
    json Base = durations(D.BaseSamples, Kernel, Shape), Cand = durations(D.CandSamples, Kernel, Shape);
    if (Base.empty() || Cand.empty()) {
      OS << "<p class=\"note\">No samples journaled for this pair (a journal of a kloop before the HTML report "
            "journaled the final check's launches).</p>\n";
      continue;
    }
    std::string Id = "dist-" + std::to_string(I++);
    OS << "<canvas id=\"" << Id << "\" width=\"720\" height=\"260\"></canvas>\n";
    Data["distributions"].push_back({{"canvas", Id}, {"base", Base}, {"cand", Cand}});
  }
}

/// The roofline chart's data: a point per shape that declares bytes and flops, per side.
void rooflineSection(llvm::raw_ostream &OS, const RunData &D, json &Data) {
  OS << "<h2>Roofline</h2>\n";
  json Ceil = D.Final.is_object() ? D.Final.value("ceilings", json()) : json();
  json Base = json::array(), Cand = json::array();
  double XMin = 1e300, XMax = 0;
  std::vector<std::string> Unplotted;
  for (const json &E : evidenceOf(D)) {
    double Bytes = E.value("bytes", 0.0), Flops = E.value("flops", 0.0);
    std::string Label = E.value("kernel", "") + " at " + E.value("shape", "");
    if (Bytes <= 0 || Flops <= 0 || !E.value("base_median_ns", json()).is_number() ||
        !E.value("cand_median_ns", json()).is_number()) {
      Unplotted.push_back(Label);
      continue;
    }
    double AI = Flops / Bytes;
    XMin = std::min(XMin, AI);
    XMax = std::max(XMax, AI);
    // flop/ns = GFLOP/s.
    Base.push_back({{"x", AI}, {"y", Flops / E["base_median_ns"].get<double>()}, {"label", "baseline " + Label}});
    Cand.push_back({{"x", AI}, {"y", Flops / E["cand_median_ns"].get<double>()}, {"label", "accepted " + Label}});
  }
  if (Base.empty()) {
    OS << "<p class=\"note\">No shape of the final check declares both bytes and flops in .kloop.yaml"
       << (Unplotted.empty() ? std::string() : " (" + htmlEscape(llvm::join(Unplotted, ", ")) + ")")
       << ": no roofline.</p>\n";
    return;
  }
  if (Ceil.is_object())
    OS << "<p class=\"note\">Ceilings of " << htmlEscape(Ceil.value("device", "")) << ": copy "
       << num(Ceil.value("copy_gbps", json()), "{0:f1}") << " GB/s, f32 FMA "
       << num(Ceil.value("fma_gflops", json()), "{0:f1}") << " GFLOP/s (bench/ceilings/ceilings.cu).</p>\n";
  else
    OS << "<p class=\"note\">No device ceilings were known to the run: the points without the roof.</p>\n";
  if (!Unplotted.empty())
    OS << "<p class=\"note\">Not plotted (no bytes or no flops declared): " << htmlEscape(llvm::join(Unplotted, ", "))
       << ".</p>\n";
  OS << "<canvas id=\"roofline-chart\" width=\"720\" height=\"360\"></canvas>\n";
  // Whole decades around the points, so that the log axis has round ticks.
  Data["roofline"] = {{"base", Base}, {"cand", Cand}, {"x_min", std::pow(10.0, std::floor(std::log10(XMin)) - 1)},
                      {"x_max", std::pow(10.0, std::ceil(std::log10(XMax)) + 1)},
                      {"ceilings", Ceil.is_object() ? Ceil : json()}};
}

/// The hardware-counter profiles of the run: each finished `counters-<who>` measure step (the baseline
/// and every new incumbent, docs/optimize.md), one row per kernel and shape with
/// summarizeKernelProfile's line (occupancy and its limiter, DRAM bytes, L2 hit rate, bank conflicts,
/// sectors per request, top stalls), and the problems the step recorded.
void profileSection(llvm::raw_ostream &OS, const RunData &D) {
  OS << "<h2>Profile limiters</h2>\n";
  std::string Rows;
  for (const CountersStep &C : countersSteps(D.Steps)) {
    for (const CountersStep::Row &R : C.Rows)
      Rows += "<tr>" + cell(C.Who) + cell(R.Name) + cell(R.Shape) + cell(R.Summary) + "</tr>\n";
    for (const std::string &Problem : C.Problems)
      Rows += "<tr>" + cell(C.Who) + cell("") + cell("") + cell("missing: " + Problem) + "</tr>\n";
  }
  if (Rows.empty()) {
    OS << "<p class=\"note\">The journal holds no hardware-counter profile of this run (no counters step: no "
          "GPU, or a kloop before the counters).</p>\n";
    return;
  }
  OS << "<table><tr><th>of</th><th>kernel</th><th>shape</th><th>counters</th></tr>\n" << Rows << "</table>\n";
}

/// The smallest per-pair median speed-up of a verdict's evidence, or null.
json worstSpeedup(const ProposalSummary &P) {
  json Worst;
  if (!P.Verdict || !P.Verdict->Detail.is_object())
    return Worst;
  for (const json &E : P.Verdict->Detail.value("evidence", json::array()))
    if (E.value("speedup", json()).is_number() &&
        (Worst.is_null() || E["speedup"].get<double>() < Worst.get<double>()))
      Worst = E["speedup"];
  return Worst;
}

void candidatesSection(llvm::raw_ostream &OS, const RunData &D, json &Data) {
  OS << "<h2>Candidates over time</h2>\n";
  if (D.Proposals.empty()) {
    OS << "<p class=\"note\">No candidate was proposed.</p>\n";
    return;
  }
  OS << "<canvas id=\"timeline-chart\" width=\"720\" height=\"300\"></canvas>\n<table><tr><th>round</th><th>s</th>"
        "<th>proposer</th><th>edits</th><th>outcome</th><th>worst speed-up</th><th>reason</th></tr>\n";
  for (const ProposalSummary &P : D.Proposals) {
    double T = double(P.Proposal.CreatedNs - D.Record.StartedNs) / 1e9;
    std::string Outcome = candidateOutcome(P);
    json Speedup = worstSpeedup(P);
    OS << "<tr><td class=\"num\">" << P.Proposal.Round << "</td>" << numCell(T, "{0:f1}")
       << cell(P.Proposal.ProposerKind) << cell(candidateEdits(P)) << "<td class=\"outcome-" << htmlEscape(Outcome)
       << "\">" << htmlEscape(Outcome) << "</td>" << numCell(Speedup, "{0:f3}") << cell(candidateReason(P))
       << "</tr>\n";
    Data["timeline"].push_back({{"round", P.Proposal.Round}, {"t_s", T}, {"outcome", Outcome}, {"speedup", Speedup}});
  }
  OS << "</table>\n";
}

/// The diff, line by line, classed for colour.
void diffSection(llvm::raw_ostream &OS, const RunData &D) {
  OS << "<h2>The change and its evidence</h2>\n";
  std::string Diff = D.Final.is_object() ? D.Final.value("diff", "") : "";
  if (Diff.empty()) {
    OS << "<p class=\"note\">Nothing was accepted: no diff.</p>\n";
    return;
  }
  OS << "<table><tr><th>kernel</th><th>shape</th><th>baseline median ns</th><th>accepted median ns</th>"
        "<th>speed-up 95% CI</th><th>baseline p99 ns</th><th>accepted p99 ns</th><th>% of roofline</th></tr>\n";
  for (const json &E : evidenceOf(D))
    OS << "<tr>" << cell(E.value("kernel", "")) << cell(E.value("shape", "")) << numCell(E.value("base_median_ns", json()))
       << numCell(E.value("cand_median_ns", json())) << cell(ciText(E)) << numCell(E.value("base_p99_ns", json()))
       << numCell(E.value("cand_p99_ns", json())) << numCell(E.value("pct_roofline", json()), "{0:f1}") << "</tr>\n";
  OS << "</table>\n";
  if (std::string Figures = canaryFigures(D.Canary); !Figures.empty())
    OS << "<p class=\"note\">" << htmlEscape(Figures) << ".</p>\n";
  OS << "<pre class=\"diff\">";
  for (StringRef L : llvm::split(StringRef(Diff).rtrim('\n'), '\n')) {
    const char *Class = L.starts_with("+++") || L.starts_with("---") ? nullptr
                        : L.starts_with("+")                          ? "add"
                        : L.starts_with("-")                          ? "del"
                        : L.starts_with("@@")                         ? "hunk"
                                                                      : nullptr;
    if (Class)
      OS << "<span class=\"" << Class << "\">" << htmlEscape(L) << "</span>";
    else
      OS << htmlEscape(L) << "\n";
  }
  OS << "</pre>\n";
}

} // namespace

std::string htmlEscape(StringRef Text) {
  std::string Out;
  Out.reserve(Text.size());
  for (char C : Text)
    switch (C) {
    case '&': Out += "&amp;"; break;
    case '<': Out += "&lt;"; break;
    case '>': Out += "&gt;"; break;
    case '"': Out += "&quot;"; break;
    case '\'': Out += "&#39;"; break;
    default: Out += C;
    }
  return Out;
}

Expected<std::string> loadChartLibrary(StringRef Argv0) {
  Expected<std::string> Dir = assetsDir(Argv0);
  if (!Dir)
    return Dir.takeError();
  llvm::SmallString<256> P(*Dir);
  llvm::sys::path::append(P, ChartLibraryFile);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> B = llvm::MemoryBuffer::getFile(P);
  if (!B) {
    llvm::SmallString<256> Why(*Dir);
    llvm::sys::path::append(Why, "MISSING.txt");
    return makeError("cannot write the HTML report: the charting library '" + P + "' (Chart.js, installed by the "
                     "build's `npm ci`) cannot be read: " + B.getError().message() + "; " +
                     readOr(Why, "rebuild kloop with npm and the npm registry reachable, or set KLOOP_REPORT_ASSETS_DIR"));
  }
  std::string Text = (*B)->getBuffer().str();
  if (StringRef(Text).trim().empty() || StringRef(Text).contains_insensitive("</script"))
    return makeError("cannot write the HTML report: the charting library '" + P + "' is " +
                     (StringRef(Text).trim().empty() ? "empty" : "not inlinable (it contains \"</script\")") +
                     "; rebuild kloop to reinstall it");
  return Text;
}

Expected<std::string> renderHtmlReport(Journal &J, int64_t Run, StringRef ChartLibrary) {
  Expected<RunData> D = readRun(J, Run);
  if (!D)
    return D.takeError();
  json Data = {{"distributions", json::array()}, {"roofline", nullptr}, {"timeline", json::array()}};
  std::string Body;
  llvm::raw_string_ostream OS(Body);
  summarySection(OS, J, *D);
  timingSection(OS, *D, Data);
  rooflineSection(OS, *D, Data);
  profileSection(OS, *D);
  candidatesSection(OS, *D, Data);
  diffSection(OS, *D);
  std::string Page;
  llvm::raw_string_ostream P(Page);
  P << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
       "script-src "
    << cspHash(ChartLibrary) << " " << cspHash(PageScript) << "\">\n<title>kloop report: run " << D->Run
    << "</title>\n<style>" << PageStyle << "</style>\n</head>\n<body>\n"
    << "<p id=\"kloop-chart-error\" hidden></p>\n"
    << Body << "<script type=\"application/json\" id=\"kloop-data\">" << scriptSafeJSON(Data) << "</script>\n"
    << "<script>" << ChartLibrary << "</script>\n<script>" << PageScript << "</script>\n</body>\n</html>\n";
  return Page;
}

} // namespace optimize
} // namespace kloop
