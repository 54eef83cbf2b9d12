//===- Optimize.cpp - The state machine of kloop optimize -----------------===//
#include "kloop/Optimize/Optimize.h"
#include "kloop/Optimize/Agreement.h"
#include "Ahead.h"
#include "kloop/Support/Error.h"
#include "kloop/Optimize/ReplayTiming.h"
#include "kloop/Capture/Capture.h"
#include "RunSteps.h"
#include "kloop/Support/JSON.h"
#include "kloop/Support/AtomicFile.h"
#include "kloop/Support/Ptxas.h"
#include "kloop/Propose/BuiltinProposer.h"
#include "kloop/Decide/Decision.h"
#include "kloop/Measure/KernelProfile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>
#include <unistd.h>

using json = nlohmann::json;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;

namespace kloop {
namespace optimize {

Stages::~Stages() = default;

Expected<CaptureOutcome> Stages::capture(StringRef, StringRef, StringRef) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "these stages cannot capture a workload");
}

Expected<CountersOutcome> Stages::counters(StringRef, StringRef) {
  return makeError("these stages cannot profile hardware counters");
}

std::optional<BuildOutcome> Stages::buildCubin(StringRef, StringRef) { return std::nullopt; }

Expected<ReplayCompareOutcome> Stages::replayCompare(StringRef, StringRef, StringRef, StringRef, StringRef,
                                                     const capture::ReplayConfigs &) {
  ReplayCompareOutcome O;
  O.Fallback = "these stages cannot replay";
  return O;
}

/// KLOOP_TEST_CRASH_AT=<state>:<round>[:<step key>]: die as a killed process would, at the first step of
/// that state and round (with a key: at that step only; round 0 has several measure steps).
static void maybeCrash(StepState St, int64_t Round, StringRef Key) {
  const char *E = std::getenv("KLOOP_TEST_CRASH_AT");
  if (!E)
    return;
  auto [Name, Rest] = StringRef(E).split(':');
  auto [Num, WantKey] = Rest.split(':');
  int64_t R = 0;
  if (Name == stepStateName(St) && !Num.getAsInteger(10, R) && R == Round && (WantKey.empty() || WantKey == Key))
    _exit(137);
}

namespace {
/// The JSON kind of a payload field that a later step reads.
enum class Kind { Bool, String, Int, Number, Array, Object, Any };

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
  case Kind::Number:
    return V.is_number();
  case Kind::Array:
    return V.is_array();
  case Kind::Object:
    return V.is_object();
  case Kind::Any:
    return true;
  }
  return false;
}

const char *kindName(Kind K) {
  return K == Kind::Bool ? "a boolean" : K == Kind::String ? "a string" : K == Kind::Int ? "an integer"
                                       : K == Kind::Number ? "a number"
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

/// The replay capture: search steps replay it, or the reason they do not.
std::string captureShape(const json &P) {
  if (std::string W = shapeProblem(P, {{"replay", Kind::Bool}}); !W.empty())
    return W;
  if (P["replay"].get<bool>())
    return shapeProblem(P, {{"dir", Kind::String}, {"key", Kind::String}, {"reused", Kind::Bool}});
  return shapeProblem(P, {{"reason", Kind::String}});
}

/// The journal payload of a counters step (Stages::counters): the profiles (measure::KernelProfile's JSON),
/// the problems, and the cost of the metrics runs against plain runs of the same shapes.
json countersPayload(const CountersOutcome &C, double StepWallS) {
  json Profiles = json::array();
  for (const measure::KernelProfile &P : C.Profiles)
    Profiles.push_back(measure::toJSON(P));
  return json{{"profiles", Profiles},
              {"problems", C.Problems},
              {"chip", C.Chip},
              {"passes", C.Passes},
              {"cost", {{"metrics_wall_s", C.MetricsWallS},
                        {"plain_wall_s", C.PlainWallS},
                        {"ratio", C.PlainWallS > 0 ? json(C.MetricsWallS / C.PlainWallS) : json(nullptr)},
                        {"step_wall_s", StepWallS}}}};
}

/// The journal payload of a capture that search steps replay.
json capturePayload(const CaptureOutcome &C) {
  return json{{"replay", true},        {"dir", C.Dir},           {"key", C.Key},
              {"reused", C.Reused},    {"stale", C.Stale.empty() ? json(nullptr) : json(C.Stale)},
              {"launches", C.Launches}, {"kernels", C.Kernels}};
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
        return makeError(J.path() + ": --resume: finished step " + std::to_string((*Done)->Id) + " (" +
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
    maybeCrash(St, Round, Key);
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
      return makeError(stepStateName(St) + " " + Key + ": " + Msg);
    }
    return Payload;
  }

private:
  Journal &J;
  int64_t Run;
};
} // namespace

/// The apply step: applied or refused ("refusal": the refusals as one text, the proposer's feedback), with
/// the typed "refusals" and a "failure" (journals written before these existed have neither), and
/// "prepared_ahead_s" when the candidate was prepared ahead (the preparing thread's wall time).
static std::string applyShape(const json &P) {
  return shapeProblem(P, {{"applied", Kind::Bool}, {"refusal", Kind::String}, {"source_dir", Kind::String},
                          {"refusals", Kind::Array, true}, {"failure", Kind::String, true},
                          {"prepared_ahead_s", Kind::Number, true}, {"launch_formulas", Kind::Object, true}});
}

/// The apply step's payload: toJSON(ApplyOutcome), the refusals as one text, the candidate's source
/// directory, and \p AheadS when it was prepared ahead.
static json applyPayload(const ApplyOutcome &A, StringRef SourceDir, std::optional<double> AheadS) {
  json P = toJSON(A);
  P["refusal"] = A.refusalText();
  P["source_dir"] = SourceDir;
  if (AheadS)
    P["prepared_ahead_s"] = *AheadS;
  return P;
}

