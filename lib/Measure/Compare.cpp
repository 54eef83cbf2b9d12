//===- Compare.cpp - Baseline against candidate, end to end ---------------===//
#include "kloop/Measure/Compare.h"
#include "kloop/Support/Error.h"
#include "kloop/Support/AtomicFile.h"
#include "llvm/Support/SHA256.h"

#include "kloop/Decide/DecisionJSON.h"
#include "kloop/Verify/AntiCheat.h"
#include "kloop/Verify/Compare.h"
#include "kloop/Verify/Protected.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include <chrono>
#include <map>
#include <set>
#include <thread>

using namespace llvm;
using nlohmann::json;

namespace kloop {
namespace measure {

/// The configured outputs in kloopVerify's terms.
static Expected<std::vector<verify::OutputSpec>> verifyOutputs(const WorkloadConfig &C) {
  std::vector<verify::OutputSpec> R;
  for (const OutputSpec &O : C.Outputs) {
    verify::OutputSpec V;
    V.Kernel = O.Kernel;
    V.Arg = O.Arg;
    Expected<verify::DType> T = verify::parseDType(O.DType);
    if (!T)
      return makeError(C.Path + ": outputs: " + toString(T.takeError()));
    V.Type = *T;
    V.Tol = O.Tol;
    R.push_back(V);
  }
  return R;
}

std::string targetKey(const WorkloadConfig &C, StringRef Name) {
  for (const std::string &T : C.Targets)
    if (Name.contains(T))
      return T;
  return Name.str();
}

/// SHA-256 over what a baseline build depends on, as far as the description
/// says: the workload description's path, the build command, working directory
/// and environment, and the sources and protected files (path, NUL, the file's
/// SHA-256, newline, in the config's order). The key of a cached build; a build
/// that reads other files must list them under `protected`.
static Expected<std::string> sourceDigest(const WorkloadConfig &C, StringRef Dir) {
  SHA256 H;
  auto Field = [&](StringRef Name, StringRef Value) {
    H.update(Name);
    H.update(StringRef("\0", 1));
    H.update(Value);
    H.update("\n");
  };
  Field("config", C.Path);
  Field("build.command", C.Build.Command);
  Field("build.cwd", C.Build.Cwd);
  for (const auto &[K, V] : C.Build.Env)
    Field("build.env." + K, V);
  for (const std::vector<std::string> *List : {&C.Sources, &C.Protected})
    for (const std::string &F : *List) {
      SmallString<256> P(Dir);
      sys::path::append(P, F);
      Expected<verify::FileDigest> D = verify::digestFile(P);
      if (!D)
        return D.takeError();
      H.update(F);
      H.update(StringRef("\0", 1));
      H.update(D->Sha256);
      H.update("\n");
    }
  return toHex(H.final(), /*LowerCase=*/true);
}

std::string buildStampPath(StringRef BuildDir) {
  SmallString<256> P(BuildDir);
  sys::path::append(P, ".kloop-build-ok");
  return P.str().str();
}

Error markBuildFinished(StringRef BuildDir, StringRef SourceDir) {
  std::string P = buildStampPath(BuildDir);
  return writeFileAtomically(P, (SourceDir + "\n").str());
}

bool isBuildFinished(StringRef BuildDir, StringRef SourceDir) {
  auto Buf = MemoryBuffer::getFile(buildStampPath(BuildDir), /*IsText=*/true);
  return Buf && (*Buf)->getBuffer().rtrim("\n") == SourceDir;
}

namespace {

double secondsSince(std::chrono::steady_clock::time_point T) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - T).count();
}

/// What each shape collected: output checks, determinism, timing samples.
struct ShapeRuns {
  std::vector<decide::SeedCheck> Checks;
  std::vector<decide::DeterminismCheck> Det;
  std::map<std::string, std::vector<decide::Sample>> BaseS, CandS;
};

/// One comparison of a baseline against a candidate (docs/measure.md, "kloop compare"): the
/// request checked, protected files, builds, per shape and seed the capture, determinism and
/// timing runs, then the decision. A step that returns false has finished Res (the candidate
/// is refused or rejected); an Error is a problem of kloop, the baseline or the description.
class Comparison {
public:
  Comparison(const WorkloadConfig &C, const CompareOptions &O, const ProgressFn &Progress)
      : C(C), O(O), Progress(Progress), Noted(C.Tracing), Base{"base", O.BaselineDir, O.WorkDir + "/build-base"},
        Cand{"cand", O.CandidateDir, O.WorkDir + "/build-cand"}, RunDir(O.WorkDir + "/runs") {}
  ~Comparison() { dropAhead(); }

  Expected<CompareResult> run() {
    if (Error E = checkRequest())
      return E;
    noteSettings();
    for (auto Step : {&Comparison::checkProtectedFiles, &Comparison::build, &Comparison::runAll}) {
      Expected<bool> Go = (this->*Step)();
      if (!Go)
        return Go.takeError();
      if (!*Go)
        return std::move(Res);
    }
    if (Error E = decideOnEvidence())
      return E;
    return std::move(Res);
  }

private:
  /// One side's directories.
  struct SideDirs {
    const char *Tag; // "base" / "cand"
    std::string SourceDir, BuildDir;
  };

