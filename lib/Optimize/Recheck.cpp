//===- Recheck.cpp - Re-measure an accepted change from its journal -------===//
#include "kloop/Optimize/Recheck.h"
#include "Evidence.h"
#include "RunSteps.h"
#include "kloop/Decide/DecisionJSON.h"
#include "kloop/Optimize/Optimize.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using json = nlohmann::json;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;
using llvm::createStringError;

namespace kloop {
namespace optimize {

namespace {
/// Reads the fields of the journal's "final_check" object, naming the first bad one.
class FinalCheckReader {
public:
  FinalCheckReader(const json &FC, std::string Where) : FC(FC), Where(std::move(Where)) {}
  /// FC[Key] (Key may be "settings.rounds"), or null when absent.
  const json &at(StringRef Key) const {
    static const json Null;
    auto [Head, Rest] = Key.split('.');
    const json *V = &FC;
    for (StringRef Part : {Head, Rest}) {
      if (Part.empty())
        break;
      if (!V->is_object() || !V->contains(Part.str()))
        return Null;
      V = &(*V)[Part.str()];
    }
    return *V;
  }
  Error bad(StringRef Key, StringRef Expected) const {
    return createStringError(Where + ": final_check." + Key + ": expected " + Expected);
  }
  Error string(StringRef Key, std::string &Out) const {
    const json &V = at(Key);
    if (!V.is_string() || V.get_ref<const std::string &>().empty())
      return bad(Key, "a non-empty string");
    Out = V.get<std::string>();
    return Error::success();
  }
  Error count(StringRef Key, unsigned Min, unsigned &Out) const {
    const json &V = at(Key);
    if (!V.is_number_unsigned() || V.get<uint64_t>() < Min || V.get<uint64_t>() > 1000000)
      return bad(Key, "an integer >= " + std::to_string(Min));
    Out = V.get<unsigned>();
    return Error::success();
  }

private:
  const json &FC;
  std::string Where;
};
} // namespace

Expected<RecheckPlan> loadRecheckPlan(Journal &J, int64_t Run) {
  Expected<int64_t> R = resolveRun(J, Run);
  if (!R)
    return R.takeError();
  if (Expected<RunRecord> RR = J.getRun(*R); !RR)
    return RR.takeError();
  std::string Where = (J.path() + ": run " + std::to_string(*R)).str();
  Expected<json> F = runStepPayload(J, *R, StepState::Done, "final");
  if (!F)
    return F.takeError();
  if (!F->is_object())
    return createStringError(Where + " has not finished (it has no final check); finish it with kloop optimize --resume, then "
                       "re-check it");
  if (!F->contains("best") || !(*F)["best"].is_string())
    return createStringError(Where + " accepted nothing, so there is no change to re-check (stop reason: " +
               F->value("stop_reason", std::string("?")) + ")");
  if (!F->contains("final_check") || !(*F)["final_check"].is_object())
    return createStringError(Where + ": its final step does not record what the final check measured (a journal written "
                       "before kloop compare --recheck existed); run kloop optimize again to re-check its change");
  FinalCheckReader FC((*F)["final_check"], Where);
  RecheckPlan P;
  P.Run = *R;
  P.Candidate = (*F)["best"].get<std::string>();
  for (auto [Key, Out] : {std::pair<StringRef, std::string *>{"config", &P.ConfigPath},
                          {"config_hash", &P.ConfigHash},
                          {"baseline_dir", &P.BaselineDir},
                          {"candidate_dir", &P.CandidateDir}})
    if (Error E = FC.string(Key, *Out))
      return E;
  if (Error E = FC.count("settings.rounds", 1, P.Rounds))
    return E;
  if (Error E = FC.count("settings.warmup", 0, P.Warmup))
    return E;
  const json &Shapes = FC.at("settings.shapes");
  if (!Shapes.is_array() || !llvm::all_of(Shapes, [](const json &S) { return S.is_string(); }))
    return FC.bad("settings.shapes", "an array of shape names");
  P.Shapes = Shapes.get<std::vector<std::string>>();
  Expected<decide::DecisionThresholds> T = decide::thresholdsFromJSON(FC.at("settings.thresholds"));
  if (!T)
    return FC.bad("settings.thresholds", "decide's thresholds (" + llvm::toString(T.takeError()) + ")");
  P.Thresholds = *T;
  P.Evidence = F->value("evidence", json::array());
  if (!P.Evidence.is_array() || P.Evidence.empty())
    return createStringError(Where + ": its final step holds no evidence to re-check");
  return P;
}

Error checkRecheckInputs(const RecheckPlan &P, const measure::WorkloadConfig &C, StringRef ConfigText) {
  if (std::string Now = configHash(ConfigText); Now != P.ConfigHash)
    return createStringError("the workload description " + C.Path + " changed since run " + std::to_string(P.Run) +
               " (config hash " + P.ConfigHash + ", now " + Now +
               "); a re-check must measure the shapes and seeds of the run");
  for (auto [Side, Dir] : {std::pair<StringRef, StringRef>{"baseline", P.BaselineDir}, {"accepted candidate", P.CandidateDir}}) {
    if (!llvm::sys::fs::is_directory(Dir))
      return createStringError("the " + Side + "'s source directory " + Dir + " (recorded by run " + std::to_string(P.Run) +
                 ") is missing; a re-check needs the sources the run compared");
    for (const std::vector<std::string> *List : {&C.Sources, &C.Protected})
      for (const std::string &F : *List) {
        llvm::SmallString<256> Path(Dir);
        llvm::sys::path::append(Path, F);
        if (!llvm::sys::fs::is_regular_file(Path))
          return createStringError("the " + Side + "'s source directory " + Dir + " lacks " + F + " (named in " + C.Path +
                     "); a re-check needs the sources the run compared");
      }
  }
  return Error::success();
}

measure::CompareOptions recheckOptions(const RecheckPlan &P, StringRef WorkDir, StringRef CuptiLib) {
  measure::CompareOptions O;
  O.BaselineDir = P.BaselineDir;
  O.CandidateDir = P.CandidateDir;
  O.WorkDir = WorkDir.str();
  O.CuptiLib = CuptiLib.str();
  O.Rounds = P.Rounds;
  O.Warmup = P.Warmup;
  O.IncludeHeldOut = true; // a final check: every shape and seed, held-out ones included
  O.Shapes = P.Shapes;
  O.Thresholds = P.Thresholds;
  return O;
}


/// The journaled point estimate: "speedup", or (older rows) median(base) / median(cand), which is the same number.
static std::optional<double> journaledSpeedup(const json &Row) {
  if (std::optional<double> S = evidenceNumber(Row, "speedup"))
    return S;
  std::optional<double> B = evidenceNumber(Row, "base_median_ns"), C = evidenceNumber(Row, "cand_median_ns");
  return B && C && *C > 0 ? std::optional<double>(*B / *C) : std::nullopt;
}

std::vector<RecheckPair> matchRecheck(const json &Evidence, const measure::CompareResult &New) {
  std::vector<RecheckPair> Out;
  std::vector<const decide::ShapeVerdict *> Unmatched;
  if (New.Verdict)
    for (const decide::ShapeVerdict &V : New.Verdict->Shapes)
      Unmatched.push_back(&V);
  auto Fill = [](RecheckPair &P, const decide::ShapeVerdict &V) {
    P.HeldOutShape = V.HeldOutShape;
    if (V.Speedup) {
      P.NewSpeedup = V.Speedup->Estimate;
      P.NewLow = V.Speedup->Lower;
      P.NewHigh = V.Speedup->Upper;
    }
  };
  for (const json &Row : Evidence) {
    RecheckPair P;
    P.Kernel = Row.is_object() ? Row.value("kernel", std::string()) : std::string();
    P.Shape = Row.is_object() ? Row.value("shape", std::string()) : std::string();
    P.Speedup = journaledSpeedup(Row);
    P.Low = evidenceNumber(Row, "ci_low");
    P.High = evidenceNumber(Row, "ci_high");
    auto It = llvm::find_if(Unmatched, [&](const decide::ShapeVerdict *V) {
      return V->Kernel == P.Kernel && V->Shape == P.Shape;
    });
    if (It != Unmatched.end()) {
      Fill(P, **It);
      Unmatched.erase(It);
    }
    P.Reproduced = P.Low && P.High && P.NewSpeedup && *P.NewSpeedup >= *P.Low && *P.NewSpeedup <= *P.High;
    Out.push_back(std::move(P));
  }
  for (const decide::ShapeVerdict *V : Unmatched) {
    RecheckPair P;
    P.Kernel = V->Kernel;
    P.Shape = V->Shape;
    Fill(P, *V);
    Out.push_back(std::move(P));
  }
  return Out;
}

json recheckJSON(const RecheckPlan &P, StringRef JournalPath, const std::vector<RecheckPair> &Pairs,
                 const measure::CompareResult &New) {
  auto Num = [](const std::optional<double> &V) { return V ? json(*V) : json(nullptr); };
  json Rows = json::array();
  bool All = !Pairs.empty();
  for (const RecheckPair &R : Pairs) {
    All &= R.Reproduced;
    Rows.push_back({{"kernel", R.Kernel},
                    {"shape", R.Shape},
                    {"held_out_shape", R.HeldOutShape},
                    {"original", {{"speedup", Num(R.Speedup)}, {"ci_low", Num(R.Low)}, {"ci_high", Num(R.High)}}},
                    {"recheck", {{"speedup", Num(R.NewSpeedup)}, {"ci_low", Num(R.NewLow)}, {"ci_high", Num(R.NewHigh)}}},
                    {"reproduced", R.Reproduced}});
  }
  return json{{"schema", "kloop-recheck/1"},  {"journal", JournalPath.str()}, {"run", P.Run},
              {"candidate", P.Candidate},     {"config", P.ConfigPath},       {"baseline_dir", P.BaselineDir},
              {"candidate_dir", P.CandidateDir}, {"reproduced", All},       {"pairs", Rows},
              {"compare", measure::toJSON(New)}};
}

} // namespace optimize
} // namespace kloop