namespace {
/// The apply step's payload, typed: what round() reads back.
struct ApplyStep {
  ApplyOutcome Outcome;
  std::string SourceDir;
  static std::string problem(const json &P) { return applyShape(P); }
  json toJSON() const { return applyPayload(Outcome, SourceDir, AheadS); }
  /// \p P passed problem(). Refusals are read when the payload has them (journals of earlier
  /// versions do not); refusalText() of a payload is its "refusal".
  static ApplyStep fromJSON(const json &P) {
    ApplyStep A;
    A.SourceDir = P["source_dir"].get<std::string>();
    json Outcome = {{"applied", P["applied"]}, {"refusals", P.value("refusals", json::array())}};
    if (P.contains("failure"))
      Outcome["failure"] = P["failure"];
    if (P.contains("launch_formulas"))
      Outcome["launch_formulas"] = P["launch_formulas"];
    if (Expected<ApplyOutcome> O = applyOutcomeFromJSON(Outcome, "apply step"))
      A.Outcome = std::move(*O);
    else
      consumeError(O.takeError());
    A.Outcome.Applied = P["applied"].get<bool>();
    if (P.contains("failure"))
      A.Outcome.Failure = P["failure"].get<std::string>();
    A.Refusal = P["refusal"].get<std::string>();
    if (P.contains("prepared_ahead_s"))
      A.AheadS = P["prepared_ahead_s"].get<double>();
    return A;
  }
  /// The refusals as one text, the proposer's feedback.
  std::string Refusal;
  /// The preparing thread's wall time (s) when the candidate was prepared ahead.
  std::optional<double> AheadS;
};

/// The build step's payload: whether the candidate built, its ptxas report (kloop/Support/Ptxas.h's
/// JSON form) and whether it spills more than the baseline.
/// "cubin" is true when the step built the cubin alone (BuildOutcome::Cubin); absent in journals
/// written before it could.
struct BuildStep {
  bool Succeeded = false, Spilled = false;
  json Ptxas;
  bool Cubin = false;
  static std::string problem(const json &P) {
    return shapeProblem(P, {{"succeeded", Kind::Bool}, {"ptxas", Kind::Any}, {"spilled", Kind::Bool},
                            {"cubin", Kind::Bool, true}});
  }
  json toJSON() const { return {{"succeeded", Succeeded}, {"ptxas", Ptxas}, {"spilled", Spilled}, {"cubin", Cubin}}; }
  static BuildStep fromJSON(const json &P) {
    return {P["succeeded"].get<bool>(), P["spilled"].get<bool>(), P["ptxas"], P.value("cubin", false)};
  }
};

/// One proposal of a batch (Proposer::proposeBatch): its reply, the base directory it was asked for,
/// the round that asked, and its index in a batch of Size.
struct Batched {
  ProposalReply Reply;
  std::string Base;
  unsigned Round = 0, Index = 0, Size = 1;
  /// Proposals the request asked for; 0: not a batch request (OptimizeOptions::Batch 1).
  unsigned Asked = 0;
};

/// Adds "timing" and "replay_fallback" to payload \p P when they are known.
void addTiming(json &P, const std::optional<std::string> &Timing, const std::optional<std::string> &Fallback) {
  if (Timing)
    P["timing"] = *Timing;
  if (Fallback)
    P["replay_fallback"] = *Fallback;
}

/// Reads what addTiming wrote (a string member, else none).
void readTiming(const json &P, std::optional<std::string> &Timing, std::optional<std::string> &Fallback) {
  if (P.contains("timing") && P["timing"].is_string())
    Timing = P["timing"].get<std::string>();
  if (P.contains("replay_fallback") && P["replay_fallback"].is_string())
    Fallback = P["replay_fallback"].get<std::string>();
}

/// What verify found comparing a candidate with the incumbent (the verify step's payload): skipped
/// (no GPU), or the comparison's verdict with its evidence rows (CompareOutcome::Evidence) and detail.
/// Measure and decide read this value; they do not copy JSON members.
struct Comparison {
  std::optional<json> Skipped; ///< why verification and measurement were skipped
  bool Accepted = false;
  std::string Outcome, Explanation;
  json Evidence = json::array();
  json Detail;
  /// How the step was timed ("replay" or "workload"; none in journals before replay timing) and
  /// why it ran the workload when it was to replay.
  std::optional<std::string> Timing, ReplayFallback;
  static std::string problem(const json &P) { return verifyShape(P); }
  json toJSON() const {
    if (Skipped)
      return {{"skipped", *Skipped}};
    json P = {{"accepted", Accepted}, {"outcome", Outcome}, {"explanation", Explanation},
              {"evidence", Evidence}, {"detail", Detail}};
    addTiming(P, Timing, ReplayFallback);
    return P;
  }
  static Comparison fromJSON(const json &P) {
    Comparison C;
    if (P.contains("skipped")) {
      C.Skipped = P["skipped"];
      return C;
    }
    C.Accepted = P["accepted"].get<bool>();
    C.Outcome = P["outcome"].get<std::string>();
    C.Explanation = P["explanation"].get<std::string>();
    C.Evidence = P["evidence"];
    C.Detail = P["detail"];
    readTiming(P, C.Timing, C.ReplayFallback);
    return C;
  }
  /// The measure step's payload: the evidence measured, or why nothing was.
  json measureJSON() const { return Skipped ? json{{"skipped", *Skipped}} : json{{"evidence", Evidence}}; }
};

/// The comparison \p C, timed by \p Timing ("replay" or "workload"), with why it ran the workload
/// when it was to replay.
Comparison comparisonOf(const CompareOutcome &C, const std::string &Timing, std::optional<std::string> Fallback) {
  return {std::nullopt, C.Accepted, C.Outcome, C.Explanation, C.Evidence, C.Detail, Timing, std::move(Fallback)};
}

/// The decide step's payload: the verdict on a Comparison.
struct Decision {
  bool Accepted = false;
  std::string Outcome, Explanation;
  std::optional<json> Evidence; ///< the comparison's rows; none when nothing was measured
  std::optional<std::string> Timing, ReplayFallback; ///< as Comparison's
  static std::string problem(const json &P) {
    return shapeProblem(P, {{"accepted", Kind::Bool}, {"outcome", Kind::String}, {"explanation", Kind::String},
                            {"evidence", Kind::Array, true}});
  }
  json toJSON() const {
    json D = {{"accepted", Accepted}, {"outcome", Outcome}, {"explanation", Explanation}};
    if (Evidence)
      D["evidence"] = *Evidence;
    addTiming(D, Timing, ReplayFallback);
    return D;
  }
  static Decision fromJSON(const json &P) {
    Decision D{P["accepted"].get<bool>(), P["outcome"].get<std::string>(), P["explanation"].get<std::string>(),
               std::nullopt};
    if (P.contains("evidence"))
      D.Evidence = P["evidence"];
    readTiming(P, D.Timing, D.ReplayFallback);
    return D;
  }
  /// The decision on \p C: its own verdict, or "unmeasured" when it was skipped.
  static Decision of(const Comparison &C) {
    if (C.Skipped)
      return {false, "unmeasured", "not accepted: verification and measurement skipped (no GPU)", std::nullopt};
    return {C.Accepted, C.Outcome, C.Explanation, C.Evidence, C.Timing, C.ReplayFallback};
  }
};
} // namespace

/// Journals what applying proposal \p PropId did: one refusal row per refusal (its reason, with the
/// refused edit's index; none for the whole proposal), a verdict "apply_failed" for a failure, and every edit of
/// \p Proposal with whether it was applied (a proposal is applied all or nothing).
static Error journalApply(Journal &J, int64_t PropId, const json &Proposal, const ApplyOutcome &A) {
  for (const Refusal &R : A.Refusals) {
    std::optional<int64_t> Edit;
    if (R.EditIndex >= 0)
      Edit = R.EditIndex;
    if (Expected<int64_t> RId = J.recordRefusal(PropId, Edit, R.Reason); !RId)
      return RId.takeError();
  }
  if (A.Failure)
    if (Expected<int64_t> V = J.recordVerdict(PropId, "apply_failed", json{{"failure", *A.Failure}}, *A.Failure); !V)
      return V.takeError();
  if (!Proposal.contains("edits") || !Proposal["edits"].is_array())
    return Error::success();
  for (size_t I = 0; I < Proposal["edits"].size(); ++I) {
    const json &E = Proposal["edits"][I];
    if (Expected<int64_t> EId = J.recordEdit(PropId, (int64_t)I, E.value("id", E.value("target", "")),
                                            E.value("kind", ""), E, A.Applied);
        !EId)
      return EId.takeError();
  }
  return Error::success();
}

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

namespace {
/// One run of the loop: the steps of docs/optimize.md's state machine, each a member that reads and
/// writes the state below. runOptimize is run().
class Loop {
public:
  Loop(Journal &J, Stages &S, Proposer &P, const OptimizeOptions &O, const ProgressFn &Progress)
      : J(J), S(S), P(P), O(O), Progress(Progress), CandRoot(O.OutDir + "/candidates") {}

  Expected<OptimizeResult> run() {
    Expected<bool> Finished = openRun();
    if (!Finished)
      return Finished.takeError();
    if (*Finished)
      return Res;
    if (Expected<RunRecord> RunRec = J.getRun(Res.Run); !RunRec)
      return RunRec.takeError();
    SR.emplace(J, Res.Run);
    if (std::error_code EC = llvm::sys::fs::create_directories(CandRoot))
      return makeError("cannot create " + CandRoot + ": " + EC.message());
    if (Error E = extract())
      return E;
    if (Error E = buildBaseline())
      return E;
    std::string NoGpuWhy;
    Gpu = S.haveGpu(NoGpuWhy);
    Res.GpuSkipped = !Gpu;
    if (!Gpu)
      say("verification and measurement skipped: no GPU (" + NoGpuWhy + ")", ProgressKind::VerificationSkipped);
    if (Error E = captureStep())
      return E;
    if (Error E = countersStep(0, "baseline", BaseDir))
      return E;
    if (O.PrepareJobs && (P.deterministic() || O.Batch > 1) && S.concurrentPrepare())
      Ahead = std::make_unique<AheadQueue>(O.PrepareJobs);
    Error Rounds = rounds();
    dropAhead();
    if (!Pending.empty())
      say(std::to_string(Pending.size()) + " untried proposal(s) of round " + std::to_string(Pending.front().Round) +
          "'s batch left: the run stopped");
    if (Rounds)
      return Rounds;
    if (Error E = canary())
      return E;
    if (Error E = finish())
      return E;
    return Res;
  }

private:
  Journal &J;
  Stages &S;
  Proposer &P;
  const OptimizeOptions &O;
  const ProgressFn &Progress;
  std::string CandRoot;
  OptimizeResult Res;
  std::optional<StepRunner> SR;
  /// Seconds the run worked before this invocation (a resumed run), and when this invocation began.
  double PriorWorkS = 0;
  int64_t InvocationStartNs = journalNowNs();
  // Round 0.
  inv::Inventory Inventory;
  json BasePtxas;
  std::optional<json> BaseCubinPtxas; // baseCubinPtxas()
  std::string BaseDir;
  bool Gpu = false;
  // What the rounds carry from one to the next.
  json History = json::array();
  json Profile = json::array(); // evidence rows of the latest measured candidate
  std::string Incumbent;
  std::optional<unsigned> Best;
  unsigned SinceWin = 0;
  int64_t Tokens = 0;
  std::optional<double> IncumbentPct; // min % of roofline over shapes, when measured
  std::string Stop;
  // Replay timing (docs/optimize.md, "Replay timing").
  bool WantReplay = false;  // search.timing auto or replay, and a GPU
  /// The captures search steps replay, one per search shape: (shape, directory); empty when none.
  std::vector<std::pair<std::string, std::string>> Captures;
  std::string NoReplay;     // why no search step can replay ("" when they can)
  std::string IncumbentLaunch; // why the incumbent cannot be replayed ("" when it can)
  /// The launch formulas of the incumbent's and of this round's candidate's re-parsed launch sites
  /// (docs/optimize.md, "Replaying a new launch configuration"); CandidateEvaluated: the candidate's
  /// apply gave them.
  SiteFormulas IncumbentFormulas, CandidateFormulas;
  bool CandidateEvaluated = false;
  /// Per capture directory: its manifest and each launch's parameter buffer, read once.
  std::map<std::string, std::pair<capture::Manifest, std::vector<std::vector<uint8_t>>>> CaptureFacts;
  json BestSearch;             // {"timing", "evidence"} of the accepted candidate's search step
  json Counters;               // the incumbent's counters step payload (countersPayload); null without one
  /// Rounds before this one have journaled steps (a resumed run): they are never prepared ahead.
  unsigned FirstUnjournaledRound = 1;
  /// Candidates prepared ahead (docs/optimize.md, "Preparing ahead"); none when each is prepared in its
  /// round. Declared last: destroyed first, it waits for jobs that use the members above.
  std::unique_ptr<AheadQueue> Ahead;
  /// The untried proposals of the last batch, in the order of the rounds that will take them
  /// (nextProposal); not journaled until a round takes one, so a resumed run asks again.
  std::deque<Batched> Pending;