  const WorkloadConfig &C;
  const CompareOptions &O;
  const ProgressFn &Progress;
  CompareResult Res;
  ProfileNotes Noted;
  SideDirs Base, Cand;
  std::string RunDir;
  std::vector<verify::OutputSpec> Outs;
  std::vector<const ShapeSpec *> Shapes;
  std::vector<unsigned> Seeds;
  std::vector<verify::FileDigest> CandDigests;
  std::vector<ShapeRuns> PerShape;
  InjectionSettings Timing, Capture, HashOnly;
  decide::DecisionThresholds Thresholds;
  GpuMonitor Gpu; // drains the GPU after a failed run (Runner.h)
  bool NvmlMissing = false;
  /// Verification runs made ahead, side by side (CompareOptions::VerifyJobs), by label. Only runs
  /// that ended Ok are kept; runOne takes its result from here instead of running it again.
  std::map<std::string, RunResult> Ahead;
  /// The labels of every run made side by side so far: a seed whose capture was batched is not batched
  /// again, so a run that failed there is made again alone (runOne).
  std::set<std::string> Batched;

  void say(const Twine &T) const {
    if (Progress)
      Progress(T.str());
  }
  bool refuseCandidate() {
    Res.Explanation = "refused: " + *Res.CandidateFailure;
    return false;
  }

  // --- the request -------------------------------------------------------------------

  Error checkRequest() {
    if (C.Outputs.empty())
      return makeError(C.Path + ": outputs: none declared; compare must verify the candidate's outputs (add the output "
                          "argument of each target kernel)");
    if (O.CuptiLib.empty() || O.WorkDir.empty() || O.BaselineDir.empty() || O.CandidateDir.empty())
      return makeError("compare: baseline, candidate, work directory and libkloop-cupti.so are required");
    if (O.VerifyJobs == 0)
      return makeError("compare: verification runs at a time must be at least 1");
    for (const std::string *D : {&O.BaselineDir, &O.CandidateDir})
      if (!sys::fs::is_directory(*D))
        return makeError("compare: source directory '" + *D + "' does not exist");
    Expected<std::vector<verify::OutputSpec>> V = verifyOutputs(C);
    if (!V)
      return V.takeError();
    Outs = std::move(*V);
    if (Error E = selectShapes())
      return E;
    if (Error E = selectSeeds())
      return E;
    PerShape.resize(Shapes.size());
    Thresholds = O.Thresholds;
    if (C.HeldOutSeeds == 0 || !O.IncludeHeldOut)
      Thresholds.RequireHeldOutSeed = false;
    setUpInjection();
    return Error::success();
  }

  Error selectShapes() {
    for (const std::string &N : O.Shapes) {
      const ShapeSpec *S = C.findShape(N);
      if (!S)
        return makeError(C.Path + ": no shape named '" + N + "'");
      if (S->HeldOut && !O.IncludeHeldOut)
        return makeError(C.Path + ": shape '" + N + "' is held out: a search step may not use it (only a final "
                                               "acceptance, without --search-only)");
      Shapes.push_back(S);
    }
    if (Shapes.empty())
      for (const ShapeSpec &S : C.Shapes)
        if (O.IncludeHeldOut || !S.HeldOut)
          Shapes.push_back(&S);
    return Error::success();
  }

  Error selectSeeds() {
    Seeds = C.seedList(O.IncludeHeldOut);
    if (O.MaxSeeds) {
      if (O.IncludeHeldOut)
        return makeError("compare: screening (a seed limit) cannot be used for a final acceptance with held-out inputs");
      if (Seeds.size() > O.MaxSeeds)
        Seeds.resize(O.MaxSeeds);
    }
    if (O.TimingFirst && O.IncludeHeldOut)
      return makeError("compare: timing first (verification only after the timing does not reject the candidate) "
                 "screens a search step; a final acceptance with held-out inputs verifies every run in the usual "
                 "order");
    return Error::success();
  }

  /// The declared outputs (only the write-only ones with \p WriteOnly) as libkloop-cupti.so's
  /// parameter list, "KERNEL:ARG,..." (KLOOP_CUPTI_POISON_ARGS, KLOOP_CUPTI_DUMP_ARGS).
  std::string outputArgs(bool WriteOnly) const {
    std::vector<std::string> Args;
    for (const OutputSpec &Out : C.Outputs)
      if (!WriteOnly || Out.Access == OutputAccess::Write)
        Args.push_back(Out.Kernel + ":" + std::to_string(Out.Arg));
    return join(Args, ",");
  }

