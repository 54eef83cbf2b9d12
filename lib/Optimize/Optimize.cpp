//===- Optimize.cpp - The state machine of kloop optimize -----------------===//
#include "kloop/Optimize/Optimize.h"
#include "RunSteps.h"
#include "kloop/Support/JSON.h"
#include "kloop/Support/AtomicFile.h"
#include "kloop/Support/Ptxas.h"
#include "kloop/Propose/BuiltinProposer.h"
#include "kloop/Decide/Decision.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <unistd.h>

using json = nlohmann::json;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;

namespace kloop {
namespace optimize {

Stages::~Stages() = default;

static Error err(const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
}

/// KLOOP_TEST_CRASH_AT=<state>:<round>: die as a killed process would.
static void maybeCrash(StepState St, int64_t Round) {
  const char *E = std::getenv("KLOOP_TEST_CRASH_AT");
  if (!E)
    return;
  auto [Name, Num] = StringRef(E).split(':');
  int64_t R = 0;
  if (Name == stepStateName(St) && !Num.getAsInteger(10, R) && R == Round)
    _exit(137);
}

namespace {
/// The JSON kind of a payload field that a later step reads.
enum class Kind { Bool, String, Int, Array, Any };

/// A payload field: key, kind, and whether it may be absent.
struct Field {
  const char *Key;
  Kind K;
  bool Optional = false;
};

bool hasKind(const json &V, Kind K) {
  switch (K) {
  case Kind::Bool:
    return V.is_boolean();
  case Kind::String:
    return V.is_string();
  case Kind::Int:
    return V.is_number_integer();
  case Kind::Array:
    return V.is_array();
  case Kind::Any:
    return true;
  }
  return false;
}

const char *kindName(Kind K) {
  return K == Kind::Bool ? "a boolean" : K == Kind::String ? "a string" : K == Kind::Int ? "an integer"
                                       : K == Kind::Array  ? "an array"
                                                           : "present";
}

/// What is wrong with payload \p P given its fields \p Fields; "" when nothing.
std::string shapeProblem(const json &P, llvm::ArrayRef<Field> Fields) {
  if (!P.is_object())
    return "expected an object, found " + std::string(P.type_name());
  for (const Field &F : Fields) {
    if (!P.contains(F.Key)) {
      if (!F.Optional)
        return "\"" + std::string(F.Key) + "\" is missing";
      continue;
    }
    if (!hasKind(P[F.Key], F.K))
      return "\"" + std::string(F.Key) + "\" is not " + kindName(F.K);
  }
  return "";
}

/// A check of a reused payload: "" when it has the shape its readers expect.
using ShapeCheck = std::function<std::string(const json &)>;

ShapeCheck fields(std::vector<Field> Fs) {
  return [Fs](const json &P) { return shapeProblem(P, Fs); };
}

/// The propose step: exhausted, a reply that was not JSON, or a proposal.
std::string proposeShape(const json &P) {
  std::string W = shapeProblem(P, {{"exhausted", Kind::Bool, true}, {"why", Kind::String, true},
                                   {"unparsed", Kind::Bool, true}, {"tokens", Kind::Int, true}});
  if (!W.empty() || P.value("exhausted", false))
    return W;
  return shapeProblem(P, {{"proposal_id", Kind::Int}, {"proposal", Kind::Any, P.value("unparsed", false)}});
}

/// Verify and measure: skipped (no GPU) or the comparison's fields.
std::string verifyShape(const json &P) {
  if (P.is_object() && P.contains("skipped"))
    return "";
  return shapeProblem(P, {{"accepted", Kind::Bool}, {"outcome", Kind::String}, {"explanation", Kind::String},
                          {"evidence", Kind::Array}, {"detail", Kind::Any}});
}

/// The drift canary: skipped (--no-canary) or its figures.
std::string canaryShape(const json &P) {
  if (P.is_object() && P.contains("skipped"))
    return shapeProblem(P, {{"skipped", Kind::String}});
  return shapeProblem(P, {{"shape", Kind::String}, {"verdict", Kind::String}, {"reliable", Kind::Bool},
                          {"kernels", Kind::Array}});
}

/// Runs one journaled step, or reuses its payload when it already finished.
class StepRunner {
public:
  StepRunner(Journal &J, int64_t Run) : J(J), Run(Run) {}
  /// \p Body returns the payload; a Failure payload (with "error") marks the step failed.
  /// A reused payload must pass \p Shape (a journal edited or written by another
  /// version): else an error naming the step.
  Expected<json> step(int64_t Round, StepState St, StringRef Key, const ShapeCheck &Shape,
                      llvm::function_ref<Expected<json>()> Body, bool *Reused = nullptr) {
    Expected<std::optional<StepRecord>> Done = J.findFinishedStep(Run, Round, St, Key);
    if (!Done)
      return Done.takeError();
    if (*Done) {
      if (std::string W = Shape((*Done)->Payload); !W.empty())
        return err(J.path() + ": --resume: finished step " + std::to_string((*Done)->Id) + " (" +
                   stepStateName(St) + (Key.empty() ? "" : " ") + Key + ", round " + std::to_string(Round) +
                   ") holds a payload of the wrong shape: " + W +
                   "; start a new journal, or remove that step's row to redo it");
      if (Reused)
        *Reused = true;
      return (*Done)->Payload;
    }
    if (Reused)
      *Reused = false;
    Expected<int64_t> Id = J.beginStep(Run, Round, St, Key);
    if (!Id)
      return Id.takeError();
    maybeCrash(St, Round);
    // The step's records and its finish commit together: a crash leaves
    // neither, and the resumed run redoes the step from scratch.
    json Payload;
    Error E = J.transaction([&]() -> Error {
      Expected<json> P = Body();
      if (!P)
        return P.takeError();
      Payload = std::move(*P);
      return J.finishStep(*Id, Payload);
    });
    if (E) {
      std::string Msg = llvm::toString(std::move(E));
      if (Error F = J.failStep(*Id, Msg))
        return F;
      return err(stepStateName(St) + " " + Key + ": " + Msg);
    }
    return Payload;
  }

private:
  Journal &J;
  int64_t Run;
};
} // namespace

static std::string candKey(unsigned N) { return "cand-" + std::to_string(N); }

std::string configHash(StringRef Text) {
  return llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(Text)), /*LowerCase=*/true).substr(0, 16);
}