  void say(const std::string &Line, ProgressKind K = ProgressKind::Step) {
    if (Progress)
      Progress(ProgressEvent{K, Line});
  }
  double elapsedS() const { return PriorWorkS + double(journalNowNs() - InvocationStartNs) / 1e9; }

  /// The run: a new one, or with Resume the journal's last. True when that run already finished (its
  /// results are then in Res, and nothing is run).
  Expected<bool> openRun() {
    if (!O.Resume) {
      Expected<int64_t> R = J.createRun(O.ConfigHash, "0.1.0");
      if (!R)
        return R.takeError();
      Res.Run = *R;
      return false;
    }
    Expected<std::vector<RunRecord>> Runs = J.listRuns();
    if (!Runs)
      return Runs.takeError();
    if (Runs->empty())
      return makeError(J.path() + ": --resume: the journal has no run to resume");
    Res.Run = Runs->back().Id;
    if (Runs->back().FinishedNs) {
      if (Error E = regenerateFinished())
        return E;
      return true;
    }
    if (!O.ConfigHash.empty() && Runs->back().ConfigHash != O.ConfigHash)
      return makeError(J.path() + ": --resume: the workload description changed since run " + std::to_string(Res.Run) +
                 " began (config hash " + Runs->back().ConfigHash + ", now " + O.ConfigHash +
                 "); resume with the same .kloop.yaml, or start a new journal");
    // --time-budget counts the time the run has worked: the steps finished by earlier invocations (a run
    // resumed after a crash), then this invocation's wall time. Counting from the run's first start would
    // charge the time it lay crashed, and a resumed run could stop at once with its round half done.
    Expected<std::vector<StepRecord>> Prior = J.listSteps(Res.Run);
    if (!Prior)
      return Prior.takeError();
    for (const StepRecord &St : *Prior) {
      if (St.FinishedNs)
        PriorWorkS += double(*St.FinishedNs - St.StartedNs) / 1e9;
      FirstUnjournaledRound = std::max<unsigned>(FirstUnjournaledRound, unsigned(St.Round) + 1);
    }
    return false;
  }

