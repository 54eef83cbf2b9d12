//===- HistoryCommand.cpp - `kloop history`: a run's journal as a table ---===//
///
/// kloop history --journal FILE [--run N] [--json]
///
/// Prints the rounds, proposals and verdicts of one run of the journal (the
/// latest run unless --run is given): one row per proposal with its proposer,
/// model, tokens, cost, edits applied, outcome and the reason for it. --json
/// prints the same data (and the raw replies) as one JSON object.
///
//===----------------------------------------------------------------------===//
#include "kloop/Driver/Command.h"
#include "kloop/Support/JSON.h"
#include "kloop/Journal/Journal.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <ctime>
#include <map>

using namespace llvm;
using json = nlohmann::json;

namespace {

cl::SubCommand HistorySub("history", "Show the rounds, proposals and verdicts of a journaled run");
cl::opt<std::string> JournalPath("journal", cl::desc("Journal file of a kloop optimize run"),
                                 cl::value_desc("file"), cl::Required, cl::sub(HistorySub));
cl::opt<int64_t> RunId("run", cl::desc("Run to show (default: the latest run in the file)"),
                       cl::value_desc("id"), cl::init(0), cl::sub(HistorySub));
cl::opt<bool> AsJSON("json", cl::desc("Print JSON instead of a table"), cl::sub(HistorySub));

/// "2025-01-31 12:00:00 UTC" from ns since the epoch.
std::string formatTime(int64_t Ns) {
  std::time_t T = static_cast<std::time_t>(Ns / 1000000000);
  std::tm TM;
  gmtime_r(&T, &TM);
  char Buf[32];
  std::strftime(Buf, sizeof(Buf), "%Y-%m-%d %H:%M:%S UTC", &TM);
  return Buf;
}

/// What became of a proposal, and why, from the most decisive record down.
std::pair<std::string, std::string> outcomeOf(const kloop::ProposalSummary &S) {
  if (S.Verdict)
    return {S.Verdict->Outcome, S.Verdict->Explanation};
  if (!S.Refusals.empty()) {
    const kloop::RefusalRecord &R = S.Refusals.front();
    std::string Why = R.EditOrdinal ? "edit " + std::to_string(*R.EditOrdinal) + ": " + R.Reason
                                    : R.Reason;
    if (S.Refusals.size() > 1)
      Why += " (+" + std::to_string(S.Refusals.size() - 1) + " more)";
    return {"refused", Why};
  }
  if (S.Proposal.ParseError)
    return {"unparsable", *S.Proposal.ParseError};
  if (S.Build && !S.Build->Succeeded) {
    StringRef Log = S.Build->Log;
    return {"build_failed", StringRef(Log.trim()).split('\n').first.str()};
  }
  return {"pending", ""};
}

/// Shortens \p S to \p N columns on one line, safe for a terminal (kloop::terminalSafe).
std::string clip(StringRef S, size_t N) {
  std::string One = kloop::terminalSafe(S.split('\n').first);
  if (One.size() <= N)
    return One;
  return One.substr(0, N - 3) + "...";
}

int runHistory(const kloop::CommandContext &) {
  auto JOr = kloop::Journal::open(JournalPath, kloop::Journal::OpenMode::ReadOnly);
  if (!JOr) {
    errs() << "kloop history: error: " << toString(JOr.takeError()) << "\n";
    return 1;
  }
  kloop::Journal &J = **JOr;
  auto Fail = [](Error E) {
    errs() << "kloop history: error: " << toString(std::move(E)) << "\n";
    return 1;
  };

  int64_t Run = RunId;
  if (Run == 0) {
    Expected<std::vector<kloop::RunRecord>> Runs = J.listRuns();
    if (!Runs)
      return Fail(Runs.takeError());
    if (Runs->empty()) {
      errs() << "kloop history: error: journal '" << JournalPath << "' holds no run\n";
      return 1;
    }
    Run = Runs->back().Id;
  }
  Expected<kloop::RunRecord> R = J.getRun(Run);
  if (!R)
    return Fail(R.takeError());
  Expected<std::vector<kloop::RoundRecord>> Rounds = J.listRounds(Run);
  if (!Rounds)
    return Fail(Rounds.takeError());
  Expected<std::vector<kloop::ProposalSummary>> Ps = J.listProposals(Run);
  if (!Ps)
    return Fail(Ps.takeError());

  if (AsJSON) {
    json Out = {{"journal", JournalPath.getValue()}, {"run", kloop::toJSON(*R)}};
    json RoundsJ = json::array();
    for (const kloop::RoundRecord &Rd : *Rounds)
      RoundsJ.push_back({{"number", Rd.Number}, {"started_ns", Rd.StartedNs}});
    Out["rounds"] = std::move(RoundsJ);
    json PsJ = json::array();
    for (const kloop::ProposalSummary &S : *Ps) {
      json P = kloop::toJSON(S);
      auto [Outcome, Why] = outcomeOf(S);
      P["outcome"] = Outcome;
      P["reason"] = Why;
      PsJ.push_back(std::move(P));
    }
    Out["proposals"] = std::move(PsJ);
    outs() << kloop::dumpJSON(Out, 2) << "\n";
    return 0;
  }

  raw_ostream &OS = outs();
  OS << "run " << R->Id << " of " << JournalPath << ": " << R->State;
  if (R->StopReason)
    OS << " (" << kloop::terminalSafe(*R->StopReason) << ")";
  OS << "\n  started " << formatTime(R->StartedNs);
  if (R->FinishedNs)
    OS << ", finished " << formatTime(*R->FinishedNs);
  OS << "; kloop " << R->KloopVersion << "; config " << R->ConfigHash << "\n";
  int64_t LastRound = Rounds->empty() ? 0 : Rounds->back().Number;
  OS << "  " << LastRound << " round" << (LastRound == 1 ? "" : "s") << ", " << Ps->size()
     << " proposal" << (Ps->size() == 1 ? "" : "s") << "\n\n";
  if (Ps->empty())
    return 0;

  OS << format("%-5s %-4s %-13s %-20s %-11s %-8s %-5s %-19s %s\n", "round", "id",
               "proposer", "model", "tokens", "cost", "edits", "outcome", "reason");
  std::map<std::string, int> Tally;
  int64_t TokensIn = 0, TokensOut = 0;
  double Cost = 0;
  bool CostKnown = false;
  for (const kloop::ProposalSummary &S : *Ps) {
    const kloop::ProposalRecord &P = S.Proposal;
    std::string Tokens = P.TokensIn || P.TokensOut
                             ? (P.TokensIn ? std::to_string(*P.TokensIn) : "?") + "/" +
                                   (P.TokensOut ? std::to_string(*P.TokensOut) : "?")
                             : "-";
    TokensIn += P.TokensIn.value_or(0);
    TokensOut += P.TokensOut.value_or(0);
    std::string CostS = "-";
    if (P.CostUSD) {
      CostS = formatv("${0:F4}", *P.CostUSD).str();
      Cost += *P.CostUSD;
      CostKnown = true;
    }
    size_t Applied = 0;
    for (const kloop::EditRecord &E : S.Edits)
      Applied += E.Applied;
    std::string Edits = S.Edits.empty() ? "-" : std::to_string(Applied) + "/" +
                                                    std::to_string(S.Edits.size());
    auto [Outcome, Why] = outcomeOf(S);
    ++Tally[Outcome];
    OS << format("%5lld %-4lld %-13s %-20s %-11s %-8s %-5s %-19s %s\n",
                 static_cast<long long>(P.Round), static_cast<long long>(P.Id),
                 clip(P.ProposerKind, 13).c_str(),
                 clip(P.Model.empty() ? "-" : P.Model, 20).c_str(), Tokens.c_str(),
                 CostS.c_str(), Edits.c_str(), clip(Outcome, 19).c_str(),
                 clip(Why, 72).c_str());
  }
  OS << "\n  outcomes:";
  for (const auto &[Name, N] : Tally)
    OS << " " << Name << " " << N << ";";
  OS << " tokens " << TokensIn << " in / " << TokensOut << " out";
  if (CostKnown)
    OS << formatv("; cost ${0:F4} (where known)", Cost);
  OS << "\n";
  return 0;
}

kloop::CommandRegistration Registration(HistorySub, runHistory);

} // namespace