  /// Timing runs, capture runs (targets dumped, write-only outputs poisoned) and hash-only runs.
  void setUpInjection() {
    Timing.LibraryPath = O.CuptiLib;
    applyL2Policy(Timing, C.L2);
    applyKernelTrace(Timing, C.Tracing);
    Capture = Timing;
    Capture.Targets = C.Targets;
    Capture.Dump = true;
    Capture.Poison = "nan";
    // Read-write outputs are not poisoned: the kernel would compute from the poison on both sides
    // (OutputAccess). They are still captured after each launch and compared. With none left, the
    // empty list poisons nothing.
    Capture.Extra["KLOOP_CUPTI_POISON_ARGS"] = outputArgs(/*WriteOnly=*/true);
    // Only the declared outputs are dumped: the other parameters (inputs, workspaces) are compared by
    // hash (verify::compareProfiles), so dumping them cost only time and disk (histogram's 256 MiB
    // input on every launch of every capture run).
    if (!C.Outputs.empty())
      Capture.Extra["KLOOP_CUPTI_DUMP_ARGS"] = outputArgs(/*WriteOnly=*/false);
    HashOnly = Capture;
    HashOnly.Dump = false;
  }

  void noteSettings() {
    Res.Notes.push_back(
        (Twine("l2: ") + toString(C.L2) +
         (C.L2 == L2Policy::Rotate  ? " (the workload rotates buffers)"
          : C.L2 == L2Policy::Flush ? " (libkloop-cupti.so clears L2 before every launch)"
                                    : " (nothing defeats L2 residency between launches; timings may include L2 hits)"))
            .str());
    Res.Notes.push_back(tracingNote(C.Tracing));
    unsigned Pads = placementPadChoices(C.PlacementPadMiB);
    Res.Notes.push_back(Pads ? "placement: each timing round shifts both sides' device allocations by one pad of 0-" +
                                        std::to_string(2 * (Pads - 1)) +
                                        " MiB in 2 MiB steps (placement_pad_mib; KLOOP_CUPTI_PLACEMENT_PAD)"
                                  : "placement: not varied (placement_pad_mib: " + std::to_string(C.PlacementPadMiB) +
                                        "); every timing run's allocations land where the program puts them");
  }

  // --- 1. protected files, 2. builds -------------------------------------------------

  /// Protected files: identical on both sides before anything runs. A candidate that edits the
  /// harness or timing code is refused before it costs any GPU time.
  Expected<bool> checkProtectedFiles() {
    for (const std::string &P : C.Protected) {
      SmallString<256> B(O.BaselineDir), Cd(O.CandidateDir);
      sys::path::append(B, P);
      sys::path::append(Cd, P);
      Expected<verify::FileDigest> DB = verify::digestFile(B);
      if (!DB)
        return makeError("baseline protected file: " + toString(DB.takeError()));
      Expected<verify::FileDigest> DC = verify::digestFile(Cd);
      if (!DC) {
        Res.ProtectedChanges.push_back("protected file " + P + " is missing or unreadable in the candidate: " +
                                       toString(DC.takeError()));
        continue;
      }
      if (DB->Sha256 != DC->Sha256)
        Res.ProtectedChanges.push_back("protected file " + P + " differs from the baseline (sha256 " +
                                       DB->Sha256.substr(0, 12) + ".. vs " + DC->Sha256.substr(0, 12) + "..)");
      CandDigests.push_back(*DC);
    }
    if (Res.ProtectedChanges.empty())
      return true;
    Res.Explanation = "refused: " + join(Res.ProtectedChanges, "; ");
    return false;
  }

  /// Builds both sides. A cached baseline build (same sources and protected files) is reused, and
  /// so is a finished candidate build in CandidateBuildDir.
  Expected<bool> build() {
    std::string BaseStamp;
    if (!O.BaselineBuildCache.empty()) {
      Expected<std::string> Digest = sourceDigest(C, O.BaselineDir);
      if (!Digest)
        return makeError("baseline: " + toString(Digest.takeError()));
      Base.BuildDir = O.BaselineBuildCache + "/" + Digest->substr(0, 16);
      BaseStamp = buildStampPath(Base.BuildDir);
    }
    auto TBuild = std::chrono::steady_clock::now();
    if (!O.CandidateBuildDir.empty() && isBuildFinished(O.CandidateBuildDir, O.CandidateDir))
      Cand.BuildDir = O.CandidateBuildDir;
    for (SideDirs *S : {&Base, &Cand}) {
      if (S == &Base && !BaseStamp.empty() && sys::fs::exists(BaseStamp)) {
        say("base build reused (" + Base.BuildDir + ")");
        continue;
      }
      if (S == &Cand && Cand.BuildDir == O.CandidateBuildDir) {
        say("cand build reused (" + Cand.BuildDir + ")");
        continue;
      }
      BuildRequest B;
      B.SourceDir = S->SourceDir;
      B.BuildDir = S->BuildDir;
      B.LogDir = O.WorkDir + "/logs";
      B.Label = std::string("build-") + S->Tag;
      if (Error E = buildWorkload(C, B)) {
        if (S == &Base)
          return makeError("baseline: " + toString(std::move(E)));
        Res.CandidateFailure = "candidate " + toString(std::move(E));
        Res.BuildSeconds = secondsSince(TBuild);
        return refuseCandidate();
      }
      // The cache is keyed by content, so any stamp reuses it (not only one naming this source directory);
      // a stamp that cannot be written only costs a rebuild next time.
      if (S == &Base && !BaseStamp.empty())
        consumeError(markBuildFinished(Base.BuildDir, O.BaselineDir));
      say(std::string(S->Tag) + " build ok");
    }
    Res.BuildSeconds = secondsSince(TBuild);
    return true;
  }