  /// A finished run is not continued: its final check and stop reason are journaled, and new rounds
  /// under other limits would contradict them (a candidate accepted in a search step, but no final
  /// check and no patch). Its results are regenerated from the journal; a longer search is a new run.
  Error regenerateFinished() {
    Expected<std::optional<StepRecord>> Fin = J.findFinishedStep(Res.Run, 0, StepState::Done, "final");
    if (!Fin)
      return Fin.takeError();
    if (!*Fin || !(*Fin)->Payload.is_object())
      return makeError(J.path() + ": --resume: run " + std::to_string(Res.Run) +
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
    return Error::success();
  }

  /// Runs step (\p Round, \p St, \p Key), whose payload is a T (ApplyStep, BuildStep, Comparison,
  /// Decision): T::problem checks a payload reused on --resume, toJSON journals a new one, T::fromJSON
  /// reads either back.
  template <typename T>
  Expected<T> typedStep(int64_t Round, StepState St, StringRef Key, llvm::function_ref<Expected<T>()> Body) {
    Expected<json> P = SR->step(Round, St, Key, &T::problem, [&]() -> Expected<json> {
      Expected<T> V = Body();
      if (!V)
        return V.takeError();
      return V->toJSON();
    });
    if (!P)
      return P.takeError();
    return T::fromJSON(*P);
  }

  /// Round 0: the inventory of the workload's sources.
  Error extract() {
    Expected<json> Inv = SR->step(0, StepState::Extract, "", fields({{"inventory", Kind::Any}}), [&]() -> Expected<json> {
      say("extract: inventory of the workload's sources");
      Expected<inv::Inventory> I = S.extract();
      if (!I)
        return I.takeError();
      return json{{"inventory", inv::toJSON(*I)}};
    });
    if (!Inv)
      return Inv.takeError();
    Expected<inv::Inventory> Read = inv::inventoryFromJSON((*Inv)["inventory"], "journal: extract step: inventory");
    if (!Read)
      return Read.takeError();
    Inventory = std::move(*Read);
    return Error::success();
  }

  /// Journals a build of \p B (round \p Round, proposal \p Proposal; 0 for the baseline).
  Error recordBuild(const BuildOutcome &B, int64_t Round, std::optional<int64_t> Proposal) {
    BuildRecord BR;
    BR.Run = Res.Run;
    BR.Round = Round;
    BR.Proposal = Proposal;
    BR.Succeeded = B.Succeeded;
    BR.Log = B.Log;
    BR.Ptxas = B.Ptxas;
    BR.WallMs = B.WallMs;
    if (Expected<int64_t> Id = J.recordBuild(BR); !Id)
      return Id.takeError();
    return Error::success();
  }

  /// Round 0: the baseline copy and its build (+ ptxas report).
  Error buildBaseline() {
    Expected<json> BaseBuild = SR->step(0, StepState::Build, "baseline",
                                        fields({{"source_dir", Kind::String}, {"ptxas", Kind::Any}}),
                                        [&]() -> Expected<json> {
      say("build: baseline");
      Expected<std::string> D = S.copySources(O.BaselineDir, CandRoot + "/baseline");
      if (!D)
        return D.takeError();
      Expected<BuildOutcome> B = S.build(*D, O.OutDir + "/build/baseline");
      if (!B)
        return B.takeError();
      if (Error E = recordBuild(*B, 0, std::nullopt))
        return E;
      if (!B->Succeeded)
        return makeError("the baseline does not build:\n" + B->Log);
      return json{{"source_dir", *D}, {"ptxas", B->Ptxas}};
    });
    if (!BaseBuild)
      return BaseBuild.takeError();
    BaseDir = (*BaseBuild)["source_dir"].get<std::string>();
    BasePtxas = (*BaseBuild)["ptxas"];
    Incumbent = BaseDir;
    return Error::success();
  }

  /// Round 0, step measure "capture" (search.timing auto or replay, with a GPU): the capture of the
  /// baseline that search steps replay, made on a run's first invocation and reused when its key
  /// matches; in auto mode a capture that fails is journaled as the reason steps run the workload.
  Error captureStep() {
    WantReplay = Gpu && O.Timing != measure::SearchTiming::Workload;
    if (!WantReplay)
      return Error::success();
    // The first search shape keeps the step key and directory of a run that captured one shape only.
    std::vector<std::string> Shapes = O.SearchShapes.empty() ? std::vector<std::string>{""} : O.SearchShapes;
    for (size_t I = 0; I < Shapes.size(); ++I) {
      std::string Key = I ? "capture:" + Shapes[I] : "capture", Dir = O.OutDir + (I ? "/capture-" + Shapes[I] : "/capture");
      Expected<json> Cap = SR->step(0, StepState::Measure, Key, captureShape, [&]() -> Expected<json> {
        say("capture: the baseline's launches of the target kernels, for replay" +
            (Shapes[I].empty() ? std::string() : " (shape " + Shapes[I] + ")"));
        Expected<CaptureOutcome> C = S.capture(BaseDir, Dir, Shapes[I]);
        if (C)
          return capturePayload(*C);
        if (O.Timing == measure::SearchTiming::Replay)
          return C.takeError();
        return json{{"replay", false}, {"reason", "the capture failed: " + llvm::toString(C.takeError())}};
      });
      if (!Cap)
        return Cap.takeError();
      if (!(*Cap)["replay"].get<bool>()) {
        NoReplay = (*Cap)["reason"].get<std::string>();
        Captures.clear();
        say("search steps run the workload: " + NoReplay);
        if (O.Agreement)
          say("agreement: nothing to compare, no search step replays");
        return Error::success();
      }
      Captures.push_back({Shapes[I], (*Cap)["dir"].get<std::string>()});
    }
    return Error::success();
  }

  /// Why search step \p Proposal cannot replay; "" when it can.
  std::string replayBlocker(const json &Proposal) const {
    std::string Fixed = fixedReplayBlocker();
    return Fixed.empty() ? launchConfigChange(Proposal, Inventory, CandidateEvaluated) : Fixed;
  }

  /// Why no search step of this round can replay, whatever its proposal; "" when they may.
  std::string fixedReplayBlocker() const { return NoReplay.empty() ? IncumbentLaunch : NoReplay; }

  /// What each side launches on capture \p Dir where it differs from the capture (replayConfigs).
  Expected<capture::ReplayConfigs> configsFor(const std::string &Dir) {
    auto It = CaptureFacts.find(Dir);
    if (It == CaptureFacts.end()) {
      Expected<capture::Manifest> M = capture::readCapture(Dir, capture::BlobCheck::Exist);
      if (!M)
        return M.takeError();
      Expected<std::vector<std::vector<uint8_t>>> P = paramBuffers(Dir, *M);
      if (!P)
        return P.takeError();
      It = CaptureFacts.emplace(Dir, std::pair{std::move(*M), std::move(*P)}).first;
    }
    return replayConfigs(It->second.first, It->second.second, Inventory, IncumbentFormulas, CandidateFormulas);
  }

  /// \p CandDir against the incumbent replayed on the capture of every search shape, in order, until one
  /// does not accept it (the others cannot change that; with --agreement every shape is timed unless one
  /// crashes or its outputs differ) or one cannot be replayed (then the whole step
  /// falls back to workload runs, which time every search shape). The outcome holds every replayed
  /// shape's evidence; a shape after the first works in `<Key>.<shape>.replay`.
  Expected<ReplayCompareOutcome> replayEveryShape(const std::string &Key, const std::string &CandDir) {
    ReplayCompareOutcome All;
    for (size_t I = 0; I < Captures.size(); ++I) {
      const auto &[Shape, Dir] = Captures[I];
      std::string Work = replayDirOf(Key, I ? Shape : "");
      Expected<capture::ReplayConfigs> Configs = configsFor(Dir);
      if (!Configs) {
        ReplayCompareOutcome F;
        F.Fallback = llvm::toString(Configs.takeError());
        return F;
      }
      Expected<ReplayCompareOutcome> R = S.replayCompare(Incumbent, CandDir, Dir, Work, Shape, *Configs);
      if (!R || !R->Compare)
        return R;
      if (!All.Compare)
        All.Compare = std::move(R->Compare);
      else
        mergeShape(*All.Compare, std::move(*R->Compare), Shape);
      if (!All.Compare->Accepted && (!O.Agreement || All.Compare->Outcome != "rejected"))
        break;
    }
    return All;
  }

  /// Adds the outcome \p Next of one more shape, \p Shape, to \p Into: accepted only when both are, the
  /// first refusal's outcome and explanation (prefixed "shape S: "), the evidence and timed launches of
  /// both. The detail stays the first shape's, with the others' in "more_shapes" and their replay_time
  /// seconds (the `_s` members) and worker starts added to its own; its settings (placements, train)
  /// stay the first shape's.
  static void mergeShape(CompareOutcome &Into, CompareOutcome Next, const std::string &Shape) {
    for (json &E : Next.Evidence)
      Into.Evidence.push_back(std::move(E));
    for (decide::ShapeEvidence &T : Next.Timing)
      Into.Timing.push_back(std::move(T));
    if (Into.Detail.is_object() && Next.Detail.is_object()) {
      if (Into.Detail.contains("replay_time") && Next.Detail.contains("replay_time"))
        for (auto &[K, V] : Next.Detail["replay_time"].items())
          if (json &T = Into.Detail["replay_time"][K]; V.is_number() && T.is_number()) {
            if (llvm::StringRef(K).ends_with("_s") || K == "worker_starts") // each shape has its own worker
              T = T.get<double>() + V.get<double>();
          }
      Into.Detail["more_shapes"].push_back(std::move(Next.Detail));
    }
    if (Into.Accepted && !Next.Accepted) {
      Into.Accepted = false;
      Into.Outcome = Next.Outcome;
      Into.Explanation = "shape " + Shape + ": " + Next.Explanation;
    }
  }

  /// Round \p N's comparison of \p CandDir against the incumbent: replayed when it can be, else
  /// workload runs (with the reason when it was to replay). \p Cubin: its build step built the cubin
  /// alone. The verify step's payload.
  Expected<Comparison> searchCompare(unsigned N, const std::string &Key, int64_t PropId, const std::string &CandDir,
                                     const json &Proposal, bool Cubin) {
    std::string Why;
    if (WantReplay) {
      Why = replayBlocker(Proposal);
      if (Why.empty()) {
        Expected<ReplayCompareOutcome> R = replayEveryShape(Key, CandDir);
        if (!R)
          return R.takeError();
        if (R->Compare && R->Compare->Accepted && Cubin)
          if (Error E = requireWorkloadBuild(*R->Compare, N, Key, PropId, CandDir))
            return std::move(E);
        if (R->Compare)
          return agreementOf(comparisonOf(*R->Compare, "replay", std::nullopt), Key, CandDir);
        Why = R->Fallback;
      }
    }
    Expected<CompareOutcome> C = S.compare(Incumbent, CandDir, CandRoot + "/" + Key + ".compare", false);
    if (!C)
      return C.takeError();
    return comparisonOf(*C, "workload", Why.empty() ? std::nullopt : std::optional<std::string>(Why));
  }

  /// \p Replayed, the replayed comparison of \p CandDir, with --agreement also timed by the workload
  /// compare a search step without replay makes; its detail gets "agreement" (agreementJSON, plus the
  /// workload's "workload" verdict and evidence and "workload_s"; or "error" when that compare could not
  /// run, which leaves the step replay's as it is), a progress line per kernel and shape. Nothing is
  /// compared when replay timed nothing (a crash, outputs that differ).
  Comparison agreementOf(Comparison Replayed, const std::string &Key, const std::string &CandDir) {
    bool Timed = llvm::any_of(Replayed.Evidence, [](const json &E) { return E.value("speedup", json()).is_number(); });
    if (!O.Agreement || !Timed)
      return Replayed;
    auto T0 = std::chrono::steady_clock::now();
    Expected<CompareOutcome> W = S.compare(Incumbent, CandDir, CandRoot + "/" + Key + ".agreement.compare", false);
    double Seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - T0).count();
    if (!W) {
      std::string Why = llvm::toString(W.takeError());
      Replayed.Detail["agreement"] = {{"error", Why}, {"workload_s", Seconds}};
      say("agreement: the workload compare failed (the step stays replay's): " + Why);
      return Replayed;
    }
    std::vector<AgreementRow> Rows = matchAgreement(Replayed.Evidence, W->Evidence, O.Targets);
    json A = agreementJSON(Rows);
    A["workload"] = {{"accepted", W->Accepted}, {"outcome", W->Outcome}, {"explanation", W->Explanation},
                     {"evidence", W->Evidence}};
    A["workload_s"] = Seconds;
    Replayed.Detail["agreement"] = std::move(A);
    for (const std::string &Line : agreementLines(Rows))
      say(Line);
    if (Rows.empty())
      say("agreement: no kernel and shape timed both ways (the workload's rows: " +
          std::to_string(W->Evidence.size()) + ")");
    return Replayed;
  }