/// decide's minimum gain in a comparison's settings (CompareOutcome::Settings), else decide's default.
static double minGainOf(const json &Settings) {
  if (Settings.is_object() && Settings.contains("thresholds") && Settings["thresholds"].is_object() &&
      Settings["thresholds"].value("min_gain", json()).is_number())
    return Settings["thresholds"]["min_gain"].get<double>();
  return decide::DecisionThresholds().MinGain;
}

/// Spill bytes (stores + loads, per thread) of a build's ptxas report; 0 for a report it cannot read
/// (the report is advice for the search, never a reason to stop).
static int64_t reportedSpillBytes(const json &Ptxas) {
  Expected<std::vector<PtxasFunction>> Fs = ptxasFromJSON(Ptxas);
  if (!Fs) {
    consumeError(Fs.takeError());
    return 0;
  }
  return static_cast<int64_t>(spillBytes(*Fs));
}

Expected<OptimizeResult> runOptimize(Journal &J, Stages &S, Proposer &P, const OptimizeOptions &O,
                                     const ProgressFn &Progress) {
  auto say = [&](const std::string &Line) {
    if (Progress)
      Progress(Line);
  };
  OptimizeResult Res;
  // ---- the run ----
  if (O.Resume) {
    Expected<std::vector<RunRecord>> Runs = J.listRuns();
    if (!Runs)
      return Runs.takeError();
    if (Runs->empty())
      return err(J.path() + ": --resume: the journal has no run to resume");
    Res.Run = Runs->back().Id;
    if (Runs->back().FinishedNs) {
      // A finished run is not continued: its final check and stop reason are journaled, and new rounds
      // under other limits would contradict them (a candidate accepted in a search step, but no final
      // check and no patch). Its results are regenerated from the journal; a longer search is a new run.
      Expected<std::optional<StepRecord>> Fin = J.findFinishedStep(Res.Run, 0, StepState::Done, "final");
      if (!Fin)
        return Fin.takeError();
      if (!*Fin || !(*Fin)->Payload.is_object())
        return err(J.path() + ": --resume: run " + std::to_string(Res.Run) +
                   " is finished but has no final step; its journal is inconsistent");
      const json &F = (*Fin)->Payload;
      say("run " + std::to_string(Res.Run) +
          " already finished; its results are regenerated from the journal, and nothing is run (start a "
          "new journal to search further)");
      Res.StopReason = F.value("stop_reason", std::string());
      Res.Candidates = F.value("candidates", 0u);
      Res.GpuSkipped = F.value("gpu_skipped", false);
      Res.Diff = F.value("diff", std::string());
      Expected<json> Can = runStepPayload(J, Res.Run, StepState::Measure, "canary");
      if (!Can)
        return Can.takeError();
      Res.Unreliable = canaryWarning(*Can);
      if (F.contains("best") && F["best"].is_string()) {
        StringRef B = F["best"].get_ref<const std::string &>();
        unsigned N = 0;
        if (B.consume_front("cand-") && !B.getAsInteger(10, N))
          Res.Best = N;
      }
      return Res;
    }
    if (!O.ConfigHash.empty() && Runs->back().ConfigHash != O.ConfigHash)
      return err(J.path() + ": --resume: the workload description changed since run " + std::to_string(Res.Run) +
                 " began (config hash " + Runs->back().ConfigHash + ", now " + O.ConfigHash +
                 "); resume with the same .kloop.yaml, or start a new journal");
  } else {
    Expected<int64_t> R = J.createRun(O.ConfigHash, "0.1.0");
    if (!R)
      return R.takeError();
    Res.Run = *R;
  }
  Expected<RunRecord> RunRec = J.getRun(Res.Run);
  if (!RunRec)
    return RunRec.takeError();
  // --time-budget counts the time the run has worked: the steps finished by earlier invocations (a run
  // resumed after a crash), then this invocation's wall time. Counting from the run's first start would
  // charge the time it lay crashed, and a resumed run could stop at once with its round half done.
  const int64_t InvocationStartNs = journalNowNs();
  double PriorWorkS = 0;
  if (O.Resume) {
    Expected<std::vector<StepRecord>> Prior = J.listSteps(Res.Run);
    if (!Prior)
      return Prior.takeError();
    for (const StepRecord &St : *Prior)
      if (St.FinishedNs)
        PriorWorkS += double(*St.FinishedNs - St.StartedNs) / 1e9;
  }
  StepRunner SR(J, Res.Run);
  std::string CandRoot = O.OutDir + "/candidates";
  if (std::error_code EC = llvm::sys::fs::create_directories(CandRoot))
    return err("cannot create " + CandRoot + ": " + EC.message());

  // ---- round 0: inventory, baseline copy and build ----
  Expected<json> Inv = SR.step(0, StepState::Extract, "", fields({{"inventory", Kind::Any}}), [&]() -> Expected<json> {
    say("extract: inventory of the workload's sources");
    Expected<json> I = S.extract();
    if (!I)
      return I.takeError();
    return json{{"inventory", *I}};
  });
  if (!Inv)
    return Inv.takeError();
  std::string BaseDir;
  Expected<json> BaseBuild = SR.step(0, StepState::Build, "baseline", fields({{"source_dir", Kind::String}, {"ptxas", Kind::Any}}),
                                     [&]() -> Expected<json> {
    say("build: baseline");
    Expected<std::string> D = S.copySources(O.BaselineDir, CandRoot + "/baseline");
    if (!D)
      return D.takeError();
    Expected<BuildOutcome> B = S.build(*D, O.OutDir + "/build/baseline");
    if (!B)
      return B.takeError();
    BuildRecord BR;
    BR.Run = Res.Run;
    BR.Succeeded = B->Succeeded;
    BR.Log = B->Log;
    BR.Ptxas = B->Ptxas;
    BR.WallMs = B->WallMs;
    if (Expected<int64_t> Id = J.recordBuild(BR); !Id)
      return Id.takeError();
    if (!B->Succeeded)
      return err("the baseline does not build:\n" + B->Log);
    return json{{"source_dir", *D}, {"ptxas", B->Ptxas}};
  });
  if (!BaseBuild)
    return BaseBuild.takeError();
  BaseDir = (*BaseBuild)["source_dir"].get<std::string>();
  json BasePtxas = (*BaseBuild)["ptxas"];

  std::string NoGpuWhy;
  bool Gpu = S.haveGpu(NoGpuWhy);
  Res.GpuSkipped = !Gpu;
  if (!Gpu)
    say("verification and measurement skipped: no GPU (" + NoGpuWhy + ")");

  // ---- rounds ----
  json History = json::array();
  json Profile = json::array(); // evidence rows of the latest measured candidate
  std::string Incumbent = BaseDir;
  std::optional<unsigned> Best;
  unsigned SinceWin = 0;
  int64_t Tokens = 0;
  std::optional<double> IncumbentPct; // min % of roofline over shapes, when measured
  std::string Stop;
  auto elapsedS = [&]() { return PriorWorkS + double(journalNowNs() - InvocationStartNs) / 1e9; };

  for (unsigned N = 1;; ++N) {
    // Stop rules, checked before each round.
    if (N > O.MaxCandidates) {
      Stop = "budget: " + std::to_string(O.MaxCandidates) + " candidates tried";
      break;
    }
    if (N > O.MaxRounds) {
      Stop = "budget: " + std::to_string(O.MaxRounds) + " rounds";
      break;
    }
    if (O.Plateau && SinceWin >= O.Plateau) {
      Stop = "plateau: no accepted win in " + std::to_string(O.Plateau) + " rounds";
      break;
    }
    if (O.TimeBudgetS && elapsedS() >= *O.TimeBudgetS) {
      Stop = "budget: wall time " + llvm::formatv("{0:f0}", *O.TimeBudgetS).str() + " s spent";
      break;
    }
    if (O.TokenBudget && Tokens >= *O.TokenBudget) {
      Stop = "budget: " + std::to_string(Tokens) + " tokens spent (budget " +
             std::to_string(*O.TokenBudget) + ")";
      break;
    }
    if (O.SpeedOfLightPct && IncumbentPct && *IncumbentPct >= 100.0 - *O.SpeedOfLightPct) {
      Stop = "speed of light: every shape within " + llvm::formatv("{0:f1}", *O.SpeedOfLightPct).str() +
             "% of its roofline ceiling (" + llvm::formatv("{0:f1}", *IncumbentPct).str() + "%)";
      break;
    }
    if (Error E = J.beginRound(Res.Run, N))
      return E;
    std::string Key = candKey(N);
    Res.Candidates = N;

    // Propose.
    bool Exhausted = false;
    std::string ExhaustedWhy;
    Expected<json> Prop = SR.step(N, StepState::Propose, Key, proposeShape, [&]() -> Expected<json> {
      json Ctx = O.ExtraContext;
      Ctx["inventory"] = (*Inv)["inventory"];
      Ctx["history"] = History;
      Ctx["ptxas_baseline"] = BasePtxas;
      Ctx["profile"] = Profile;
      Ctx["round"] = N;
      Expected<ProposalReply> R = P.propose(Ctx);
      NewProposal NP;
      NP.ProposerKind = std::string(P.kind());
      if (!R) {
        json Out = {{"exhausted", false}};
        std::string Refusal;
        Error Rest = llvm::handleErrors(
            R.takeError(),
            [&](const builtin::SearchExhaustedError &X) {
              Exhausted = true;
              ExhaustedWhy = X.Why;
              Out["exhausted"] = true;
              Out["why"] = X.Why;
            },
            [&](const ReplyNotJSONError &X) {
              NP.Model = X.Prov.Model;
              NP.RawReply = X.RawText;
              NP.ParseError = X.Reason;
              NP.TokensIn = X.Prov.TokensIn;
              NP.TokensOut = X.Prov.TokensOut;
              NP.WallMs = X.Prov.WallMs;
              Refusal = "reply is not JSON: " + X.Reason;
            },
            // A proposer that failed (a command's exit, signal, timeout or flood of output) is a
            // failed proposal of this round, not the end of the run (issue 12, item 7).
            [&](const ProposerFailedError &X) {
              NP.Model = X.Prov.Model;
              NP.RawReply = X.Output;
              NP.ParseError = "proposer failed: " + X.Source + ": " + X.Reason;
              NP.WallMs = X.Prov.WallMs;
              Refusal = *NP.ParseError;
            });
        if (Rest)
          return Rest;
        if (Exhausted)
          return Out;
        Expected<int64_t> Id = J.recordProposal(Res.Run, N, NP);
        if (!Id)
          return Id.takeError();
        if (Expected<int64_t> RId = J.recordRefusal(*Id, std::nullopt, Refusal); !RId)
          return RId.takeError();
        Out["proposal_id"] = *Id;
        Out["unparsed"] = true;
        Out["reason"] = StringRef(Refusal).starts_with("proposer failed") ? "proposer failed" : "reply is not JSON";
        Out["tokens"] = NP.TokensIn.value_or(0) + NP.TokensOut.value_or(0);
        return Out;
      }
      NP.Model = R->Prov.Model;
      NP.PromptVersion = R->Prov.PromptVersion;
      NP.Seed = R->Prov.Seed;
      NP.Temperature = R->Prov.Temperature;
      NP.TokensIn = R->Prov.TokensIn;
      NP.TokensOut = R->Prov.TokensOut;
      NP.CostUSD = R->Prov.CostUSD;
      NP.WallMs = R->Prov.WallMs;
      NP.Attempts = R->Prov.Attempts;
      NP.RawReply = R->RawText;
      NP.Parsed = R->Proposal;
      Expected<int64_t> Id = J.recordProposal(Res.Run, N, NP);
      if (!Id)
        return Id.takeError();
      return json{{"proposal_id", *Id},
                  {"proposal", R->Proposal},
                  {"tokens", R->Prov.TokensIn.value_or(0) + R->Prov.TokensOut.value_or(0)},
                  {"exhausted", false}};
    });
    if (!Prop)
      return Prop.takeError();
    if (Prop->value("exhausted", false)) {
      Stop = "search exhausted: " + Prop->value("why", std::string());
      Res.Candidates = N - 1;
      break;
    }
    Tokens += Prop->value("tokens", (int64_t)0);
    if (Prop->value("unparsed", false)) {
      std::string Why = Prop->value("reason", std::string("reply is not JSON"));
      History.push_back({{"round", N}, {"outcome", "refused"}, {"reason", Why}});
      ++SinceWin;
      say("round " + std::to_string(N) + ": proposal refused (" + Why + ")");
      continue;
    }
    int64_t PropId = (*Prop)["proposal_id"].get<int64_t>();
    const json &Proposal = (*Prop)["proposal"];
    json Hist = {{"round", N}, {"proposal", Proposal}, {"accepted", false}};
    std::string CandWork = CandRoot + "/" + Key;

    // Apply.
    Expected<json> Ap = SR.step(N, StepState::Apply, Key,
        fields({{"applied", Kind::Bool}, {"refusal", Kind::String}, {"source_dir", Kind::String}}), [&]() -> Expected<json> {
      std::string From = O.AbsoluteProposals ? BaseDir : Incumbent;
      Expected<std::string> D = S.copySources(From, CandWork);
      if (!D)
        return D.takeError();
      std::string PF = CandWork + ".proposal.json";
      if (Error E = writeFileAtomically(PF, dumpJSON(Proposal, 2) + "\n"))
        return E;
      Expected<ApplyOutcome> A = S.apply(PF, *D);
      if (!A)
        return A.takeError();
      if (!A->Applied)
        if (Expected<int64_t> RId = J.recordRefusal(PropId, std::nullopt, A->RefusalReason); !RId)
          return RId.takeError();
      // Every edit, applied or not (a proposal is applied all or nothing).
      if (Proposal.contains("edits") && Proposal["edits"].is_array()) {
        for (size_t I = 0; I < Proposal["edits"].size(); ++I) {
          const json &E = Proposal["edits"][I];
          if (Expected<int64_t> EId = J.recordEdit(PropId, (int64_t)I, E.value("id", E.value("target", "")),
                                                  E.value("kind", ""), E, A->Applied);
              !EId)
            return EId.takeError();
        }
      }
      return json{{"applied", A->Applied}, {"refusal", A->RefusalReason}, {"source_dir", *D}};
    });
    if (!Ap)
      return Ap.takeError();
    if (!(*Ap)["applied"].get<bool>()) {
      Hist["outcome"] = "refused";
      Hist["reason"] = (*Ap)["refusal"];
      History.push_back(Hist);
      ++SinceWin;
      say("round " + std::to_string(N) + ": " + Key + " refused: " + (*Ap)["refusal"].get<std::string>());
      continue;
    }
    std::string CandDir = (*Ap)["source_dir"].get<std::string>();

    // Build (+ ptxas report).
    Expected<json> Bd = SR.step(N, StepState::Build, Key,
        fields({{"succeeded", Kind::Bool}, {"ptxas", Kind::Any}, {"spilled", Kind::Bool}}), [&]() -> Expected<json> {
      Expected<BuildOutcome> B = S.build(CandDir, O.OutDir + "/build/" + Key);
      if (!B)
        return B.takeError();
      BuildRecord BR;
      BR.Run = Res.Run;
      BR.Round = N;
      BR.Proposal = PropId;
      BR.Succeeded = B->Succeeded;
      BR.Log = B->Log;
      BR.Ptxas = B->Ptxas;
      BR.WallMs = B->WallMs;
      if (Expected<int64_t> Id = J.recordBuild(BR); !Id)
        return Id.takeError();
      bool Spilled = reportedSpillBytes(B->Ptxas) > reportedSpillBytes(BasePtxas);
      if (!B->Succeeded)
        if (Expected<int64_t> V = J.recordVerdict(PropId, "build_failed", json{{"log_tail", B->Log}},
                                                  "the candidate does not build");
            !V)
          return V.takeError();
      return json{{"succeeded", B->Succeeded}, {"ptxas", B->Ptxas}, {"spilled", Spilled}};
    });
    if (!Bd)
      return Bd.takeError();
    Hist["spilled"] = (*Bd)["spilled"];
    Hist["ptxas"] = (*Bd)["ptxas"];
    if (!(*Bd)["succeeded"].get<bool>()) {
      Hist["outcome"] = "build_failed";
      History.push_back(Hist);
      ++SinceWin;
      say("round " + std::to_string(N) + ": " + Key + " does not build");
      continue;
    }

    // Verify + Measure (one interleaved comparison), then Decide.
    Expected<json> Vf = SR.step(N, StepState::Verify, Key, verifyShape, [&]() -> Expected<json> {
      if (!Gpu)
        return json{{"skipped", "verification and measurement skipped: no GPU"}};
      Expected<CompareOutcome> C = S.compare(Incumbent, CandDir, CandWork + ".compare", false);
      if (!C)
        return C.takeError();
      return json{{"accepted", C->Accepted}, {"outcome", C->Outcome}, {"explanation", C->Explanation},
                  {"evidence", C->Evidence}, {"detail", C->Detail}};
    });
    if (!Vf)
      return Vf.takeError();
    Expected<json> Ms = SR.step(N, StepState::Measure, Key, fields({}), [&]() -> Expected<json> {
      if (Vf->contains("skipped"))
        return json{{"skipped", (*Vf)["skipped"]}};
      return json{{"evidence", (*Vf)["evidence"]}};
    });
    if (!Ms)
      return Ms.takeError();
    Expected<json> Dc = SR.step(N, StepState::Decide, Key,
        fields({{"accepted", Kind::Bool}, {"outcome", Kind::String}, {"explanation", Kind::String},
                {"evidence", Kind::Array, true}}),
        [&]() -> Expected<json> {
      json D;
      if (Vf->contains("skipped")) {
        D = {{"accepted", false}, {"outcome", "unmeasured"},
             {"explanation", "not accepted: verification and measurement skipped (no GPU)"}};
      } else {
        D = {{"accepted", (*Vf)["accepted"]}, {"outcome", (*Vf)["outcome"]},
             {"explanation", (*Vf)["explanation"]}, {"evidence", (*Vf)["evidence"]}};
      }
      json Detail = Vf->contains("detail") ? json{{"compare", (*Vf)["detail"]}, {"evidence", (*Vf)["evidence"]}}
                                           : json{{"skipped", true}};
      if (Expected<int64_t> V = J.recordVerdict(PropId, D["outcome"].get<std::string>(), Detail,
                                                D["explanation"].get<std::string>());
          !V)
        return V.takeError();
      return D;
    });
    if (!Dc)
      return Dc.takeError();
    Hist["outcome"] = (*Dc)["outcome"];
    Hist["reason"] = (*Dc)["explanation"];
    if (Dc->contains("evidence") && (*Dc)["evidence"].is_array() && !(*Dc)["evidence"].empty())
      Profile = (*Dc)["evidence"];
    if ((*Dc)["accepted"].get<bool>()) {
      Hist["accepted"] = true;
      Incumbent = CandDir;
      Best = N;
      SinceWin = 0;
      std::optional<double> MinPct;
      for (const json &E : (*Dc)["evidence"])
        if (E.contains("pct_roofline") && E["pct_roofline"].is_number())
          MinPct = std::min(MinPct.value_or(1e300), E["pct_roofline"].get<double>());
      IncumbentPct = MinPct;
    } else {
      ++SinceWin;
    }
    History.push_back(Hist);
    say("round " + std::to_string(N) + ": " + Key + " " + Hist["outcome"].get<std::string>() +
        "; best so far: " + (Best ? candKey(*Best) : std::string("baseline")));
  }

  // ---- drift canary: the baseline against itself, before the final check it guards ----
  if (Best) {
    Expected<json> Can = SR.step(0, StepState::Measure, "canary", canaryShape, [&]() -> Expected<json> {
      if (!O.Canary)
        return json{{"skipped", "--no-canary"}};
      say("drift canary: the baseline against itself on one search shape");
      int64_t T0 = journalNowNs();
      Expected<CompareOutcome> AA = S.canary(BaseDir, O.OutDir + "/canary.compare");
      if (!AA)
        return AA.takeError();
      return canaryPayload(*AA, minGainOf(AA->Settings), double(journalNowNs() - T0) / 1e9);
    });
    if (!Can)
      return Can.takeError();
    Res.Unreliable = canaryWarning(*Can);
    if (!Res.Unreliable.empty())
      say(Res.Unreliable);
  }

  // ---- final: the change from the baseline, checked once more with held-out inputs ----
  Res.StopReason = Stop;
  Expected<json> Fin = SR.step(0, StepState::Done, "final",
      fields({{"stop_reason", Kind::String}, {"diff", Kind::String}, {"best", Kind::Any}}), [&]() -> Expected<json> {
    json F = {{"stop_reason", Stop}, {"candidates", Res.Candidates}, {"gpu_skipped", !Gpu},
              {"best", Best ? json(candKey(*Best)) : json(nullptr)}, {"diff", ""},
              {"evidence", json::array()}, {"tokens", Tokens}};
    if (Best) {
      Expected<CompareOutcome> C = S.compare(BaseDir, Incumbent, O.OutDir + "/final.compare", true);
      if (!C)
        return C.takeError();
      F["final_outcome"] = C->Outcome;
      F["final_explanation"] = C->Explanation;
      F["evidence"] = C->Evidence;
      // What `kloop compare --recheck` needs to repeat this check (docs/optimize.md, "Re-check").
      F["final_check"] = {{"config", O.ConfigPath},       {"config_hash", O.ConfigHash},
                          {"baseline_dir", BaseDir},      {"candidate_dir", Incumbent},
                          {"settings", C->Settings}};
      if (!C->Accepted) {
        F["best"] = nullptr;
        F["stop_reason"] = Stop + "; the final check with held-out inputs refused the best candidate: " +
                           C->Explanation;
      } else {
        Expected<std::string> D = S.diff(BaseDir, Incumbent);
        if (!D)
          return D.takeError();
        F["diff"] = *D;
      }
    }
    return F;
  });
  if (!Fin)
    return Fin.takeError();
  Res.StopReason = (*Fin)["stop_reason"].get<std::string>();
  Res.Diff = (*Fin)["diff"].get<std::string>();
  if ((*Fin)["best"].is_string())
    Res.Best = Best;
  if (Error E = J.setRunState(Res.Run, "stopped", Res.StopReason, true))
    return E;
  return Res;
}

} // namespace optimize
} // namespace kloop
