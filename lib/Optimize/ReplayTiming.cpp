//===- ReplayTiming.cpp - Search steps timed by replay --------------------===//
#include "kloop/Optimize/ReplayTiming.h"
#include "kloop/Support/Error.h"
#include "Evidence.h"
#include "kloop/Decide/Decision.h"
#include "kloop/Decide/DecisionJSON.h"
#include "kloop/Verify/Compare.h"
#include "kloop/Inventory/KernelNames.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <cstdio>
#include <cstdlib>
#include <map>

using json = nlohmann::json;
using llvm::Error;
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

std::string launchConfigChange(const json &Proposal, const inv::Inventory &Inv, bool Evaluated) {
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
    if (Evaluated && (Kind == "set_constant" || Kind == "set_launch_config"))
      continue; // replayConfigs evaluates the new configuration on the capture
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

namespace {

/// Argument \p I of launch \p L as its parameter buffer \p Buf holds it (little-endian, up to 8 bytes).
std::optional<uint64_t> paramBits(const capture::Launch &L, const std::vector<uint8_t> &Buf, size_t I) {
  if (I >= L.Params.size() || L.Params[I].Size == 0 || L.Params[I].Size > 8 ||
      L.Params[I].Offset + L.Params[I].Size > Buf.size())
    return std::nullopt;
  uint64_t V = 0;
  for (uint64_t B = 0; B < L.Params[I].Size; ++B)
    V |= uint64_t(Buf[L.Params[I].Offset + B]) << (8 * B);
  return V;
}

inv::LaunchConfig capturedConfig(const capture::Launch &L) {
  inv::LaunchConfig C;
  for (size_t I = 0; I < 3; ++I)
    C.Grid[I] = L.Grid[I], C.Block[I] = L.Block[I];
  C.SharedMemory = L.DynamicSmem;
  return C;
}

bool sameFormula(const inv::LaunchFormula &A, const inv::LaunchFormula &B) { return inv::toJSON(A) == inv::toJSON(B); }

/// One captured launch traced to the launch sites that made it.
class LaunchTrace {
public:
  LaunchTrace(const capture::Launch &L, size_t Index, const std::vector<uint8_t> &Buf)
      : L(L), Index(Index), Buf(Buf), Captured(capturedConfig(L)) {}

  /// "launch 3 (saxpy)": how errors name it.
  std::string name() const {
    return "launch " + std::to_string(Index) + " (" + (L.Name.empty() ? L.Kernel : L.Name.substr(0, L.Name.find('('))) + ")";
  }

  /// The sites among \p Sites whose formula yields the captured configuration, with the variables each binds.
  void trace(const std::vector<const inv::LaunchSite *> &Sites) {
    for (const inv::LaunchSite *S : Sites) {
      if (!S->ConfigFormula)
        continue;
      if (!S->ConfigFormula->Unknown.empty() && Unknown.empty())
        Unknown = "launch site " + S->ID + ": " + S->ConfigFormula->Unknown;
      inv::VarValues V = bind(*S->ConfigFormula);
      Expected<inv::LaunchConfig> C = inv::evaluateConfig(*S->ConfigFormula, V);
      if (C && *C == Captured)
        Origins.push_back({S, std::move(V)});
      else if (!C)
        consumeError(C.takeError());
    }
  }

  /// What \p Side's formulas (\p Changed over the inventory's) make this launch; nullopt when as captured.
  Expected<std::optional<capture::LaunchAs>> side(const SiteFormulas &Changed, StringRef Side) const {
    if (Origins.empty() && !Unknown.empty())
      return makeError(name() + ": the " + Side + " changes how its kernel is launched, and " + Unknown);
    if (Origins.empty())
      return makeError(name() + ": no launch site of its kernel yields its captured configuration (" +
                       inv::describe(Captured) + ") from what the launch passes, and the " + Side +
                       " changes a launch site of that kernel");
    std::optional<capture::LaunchAs> Out;
    for (const auto &[Site, Vars] : Origins) {
      auto It = Changed.find(Site->ID);
      const inv::LaunchFormula &F = It == Changed.end() ? *Site->ConfigFormula : It->second;
      Expected<capture::LaunchAs> C = configOf(*Site, F, Vars, Side);
      if (!C)
        return C.takeError();
      if (Out && *Out != *C)
        return makeError(name() + ": launch sites " + Origins.front().first->ID + " and " + Site->ID +
                         " both yield its captured configuration, and the " + Side + " launches them differently");
      Out = *C;
    }
    if (Out->Config == Captured && Out->Kernel.empty())
      return std::nullopt;
    return Out;
  }

private:
  const capture::Launch &L;
  size_t Index;
  const std::vector<uint8_t> &Buf;
  inv::LaunchConfig Captured;
  std::vector<std::pair<const inv::LaunchSite *, inv::VarValues>> Origins;
  /// The first of the kernel's sites whose inventory formula is unknown, and why.
  std::string Unknown;

  inv::VarValues bind(const inv::LaunchFormula &F) const {
    return inv::bindLaunch(F, [&](size_t I) { return paramBits(L, Buf, I); }, Captured);
  }

  /// \p F's configuration for this launch, after checking that it passes the captured arguments.
  Expected<capture::LaunchAs> configOf(const inv::LaunchSite &Site, const inv::LaunchFormula &F,
                                       const inv::VarValues &Vars, StringRef Side) const {
    const inv::LaunchFormula &Was = *Site.ConfigFormula;
    std::string At = name() + ", launch site " + Site.ID + " in the " + Side.str();
    capture::LaunchAs Out;
    // Another instantiation of the kernel's template: launched by its symbol (the worker checks that it
    // takes the captured parameters).
    if (F.Callee != Was.Callee && (F.Symbol.empty() || Was.Symbol.empty()))
      return makeError(At + ": it launches " + F.Callee + ", not " + Was.Callee +
                       " as captured, and kloop does not know its symbol");
    if (F.Callee != Was.Callee)
      Out.Kernel = F.Symbol;
    if (F.Args.size() != Was.Args.size())
      return makeError(At + ": the kernel call passes " + std::to_string(F.Args.size()) + " arguments, not " +
                       std::to_string(Was.Args.size()));
    for (size_t I = 0; I < F.Args.size(); ++I)
      if (Error E = sameArgument(F.Args[I], Was.Args[I], I, Vars))
        return makeError(At + ": " + llvm::toString(std::move(E)));
    Expected<inv::LaunchConfig> C = inv::evaluateConfig(F, Vars);
    if (!C)
      return makeError(At + ": " + llvm::toString(C.takeError()));
    Out.Config = *C;
    return Out;
  }

  /// Whether argument \p I as \p Now passes what the capture holds (the code as \p Was passed it).
  Error sameArgument(const inv::ArgFormula &Now, const inv::ArgFormula &Was, size_t I, const inv::VarValues &Vars) const {
    std::string Arg = "argument " + std::to_string(I) + " (" + Now.Text + ")";
    if (Now.F) {
      Expected<uint64_t> V = inv::evaluate(*Now.F, Vars);
      std::optional<uint64_t> P = paramBits(L, Buf, I);
      if (V && P) {
        inv::Formula Cap = inv::Formula::constant(Now.F->Type, *P);
        if (Cap.Value != *V)
          return makeError(Arg + " is " + std::to_string(int64_t(*V)) + ", and the capture passed " +
                           std::to_string(int64_t(Cap.Value)));
        return Error::success();
      }
      if (!V)
        consumeError(V.takeError());
    }
    bool Same = Now.Text == Was.Text && Now.F.has_value() == Was.F.has_value() &&
                (!Now.F || inv::toJSON(*Now.F) == inv::toJSON(*Was.F));
    if (!Same)
      return makeError(Arg + " changes (it was " + Was.Text + "), to a value kloop cannot evaluate");
    return Error::success();
  }
};

/// The sites of \p Inv that launch the kernel symbol \p Mangled.
std::vector<const inv::LaunchSite *> sitesOf(const inv::Inventory &Inv, StringRef Mangled) {
  std::vector<const inv::LaunchSite *> Out;
  for (const inv::LaunchSite &S : Inv.LaunchSites) {
    const inv::Kernel *K = S.Kernel ? Inv.kernel(*S.Kernel) : nullptr;
    if (K && llvm::any_of(inventoryKernelSymbols(*K), [&](const KernelSymbol &Sym) { return symbolNamesKernel(Sym, Mangled); }))
      Out.push_back(&S);
  }
  return Out;
}

/// Whether \p Changed may launch any of \p Sites otherwise than the inventory: another formula, or one that
/// is unknown (the same unknown text may hide a constant that changed).
bool changesAny(const SiteFormulas &Changed, const std::vector<const inv::LaunchSite *> &Sites) {
  return llvm::any_of(Sites, [&](const inv::LaunchSite *S) {
    auto It = Changed.find(S->ID);
    return It != Changed.end() &&
           (!It->second.Unknown.empty() || !S->ConfigFormula || !sameFormula(*S->ConfigFormula, It->second));
  });
}

/// A site that a side changes, whose kernel a captured launch names by its demangled name, but whose
/// kernel's symbols named no captured launch: replaying as captured could hide the change.
Error untracedChange(const capture::Manifest &M, const inv::Inventory &Inv, const std::set<std::string> &Considered,
                     std::initializer_list<const SiteFormulas *> Sides) {
  for (const SiteFormulas *Side : Sides)
    for (const auto &[ID, F] : *Side) {
      const inv::LaunchSite *S = Inv.launchSite(ID);
      if (!S || Considered.count(ID) || !S->Kernel ||
          (F.Unknown.empty() && S->ConfigFormula && sameFormula(*S->ConfigFormula, F)))
        continue;
      for (const capture::Launch &L : M.Launches)
        if (verify::kernelMatches(*S->Kernel, L.Kernel, L.Name))
          return makeError("launch site " + ID + " changes, and kloop cannot tell which captured launches of " +
                           *S->Kernel + " it makes (the kernel's symbols name none of them)");
    }
  return Error::success();
}

} // namespace

Expected<ReplayConfigs> replayConfigs(const capture::Manifest &M, const std::vector<std::vector<uint8_t>> &Params,
                                      const inv::Inventory &Inv, const SiteFormulas &Incumbent,
                                      const SiteFormulas &Candidate) {
  ReplayConfigs Out;
  static const std::vector<uint8_t> NoParams;
  std::set<std::string> Considered; // the sites some captured launch's kernel symbol names
  for (size_t I = 0; I < M.Launches.size(); ++I) {
    const capture::Launch &L = M.Launches[I];
    std::vector<const inv::LaunchSite *> Sites = sitesOf(Inv, L.Kernel);
    for (const inv::LaunchSite *S : Sites)
      Considered.insert(S->ID);
    bool Base = changesAny(Incumbent, Sites), Cand = changesAny(Candidate, Sites);
    if (!Base && !Cand)
      continue;
    LaunchTrace T(L, I, I < Params.size() ? Params[I] : NoParams);
    T.trace(Sites);
    for (auto [Changes, Changed, Into, Side] : {std::tuple{Base, &Incumbent, &Out.Baseline, "incumbent"},
                                                std::tuple{Cand, &Candidate, &Out.Candidate, "candidate"}}) {
      if (!Changes)
        continue; // launched as captured
      Expected<std::optional<capture::LaunchAs>> C = T.side(*Changed, Side);
      if (!C)
        return C.takeError();
      if (*C)
        (*Into)[I] = **C;
    }
  }
  if (Error E = untracedChange(M, Inv, Considered, {&Incumbent, &Candidate}))
    return std::move(E);
  return Out;
}

Expected<std::vector<std::vector<uint8_t>>> paramBuffers(const std::string &Dir, const capture::Manifest &M) {
  std::vector<std::vector<uint8_t>> Out;
  for (const capture::Launch &L : M.Launches) {
    std::string Error;
    Out.emplace_back();
    if (!L.ParamBlob.empty() && !capture::readBlob(Dir, L.ParamBlob, M.Blobs, Out.back(), Error))
      return makeError(Error);
  }
  return Out;
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
    // Each placement is a group, as each timing round of a workload compare is: decide resamples
    // placements before launches, so the interval holds what placement changes (docs/decide.md).
    for (auto [Side, R] : {std::pair{&E.Baseline, &L.Baseline}, {&E.Candidate, &*L.Candidate}})
      for (size_t I = 0; I < R->TimesNs.size(); ++I) {
        if (R->TimesNs[I] == 0)
          return makeError("a replayed launch of " + E.Kernel + " took 0 ns (below the CUDA event timer's resolution)");
        decide::Sample S;
        S.DurationNs = double(R->TimesNs[I]);
        S.Group = I < R->Placements.size() ? static_cast<uint32_t>(R->Placements[I]) : 0;
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
                                           const CapturedOutputs *Outputs, bool Reconfigured) {
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
  if (!*R.CandidateMatch && Reconfigured)
    return fallback(firstMismatch(R) + ", under the launch configuration kloop evaluated for the candidate: the "
                                       "workload's runs decide");
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