  /// Replay accepted round \p N's candidate \p CandDir, built as a cubin alone: the workload is built
  /// now (the counters and the final check run it, and later candidates build on it), and \p C is
  /// refused when it does not build.
  Error requireWorkloadBuild(CompareOutcome &C, unsigned N, const std::string &Key, int64_t PropId,
                             const std::string &CandDir) {
    Expected<BuildOutcome> B = S.build(CandDir, buildDirOf(Key));
    if (!B)
      return B.takeError();
    if (Error E = recordBuild(*B, N, PropId))
      return E;
    if (B->Succeeded)
      return Error::success();
    C.Accepted = false;
    C.Outcome = "refused";
    C.Explanation = "refused: replay accepted its cubin (" + C.Explanation +
                    "), but the workload does not build with it (its log: the build record of round " +
                    std::to_string(N) + ")";
    return Error::success();
  }

  /// Why the loop stops before round \p N, or "" to go on (docs/optimize.md, "Stop rules").
  std::string stopBefore(unsigned N) const {
    if (N > O.MaxCandidates)
      return "budget: " + std::to_string(O.MaxCandidates) + " candidates tried";
    if (N > O.MaxRounds)
      return "budget: " + std::to_string(O.MaxRounds) + " rounds";
    if (O.Plateau && SinceWin >= O.Plateau)
      return "plateau: no accepted win in " + std::to_string(O.Plateau) + " rounds";
    if (O.TimeBudgetS && elapsedS() >= *O.TimeBudgetS)
      return "budget: wall time " + llvm::formatv("{0:f0}", *O.TimeBudgetS).str() + " s spent";
    if (O.TokenBudget && Tokens >= *O.TokenBudget)
      return "budget: " + std::to_string(Tokens) + " tokens spent (budget " + std::to_string(*O.TokenBudget) + ")";
    if (O.SpeedOfLightPct && IncumbentPct && *IncumbentPct >= 100.0 - *O.SpeedOfLightPct)
      return "speed of light: every shape within " + llvm::formatv("{0:f1}", *O.SpeedOfLightPct).str() +
             "% of its roofline ceiling (" + llvm::formatv("{0:f1}", *IncumbentPct).str() + "%)";
    return "";
  }

  /// Rounds 1, 2, ... until a stop rule or the proposer's exhaustion.
  Error rounds() {
    for (unsigned N = 1;; ++N) {
      Stop = stopBefore(N);
      if (!Stop.empty())
        return Error::success();
      if (Error E = J.beginRound(Res.Run, N))
        return E;
      Res.Candidates = N;
      Expected<bool> Go = round(N);
      if (!Go)
        return Go.takeError();
      if (!*Go)
        return Error::success();
    }
  }

  /// Ends a round that produced no measured candidate: \p Hist gets \p Outcome and \p Reason (unless null).
  void lostRound(json Hist, const std::string &Outcome, const json &Reason, const std::string &Line) {
    Hist["outcome"] = Outcome;
    if (!Reason.is_null())
      Hist["reason"] = Reason;
    History.push_back(std::move(Hist));
    ++SinceWin;
    say(Line);
  }

  /// Round \p N: propose -> apply -> build -> verify + measure -> decide. False when the proposer is
  /// exhausted (Stop says so).
  Expected<bool> round(unsigned N) {
    std::string Key = candKey(N);
    Expected<json> Prop = propose(N, Key);
    if (!Prop)
      return Prop.takeError();
    if (Prop->value("exhausted", false)) {
      Stop = "search exhausted: " + Prop->value("why", std::string());
      Res.Candidates = N - 1;
      return false;
    }
    Tokens += Prop->value("tokens", (int64_t)0);
    if (Prop->value("unparsed", false)) {
      std::string Why = Prop->value("reason", std::string("reply is not JSON"));
      lostRound(json{{"round", N}}, "refused", Why, "round " + std::to_string(N) + ": proposal refused (" + Why + ")");
      return true;
    }
    int64_t PropId = (*Prop)["proposal_id"].get<int64_t>();
    const json &Proposal = (*Prop)["proposal"];
    json Hist = {{"round", N}, {"proposal", Proposal}, {"accepted", false}};
    std::optional<BuildOutcome> AheadBuild;
    Expected<ApplyStep> Ap = apply(N, Key, PropId, Hist, AheadBuild);
    if (!Ap)
      return Ap.takeError();
    std::string Prefix = "round " + std::to_string(N) + ": " + Key;
    if (const std::optional<std::string> &Failure = Ap->Outcome.Failure) {
      lostRound(Hist, "apply_failed", *Failure, Prefix + " failed: " + *Failure);
      return true;
    }
    if (!Ap->Outcome.Applied) {
      lostRound(Hist, "refused", Ap->Refusal, Prefix + " refused: " + Ap->Refusal);
      return true;
    }
    const std::string &CandDir = Ap->SourceDir;
    noteCandidateFormulas(Proposal, Ap->Outcome.LaunchFormulas);
    bool Replays = WantReplay && replayBlocker(Proposal).empty();
    Expected<BuildStep> Bd = build(N, Key, PropId, CandDir, Replays, std::move(AheadBuild));
    if (!Bd)
      return Bd.takeError();
    Hist["spilled"] = Bd->Spilled;
    Hist["ptxas"] = Bd->Ptxas;
    if (!Bd->Succeeded) {
      lostRound(Hist, "build_failed", json(), Prefix + " does not build");
      return true;
    }
    Expected<Decision> Dc = compareAndDecide(N, Key, PropId, CandDir, Proposal, Bd->Cubin);
    if (!Dc)
      return Dc.takeError();
    takeDecision(N, *Dc, CandDir, std::move(Hist));
    if (Dc->Accepted) {
      dropAhead(); // every queued candidate was prepared as if this one were rejected
      if (Error E = countersStep(N, Key, CandDir))
        return E;
    }
    return true;
  }

  /// Step measure "counters-<Who>" of round \p Round (with a GPU): the hardware counters of the target
  /// kernels of \p Dir, the baseline or a new incumbent, for the proposers' context and the report. A
  /// profiler that cannot count is journaled with its reason; the run goes on either way.
  Error countersStep(int64_t Round, const std::string &Who, const std::string &Dir) {
    if (!Gpu)
      return Error::success();
    Expected<json> P = SR->step(Round, StepState::Measure, "counters-" + Who,
                                fields({{"profiles", Kind::Array}, {"problems", Kind::Array}, {"cost", Kind::Any}}),
                                [&]() -> Expected<json> {
      say("counters: hardware counters of " + Who + "'s target kernels (one metrics run per search shape)");
      int64_t T0 = journalNowNs();
      Expected<CountersOutcome> C = S.counters(Dir, O.OutDir + "/counters/" + Who);
      CountersOutcome Failed;
      if (!C)
        Failed.Problems.push_back("the counters could not be taken: " + llvm::toString(C.takeError()));
      return countersPayload(C ? *C : Failed, double(journalNowNs() - T0) / 1e9);
    });
    if (!P)
      return P.takeError();
    for (const json &Profile : (*P)["profiles"]) {
      Expected<measure::KernelProfile> KP =
          measure::kernelProfileFromJSON(Profile, (J.path() + ": counters-" + Who + " step").str());
      if (!KP)
        return KP.takeError();
      say("counters: " + Who + ": " + KP->Name + (KP->Shape.empty() ? "" : " [" + KP->Shape + "]") + ": " +
          measure::summarizeKernelProfile(*KP));
    }
    for (const json &Problem : (*P)["problems"])
      say("counters: " + Who + ": " + (Problem.is_string() ? Problem.get<std::string>() : dumpJSON(Problem)));
    Counters = *P;
    return Error::success();
  }

  /// The proposers' context for round \p N with history \p Hist (docs/proposers.md).
  json contextFor(unsigned N, const json &Hist) const {
    json Ctx = O.ExtraContext;
    Ctx["inventory"] = inv::toJSON(Inventory); // the proposer protocol's JSON (docs/proposers.md)
    Ctx["history"] = Hist;
    Ctx["ptxas_baseline"] = BasePtxas;
    Ctx["profile"] = Profile;
    Ctx["counters"] = Counters;
    Ctx["round"] = N;
    return Ctx;
  }