  // --- 3. runs -------------------------------------------------------------------------

  /// The run of side \p S for shape \p Sh and seed \p Seed.
  Expected<RunRequest> runRequest(const SideDirs &S, const ShapeSpec &Sh, unsigned Seed, const std::string &Label,
                                  std::optional<InjectionSettings> Inj) {
    PlaceholderValues V;
    V.BuildDir = S.BuildDir;
    V.SourceDir = S.SourceDir;
    V.Iters = C.Iters;
    V.Seed = Seed;
    V.Args = Sh.Args;
    Expected<std::string> Cmd = expandCommand(C.Run.Command, V, "run.command");
    if (!Cmd)
      return Cmd.takeError();
    Expected<std::string> Cwd = expandPath(C.Run.Cwd, V, "run.cwd");
    if (!Cwd)
      return Cwd.takeError();
    SmallString<256> Dir(*Cwd);
    if (!sys::path::is_absolute(Dir))
      sys::path::make_absolute(S.SourceDir, Dir);
    sys::path::remove_dots(Dir, true);
    RunRequest R;
    R.Command = *Cmd;
    R.Cwd = Dir.str().str();
    R.Env = C.Run.Env;
    R.TimeoutS = C.Run.TimeoutS;
    R.OutDir = RunDir;
    R.Label = Label;
    R.Inject = Inj;
    R.Gpu = &Gpu;
    R.DrainTimeoutS = C.Run.DrainTimeoutS;
    return R;
  }

  /// Runs one invocation of side S; returns the result, an Error for kloop / baseline
  /// problems, and sets CandidateFailure (returning no result) for candidate problems.
  Expected<std::optional<RunResult>> runOne(const SideDirs &S, const ShapeSpec &Sh, unsigned Seed,
                                            const std::string &Label, std::optional<InjectionSettings> Inj) {
    if (auto It = Ahead.find(Label); It != Ahead.end()) {
      RunResult Made = std::move(It->second); // counted in Res.Runs when it started
      Ahead.erase(It);
      return succeeded(std::move(Made));
    }
    Expected<RunRequest> R = runRequest(S, Sh, Seed, Label, Inj);
    if (!R)
      return R.takeError();
    ++Res.Runs;
    auto TRun = std::chrono::steady_clock::now();
    Expected<RunResult> RR = runIsolated(*R);
    (Inj && !Inj->Targets.empty() ? Res.VerifySeconds : Res.TimingSeconds) += secondsSince(TRun);
    if (!RR)
      return RR.takeError();
    if (RR->ok())
      return succeeded(std::move(*RR));
    std::string Drained = drainNote(Label, *RR);
    if (!Drained.empty())
      Res.Notes.push_back(Drained);
    if (saysNoCudaDevice(RR->StderrTail))
      return make_error<NoGpuError>("the workload reports no CUDA device: " + RR->StderrTail);
    std::string Msg = "run " + Label + " " + RR->describe() + " (command: " + R->Command +
                      "; logs: " + RR->StderrPath + ")" + (RR->StderrTail.empty() ? "" : ": " + RR->StderrTail);
    if (&S == &Base)
      return makeError("baseline " + Msg + (Drained.empty() ? "" : "\n" + Drained));
    Res.CandidateFailure = "candidate " + Msg;
    return std::optional<RunResult>();
  }

  /// A run that ended Ok: its profile's notes, and it is the run's result.
  std::optional<RunResult> succeeded(RunResult RR) {
    NvmlMissing |= !RR.Prof->Nvml;
    Noted.check(*RR.Prof, Res.Notes);
    return RR;
  }

  std::string stem(size_t ShI, unsigned Seed) const { return Shapes[ShI]->Name + "-s" + std::to_string(Seed); }

  /// The label of side \p S's run \p Suffix ("cap", "det", "t0"...) for shape \p ShI and seed \p Seed.
  std::string runLabel(const SideDirs &S, size_t ShI, unsigned Seed, StringRef Suffix) const {
    return std::string(S.Tag) + "-" + stem(ShI, Seed) + "-" + Suffix.str();
  }

  /// The verification runs of (shape \p ShI, seed index \p SI), in verifySeed's order: the capture
  /// pair and, on the first seed, the determinism pair.
  Expected<std::vector<RunRequest>> verifyRequests(size_t ShI, size_t SI) {
    std::vector<RunRequest> Reqs;
    unsigned Seed = Seeds[SI];
    for (auto [Suffix, Inj] : {std::pair{"cap", &Capture}, std::pair{"det", &HashOnly}}) {
      if (Inj == &HashOnly && SI != 0)
        continue;
      for (const SideDirs *S : {&Base, &Cand}) {
        Expected<RunRequest> R = runRequest(*S, *Shapes[ShI], Seed, runLabel(*S, ShI, Seed, Suffix), *Inj);
        if (!R)
          return R.takeError();
        R->Gpu = nullptr; // no drain between runs that share the GPU; a failed one is run again alone
        Reqs.push_back(std::move(*R));
      }
    }
    return Reqs;
  }

