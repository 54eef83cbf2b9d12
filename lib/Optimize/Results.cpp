//===- Results.cpp - accepted.patch and report.md from the journal --------===//
#include "kloop/Optimize/Optimize.h"
#include "kloop/Measure/Config.h"
#include "kloop/Support/Error.h"
#include "RunSteps.h"
#include "kloop/Support/JSON.h"
#include "kloop/Support/Ptxas.h"
#include "kloop/Support/AtomicFile.h"
#include "kloop/Support/Text.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <map>

using json = nlohmann::json;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;

namespace kloop {
namespace optimize {

Expected<int64_t> resolveRun(Journal &J, int64_t Run) {
  if (Run)
    return Run;
  Expected<std::vector<RunRecord>> Runs = J.listRuns();
  if (!Runs)
    return Runs.takeError();
  if (Runs->empty())
    return makeError(J.path() + ": the journal has no run");
  return Runs->back().Id;
}

/// "baseline" or "round N": which build of the run a ptxas report row is from.
static std::string buildName(const BuildRecord &B) {
  return B.Proposal ? "round " + std::to_string(B.Round) : std::string("baseline");
}

Expected<json> runStepPayload(Journal &J, int64_t Run, StepState State, StringRef Key) {
  Expected<std::optional<StepRecord>> F = J.findFinishedStep(Run, 0, State, Key);
  if (!F)
    return F.takeError();
  return *F ? (*F)->Payload : json(nullptr);
}

Expected<json> finalPayload(Journal &J, int64_t Run) {
  return runStepPayload(J, Run, StepState::Done, "final");
}

Expected<json> canaryOf(Journal &J, int64_t Run) {
  return runStepPayload(J, Run, StepState::Measure, "canary");
}

std::string num(const json &V, const char *Fmt) {
  return V.is_number() ? llvm::formatv(Fmt, V.get<double>()).str() : "n/a";
}

/// \p Text as one Markdown table cell: newlines and pipes become spaces, escapes as on a terminal.
static std::string tableCell(std::string Text) {
  for (char &C : Text)
    if (C == '\n' || C == '|')
      C = ' ';
  return terminalSafe(Text);
}

/// What the final check of final payload \p F held out, from the workload it ran: "after a final check
/// that included 1 held-out shape and 1 held-out seed". A workload with none (codebase mode's
/// synthesized ones) says so, and one whose description no longer loads says that it is not known.
static std::string finalCheckClause(const json &F) {
  const json Check = F.value("final_check", json::object());
  std::string Path = Check.is_object() ? Check.value("config", std::string()) : std::string();
  Expected<measure::WorkloadConfig> C = measure::loadConfig(Path);
  if (!C) {
    consumeError(C.takeError());
    return "after a final check (its workload description " + Path +
           " no longer loads, so which held-out inputs it used is not known here)";
  }
  size_t Shapes = llvm::count_if(C->Shapes, [](const measure::ShapeSpec &S) { return S.HeldOut; });
  auto Count = [](size_t N, const char *What) {
    return std::to_string(N) + " held-out " + What + (N == 1 ? "" : "s");
  };
  if (Shapes == 0 && C->HeldOutSeeds == 0)
    return "after a final check on the search shapes and seeds only (the workload declares no held-out "
           "shape or seed)";
  if (Shapes == 0)
    return "after a final check that included " + Count(C->HeldOutSeeds, "seed") + " (no held-out shape)";
  if (C->HeldOutSeeds == 0)
    return "after a final check that included " + Count(Shapes, "shape") + " (no held-out seed)";
  return "after a final check that included " + Count(Shapes, "shape") + " and " +
         Count(C->HeldOutSeeds, "seed");
}

/// The canary's warning (when it fired, between \p Before and \p After) and its figures, as a paragraph;
/// "" when no canary ran.
static std::string canaryParagraph(const json &Canary, StringRef Before, StringRef After) {
  std::string Warning = canaryWarning(Canary), Figures = canaryFigures(Canary);
  if (Figures.empty())
    return "";
  return (Warning.empty() ? "" : (Before + Warning + After + "\n").str()) + Figures + ".\n\n";
}

static std::string evidenceTable(const json &Ev) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  OS << "| kernel | shape | baseline median ns | candidate median ns | speed-up 95% CI | "
        "baseline p99 ns | candidate p99 ns | % of roofline |\n"
     << "|---|---|---:|---:|---|---:|---:|---:|\n";
  for (const json &E : Ev)
    OS << "| " << E.value("kernel", "") << " | " << E.value("shape", "") << " | "
       << num(E.value("base_median_ns", json())) << " | " << num(E.value("cand_median_ns", json()))
       << " | [" << num(E.value("ci_low", json()), "{0:f3}") << ", "
       << num(E.value("ci_high", json()), "{0:f3}") << "] | " << num(E.value("base_p99_ns", json()))
       << " | " << num(E.value("cand_p99_ns", json())) << " | "
       << num(E.value("pct_roofline", json()), "{0:f1}") << " |\n";
  return S;
}

Expected<std::string> renderPatch(Journal &J, int64_t Run) {
  Expected<int64_t> R = resolveRun(J, Run);
  if (!R)
    return R.takeError();
  Expected<json> F = finalPayload(J, *R);
  if (!F)
    return F.takeError();
  if (F->is_null() || !(*F)["best"].is_string() || (*F)["diff"].get<std::string>().empty())
    return std::string();
  std::string Best = (*F)["best"].get<std::string>();
  // Provenance of the accepted candidate's proposal.
  Expected<std::vector<ProposalSummary>> Ps = J.listProposals(*R);
  if (!Ps)
    return Ps.takeError();
  int64_t Round = std::stoll(Best.substr(5));
  std::string Rationale, Prov;
  for (const ProposalSummary &P : *Ps)
    if (P.Proposal.Round == Round) {
      Rationale = P.Proposal.Parsed.is_object() ? P.Proposal.Parsed.value("rationale", "") : "";
      Prov = "proposer " + P.Proposal.ProposerKind +
             (P.Proposal.Model.empty() ? "" : ", model " + P.Proposal.Model) +
             (P.Proposal.PromptVersion.empty() ? "" : ", prompt " + P.Proposal.PromptVersion) +
             (P.Proposal.Seed ? ", seed " + std::to_string(*P.Proposal.Seed) : "") +
             ", proposal #" + std::to_string(P.Proposal.Id);
    }
  Expected<RunRecord> RR = J.getRun(*R);
  if (!RR)
    return RR.takeError();
  Expected<json> Canary = canaryOf(J, *R);
  if (!Canary)
    return Canary.takeError();
  std::string S;
  llvm::raw_string_ostream OS(S);
  OS << "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
     << "From: kloop optimize <kloop@localhost>\n"
     << "Subject: [PATCH] kloop: " << (Rationale.empty() ? "tuned kernel" : terminalSafe(Rationale)) << "\n\n"
     << "Accepted by kloop optimize (journal " << J.path() << ", run " << *R << ", " << Best
     << ") " << finalCheckClause(*F) << ".\n\n"
     << canaryParagraph(*Canary, "WARNING: ", ".")
     << "Evidence (baseline vs this change, per kernel and shape):\n\n"
     << evidenceTable((*F)["evidence"]) << "\nProvenance: " << terminalSafe(Prov) << ".\n"
     << "Stop reason: " << (*F)["stop_reason"].get<std::string>() << "\n---\n"
     << (*F)["diff"].get<std::string>();
  if (!S.empty() && S.back() != '\n')
    OS << "\n";
  OS << "-- \nkloop 0.1.0\n";
  return S;
}

/// The first refusal of \p P as kloop apply words it: "edit #N (kind target): reason" for a refused
/// edit (its 1-based index and its kind and target from the journal's edits), else the reason as
/// journaled (a whole-proposal refusal; journals of earlier versions held the whole text there).
static std::string firstRefusal(const ProposalSummary &P) {
  const RefusalRecord &R = P.Refusals.front();
  if (!R.EditOrdinal)
    return R.Reason;
  std::string Label;
  for (const EditRecord &E : P.Edits)
    if (E.Ordinal == *R.EditOrdinal)
      Label = " (" + E.Kind + " " + E.Target + ")";
  return "edit #" + std::to_string(*R.EditOrdinal + 1) + Label + ": " + R.Reason;
}

std::vector<CountersStep> countersSteps(const std::vector<StepRecord> &Steps) {
  std::vector<CountersStep> Out;
  for (const StepRecord &St : Steps) {
    StringRef Who = St.Key;
    if (St.Status != StepStatus::Finished || St.State != StepState::Measure || !Who.consume_front("counters-") ||
        !St.Payload.is_object())
      continue;
    CountersStep C;
    C.Who = Who.str();
    C.Payload = St.Payload;
    for (const json &J : St.Payload.value("profiles", json::array())) {
      Expected<measure::KernelProfile> KP = measure::kernelProfileFromJSON(J, "counters-" + C.Who + " step");
      if (KP)
        C.Rows.push_back({KP->Name, KP->Shape, measure::summarizeKernelProfile(*KP), true});
      else
        C.Rows.push_back({"", "", "unreadable: " + llvm::toString(KP.takeError()), false});
    }
    for (const json &Problem : St.Payload.value("problems", json::array()))
      C.Problems.push_back(Problem.is_string() ? Problem.get<std::string>() : dumpJSON(Problem));
    Out.push_back(std::move(C));
  }
  return Out;
}

/// The hardware counters of the baseline and of each new incumbent (the counters steps), one section
/// each with what the metrics runs cost; "" when no counters step ran.
static std::string countersSection(const std::vector<StepRecord> &Steps) {
  std::string Out;
  for (const CountersStep &C : countersSteps(Steps)) {
    if (!C.Payload.value("profiles", json()).is_array())
      continue;
    const json Cost = C.Payload.value("cost", json::object());
    Out += "### " + C.Who + "\n\n";
    Out += llvm::formatv("cost: metrics runs {0} s against {1} s for plain runs of the same shapes (ratio {2}); "
                         "{3} replay pass(es) per profiled launch on {4}\n\n",
                         num(Cost.value("metrics_wall_s", json()), "{0:f2}"),
                         num(Cost.value("plain_wall_s", json()), "{0:f2}"), num(Cost.value("ratio", json()), "{0:f1}"),
                         num(C.Payload.value("passes", json())), C.Payload.value("chip", std::string("?")))
               .str();
    for (const CountersStep::Row &R : C.Rows)
      Out += R.Readable ? "- `" + R.Name + "`" + (R.Shape.empty() ? "" : " [" + R.Shape + "]") + ": " + R.Summary + "\n"
                        : "- (" + R.Summary + ")\n";
    for (const std::string &Problem : C.Problems)
      Out += "- missing: " + Problem + "\n";
    Out += "\n";
  }
  if (Out.empty())
    return "";
  return "## Hardware counters\n\nOne metrics run per search shape through CUPTI's range profiler (kernel replay), "
         "separate from every timing run.\n\n" +
         Out;
}

std::string candidateEdits(const ProposalSummary &P) {
  std::string Edits;
  for (const EditRecord &E : P.Edits)
    Edits += (Edits.empty() ? "" : "; ") + E.Kind + " " + E.Target +
             (E.Spec.contains("value") ? "=" + dumpJSON(E.Spec["value"])
              : E.Spec.contains("count") ? "=" + dumpJSON(E.Spec["count"])
              : E.Spec.contains("min_blocks") ? " min_blocks=" + dumpJSON(E.Spec["min_blocks"])
                                              : "");
  return Edits;
}

std::string candidateOutcome(const ProposalSummary &P) {
  return !P.Refusals.empty() ? "refused" : P.Verdict ? P.Verdict->Outcome : "(unfinished)";
}

std::string candidateReason(const ProposalSummary &P) {
  return !P.Refusals.empty() ? firstRefusal(P) : P.Verdict ? P.Verdict->Explanation : "";
}

/// `kloop optimize --agreement`: every agreement row of the search steps (docs/optimize.md, "Agreement of
/// replay and the workload"), with the verdicts' counts and the largest difference; "" when there is none.
static std::string agreementSection(const std::vector<StepRecord> &Steps) {
  std::string Rows, Errors;
  std::map<std::string, unsigned> Verdicts;
  unsigned N = 0;
  double Largest = 0;
  for (const StepRecord &St : Steps) {
    if (St.Status != StepStatus::Finished || St.State != StepState::Verify || !St.Payload.is_object())
      continue;
    const json A = St.Payload.value("detail", json::object()).value("agreement", json::object());
    if (A.value("error", json()).is_string())
      Errors += "- round " + std::to_string(St.Round) + ": the workload compare failed: " +
                tableCell(A["error"].get<std::string>()) + "\n";
    for (const json &R : A.value("rows", json::array())) {
      if (!R.is_object())
        continue;
      const json I = R.value("interval_pct", json());
      std::string Interval = I.is_array() && I.size() == 2 && I[0].is_number() && I[1].is_number()
                                 ? llvm::formatv("[{0:f2}%, {1:f2}%]", I[0].get<double>(), I[1].get<double>()).str()
                                 : std::string("-");
      std::string Verdict = R.value("verdict", std::string("?"));
      Rows += llvm::formatv("| {0} | {1} | {2} | {3}x | {4}x | {5}% | {6} | {7} |\n", St.Round,
                            tableCell(R.value("kernel", std::string())), tableCell(R.value("shape", std::string())),
                            num(R.value("replay", json()), "{0:f4}"), num(R.value("workload", json()), "{0:f4}"),
                            num(R.value("difference_pct", json()), "{0:f2}"), Interval, tableCell(Verdict))
                  .str();
      ++Verdicts[Verdict];
      ++N;
      if (R.value("difference_pct", json()).is_number())
        Largest = std::max(Largest, std::fabs(R["difference_pct"].get<double>()));
    }
  }
  if (!N && Errors.empty())
    return "";
  std::string Counts;
  for (const auto &[V, C] : Verdicts)
    Counts += (Counts.empty() ? "" : ", ") + V + " " + std::to_string(C);
  std::string Table = N ? std::to_string(N) + " row(s): " + Counts + "; largest difference " +
                              llvm::formatv("{0:f2}", Largest).str() +
                              "%.\n\n| round | kernel | shape | replay | workload | difference | interval | verdict "
                              "|\n|---:|---|---|---:|---:|---:|---|---|\n" +
                              Rows + "\n"
                        : std::string("No row.\n\n");
  return "## Agreement of replay and the workload\n\nEach replayed search step timed again by workload runs "
         "(`--agreement`): the median speed-up each way, replay's over the workload's, and the difference's ~95% "
         "interval; `within` means inside +-2% (issue 14, item 5). " +
         Table + (Errors.empty() ? "" : "Not compared:\n\n" + Errors + "\n");
}

Expected<std::string> renderReport(Journal &J, int64_t Run) {
  Expected<int64_t> R = resolveRun(J, Run);
  if (!R)
    return R.takeError();
  Expected<json> F = finalPayload(J, *R);
  if (!F)
    return F.takeError();
  Expected<std::vector<ProposalSummary>> Ps = J.listProposals(*R);
  if (!Ps)
    return Ps.takeError();
  Expected<std::vector<StepRecord>> Steps = J.listSteps(*R);
  if (!Steps)
    return Steps.takeError();
  Expected<json> Canary = canaryOf(J, *R);
  if (!Canary)
    return Canary.takeError();
  unsigned Refused = 0, BuildFailed = 0, FailedVerif = 0, Accepted = 0, Unmeasured = 0, Rejected = 0, ApplyFailed = 0;
  std::map<std::string, unsigned> ByReason;
  int64_t TokIn = 0, TokOut = 0;
  double Cost = 0;
  for (const ProposalSummary &P : *Ps) {
    TokIn += P.Proposal.TokensIn.value_or(0);
    TokOut += P.Proposal.TokensOut.value_or(0);
    Cost += P.Proposal.CostUSD.value_or(0);
    if (!P.Refusals.empty()) {
      ++Refused;
      for (const RefusalRecord &Rf : P.Refusals)
        ++ByReason[Rf.Reason.substr(0, 120)];
      continue;
    }
    if (!P.Verdict)
      continue;
    const std::string &O = P.Verdict->Outcome;
    if (O == "build_failed") ++BuildFailed;
    else if (O == "failed_verification") ++FailedVerif;
    else if (O == "accepted") ++Accepted;
    else if (O == "unmeasured") ++Unmeasured;
    else if (O == "apply_failed") ++ApplyFailed;
    else ++Rejected;
  }
  bool Skipped = false;
  for (const StepRecord &S : *Steps)
    if (S.State == StepState::Verify && S.Payload.is_object() && S.Payload.contains("skipped"))
      Skipped = true;
  // Where the candidates' time went (rounds >= 1; round 0 is the baseline and the final check): journal
  // step durations, and inside each verify step the compare's own split (kloop-compare/1 "time_s").
  double TApply = 0, TBuild = 0, TVerifyStep = 0, TPropose = 0, TRunsVerify = 0, TRunsTiming = 0,
         TDecide = 0, TCompareBuild = 0;
  // Timing samples the compares discarded (kloop-compare/1 throttled_discarded, foreign_discarded; the
  // latter is absent in journals of a kloop that did not check foreign GPU load).
  uint64_t Throttled = 0, Foreign = 0;
  bool ForeignRecorded = false;
  // Round 0: the run-level steps (finished attempts only).
  double TExtract = 0, TBaseBuild = 0, TCanary = 0, TFinal = 0;
  for (const StepRecord &St : *Steps) {
    if (!St.FinishedNs || St.Status != StepStatus::Finished || St.Round != 0)
      continue;
    double D = double(*St.FinishedNs - St.StartedNs) / 1e9;
    (St.State == StepState::Extract ? TExtract
     : St.State == StepState::Build ? TBaseBuild
     : St.State == StepState::Measure ? TCanary
                                       : TFinal) += D;
  }
  for (const StepRecord &St : *Steps) {
    if (St.Round < 1 || !St.FinishedNs)
      continue;
    double D = double(*St.FinishedNs - St.StartedNs) / 1e9;
    switch (St.State) {
    case StepState::Propose: TPropose += D; break;
    case StepState::Apply: TApply += D; break;
    case StepState::Build: TBuild += D; break;
    case StepState::Verify: {
      TVerifyStep += D;
      const json Detail = St.Payload.is_object() && St.Payload.contains("detail") && St.Payload["detail"].is_object()
                              ? St.Payload["detail"]
                              : json::object();
      const json T = Detail.value("time_s", json());
      Throttled += Detail.value("throttled_discarded", uint64_t(0));
      Foreign += Detail.value("foreign_discarded", uint64_t(0));
      ForeignRecorded |= Detail.contains("foreign_discarded");
      if (T.is_object()) {
        TCompareBuild += T.value("build", 0.0);
        TRunsVerify += T.value("verify_runs", 0.0);
        TRunsTiming += T.value("timing_runs", 0.0);
        TDecide += T.value("decide", 0.0);
      }
      break;
    }
    default: break;
    }
  }
  double TAll = TPropose + TApply + TBuild + TVerifyStep;
  std::string Diff = F->is_object() ? (*F)["diff"].get<std::string>() : "";
  unsigned Plus = 0, Minus = 0;
  for (StringRef L : llvm::split(StringRef(Diff), '\n')) {
    if (L.starts_with("+++") || L.starts_with("---"))
      continue;
    if (L.starts_with("+")) ++Plus;
    else if (L.starts_with("-")) ++Minus;
  }
  std::string S;
  llvm::raw_string_ostream OS(S);
  OS << "# kloop optimize report\n\n"
     << "Journal: `" << J.path() << "`, run " << *R << ".\n\n";
  if (F->is_null())
    OS << "**The run has not finished** (resume it with `kloop optimize --resume`).\n\n";
  else
    OS << "Stop reason: " << (*F)["stop_reason"].get<std::string>() << "\n\n";
  if (std::string W = canaryWarning(*Canary); !W.empty())
    OS << "**WARNING: " << W << ".** The drift canary fired: differences of the size the acceptance rule "
          "looks for can come from the measurement itself on this machine, so the verdicts below may be wrong.\n\n";
  if (Skipped)
    OS << "**Verification and measurement skipped: no GPU.** Nothing was accepted.\n\n";
  std::string Speedup = "none (nothing accepted)";
  if (F->is_object() && (*F)["best"].is_string() && !(*F)["evidence"].empty()) {
    std::string Parts;
    for (const json &E : (*F)["evidence"])
      if (E["base_median_ns"].is_number() && E["cand_median_ns"].is_number() &&
          E["cand_median_ns"].get<double>() > 0)
        Parts += (Parts.empty() ? "" : ", ") + E.value("shape", "") + " " +
                 llvm::formatv("{0:f3}x", E["base_median_ns"].get<double>() /
                                              E["cand_median_ns"].get<double>())
                     .str();
    Speedup = (*F)["best"].get<std::string>() + ": " + Parts;
  }
  OS << "## Ledger\n\n| | |\n|---|---|\n"
     << "| speed-up gained (median, per shape) | " << Speedup << " |\n"
     << "| candidates tried | " << Ps->size() << " |\n"
     << "| accepted | " << Accepted << " |\n"
     << "| rejected by the decision rule | " << Rejected << " |\n"
     << "| not measured (no GPU) | " << Unmeasured << " |\n"
     << "| refused | " << Refused << " |\n"
     << "| failed verification | " << FailedVerif << " |\n"
     << "| build failures | " << BuildFailed << " |\n"
     << (ApplyFailed ? "| apply failures (kloop failed on the candidate) | " + std::to_string(ApplyFailed) + " |\n"
                     : std::string())
     << "| diff size | +" << Plus << " -" << Minus << " lines |\n"
     << "| tokens spent | " << TokIn + TokOut << " (in " << TokIn << ", out " << TokOut << ") |\n"
     << "| cost | " << llvm::formatv("{0:f4}", Cost).str() << " USD |\n"
     << llvm::formatv("| evaluation time | {0:f1} s: propose {1:f1}, apply {2:f1}, build {3:f1}, compare {4:f1} "
                      "(builds {5:f1}, verification runs {6:f1}, timing runs {7:f1}, decision {8:f2}) |\n",
                      TAll, TPropose, TApply, TBuild, TVerifyStep, TCompareBuild, TRunsVerify, TRunsTiming,
                      TDecide)
            .str()
     << "| candidates per minute | "
     << (TAll > 0 ? llvm::formatv("{0:f2}", 60.0 * double(Ps->size()) / TAll).str() : std::string("-"))
     << " |\n"
     << "| timing samples discarded | " << Throttled << " throttled, "
     << (ForeignRecorded ? std::to_string(Foreign) + " foreign GPU load" : std::string("foreign GPU load not recorded"))
     << " |\n"
     << llvm::formatv("| run-level time | {0:f1} s: extract {1:f1}, baseline build {2:f1}, drift canary {3:f1}, final "
                      "check {4:f1} |\n",
                      TExtract + TBaseBuild + TCanary + TFinal, TExtract, TBaseBuild, TCanary, TFinal)
            .str()
     << "| drift canary | "
     << tableCell(Canary->is_null() ? std::string("not run (no final check)") : canaryFigures(*Canary)) << " |\n\n";
  if (!ByReason.empty()) {
    OS << "## Refused, by reason\n\n";
    for (const auto &[Reason, Count] : ByReason)
      OS << "- " << Count << " x " << terminalSafe(Reason) << "\n";
    OS << "\n";
  }
  // The ptxas report of each build (nvcc -Xptxas -v): registers, spills, shared memory per kernel.
  if (Expected<std::vector<BuildRecord>> Builds = J.listBuilds(*R)) {
    std::string Rows;
    for (const BuildRecord &B : *Builds) {
      Expected<std::vector<PtxasFunction>> Fs = ptxasFromJSON(B.Ptxas);
      if (!Fs) {
        Rows += "| " + buildName(B) + " | (unreadable: " + terminalSafe(toString(Fs.takeError())) + ") | | | | |\n";
        continue;
      }
      for (const PtxasFunction &F : *Fs)
        if (F.Entry)
          Rows += llvm::formatv("| {0} | {1} | {2} | {3} | {4} | {5} |\n", buildName(B), F.Name, F.Registers,
                                F.SpillStoreBytes, F.SpillLoadBytes, F.SharedBytes)
                      .str();
    }
    if (!Rows.empty())
      OS << "## ptxas report\n\n| build | kernel (mangled) | registers | spill stores (bytes) | spill loads "
            "(bytes) | static shared memory (bytes) |\n|---|---|---:|---:|---:|---:|\n"
         << Rows << "\n";
  } else {
    llvm::consumeError(Builds.takeError());
  }
  OS << countersSection(*Steps);
  OS << agreementSection(*Steps);
  OS << "## Candidates\n\n| round | proposer | edits | outcome | explanation |\n|---:|---|---|---|---|\n";
  for (const ProposalSummary &P : *Ps)
    OS << "| " << P.Proposal.Round << " | " << P.Proposal.ProposerKind << " | " << terminalSafe(candidateEdits(P))
       << " | " << candidateOutcome(P) << " | " << tableCell(candidateReason(P)) << " |\n";
  if (F->is_object() && !(*F)["evidence"].empty())
    OS << "\n## Evidence of the accepted change\n\n" << evidenceTable((*F)["evidence"]);
  return S;
}

Expected<std::vector<std::string>> writeResults(Journal &J, int64_t Run, StringRef OutDir) {
  if (std::error_code EC = llvm::sys::fs::create_directories(OutDir))
    return makeError("cannot create " + OutDir + ": " + EC.message());
  std::vector<std::string> Written;
  auto write = [&](const std::string &Path, const std::string &Text) -> Error {
    if (Error E = writeFileAtomically(Path, Text))
      return E;
    Written.push_back(Path);
    return Error::success();
  };
  Expected<std::string> Rep = renderReport(J, Run);
  if (!Rep)
    return Rep.takeError();
  if (Error E = write((OutDir + "/report.md").str(), *Rep))
    return E;
  Expected<std::string> Pat = renderPatch(J, Run);
  if (!Pat)
    return Pat.takeError();
  std::string PatchPath = (OutDir + "/accepted.patch").str();
  if (!Pat->empty()) {
    if (Error E = write(PatchPath, *Pat))
      return E;
  } else {
    llvm::sys::fs::remove(PatchPath);
  }
  return Written;
}

} // namespace optimize
} // namespace kloop