  /// The propose step: the proposer's reply journaled, or why there is none; "batch" says where in a
  /// batch it came from.
  Expected<json> propose(unsigned N, const std::string &Key) {
    return SR->step(N, StepState::Propose, Key, proposeShape, [&]() -> Expected<json> {
      Expected<Batched> B = nextProposal(N);
      NewProposal NP;
      NP.ProposerKind = std::string(P.kind());
      if (!B)
        return failedProposal(N, B.takeError(), NP);
      const ProposalReply *R = &B->Reply;
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
      json Out = {{"proposal_id", *Id},
                  {"proposal", R->Proposal},
                  {"tokens", R->Prov.TokensIn.value_or(0) + R->Prov.TokensOut.value_or(0)},
                  {"exhausted", false}};
      if (B->Asked)
        Out["batch"] = {{"round", B->Round}, {"index", B->Index}, {"size", B->Size}, {"asked", B->Asked}};
      return Out;
    });
  }

  /// Round \p N's proposal: the next untried one of the last batch when that was asked for from this
  /// round's base; otherwise a new request: with OptimizeOptions::Batch > 1 a batch request for up to
  /// that many, within the candidate and round budgets (at the budgets' end, a batch of 1), whose others
  /// wait for the next rounds; else propose().
  Expected<Batched> nextProposal(unsigned N) {
    if (!Pending.empty() && Pending.front().Base != proposalBase()) {
      say("round " + std::to_string(N) + ": " + std::to_string(Pending.size()) + " untried proposal(s) of round " +
          std::to_string(Pending.front().Round) + "'s batch dropped: the incumbent changed");
      Pending.clear();
    }
    if (!Pending.empty()) {
      Batched B = std::move(Pending.front());
      Pending.pop_front();
      return B;
    }
    unsigned Want = std::max(1u, std::min({O.Batch, O.MaxCandidates + 1 - std::min(N, O.MaxCandidates + 1),
                                           O.MaxRounds + 1 - std::min(N, O.MaxRounds + 1)}));
    Expected<std::vector<ProposalReply>> Rs = O.Batch > 1 ? P.proposeBatch(contextFor(N, History), Want)
                                                          : Proposer::one(P.propose(contextFor(N, History)));
    if (!Rs)
      return Rs.takeError();
    unsigned Size = Rs->size();
    for (unsigned I = 0; I < Size; ++I)
      Pending.push_back({std::move((*Rs)[I]), proposalBase(), N, I, Size, O.Batch > 1 ? Want : 0});
    Batched B = std::move(Pending.front());
    Pending.pop_front();
    return B;
  }