  /// Makes the verification runs of (\p ShI, \p SI) and of the seeds after it (all shapes, in
  /// forEachSeed's order) side by side, O.VerifyJobs runs (the last seed's may be cut; its rest is made
  /// one at a time by runOne), and keeps the runs that ended Ok in Ahead. They are never timing runs:
  /// every one has ended when this returns. A run that did not end Ok is left out, so runOne makes it
  /// again, alone; its label stays in Batched, so it is never batched again.
  Error runAhead(size_t ShI, size_t SI) {
    dropAhead();
    std::vector<RunRequest> Reqs;
    for (; ShI < Shapes.size() && Reqs.size() < O.VerifyJobs; SI = 0, ++ShI)
      for (; SI < Seeds.size() && Reqs.size() < O.VerifyJobs; ++SI) {
        Expected<std::vector<RunRequest>> More = verifyRequests(ShI, SI);
        if (!More)
          return More.takeError();
        for (RunRequest &R : *More)
          if (Reqs.size() < O.VerifyJobs)
            Reqs.push_back(std::move(R));
      }
    for (const RunRequest &R : Reqs)
      Batched.insert(R.Label);
    return runSideBySide(Reqs);
  }

  /// Runs \p Reqs at the same time. When one fails, the GPU must drain (drainAfter) before anything else
  /// runs: a run made again alone would take what the failed one left for foreign load.
  Error runSideBySide(std::vector<RunRequest> &Reqs) {
    std::vector<std::optional<RunResult>> Got(Reqs.size());
    std::vector<std::string> Failed(Reqs.size());
    std::optional<GpuSnapshot> Before;
    if (Expected<GpuSnapshot> S = Gpu.snapshot())
      Before = std::move(*S);
    else
      consumeError(S.takeError()); // no NVML: a failed batch waits the runner's fixed time instead
    Res.Runs += Reqs.size();
    auto T = std::chrono::steady_clock::now();
    {
      std::vector<std::thread> Threads;
      for (size_t I = 0; I < Reqs.size(); ++I)
        Threads.emplace_back([&, I] {
          Expected<RunResult> R = runIsolated(Reqs[I]);
          if (!R)
            Failed[I] = toString(R.takeError());
          else if (!R->ok())
            Failed[I] = R->describe();
          else
            Got[I] = std::move(*R);
        });
      for (std::thread &Th : Threads)
        Th.join();
    }
    std::string FirstFailed;
    for (size_t I = 0; I < Reqs.size(); ++I) {
      if (Got[I]) {
        if (Got[I]->Prof)
          Gpu.watch(Got[I]->Prof->Device.PciBusId); // as runIsolated does after an Ok run
        Ahead.emplace(Reqs[I].Label, std::move(*Got[I]));
        continue;
      }
      if (FirstFailed.empty())
        FirstFailed = "run " + Reqs[I].Label + " " + Failed[I] + " beside " + std::to_string(Reqs.size() - 1) +
                      " other run(s)";
      Res.Notes.push_back("verification run " + Reqs[I].Label + " failed beside " + std::to_string(Reqs.size() - 1) +
                          " other run(s) (" + Failed[I] + "); it is made again alone if still needed");
    }
    if (!FirstFailed.empty() && !Before) // NVML cannot say when the GPU is clear (Runner.h)
      std::this_thread::sleep_for(std::chrono::duration<double>(UnwatchedSettleS));
    Error Drained = FirstFailed.empty() || !Before ? Error::success()
                                                   : drainAfter(Gpu, *Before, C.Run.DrainTimeoutS, FirstFailed);
    Res.VerifySeconds += secondsSince(T);
    return Drained;
  }

  /// Forgets the runs made ahead, and their dumps.
  void dropAhead() {
    for (auto &KV : Ahead)
      if (KV.second.Prof)
        removeDumps(*KV.second.Prof);
    Ahead.clear();
  }

  static void removeDumps(const verify::Profile &P) {
    for (const verify::CaptureRecord &Cap : P.Captures)
      if (!Cap.DumpPath.empty())
        sys::fs::remove(Cap.DumpPath);
  }

  /// A run of each side that succeeded.
  struct RunPair {
    RunResult Base, Cand;
  };

  /// One run of each side, baseline first, labelled `base-<shape>-s<seed>-<Suffix>` and `cand-...`.
  /// No pair: the candidate failed (CandidateFailure is set).
  Expected<std::optional<RunPair>> runBoth(size_t ShI, unsigned Seed, StringRef Suffix, const InjectionSettings &Inj) {
    Expected<std::optional<RunResult>> B = runOne(Base, *Shapes[ShI], Seed, runLabel(Base, ShI, Seed, Suffix), Inj);
    if (!B)
      return B.takeError();
    Expected<std::optional<RunResult>> Cd = runOne(Cand, *Shapes[ShI], Seed, runLabel(Cand, ShI, Seed, Suffix), Inj);
    if (!Cd)
      return Cd.takeError();
    if (!*Cd)
      return std::nullopt;
    return RunPair{std::move(**B), std::move(**Cd)};
  }

