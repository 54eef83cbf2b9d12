//===- ReplayTiming.cpp - Search steps timed by replay --------------------===//
#include "kloop/Optimize/ReplayTiming.h"
#include "kloop/Support/Error.h"
#include "Evidence.h"
#include "kloop/Decide/Decision.h"
#include "kloop/Decide/DecisionJSON.h"
#include "kloop/Verify/Compare.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <cstdio>
#include <cstdlib>
#include <map>

using json = nlohmann::json;
using llvm::Expected;
using llvm::StringRef;

namespace kloop {
namespace optimize {

/// Why a set_constant of \p ID changes a launch configuration in host code; "" when it does not.
static std::string constantBlocker(StringRef ID, const inv::Inventory &Inv) {
  // The inventory lists the constants that have a tunable use, and a launch configuration is one; a
  // constant it does not list is used by no launch configuration kloop can see.
  const inv::Constant *K = Inv.constant(ID);
  if (!K)
    return "";
  for (const inv::ConstantUse &U : K->Uses) {
    bool AtLaunch = Inv.launchSite(U.Owner) || llvm::is_contained({"block_size", "grid_size", "shared_memory_size"},
                                                                   StringRef(U.Context));
    if (AtLaunch)
      return "set_constant " + ID.str() + ": the launch configuration of " + U.Owner + " (" + U.Context +
             ") is computed by host code from it, and replay launches the captured one";
  }
  return "";
}

std::string launchConfigChange(const json &Proposal, const inv::Inventory &Inv) {
  if (!Proposal.is_object() || !Proposal.contains("edits") || !Proposal["edits"].is_array())
    return "the proposal has no edits that kloop can read";
  // The kinds that edit device code only: the captured launches stay what the candidate launches.
  static const char *const DeviceOnly[] = {"set_unroll",   "set_launch_bounds", "add_restrict",
                                           "replace_body", "replace_loop",      "replace_stmt",
                                           "insert_device_function"};
  for (const json &E : Proposal["edits"]) {
    std::string Kind = E.is_object() ? E.value("kind", std::string()) : std::string();
    std::string ID = E.is_object() ? E.value("id", std::string()) : std::string();
    if (llvm::is_contained(DeviceOnly, StringRef(Kind)))
      continue;
    if (Kind == "set_constant") {
      if (std::string Why = constantBlocker(ID, Inv); !Why.empty())
        return Why;
      continue;
    }
    if (Kind == "set_launch_config")
      return "set_launch_config " + ID + ": the candidate changes a launch configuration in host code";
    if (Kind == "add_kernel_variant")
      return "add_kernel_variant: launches are retargeted to a kernel the capture has not seen";
    if (Kind == "add_const")
      return "add_const " + ID + ": the kernel's mangled name changes, and replay finds kernels by the captured one";
    return "edit kind '" + Kind + "' is not known to leave the launches as they were captured";
  }
  return "";
}

std::string runCommandTimingProblem(const measure::WorkloadConfig &C) {
  if (C.Search.Timing != measure::SearchTiming::Workload)
    return "";
  std::vector<std::string> Used = measure::placeholdersIn(C.Run.Command), Missing;
  for (const char *P : {"seed", "iters"})
    if (!llvm::is_contained(Used, P))
      Missing.push_back("{" + std::string(P) + "}");
  if (Missing.empty())
    return "";
  return C.Path + ": run.command uses no " + llvm::join(Missing, " and no ") +
         ", which search.timing: workload needs (each search step runs the program per seed and times {iters} "
         "launches); use search.timing: replay or auto, where the program runs as it is";
}

/// The shortest %g text of \p V that reads back as \p V.
static std::string shortestDouble(double V) {
  char Buf[32];
  for (int Digits = 6; Digits <= 17; ++Digits) {
    std::snprintf(Buf, sizeof Buf, "%.*g", Digits, V);
    if (std::strtod(Buf, nullptr) == V)
      break;
  }
  return Buf;
}

Expected<std::string> replayTolerance(const measure::WorkloadConfig &C) {
  std::string Out = "exact";
  for (const measure::OutputSpec &O : C.Outputs) {
    if (O.Tol.Kind == verify::ToleranceKind::Exact)
      continue;
    if (O.Tol.Kind == verify::ToleranceKind::Ulp)
      return makeError("outputs: the ulp tolerance of " + O.Kernel + " arg " + llvm::Twine(O.Arg) +
                 " is not one the replay worker checks (exact, abs, rel)");
    if (O.DType != "f32" && O.DType != "f64")
      return makeError("outputs: replay checks abs/rel tolerances on f32 and f64 only, not " + O.DType);
    std::string This = (verify::toleranceKindName(O.Tol.Kind) + ":" + shortestDouble(O.Tol.Value) + "," + O.DType).str();
    if (Out != "exact" && Out != This)
      return makeError("outputs: replay checks every written allocation with one tolerance, and the outputs have "
                 "two (" + Out + ", " + This + ")");
    Out = This;
  }
  return Out;
}

/// The kernel's name for the evidence: the demangled name up to its parameter list.
static std::string shortName(const capture::ReplayLaunch &L) {
  StringRef N = L.Name.empty() ? StringRef(L.Kernel) : StringRef(L.Name);
  return N.split('(').first.str();
}

static ReplayCompareOutcome fallback(std::string Why) {
  ReplayCompareOutcome O;
  O.Fallback = std::move(Why);
  return O;
}

/// A candidate replay refused without timing it: crashed, or outputs that differ.
static ReplayCompareOutcome refusal(const capture::ReplayResult &R, std::string Outcome, std::string Why) {
  CompareOutcome C;
  C.Outcome = std::move(Outcome);
  C.Explanation = "refused: " + std::move(Why);
  C.Detail = {{"timing", "replay"}, {"replay", json::parse(R.Json, nullptr, false)}};
  ReplayCompareOutcome O;
  O.Compare = std::move(C);
  return O;
}

CapturedOutputs capturedOutputs(const capture::Manifest &M, const std::vector<measure::OutputSpec> &Outputs) {
  CapturedOutputs Out;
  for (size_t I = 0; I < M.Launches.size(); ++I) {
    const capture::Launch &L = M.Launches[I];
    for (size_t A = 0; A < L.Allocations.size(); ++A)
      if (L.Allocations[A].written())
        Out.Written[I].insert(A);
    for (const measure::OutputSpec &O : Outputs) {
      if (O.Arg >= L.Params.size() || !verify::kernelMatches(O.Kernel, L.Kernel, L.Name))
        continue;
      for (const capture::PointerWord &W : L.Pointers)
        if (W.Offset == L.Params[O.Arg].Offset)
          Out.Declared[I].insert(W.Allocation);
    }
  }
  return Out;
}

/// The reason to time \p R's candidate by workload runs instead of refusing it: its first mismatch is in an
/// allocation the baseline wrote that no declared output covers; else nullopt.
static std::optional<std::string> scratchMismatch(const capture::ReplayResult &R, const CapturedOutputs &Outputs) {
  for (const capture::ReplayLaunch &L : R.Launches) {
    if (!L.Candidate || L.Candidate->Match)
      continue;
    const std::optional<uint64_t> &A = L.Candidate->MismatchAllocation;
    auto In = [&](const std::map<uint64_t, std::set<uint64_t>> &M) {
      auto It = M.find(L.Index);
      return A && It != M.end() && It->second.count(*A);
    };
    if (!In(Outputs.Written) || In(Outputs.Declared))
      return std::nullopt;
    return "launch " + std::to_string(L.Index) + " (" + shortName(L) + "): the candidate wrote allocation " +
           std::to_string(*A) + " differently from the baseline, and no declared output points into it (a "
           "scratch buffer may hold other intermediate values): the workload's checks decide";
  }
  return std::nullopt;
}

/// The first candidate mismatch of \p R, as "launch I (kernel): mismatch".
static std::string firstMismatch(const capture::ReplayResult &R) {
  for (const capture::ReplayLaunch &L : R.Launches)
    if (L.Candidate && !L.Candidate->Match)
      return "launch " + std::to_string(L.Index) + " (" + shortName(L) + "): " + L.Candidate->Mismatch;
  return R.Error;
}

/// decide's evidence of \p R: one (kernel, shape) per captured launch.
static Expected<std::vector<decide::ShapeEvidence>> replayEvidence(const capture::ReplayResult &R, StringRef Shape) {
  std::map<std::string, unsigned> PerKernel;
  for (const capture::ReplayLaunch &L : R.Launches)
    ++PerKernel[shortName(L)];
  std::vector<decide::ShapeEvidence> Out;
  for (const capture::ReplayLaunch &L : R.Launches) {
    if (!L.Candidate)
      return makeError("the replay worker reported no candidate times for launch " + llvm::Twine(L.Index));
    decide::ShapeEvidence E;
    E.Kernel = shortName(L);
    E.Shape = Shape.str() + (PerKernel[E.Kernel] > 1 ? "#" + std::to_string(L.Index) : "");
    for (auto [Side, Times] : {std::pair{&E.Baseline, &L.Baseline.TimesNs}, {&E.Candidate, &L.Candidate->TimesNs}})
      for (uint64_t Ns : *Times) {
        if (Ns == 0)
          return makeError("a replayed launch of " + E.Kernel + " took 0 ns (below the CUDA event timer's resolution)");
        decide::Sample S;
        S.DurationNs = double(Ns);
        Side->push_back(S);
      }
    // The worker compared every timed launch of both sides with the captured reference.
    E.Seeds.push_back({0, false, true, "every replayed launch matched the captured reference"});
    E.Determinism.push_back({"replayed outputs", true, true});
    Out.push_back(std::move(E));
  }
  return Out;
}

Expected<ReplayCompareOutcome> judgeReplay(const capture::ReplayResult &R, StringRef Shape,
                                           const CapturedOutputs *Outputs) {
  if (R.Failed == "candidate")
    return refusal(R, "crashed", std::string("the candidate ") + (R.TimedOut ? "hung" : "crashed") +
                                     " under replay: " + R.Error);
  if (R.ExitCode == 3 || R.Failed == "baseline" || !R.BaselineMatch)
    return fallback("the incumbent does not reproduce the capture under replay: " + R.Error);
  if (R.ExitCode == 2 || !R.CandidateMatch)
    return fallback("the replay worker: " + (R.Error.empty() ? "exit " + std::to_string(R.ExitCode) : R.Error));
  if (!*R.CandidateMatch && Outputs)
    if (std::optional<std::string> Why = scratchMismatch(R, *Outputs))
      return fallback(*Why);
  if (!*R.CandidateMatch)
    return refusal(R, "failed_verification",
                   "the candidate's outputs differ from the captured reference under replay: " + firstMismatch(R));
  Expected<std::vector<decide::ShapeEvidence>> Ev = replayEvidence(R, Shape);
  if (!Ev)
    return fallback(llvm::toString(Ev.takeError()));
  decide::DecisionThresholds T;
  T.RequireHeldOutSeed = false; // a search step: held-out inputs are the final check's
  Expected<decide::CombinedVerdict> V = decide::decideAll(*Ev, T);
  if (!V)
    return V.takeError();
  CompareOutcome C;
  C.Accepted = V->Outcome == decide::Verdict::Accepted;
  C.Outcome = C.Accepted ? "accepted" : "rejected";
  C.Explanation = V->Explanation;
  for (const decide::ShapeVerdict &SV : V->Shapes)
    C.Evidence.push_back(evidenceRow(SV));
  C.Detail = {{"timing", "replay"}, {"replay", json::parse(R.Json, nullptr, false)}};
  C.Settings = {{"timing", "replay"}, {"thresholds", decide::toJSON(T)}};
  ReplayCompareOutcome O;
  O.Compare = std::move(C);
  return O;
}

} // namespace optimize
} // namespace kloop