  /// The propose step's payload when the proposer gave no proposal: exhausted (the builtin search), or a
  /// failed proposal of round \p N (a reply that is not JSON, a failed proposer command), journaled with
  /// its refusal. Other errors end the run.
  Expected<json> failedProposal(unsigned N, Error E, NewProposal &NP) {
    json Out = {{"exhausted", false}};
    std::string Refusal;
    Error Rest = llvm::handleErrors(
        std::move(E),
        [&](const builtin::SearchExhaustedError &X) {
          Out["exhausted"] = true;
          Out["why"] = X.Why;
        },
        [&](const ReplyNotJSONError &X) {
          NP.Model = X.Prov.Model;
          NP.RawReply = X.RawText;
          NP.ParseError = X.Reason;
          NP.TokensIn = X.Prov.TokensIn;
          NP.TokensOut = X.Prov.TokensOut;
          NP.CostUSD = X.Prov.CostUSD;
          NP.WallMs = X.Prov.WallMs;
          Refusal = (X.Batch ? "reply is not a proposal batch: " : "reply is not JSON: ") + X.Reason;
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
    if (Out["exhausted"].get<bool>())
      return Out;
    Expected<int64_t> Id = J.recordProposal(Res.Run, N, NP);
    if (!Id)
      return Id.takeError();
    if (Expected<int64_t> RId = J.recordRefusal(*Id, std::nullopt, Refusal); !RId)
      return RId.takeError();
    Out["proposal_id"] = *Id;
    Out["unparsed"] = true;
    Out["reason"] = StringRef(Refusal).starts_with("proposer failed") ? "proposer failed" : Refusal.substr(0, Refusal.find(':'));
    Out["tokens"] = NP.TokensIn.value_or(0) + NP.TokensOut.value_or(0);
    return Out;
  }

  /// The source directory a proposal applies to: the baseline's for proposals relative to it, else the
  /// incumbent's.
  const std::string &proposalBase() const { return O.AbsoluteProposals ? BaseDir : Incumbent; }

  /// Candidate \p Key's source directory: a fresh copy of \p From with \p Proposal applied in place;
  /// with what applying did. Touches only the stages and \p Key's files, so a preparing thread runs it too.
  Expected<std::pair<std::string, ApplyOutcome>> applyFresh(const std::string &Key, const json &Proposal,
                                                            const std::string &From) const {
    std::string CandWork = CandRoot + "/" + Key;
    // A build left by a candidate prepared for another proposal (a crash before it was removed) is not
    // built over.
    if (std::error_code EC = llvm::sys::fs::remove_directories(buildDirOf(Key)))
      return makeError("cannot clear " + buildDirOf(Key) + ": " + EC.message());
    Expected<std::string> D = S.copySources(From, CandWork);
    if (!D)
      return D.takeError();
    std::string PF = CandWork + ".proposal.json";
    if (Error E = writeFileAtomically(PF, dumpJSON(Proposal, 2) + "\n"))
      return E;
    Expected<ApplyOutcome> A = S.apply(PF, *D, From);
    if (!A)
      return A.takeError();
    return std::make_pair(std::move(*D), std::move(*A));
  }

  /// Candidate \p Key's build directory.
  std::string buildDirOf(const std::string &Key) const { return O.OutDir + "/build/" + Key; }

  /// Where candidate \p Key's replayed step works on the capture of search shape \p Shape ("": the
  /// first search shape's, where its cubin is built).
  std::string replayDirOf(const std::string &Key, const std::string &Shape = "") const {
    return CandRoot + "/" + Key + (Shape.empty() ? "" : "." + Shape) + ".replay";
  }

  /// The apply step of round \p N (history entry \p Hist: its proposal): the candidate prepared ahead for
  /// it, waited for within the step (its build goes to \p AheadBuild), else a fresh copy of the proposal's
  /// base with the proposal applied in place; then the rounds after it are queued to be prepared ahead.
  Expected<ApplyStep> apply(unsigned N, const std::string &Key, int64_t PropId, const json &Hist,
                            std::optional<BuildOutcome> &AheadBuild) {
    const json &Proposal = Hist["proposal"];
    return typedStep<ApplyStep>(N, StepState::Apply, Key, [&]() -> Expected<ApplyStep> {
      std::optional<PreparedCandidate> Pre = takePrepared(N, Proposal);
      prepareAhead(N, Hist); // beside this round's own apply and build when they are not prepared
      if (Pre)
        AheadBuild = Pre->Build;
      using Applied = std::pair<std::string, ApplyOutcome>;
      Expected<Applied> A = Pre ? Expected<Applied>(Applied(Pre->SourceDir, Pre->Apply))
                                : applyFresh(Key, Proposal, proposalBase());
      if (!A)
        return A.takeError();
      if (Error E = journalApply(J, PropId, Proposal, A->second))
        return E;
      std::string Refusal = A->second.refusalText();
      std::optional<double> AheadS = Pre ? std::optional<double>(Pre->WallS) : std::nullopt;
      return ApplyStep{std::move(A->second), std::move(A->first), std::move(Refusal), AheadS};
    });
  }

  /// The build step of a candidate (+ ptxas report, and whether it spills more than the baseline):
  /// buildCandidate's, with \p Ahead the build made when the candidate was prepared ahead.
  Expected<BuildStep> build(unsigned N, const std::string &Key, int64_t PropId, const std::string &CandDir,
                            bool Replays, std::optional<BuildOutcome> Ahead) {
    return typedStep<BuildStep>(N, StepState::Build, Key, [&]() -> Expected<BuildStep> {
      Expected<BuildOutcome> B = buildCandidate(Key, CandDir, Replays, std::move(Ahead));
      if (!B)
        return B.takeError();
      if (Error E = recordBuild(*B, N, PropId))
        return E;
      // A cubin's report covers one translation unit: it is compared with the baseline's cubin.
      bool Spilled = reportedSpillBytes(B->Ptxas) > reportedSpillBytes(B->Cubin ? baseCubinPtxas() : BasePtxas);
      if (!B->Succeeded)
        if (Expected<int64_t> V = J.recordVerdict(PropId, "build_failed", json{{"log_tail", B->Log}},
                                                  "the candidate does not build");
            !V)
          return V.takeError();
      return BuildStep{B->Succeeded, Spilled, B->Ptxas, B->Cubin};
    });
  }

  /// What candidate \p Key, its sources in \p CandDir, is built into (docs/optimize.md, "What a
  /// candidate's build builds"): the cubin alone when its step will replay (\p Replays) and the stages
  /// build cubins; otherwise, or when that cubin does not build (search.cubin_command may lack flags the
  /// project's build has), the workload. \p Ahead, the build made when it was prepared ahead, is taken
  /// when it is what this asks for.
  Expected<BuildOutcome> buildCandidate(const std::string &Key, const std::string &CandDir, bool Replays,
                                        std::optional<BuildOutcome> Ahead) const {
    if (Ahead && (!Ahead->Cubin || (Replays && Ahead->Succeeded)))
      return std::move(*Ahead);
    if (Replays && !Ahead)
      if (std::optional<BuildOutcome> B = S.buildCubin(CandDir, replayDirOf(Key)); B && B->Succeeded)
        return std::move(*B);
    return S.build(CandDir, buildDirOf(Key));
  }

  /// The ptxas report of the baseline's cubin (built once, in `candidates/baseline.replay`; replay uses
  /// it as the first incumbent's); null when the stages build no cubins.
  const json &baseCubinPtxas() {
    if (!BaseCubinPtxas) {
      std::optional<BuildOutcome> B = S.buildCubin(BaseDir, CandRoot + "/baseline.replay");
      BaseCubinPtxas = B ? B->Ptxas : json();
    }
    return *BaseCubinPtxas;
  }

  /// Round \p N's candidate prepared ahead, when one was prepared for \p Proposal from this round's
  /// base; otherwise none, and every queued candidate is dropped (their history did not happen).
  std::optional<PreparedCandidate> takePrepared(unsigned N, const json &Proposal) {
    if (!Ahead)
      return std::nullopt;
    std::vector<unsigned> Dropped;
    std::optional<PreparedCandidate> C = Ahead->take(N, Proposal, proposalBase(), Dropped);
    removePrepared(Dropped);
    if (C && !C->Problem.empty()) {
      say("round " + std::to_string(N) + ": preparing ahead failed (" + C->Problem + "); preparing it again");
      return std::nullopt;
    }
    return C;
  }

  /// Queues the candidates of the rounds after \p N, up to OptimizeOptions::PrepareJobs ahead and within
  /// the candidate and round budgets, as if round \p N (its history entry \p Hist so far: its proposal)
  /// and every candidate queued before were rejected, without spilling: the common case, and the one in
  /// which the proposer's next proposals are known before round N is built and timed.
  void prepareAhead(unsigned N, const json &Hist) {
    if (!Ahead || N + 1 < FirstUnjournaledRound)
      return;
    json Hyp = History;
    Hyp.push_back(asRejected(Hist));
    for (auto &[Round, Proposal] : Ahead->queuedAfter(N))
      Hyp.push_back(asRejected({{"round", Round}, {"proposal", Proposal}, {"accepted", false}}));
    unsigned Last = std::min({N + O.PrepareJobs, O.MaxCandidates, O.MaxRounds});
    for (unsigned M = std::max(Ahead->lastRound(), N) + 1; M <= Last; ++M) {
      std::optional<json> Proposal = proposalAhead(M, N, Hyp);
      if (!Proposal)
        return;
      // Whether its step replays also depends on its own apply's launch formulas: prepare() decides.
      bool MayReplay = WantReplay && fixedReplayBlocker().empty();
      Ahead->push(M, *Proposal, proposalBase(),
                  [this, Key = candKey(M), Proposal = *Proposal, From = proposalBase(),
                   MayReplay](const std::atomic<bool> &Cancelled) {
                    return prepare(Key, Proposal, From, MayReplay, Cancelled);
                  });
      Hyp.push_back(asRejected({{"round", M}, {"proposal", *Proposal}, {"accepted", false}}));
    }
  }

  /// Round \p M's proposal as known during round \p N (M > N), if every round before M is rejected
  /// (history \p Hyp): a deterministic proposer's answer to \p Hyp, or the untried proposal of the last
  /// batch that round M will take; none when neither is known (the proposer is exhausted, fails, or the
  /// batch ends).
  std::optional<json> proposalAhead(unsigned M, unsigned N, const json &Hyp) {
    if (P.deterministic()) {
      Expected<ProposalReply> R = P.propose(contextFor(M, Hyp));
      if (!R) { // exhausted, or an error the real round will meet and report
        consumeError(R.takeError());
        return std::nullopt;
      }
      return R->Proposal;
    }
    size_t I = M - N - 1;
    if (I < Pending.size() && Pending[I].Base == proposalBase())
      return Pending[I].Reply.Proposal;
    return std::nullopt;
  }

  /// History entry \p Hist completed as a rejected candidate (unmeasured without a GPU).
  json asRejected(json Hist) const {
    Hist["outcome"] = Gpu ? "rejected" : "unmeasured";
    if (!Hist.contains("spilled"))
      Hist["spilled"] = false;
    return Hist;
  }

  /// Prepares candidate \p Key on a preparing thread: \p Proposal applied to a copy of \p From, and its
  /// build (buildCandidate: the cubin alone when \p MayReplay and its own launch formulas let its step
  /// replay, as replayBlocker decides in its round); stops after a stage once \p Cancelled is set (the
  /// candidate was dropped; what it wrote is removed).
  PreparedCandidate prepare(const std::string &Key, const json &Proposal, const std::string &From, bool MayReplay,
                            const std::atomic<bool> &Cancelled) const {
    auto Began = std::chrono::steady_clock::now();
    PreparedCandidate C;
    Expected<std::pair<std::string, ApplyOutcome>> A = applyFresh(Key, Proposal, From);
    if (!A) {
      C.Problem = llvm::toString(A.takeError());
      return C;
    }
    C.SourceDir = std::move(A->first);
    C.Apply = std::move(A->second);
    if (Cancelled) {
      C.Problem = "cancelled";
      return C;
    }
    if (C.Apply.Applied && !C.Apply.Failure) {
      bool Replays = MayReplay && launchConfigChange(Proposal, Inventory, !C.Apply.LaunchFormulas.empty()).empty();
      Expected<BuildOutcome> B = buildCandidate(Key, C.SourceDir, Replays, std::nullopt);
      if (!B) {
        C.Problem = llvm::toString(B.takeError());
        return C;
      }
      C.Build = std::move(*B);
    }
    C.WallS = std::chrono::duration<double>(std::chrono::steady_clock::now() - Began).count();
    return C;
  }

  /// Drops every queued candidate (waiting for the jobs under way) and removes what they wrote.
  void dropAhead() {
    if (!Ahead)
      return;
    std::vector<unsigned> Dropped;
    Ahead->drain(Dropped);
    removePrepared(Dropped);
  }

  /// Removes the files of the candidates of rounds \p Rounds prepared for a history that did not happen.
  void removePrepared(const std::vector<unsigned> &Rounds) {
    for (unsigned M : Rounds) {
      std::string Key = candKey(M);
      for (const std::string &Dir : {CandRoot + "/" + Key, replayDirOf(Key), buildDirOf(Key)})
        llvm::sys::fs::remove_directories(Dir);
      llvm::sys::fs::remove(CandRoot + "/" + Key + ".proposal.json");
    }
  }

  /// Verify + measure (one interleaved comparison against the incumbent), then decide: the decide step's
  /// payload.
  Expected<Decision> compareAndDecide(unsigned N, const std::string &Key, int64_t PropId, const std::string &CandDir,
                                      const json &Proposal, bool Cubin) {
    Expected<Comparison> Vf = typedStep<Comparison>(N, StepState::Verify, Key, [&]() -> Expected<Comparison> {
      if (!Gpu) {
        Comparison Out;
        Out.Skipped = "verification and measurement skipped: no GPU";
        return Out;
      }
      return searchCompare(N, Key, PropId, CandDir, Proposal, Cubin);
    });
    if (!Vf)
      return Vf.takeError();
    Expected<json> Ms = SR->step(N, StepState::Measure, Key, fields({}),
                                 [&]() -> Expected<json> { return Vf->measureJSON(); });
    if (!Ms)
      return Ms.takeError();
    return typedStep<Decision>(N, StepState::Decide, Key, [&]() { return decideStep(*Vf, PropId); });
  }

  /// The decision on verify's comparison \p Vf, journaled as proposal \p PropId's verdict.
  Expected<Decision> decideStep(const Comparison &Vf, int64_t PropId) {
    Decision D = Decision::of(Vf);
    json Detail = Vf.Skipped ? json{{"skipped", true}} : json{{"compare", Vf.Detail}, {"evidence", Vf.Evidence}};
    addTiming(Detail, Vf.Timing, Vf.ReplayFallback);
    if (Expected<int64_t> V = J.recordVerdict(PropId, D.Outcome, Detail, D.Explanation); !V)
      return V.takeError();
    return D;
  }

  /// Takes decide's payload \p Dc for round \p N: a win makes \p CandDir the incumbent.
  void takeDecision(unsigned N, const Decision &Dc, const std::string &CandDir, json Hist) {
    Hist["outcome"] = Dc.Outcome;
    Hist["reason"] = Dc.Explanation;
    const json &Evidence = Dc.Evidence ? *Dc.Evidence : json::array();
    Hist["evidence"] = shapeSpeedups(Evidence);
    if (Evidence.is_array() && !Evidence.empty())
      Profile = Evidence;
    if (Dc.Accepted) {
      Hist["accepted"] = true;
      Incumbent = CandDir;
      IncumbentFormulas = CandidateFormulas;
      Best = N;
      BestSearch = {{"timing", Dc.Timing.value_or("workload")}, {"evidence", Evidence}};
      if (WantReplay && NoReplay.empty())
        noteIncumbentLaunch(N, Hist["proposal"]);
      SinceWin = 0;
      std::optional<double> MinPct;
      for (const json &E : Evidence)
        if (E.contains("pct_roofline") && E["pct_roofline"].is_number())
          MinPct = std::min(MinPct.value_or(1e300), E["pct_roofline"].get<double>());
      IncumbentPct = MinPct;
    } else {
      ++SinceWin;
    }
    say("round " + std::to_string(N) + ": " + candKey(N) + " " + Hist["outcome"].get<std::string>() +
        (Dc.Timing.value_or("") == "replay" ? " (replay)" : "") + "; best so far: " + (Best ? candKey(*Best) : std::string("baseline")));
    History.push_back(std::move(Hist));
  }

  /// Per (kernel, shape) row of \p Evidence, its speed-up and CI: what the proposers' history says of how
  /// a candidate did on each shape (the builtin search's partial wins, builtin::partialWin).
  static json shapeSpeedups(const json &Evidence) {
    json Out = json::array();
    if (!Evidence.is_array())
      return Out;
    for (const json &E : Evidence)
      if (E.is_object())
        Out.push_back({{"kernel", E.value("kernel", json())}, {"shape", E.value("shape", json())},
                       {"speedup", E.value("speedup", json())}, {"ci_low", E.value("ci_low", json())},
                       {"ci_high", E.value("ci_high", json())}});
    return Out;
  }

  /// This round's candidate's launch formulas: \p Applied, its apply's, over the incumbent's unless
  /// proposals are absolute (each is the whole change from the baseline); none when \p Proposal edits
  /// device code only.
  void noteCandidateFormulas(const json &Proposal, const SiteFormulas &Applied) {
    CandidateEvaluated = !Applied.empty();
    CandidateFormulas = O.AbsoluteProposals ? SiteFormulas() : IncumbentFormulas;
    if (launchConfigChange(Proposal, Inventory).empty())
      return; // device code only: the launches are the incumbent's (or, absolute, the baseline's)
    for (const auto &[ID, F] : Applied)
      CandidateFormulas[ID] = F;
  }

  /// After candidate \p N with \p Proposal became the incumbent: later steps replay only while the
  /// incumbent launches what the capture holds, or what its launch formulas give.
  void noteIncumbentLaunch(unsigned N, const json &Proposal) {
    std::string Why = launchConfigChange(Proposal, Inventory, CandidateEvaluated);
    if (O.AbsoluteProposals) // the proposal is the incumbent's whole change from the baseline
      IncumbentLaunch = Why.empty() ? "" : "the incumbent " + candKey(N) + ": " + Why;
    else if (!Why.empty() && IncumbentLaunch.empty())
      IncumbentLaunch = "the incumbent " + candKey(N) + ": " + Why;
  }

  /// The drift canary: the baseline against itself, before the final check it guards (only when a
  /// candidate won).
  Error canary() {
    if (!Best)
      return Error::success();
    Expected<json> Can = SR->step(0, StepState::Measure, "canary", canaryShape, [&]() -> Expected<json> {
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
    return Error::success();
  }

  /// The final step: the change from the baseline, checked once more with held-out inputs; the run's end.
  Error finish() {
    Res.StopReason = Stop;
    Expected<json> Fin = SR->step(0, StepState::Done, "final",
                                  fields({{"stop_reason", Kind::String}, {"diff", Kind::String}, {"best", Kind::Any}}),
                                  [&]() { return finalCheck(); });
    if (!Fin)
      return Fin.takeError();
    Res.StopReason = (*Fin)["stop_reason"].get<std::string>();
    Res.Diff = (*Fin)["diff"].get<std::string>();
    if ((*Fin)["best"].is_string())
      Res.Best = Best;
    return J.setRunState(Res.Run, "stopped", Res.StopReason, true);
  }

  /// The final check's timed launches as rows of the journal's samples table, round 0: the baseline's
  /// with no proposal, the accepted candidate's with its proposal (seed -1: a compare pools the seeds).
  /// Written in the final step's transaction (StepRunner::step), so a crash leaves none.
  Error journalTiming(const CompareOutcome &C) {
    Expected<std::vector<ProposalSummary>> Ps = J.listProposals(Res.Run);
    if (!Ps)
      return Ps.takeError();
    std::optional<int64_t> BestId;
    for (const ProposalSummary &P : *Ps)
      if (P.Proposal.Round == int64_t(*Best))
        BestId = P.Proposal.Id;
    if (!BestId)
      return makeError(J.path() + ": no proposal of round " + std::to_string(*Best) + ", the accepted candidate's");
    std::vector<SampleRecord> Rows;
    auto add = [&](const decide::ShapeEvidence &E, const std::vector<decide::Sample> &Side,
                   std::optional<int64_t> Proposal) {
      for (const decide::Sample &X : Side)
        Rows.push_back({0, Res.Run, 0, Proposal, E.Shape, -1, E.Kernel, int64_t(X.DurationNs + 0.5), X.Throttled,
                        X.Foreign});
    };
    for (const decide::ShapeEvidence &E : C.Timing) {
      add(E, E.Baseline, std::nullopt);
      add(E, E.Candidate, BestId);
    }
    return Rows.empty() ? Error::success() : J.recordSamples(Rows);
  }

  /// The final step's payload.
  Expected<json> finalCheck() {
    json F = {{"stop_reason", Stop}, {"candidates", Res.Candidates}, {"gpu_skipped", !Gpu},
              {"best", Best ? json(candKey(*Best)) : json(nullptr)}, {"diff", ""},
              {"evidence", json::array()}, {"tokens", Tokens}};
    if (!Best)
      return F;
    Expected<CompareOutcome> C = S.compare(BaseDir, Incumbent, O.OutDir + "/final.compare", true);
    if (!C)
      return C.takeError();
    if (Error E = journalTiming(*C))
      return E;
    F["ceilings"] = C->Ceilings;
    F["final_outcome"] = C->Outcome;
    F["final_explanation"] = C->Explanation;
    F["evidence"] = C->Evidence;
    // The final check runs the workload; the accepted candidate's search step may have replayed. Both
    // figures, for the agreement of replay and workload timing (issue 14, item 5).
    F["final_timing"] = "workload";
    F["search"] = BestSearch;
    // Where the final check's time went: seconds of builds, verification runs, timing runs and the
    // decision, and the workload runs started (kloop-compare/1's "time_s" and "runs").
    if (C->Detail.is_object()) {
      F["final_time_s"] = C->Detail.value("time_s", json());
      F["final_runs"] = C->Detail.value("runs", json());
    }
    // What `kloop compare --recheck` needs to repeat this check (docs/optimize.md, "Re-check").
    F["final_check"] = {{"config", O.ConfigPath},  {"config_hash", O.ConfigHash},   {"baseline_dir", BaseDir},
                        {"candidate_dir", Incumbent}, {"settings", C->Settings}};
    if (!C->Accepted) {
      F["best"] = nullptr;
      F["stop_reason"] =
          Stop + "; the final check with held-out inputs refused the best candidate: " + C->Explanation;
      return F;
    }
    Expected<std::string> D = S.diff(BaseDir, Incumbent);
    if (!D)
      return D.takeError();
    F["diff"] = *D;
    return F;
  }
};
} // namespace

Expected<OptimizeResult> runOptimize(Journal &J, Stages &S, Proposer &P, const OptimizeOptions &O,
                                     const ProgressFn &Progress) {
  return Loop(J, S, P, O, Progress).run();
}

} // namespace optimize
} // namespace kloop