  /// Steps 1 and 2 of (shape, seed): capture runs and, on the first seed, the
  /// determinism runs. False: the candidate failed (CandidateFailure is set).
  Expected<bool> verifySeed(size_t ShI, size_t SI) {
    unsigned Seed = Seeds[SI];
    if (O.VerifyJobs > 1 && !Batched.count(runLabel(Base, ShI, Seed, "cap")))
      if (Error E = runAhead(ShI, SI))
        return E;
    // 1. Capture runs, A then B.
    Expected<std::optional<RunPair>> Cap = runBoth(ShI, Seed, "cap", Capture);
    if (!Cap)
      return Cap.takeError();
    if (!*Cap)
      return false;
    const verify::Profile &BA = *(*Cap)->Base.Prof, &CA = *(*Cap)->Cand.Prof;
    if (Error E = checkOutputs(ShI, Seed, BA, CA))
      return E;
    // 2. Determinism, on the first seed of each shape.
    if (SI == 0) {
      Expected<bool> Ok = checkDeterminism(ShI, Seed, BA, CA);
      if (!Ok || !*Ok)
        return Ok;
    }
    // Dumps can be large: drop them once compared.
    for (const verify::Profile *P : {&BA, &CA})
      removeDumps(*P);
    return true;
  }

  /// The candidate's captured outputs against the baseline's (kloopVerify compareProfiles).
  Error checkOutputs(size_t ShI, unsigned Seed, const verify::Profile &BA, const verify::Profile &CA) {
    const ShapeSpec *Sh = Shapes[ShI];
    bool HeldOutSeed = Seed >= C.Seeds;
    Expected<verify::CompareReport> Rep = verify::compareProfiles(BA, CA, Outs, C.Targets);
    if (!Rep)
      return makeError("shape " + Sh->Name + " seed " + Twine(Seed) + ": " + toString(Rep.takeError()));
    decide::SeedCheck SC;
    SC.Seed = Seed;
    SC.HeldOut = HeldOutSeed;
    SC.Matched = Rep->Passed;
    SC.Detail = Rep->Explanation;
    PerShape[ShI].Checks.push_back(SC);
    Res.Seeds.push_back({Sh->Name, Seed, HeldOutSeed || Sh->HeldOut, Rep->Passed, Rep->Explanation});
    say("shape " + Sh->Name + " seed " + Twine(Seed) + ": " + Rep->Explanation);
    return Error::success();
  }

  /// A second, hash-only run of each side: is each side deterministic? False: the candidate failed.
  Expected<bool> checkDeterminism(size_t ShI, unsigned Seed, const verify::Profile &BA, const verify::Profile &CA) {
    Expected<std::optional<RunPair>> Det = runBoth(ShI, Seed, "det", HashOnly);
    if (!Det)
      return Det.takeError();
    if (!*Det)
      return false;
    auto DB = verify::checkDeterminism(BA, *(*Det)->Base.Prof, Outs);
    if (!DB)
      return makeError("shape " + Shapes[ShI]->Name + " baseline determinism: " + toString(DB.takeError()));
    auto DC = verify::checkDeterminism(CA, *(*Det)->Cand.Prof, Outs);
    std::vector<verify::OutputDeterminism> DCv;
    if (DC)
      DCv = std::move(*DC);
    else
      consumeError(DC.takeError()); // no capture in the candidate: not deterministic
    for (const verify::DeterminismComparison &D : verify::compareDeterminism(*DB, DCv))
      PerShape[ShI].Det.push_back({D.Output, D.BaselineDeterministic, D.CandidateDeterministic});
    return true;
  }

  /// Step 3 of (shape, seed): the timing rounds A B. False: the candidate failed.
  Expected<bool> timeSeed(size_t ShI, size_t SI) {
    const ShapeSpec *Sh = Shapes[ShI];
    unsigned Seed = Seeds[SI];
    for (unsigned Round = 0; Round < O.Rounds; ++Round) {
      // Both sides of a round at one placement, each round at another (placementPadBytes).
      InjectionSettings Placed = Timing;
      applyPlacementPad(Placed, placementPadBytes(C.PlacementPadMiB, ShI, Seed, Round));
      for (SideDirs *S : {&Base, &Cand}) {
        auto R = runOne(*S, *Sh, Seed, runLabel(*S, ShI, Seed, "t" + std::to_string(Round)), Placed);
        if (!R)
          return R.takeError();
        if (!*R)
          return false;
        auto &Into = S == &Base ? PerShape[ShI].BaseS : PerShape[ShI].CandS;
        for (auto &[Name, Samples] : runSamples(C, **R, O.Warmup)) {
          auto &V = Into[targetKey(C, Name)];
          for (decide::Sample &X : Samples)
            X.Group = static_cast<uint32_t>(SI * O.Rounds + Round); // the bootstrap's first stage
          V.insert(V.end(), Samples.begin(), Samples.end());
        }
      }
    }
    say("shape " + Sh->Name + " seed " + Twine(Seed) + ": " + Twine(O.Rounds) + " timing rounds done");
    return true;
  }

  /// Every timed shape must have launched a target kernel.
  Error checkTimed(size_t ShI) const {
    if (PerShape[ShI].BaseS.empty() && PerShape[ShI].CandS.empty())
      return makeError("shape " + Shapes[ShI]->Name + ": no launch of a target kernel (" + join(C.Targets, ", ") +
                 ") in the timing runs");
    return Error::success();
  }

  using SeedStep = Expected<bool> (Comparison::*)(size_t, size_t);

  /// For every shape, \p Steps on each seed in turn; then, with \p Timed, checkTimed.
  /// False: the candidate failed (refused).
  Expected<bool> forEachSeed(std::initializer_list<SeedStep> Steps, bool Timed) {
    for (size_t ShI = 0; ShI < Shapes.size(); ++ShI) {
      for (size_t SI = 0; SI < Seeds.size(); ++SI)
        for (SeedStep Step : Steps) {
          Expected<bool> Ok = (this->*Step)(ShI, SI);
          if (!Ok)
            return Ok.takeError();
          if (!*Ok)
            return refuseCandidate();
        }
      if (Timed)
        if (Error E = checkTimed(ShI))
          return E;
    }
    return true;
  }

  /// Per (shape, seed): capture, determinism, timing; or, timing first, every timing run, a
  /// screen on timing alone, and verification only when the timing does not reject.
  Expected<bool> runAll() {
    if (!O.TimingFirst)
      return forEachSeed({&Comparison::verifySeed, &Comparison::timeSeed}, /*Timed=*/true);
    Res.TimingFirst = true;
    Expected<bool> Ok = forEachSeed({&Comparison::timeSeed}, /*Timed=*/true);
    if (!Ok || !*Ok)
      return Ok;
    Ok = screenTiming();
    if (!Ok || !*Ok)
      return Ok;
    // Timing does not reject it: capture and determinism runs, as always.
    return forEachSeed({&Comparison::verifySeed}, /*Timed=*/false);
  }

  /// The decision on timing alone; false when it rejects (verification skipped, Res finished).
  Expected<bool> screenTiming() {
    auto TScreen = std::chrono::steady_clock::now();
    std::vector<decide::ShapeEvidence> TimingEvidence = gather();
    Expected<TimingScreen> Screen = screenOnTiming(TimingEvidence, Thresholds);
    Res.DecideSeconds += secondsSince(TScreen);
    if (!Screen)
      return Screen.takeError();
    if (!Screen->Rejects)
      return true;
    if (Error E = recheckProtected())
      return E;
    recordTiming(TimingEvidence);
    Res.VerificationSkipped = true;
    Res.VerificationSkippedReason =
        (Twine("the timing rejects the candidate on ") + Twine(Screen->Rejections.size()) + " of " +
         Twine(Screen->Verdict.Shapes.size()) + " kernel/shape pairs, and verifying its outputs cannot change a rejection")
            .str();
    Res.Verdict = std::move(Screen->Verdict);
    std::string Why = "rejected: the timing rejects the candidate, so output verification was skipped (it "
                      "cannot change a rejection): " +
                      join(Screen->Rejections, " | ");
    Res.Explanation =
        Res.ProtectedChanges.empty() ? Why : "refused: " + join(Res.ProtectedChanges, "; ") + "; " + Why;
    say("verification skipped: " + Res.VerificationSkippedReason);
    return false;
  }

  // --- 4. decision ---------------------------------------------------------------------

  /// The evidence per kernel and shape, in shape order, then kernel order.
  std::vector<decide::ShapeEvidence> gather() {
    std::vector<decide::ShapeEvidence> Evidence;
    for (size_t ShI = 0; ShI < Shapes.size(); ++ShI) {
      ShapeRuns &SR = PerShape[ShI];
      std::set<std::string> Kernels;
      for (auto &KV : SR.BaseS)
        Kernels.insert(KV.first);
      for (auto &KV : SR.CandS)
        Kernels.insert(KV.first);
      for (const std::string &K : Kernels) {
        decide::ShapeEvidence E;
        E.Kernel = K;
        E.Shape = Shapes[ShI]->Name;
        E.HeldOutShape = Shapes[ShI]->HeldOut;
        E.Baseline = SR.BaseS[K];
        E.Candidate = SR.CandS[K];
        E.Seeds = SR.Checks;
        E.Determinism = SR.Det;
        Evidence.push_back(std::move(E));
      }
    }
    return Evidence;
  }

  /// Counts the discarded samples of \p Evidence and keeps its timed launches in Res.Timing.
  void recordTiming(ArrayRef<decide::ShapeEvidence> Evidence) {
    Res.Timing.clear();
    for (const decide::ShapeEvidence &E : Evidence) {
      decide::ShapeEvidence T;
      T.Kernel = E.Kernel;
      T.Shape = E.Shape;
      T.HeldOutShape = E.HeldOutShape;
      T.Baseline = E.Baseline;
      T.Candidate = E.Candidate;
      Res.Timing.push_back(std::move(T));
    }
    Res.ThrottledDiscarded = Res.ForeignDiscarded = 0;
    for (const decide::ShapeEvidence &E : Evidence)
      for (const std::vector<decide::Sample> *Side : {&E.Baseline, &E.Candidate}) {
        decide::FilteredSamples F = decide::filterSamples(*Side);
        Res.ThrottledDiscarded += F.DiscardedThrottled;
        Res.ForeignDiscarded += F.DiscardedForeign;
      }
  }

  /// Protected files must not have changed while the candidate built and ran.
  Error recheckProtected() {
    if (!CandDigests.empty()) {
      Expected<std::vector<verify::ProtectedChange>> Ch = verify::checkProtectedFiles(CandDigests);
      if (!Ch)
        return Ch.takeError();
      for (const verify::ProtectedChange &P : *Ch)
        Res.ProtectedChanges.push_back(P.Message + " while the candidate was built and run");
    }
    if (NvmlMissing)
      Res.Notes.push_back("NVML was unavailable in at least one run: throttling was not checked there");
    return Error::success();
  }

  /// kloopDecide's decideAll on every kernel and shape; a protected file that changed refuses.
  Error decideOnEvidence() {
    if (Error E = recheckProtected())
      return E;
    std::vector<decide::ShapeEvidence> Evidence = gather();
    recordTiming(Evidence);
    auto TDecide = std::chrono::steady_clock::now();
    Expected<decide::CombinedVerdict> V = decide::decideAll(Evidence, Thresholds);
    Res.DecideSeconds += secondsSince(TDecide);
    if (!V)
      return V.takeError();
    Res.Verdict = std::move(*V);
    Res.Accepted = Res.Verdict->Outcome == decide::Verdict::Accepted && Res.ProtectedChanges.empty();
    Res.Explanation = Res.Verdict->Explanation;
    if (!Res.ProtectedChanges.empty())
      Res.Explanation = "refused: " + join(Res.ProtectedChanges, "; ") +
                        (Res.Verdict->Outcome == decide::Verdict::Accepted ? "" : "; " + Res.Verdict->Explanation);
    return Error::success();
  }
};

} // namespace

Expected<CompareResult> compareWorkloads(const WorkloadConfig &C, const CompareOptions &O,
                                         const ProgressFn &Progress) {
  return Comparison(C, O, Progress).run();
}

Expected<TimingScreen> screenOnTiming(ArrayRef<decide::ShapeEvidence> Timing, const decide::DecisionThresholds &T) {
  std::vector<decide::ShapeEvidence> E(Timing.begin(), Timing.end());
  for (decide::ShapeEvidence &X : E) {
    X.Seeds.clear();
    X.Determinism.clear();
  }
  Expected<decide::CombinedVerdict> V = decide::decideAll(E, T);
  if (!V)
    return V.takeError();
  TimingScreen S;
  for (const decide::ShapeVerdict &SV : V->Shapes) {
    // Speed and tail are judged only with enough samples (then Speedup is set).
    if (!SV.Speedup || (SV.SpeedupOk && SV.TailOk))
      continue;
    // Reasons are in rule order: speed (rule 2), then tail (rule 3), then the
    // output and determinism reasons this evidence cannot satisfy.
    size_t NPerf = size_t(!SV.SpeedupOk) + size_t(!SV.TailOk);
    std::vector<std::string> Perf(SV.Reasons.begin(),
                                  SV.Reasons.begin() + std::min(NPerf, SV.Reasons.size()));
    S.Rejections.push_back("kernel " + SV.Kernel + " shape " + SV.Shape + (SV.HeldOutShape ? " (held out)" : "") +
                           ": " + join(Perf, "; "));
  }
  S.Rejects = !S.Rejections.empty();
  S.Verdict = std::move(*V);
  return S;
}

json toJSON(const CompareResult &R) {
  json J;
  J["schema"] = "kloop-compare/1";
  J["accepted"] = R.Accepted;
  J["explanation"] = R.Explanation;
  J["verdict"] = R.Verdict ? decide::toJSON(*R.Verdict) : json(nullptr);
  J["protected_changes"] = R.ProtectedChanges;
  J["candidate_failure"] = R.CandidateFailure ? json(*R.CandidateFailure) : json(nullptr);
  J["throttled_discarded"] = R.ThrottledDiscarded;
  J["foreign_discarded"] = R.ForeignDiscarded;
  J["time_s"] = {{"build", R.BuildSeconds},
                 {"verify_runs", R.VerifySeconds},
                 {"timing_runs", R.TimingSeconds},
                 {"decide", R.DecideSeconds}};
  J["runs"] = R.Runs;
  J["timing_first"] = R.TimingFirst;
  J["verification_skipped"] = R.VerificationSkipped;
  J["verification_skipped_reason"] =
      R.VerificationSkipped ? json(R.VerificationSkippedReason) : json(nullptr);
  J["notes"] = R.Notes;
  J["seeds"] = json::array();
  for (const auto &S : R.Seeds)
    J["seeds"].push_back({{"shape", S.Shape},
                          {"seed", S.Seed},
                          {"held_out", S.HeldOut},
                          {"matched", S.Matched},
                          {"explanation", S.Explanation}});
  return J;
}

} // namespace measure
} // namespace kloop
