//===- Stages.cpp - extract and apply in process, build, compare ----------===//
#include "kloop/Optimize/Stages.h"
#include "kloop/Support/Error.h"
#include "Evidence.h"
#include "ReplayStage.h"
#include "kloop/Decide/DecisionJSON.h"
#include "kloop/Edit/ApplyFile.h"
#include "kloop/Frontend/Preamble.h"
#include "kloop/Inventory/Extract.h"
#include "kloop/Inventory/ExtractCache.h"
#include "kloop/Measure/Compare.h"
#include "kloop/Measure/KernelProfile.h"
#include "kloop/Measure/Runner.h"
#include "kloop/Measure/Measure.h"
#include "kloop/Propose/CommandProposer.h"
#include "kloop/Support/Diff.h"
#include "kloop/Support/Path.h"
#include "kloop/Support/Ptxas.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <chrono>
#include <map>
#include <mutex>
#include <optional>

using json = nlohmann::json;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;

namespace kloop {
namespace optimize {

namespace {
class ProcessStages : public Stages {
public:
  ProcessStages(const measure::WorkloadConfig &C, ProcessStagesOptions Opts)
      : C(C), O(std::move(Opts)), Replay(C, {O.ReplayWorker, O.ReplayWorkerProblem, O.CuptiLib, O.Rounds, O.Ptxas}) {}

  Expected<inv::Inventory> extract() override {
    std::unique_ptr<ExtractCache> Cache;
    if (std::string Dir = defaultExtractCacheDir(); !Dir.empty())
      Cache = std::make_unique<ExtractCache>(Dir, executableId());
    ExtractOptions EO;
    EO.Root = C.Dir;
    EO.Cache = Cache.get();
    Expected<Extraction> E = extractInventory(frontendOptions(C.Dir), EO);
    if (!E)
      return E.takeError();
    if (Error Lost = requireAllParsed(*E))
      return Lost;
    return std::move(E->Inventory);
  }

  Expected<std::string> copySources(StringRef From, StringRef Dir) override {
    // The copy keeps the layout around the source directory that sources and
    // protected files reach with "..": Dir/<up-levels...>/<leaf dirs>.
    std::vector<std::string> Rel = copiedFiles();
    llvm::SmallString<256> Root(From);
    std::vector<std::string> Leaf;
    for (unsigned I = 0, Up = upLevels(); I < Up; ++I) {
      Leaf.insert(Leaf.begin(), llvm::sys::path::filename(Root).str());
      Root.resize(llvm::sys::path::parent_path(Root).size()); // a prefix: assigning it to Root itself asserted
    }
    llvm::SmallString<256> Dest(Dir);
    for (const std::string &L : Leaf)
      llvm::sys::path::append(Dest, L);
    forget(Dir);
    if (llvm::sys::fs::exists(Dir))
      if (std::error_code EC = llvm::sys::fs::remove_directories(Dir))
        return makeError("cannot clear " + Dir + ": " + EC.message());
    if (std::error_code EC = llvm::sys::fs::create_directories(Dest))
      return makeError("cannot create " + Dest + ": " + EC.message());
    // Regular files at the top of the source directory, then every named file.
    std::error_code EC;
    for (llvm::sys::fs::directory_iterator I(From, EC), E; I != E && !EC; I.increment(EC)) {
      if (I->type() != llvm::sys::fs::file_type::regular_file)
        continue;
      llvm::SmallString<256> T(Dest);
      llvm::sys::path::append(T, llvm::sys::path::filename(I->path()));
      if (std::error_code CE = llvm::sys::fs::copy_file(I->path(), T))
        return makeError("cannot copy " + I->path() + ": " + CE.message());
    }
    if (EC)
      return makeError("cannot list " + From + ": " + EC.message());
    for (const std::string &R : Rel) {
      llvm::SmallString<256> S(From), T(Dest);
      llvm::sys::path::append(S, R);
      llvm::sys::path::append(T, R);
      llvm::sys::path::remove_dots(T, true);
      llvm::sys::fs::create_directories(llvm::sys::path::parent_path(T));
      if (std::error_code CE = llvm::sys::fs::copy_file(S, T))
        return makeError("cannot copy " + S + " (named in " + C.Path + "): " + CE.message());
    }
    return std::string(Dest);
  }

  Expected<ApplyOutcome> apply(StringRef ProposalFile, StringRef SourceDir, StringRef From) override {
    if (!O.ApplyCommand.empty())
      return applyByCommand(ProposalFile, SourceDir);
    // Parsed in From, which every candidate of an incumbent is copied from, so that their parses
    // share the run's preambles; the changes are written to the copy.
    keepPreamblesOf(From);
    ApplyOptions AO;
    AO.Root = From.str();
    AO.Preambles = &Preambles;
    Expected<ProposalApplication> A = applyProposalFile(ProposalFile, frontendOptions(From), AO, /*InPlace=*/false);
    if (A && !A->Refused && !A->Unchanged) {
      if (std::optional<Refusal> Outside = mapIntoCopy(A->Result.Changes, From, SourceDir)) {
        A->Result.Refusals.push_back(std::move(*Outside));
        A->Refused = true;
      } else if (Error E = writeChangesInPlace(A->Result.Changes)) {
        return E;
      } else {
        A->Written = true;
      }
    }
    ApplyOutcome Out;
    if (!A) {
      // A crash is this candidate's failure; any other error concerns every candidate and ends the run.
      Error Rest = llvm::handleErrors(A.takeError(), [&](const ParseCrashError &X) {
        Out.Failure = X.Stage + ": " + X.What;
      });
      if (Rest)
        return Rest;
      return Out;
    }
    Out.Applied = A->Written;
    Out.Refusals = A->Result.Refusals;
    if (Out.Applied)
      Out.LaunchFormulas = A->Result.LaunchFormulas;
    if (A->Unchanged) {
      Refusal R;
      R.Reason = "the proposal changes nothing";
      Out.Refusals.push_back(std::move(R));
    }
    return Out;
  }

  Expected<BuildOutcome> build(StringRef SourceDir, StringRef BuildDir) override {
    BuildOutcome B;
    auto Start = std::chrono::steady_clock::now();
    // The build of `kloop compare` itself (build.command with build.cwd, build.env and build.timeout_s), so
    // that compare() can run this very build instead of building the candidate a second time.
    measure::BuildRequest Req;
    Req.SourceDir = SourceDir.str();
    Req.BuildDir = BuildDir.str();
    Req.LogDir = (BuildDir + "/.kloop-logs").str();
    Req.Label = "build";
    // A build directory without a stamp is one a killed kloop left half-built (a --resume redoes the
    // step): start it afresh rather than build over its remains (issue 12, item 7).
    if (llvm::sys::fs::exists(BuildDir) && !llvm::sys::fs::exists(measure::buildStampPath(BuildDir)))
      if (std::error_code EC = llvm::sys::fs::remove_directories(BuildDir))
        return makeError("cannot clear the half-built " + BuildDir.str() + ": " + EC.message());
    llvm::sys::fs::remove(measure::buildStampPath(BuildDir));
    // ptxas's resource report comes from this build itself: nvcc adds NVCC_APPEND_FLAGS to every
    // compile, and -Xptxas -v changes no code (kloop/Support/Ptxas.h).
    measure::WorkloadConfig Build = C;
    if (O.Ptxas)
      Build.Build.Env["NVCC_APPEND_FLAGS"] = withPtxasVerbose(
          Build.Build.Env.count("NVCC_APPEND_FLAGS") ? Build.Build.Env["NVCC_APPEND_FLAGS"]
                                                     : llvm::sys::Process::GetEnv("NVCC_APPEND_FLAGS").value_or(""));
    if (Error E = measure::buildWorkload(Build, Req)) {
      B.Succeeded = false;
      B.Log = tail(llvm::toString(std::move(E)), 16000);
    } else {
      B.Succeeded = true;
      std::string Out;
      for (const char *Ext : {".stdout", ".stderr"})
        if (auto Buf = llvm::MemoryBuffer::getFile(Req.LogDir + "/build" + Ext, /*IsText=*/true))
          Out += (*Buf)->getBuffer().str();
      B.Log = tail(Out, 16000);
      if (Error E = measure::markBuildFinished(BuildDir, SourceDir))
        B.Log += "\n" + llvm::toString(std::move(E)) + " (kloop compare will build the candidate again)";
      else
        remember(SourceDir, BuildDir);
      if (O.Ptxas) {
        std::vector<PtxasFunction> Fs = parsePtxasVerbose(Out);
        if (Fs.empty())
          B.Log += "\nptxas report: the build printed no ptxas lines (are its CUDA sources compiled by nvcc?)";
        B.Ptxas = toJSON(Fs);
      }
    }
    B.WallMs = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - Start).count();
    return B;
  }

  bool concurrentPrepare() const override { return true; }

  std::optional<BuildOutcome> buildCubin(StringRef SourceDir, StringRef WorkDir) override {
    return Replay.buildCubin(SourceDir, WorkDir);
  }

  bool haveGpu(std::string &Why) override {
    Expected<std::string> G = measure::probeGpu();
    if (G)
      return true;
    Why = llvm::toString(G.takeError());
    return false;
  }

  Expected<CompareOutcome> compare(StringRef BaseDir, StringRef CandDir, StringRef WorkDir,
                                   bool Final) override {
    return runCompare(compareOptions(BaseDir, CandDir, WorkDir, Final));
  }

  Expected<CompareOutcome> canary(StringRef BaseDir, StringRef WorkDir) override {
    // A/A: the baseline on both sides, one search shape, the screened search seeds, timing first (an A/A
    // within the speed rule is rejected on its timing, and no capture run is made).
    measure::CompareOptions CO = compareOptions(BaseDir, BaseDir, WorkDir, /*Final=*/false);
    auto Search = llvm::find_if(C.Shapes, [](const measure::ShapeSpec &S) { return !S.HeldOut; });
    if (Search == C.Shapes.end())
      return makeError(C.Path + ": the drift canary needs a search shape (every shape is held out)");
    CO.Shapes = {Search->Name};
    CO.TimingFirst = true;
    return runCompare(CO);
  }

  /// The options of a search step (\p Final false) or of the final check.
  measure::CompareOptions compareOptions(StringRef BaseDir, StringRef CandDir, StringRef WorkDir, bool Final) {
    measure::CompareOptions CO;
    CO.BaselineDir = BaseDir.str();
    CO.CandidateDir = CandDir.str();
    CO.WorkDir = WorkDir.str();
    CO.Rounds = O.Rounds;
    CO.VerifyJobs = O.VerifyJobs;
    CO.CuptiLib = O.CuptiLib;
    CO.IncludeHeldOut = Final;
    CO.BaselineBuildCache = O.BaselineBuildCache;
    if (std::optional<std::string> B = builtDir(CandDir))
      CO.CandidateBuildDir = *B;
    if (!Final) {
      CO.Thresholds.RequireHeldOutSeed = false;
      CO.MaxSeeds = O.ScreenSeeds;
      CO.TimingFirst = O.TimingFirst;
    }
    return CO;
  }

  /// What \p CO measures with, for CompareOutcome::Settings.
  static json settingsJSON(const measure::CompareOptions &CO) {
    return json{{"rounds", CO.Rounds},
                {"warmup", CO.Warmup},
                {"include_held_out", CO.IncludeHeldOut},
                {"shapes", CO.Shapes},
                {"max_seeds", CO.MaxSeeds},
                {"timing_first", CO.TimingFirst},
                {"thresholds", decide::toJSON(CO.Thresholds)}};
  }

  Expected<CompareOutcome> runCompare(const measure::CompareOptions &CO) {
    Replay.releaseGpu(); // a workload runs: no replay worker may hold the GPU (foreign GPU load)
    StringRef WorkDir = CO.WorkDir;
    llvm::sys::fs::create_directories(WorkDir);
    Expected<measure::CompareResult> R = measure::compareWorkloads(C, CO);
    if (!R)
      return R.takeError();
    CompareOutcome Out;
    Out.Accepted = R->Accepted;
    Out.Explanation = R->Explanation;
    Out.Detail = measure::toJSON(*R);
    Out.Settings = settingsJSON(CO);
    Out.Timing = std::move(R->Timing);
    bool AnyMismatch = false;
    for (const auto &S : R->Seeds)
      AnyMismatch |= !S.Matched;
    Out.Outcome = R->Accepted ? "accepted"
                  : R->CandidateFailure || !R->ProtectedChanges.empty() ? "refused"
                  : AnyMismatch ? "failed_verification"
                                : "rejected";
    if (R->Verdict) {
      std::optional<measure::Ceilings> Ceil;
      if (Expected<std::string> Dev = measure::probeGpu()) {
        std::string Name = *Dev;
        size_t P = Name.find(": ");
        if (P != std::string::npos)
          Name = Name.substr(P + 2, Name.find(" (") - P - 2);
        // Measured once per GPU and cached (bench/ceilings/ceilings.cu), as kloop measure does.
        if (Expected<measure::Ceilings> L =
                measure::ensureCeilings(Name, measure::defaultCeilingsCachePath(), (WorkDir + "/ceilings").str()))
          Ceil = *L;
        else
          llvm::consumeError(L.takeError());
      } else {
        llvm::consumeError(Dev.takeError());
      }
      if (Ceil)
        Out.Ceilings = {{"device", Ceil->Device}, {"copy_gbps", Ceil->CopyGBps}, {"fma_gflops", Ceil->FmaGFlops}};
      for (const auto &SV : R->Verdict->Shapes) {
        json E = evidenceRow(SV);
        const measure::ShapeSpec *Sh = C.findShape(SV.Shape);
        // The shape's declared work (.kloop.yaml bytes, flops), for the HTML report's roofline chart.
        if (Sh && Sh->Bytes)
          E["bytes"] = *Sh->Bytes;
        if (Sh && Sh->Flops)
          E["flops"] = *Sh->Flops;
        // Roofline floor of one launch: max(bytes / copy bandwidth, flops / FMA peak) in ns
        // (GB/s = bytes/ns, GFLOP/s = flop/ns); % of roofline = floor / measured median.
        if (Ceil && Sh && SV.Candidate && SV.Candidate->Median > 0) {
          double FloorNs = 0;
          if (Sh->Bytes && Ceil->CopyGBps > 0)
            FloorNs = std::max(FloorNs, (double)*Sh->Bytes / Ceil->CopyGBps);
          if (Sh->Flops && Ceil->FmaGFlops > 0)
            FloorNs = std::max(FloorNs, (double)*Sh->Flops / Ceil->FmaGFlops);
          if (FloorNs > 0)
            E["pct_roofline"] = FloorNs / SV.Candidate->Median * 100.0;
        }
        Out.Evidence.push_back(E);
      }
    }
    return Out;
  }

  /// The build of \p SourceDir from its build step, or (a resumed run that reused that step) a new one in
  /// \p Fallback. Errors name \p What the build is for.
  Expected<std::string> buildFor(StringRef SourceDir, StringRef Fallback, StringRef What) {
    if (std::optional<std::string> Dir = builtDir(SourceDir))
      return *Dir;
    Expected<BuildOutcome> B = build(SourceDir, Fallback);
    if (!B)
      return B.takeError();
    if (!B->Succeeded)
      return makeError(SourceDir + " does not build for " + What + ":\n" + B->Log);
    return Fallback.str();
  }

  Expected<CaptureOutcome> capture(StringRef BaseDir, StringRef CaptureDir, StringRef Shape) override {
    Expected<std::string> BuildDir = buildFor(BaseDir, (CaptureDir + ".build").str(), "its capture");
    if (!BuildDir)
      return BuildDir.takeError();
    return Replay.capture(BaseDir, *BuildDir, CaptureDir, Shape);
  }

  Expected<CountersOutcome> counters(StringRef SourceDir, StringRef WorkDir) override {
    Expected<std::string> BuildDir = buildFor(SourceDir, (WorkDir + ".build").str(), "its hardware counters");
    if (!BuildDir)
      return BuildDir.takeError();
    CountersOutcome Out;
    if (O.CuptiLib.empty()) {
      Out.Problems.push_back("libkloop-cupti.so, which takes the counters, was not found (set KLOOP_CUPTI_LIB)");
      return Out;
    }
    if (std::error_code EC = llvm::sys::fs::create_directories(WorkDir))
      return makeError("cannot create " + WorkDir + ": " + EC.message());
    for (const measure::ShapeSpec &Sh : C.Shapes) {
      if (Sh.HeldOut)
        continue;
      if (Expected<ShapeRun> Run = shapeRun(C, Sh, SourceDir, *BuildDir))
        countShape(Sh.Name, *Run, WorkDir, Out);
      else
        Out.Problems.push_back("shape " + Sh.Name + ": " + llvm::toString(Run.takeError()));
    }
    return Out;
  }

  /// One plain injected run of shape \p Shape (what a metrics run costs is measured against it), then
  /// one metrics run (KLOOP_CUPTI_METRICS=1, the targets only); its profiles go into \p Out.
  void countShape(const std::string &Shape, const ShapeRun &Run, StringRef WorkDir, CountersOutcome &Out) {
    measure::RunRequest Req;
    Req.Command = Run.Command;
    Req.Cwd = Run.Cwd;
    Req.Env = C.Run.Env;
    Req.TimeoutS = C.Run.TimeoutS;
    Req.DrainTimeoutS = C.Run.DrainTimeoutS;
    Req.OutDir = WorkDir.str();
    std::string Label;
    for (char Ch : Shape)
      Label += (llvm::isAlnum(Ch) || Ch == '-' || Ch == '_' || Ch == '.') ? Ch : '_';
    measure::InjectionSettings Inj;
    Inj.LibraryPath = O.CuptiLib;
    measure::applyKernelTrace(Inj, C.Tracing);
    Req.Inject = Inj;
    Req.Label = "plain-" + Label;
    if (Expected<measure::RunResult> Plain = measure::runIsolated(Req))
      Out.PlainWallS += Plain->WallSeconds;
    else
      Out.Problems.push_back("shape " + Shape + ": the plain run failed: " + llvm::toString(Plain.takeError()));
    Inj.Targets = C.Targets;
    Inj.Extra["KLOOP_CUPTI_METRICS"] = "1";
    Req.Inject = Inj;
    Req.Label = "counters-" + Label;
    Expected<measure::RunResult> R = measure::runIsolated(Req);
    if (!R) {
      Out.Problems.push_back("shape " + Shape + ": the metrics run failed: " + llvm::toString(R.takeError()));
      return;
    }
    Out.MetricsWallS += R->WallSeconds;
    if (!R->ok())
      Out.Problems.push_back("shape " + Shape + ": the metrics run " + R->describe() + "; logs: " + R->StderrPath);
    if (R->ProfilePath.empty() || !llvm::sys::fs::exists(R->ProfilePath))
      return;
    Expected<measure::MetricsRun> M = measure::readMetricsRun(R->ProfilePath);
    if (!M) {
      Out.Problems.push_back("shape " + Shape + ": " + llvm::toString(M.takeError()));
      return;
    }
    Out.Chip = M->Chip;
    Out.Passes = M->Passes;
    for (measure::KernelProfile &P : measure::kernelProfiles(*M, Shape, Out.Problems))
      Out.Profiles.push_back(std::move(P));
  }

  Expected<ReplayCompareOutcome> replayCompare(StringRef BaseDir, StringRef CandDir, StringRef CaptureDir,
                                               StringRef WorkDir, StringRef Shape,
                                               const capture::ReplayConfigs &Configs) override {
    return Replay.compare(BaseDir, CandDir, CaptureDir, WorkDir, Shape, Configs);
  }

  Expected<std::string> diff(StringRef BaseDir, StringRef CandDir) override {
    std::string Out;
    for (const std::string &S : C.Sources) {
      auto Base = llvm::MemoryBuffer::getFile(BaseDir + "/" + S, /*IsText=*/false);
      auto Cand = llvm::MemoryBuffer::getFile(CandDir + "/" + S, /*IsText=*/false);
      if (!Base || !Cand)
        return makeError("diff of " + S + ": cannot read " + (Base ? CandDir : BaseDir) + "/" + S + ": " +
                   (Base ? Cand.getError() : Base.getError()).message());
      Out += unifiedDiff(S, (*Base)->getBuffer(), (*Cand)->getBuffer());
    }
    return Out;
  }

private:
  /// The workload's sources below \p SourceDir, parsed with the compiler arguments given after `--`
  /// (relative ones taken from \p SourceDir).
  /// The files copySources copies besides the top of the source directory: sources and protected files,
  /// as the workload names them.
  std::vector<std::string> copiedFiles() const {
    std::vector<std::string> Rel(C.Sources.begin(), C.Sources.end());
    Rel.insert(Rel.end(), C.Protected.begin(), C.Protected.end());
    return Rel;
  }

  /// How many directories above the source directory a copy keeps: the most leading ".." of a copied
  /// file ("." components passed over: "./../x" reaches one up).
  unsigned upLevels() const {
    unsigned Up = 0;
    for (const std::string &R : copiedFiles()) {
      unsigned U = 0;
      for (auto I = llvm::sys::path::begin(R), E = llvm::sys::path::end(R); I != E && (*I == ".." || *I == "."); ++I)
        U += *I == "..";
      Up = std::max(Up, U);
    }
    return Up;
  }

  /// \p File, a file of the sources at \p From, at its place in their copy at \p To (copySources: the
  /// layout is kept up to upLevels() directories above); none when it lies outside that layout. Both
  /// paths are compared without "." and ".." components.
  std::optional<std::string> inCopy(StringRef File, StringRef From, StringRef To) const {
    llvm::SmallString<256> F(File), Above(From), T(To);
    for (llvm::SmallString<256> *P : {&F, &Above, &T})
      llvm::sys::path::remove_dots(*P, /*remove_dot_dot=*/true);
    for (unsigned I = 0;; ++I) {
      if (isAtOrBelow(F, Above)) {
        T += F.substr(Above.size());
        return std::string(T);
      }
      if (I == upLevels() || !llvm::sys::path::has_parent_path(Above))
        return std::nullopt;
      Above.resize(llvm::sys::path::parent_path(Above).size());
      T.resize(llvm::sys::path::parent_path(T).size());
    }
  }

  /// Points each of \p Changes, made to the sources at \p From, at the same file in their copy at \p To
  /// (inCopy); a refusal of the whole proposal when the copy does not hold one of them (outside its
  /// layout, or a file copySources does not copy), and then nothing is written: writing it where it is
  /// would change a file that every candidate, or the user's own tree, shares.
  std::optional<Refusal> mapIntoCopy(std::vector<FileChange> &Changes, StringRef From, StringRef To) const {
    for (FileChange &Ch : Changes) {
      std::optional<std::string> In = inCopy(Ch.File, From, To);
      if (!In || !llvm::sys::fs::exists(*In))
        return Refusal{-1, "", "the proposal changes " + Ch.File + ", which is not among the files kloop optimize "
                               "copies for a candidate (the .kloop.yaml's sources and protected files, and the "
                               "regular files beside the sources)"};
      Ch.File = *In;
    }
    return std::nullopt;
  }

  FrontendOptions frontendOptions(StringRef SourceDir) const {
    FrontendOptions F;
    F.WorkingDir = SourceDir.str();
    for (const std::string &S : C.Sources)
      F.Inputs.push_back((SourceDir + "/" + S).str());
    F.ExtraArgs = O.CompilerArgs;
    F.HasExtraArgs = true;
    return F;
  }

  /// The test seam (ProcessStagesOptions::ApplyCommand): the command gets PROPOSAL FILES... --in-place
  /// --root DIR -- ARGS and prints the outcome as JSON (toJSON(ApplyOutcome)) on stdout.
  Expected<ApplyOutcome> applyByCommand(StringRef ProposalFile, StringRef SourceDir) {
    std::vector<std::string> Argv = O.ApplyCommand;
    Argv.push_back(ProposalFile.str());
    for (const std::string &S : C.Sources)
      Argv.push_back((SourceDir + "/" + S).str());
    Argv.insert(Argv.end(), {"--in-place", "--root", SourceDir.str(), "--"});
    Argv.insert(Argv.end(), O.CompilerArgs.begin(), O.CompilerArgs.end());
    Expected<CommandResult> R = run(Argv, SourceDir, 600);
    if (!R)
      return R.takeError();
    std::string Name = "the apply command " + O.ApplyCommand.front();
    if (R->ExitCode != 0 || R->TimedOut)
      return makeError(Name + " failed (exit " + std::to_string(R->ExitCode) + (R->TimedOut ? ", timed out" : "") +
                 "): " + tail(R->Stderr));
    StrictJson J = parseStrictJson(R->Stdout);
    if (J.SyntaxError || !J.Duplicates.empty())
      return makeError(Name + " printed no apply outcome on stdout: " +
                 (J.SyntaxError ? *J.SyntaxError : J.Duplicates.front().message()));
    return applyOutcomeFromJSON(J.Value, Name);
  }

  /// Built[SourceDir] = BuildDir.
  void remember(StringRef SourceDir, StringRef BuildDir) {
    std::lock_guard<std::mutex> L(BuiltLock);
    Built[SourceDir.str()] = BuildDir.str();
  }
  /// Forgets the builds and cubins of source directories at or below \p Dir, which is about to be
  /// replaced (a candidate prepared ahead for a proposal that did not come is made again in place).
  void forget(StringRef Dir) {
    Replay.forget(Dir);
    std::lock_guard<std::mutex> L(BuiltLock);
    for (auto It = Built.begin(); It != Built.end();)
      It = isAtOrBelow(It->first, Dir) ? Built.erase(It) : std::next(It);
  }

  const measure::WorkloadConfig &C;
  ProcessStagesOptions O;
  /// Source directory -> the build directory build() built it in (and stamped), for compare() to reuse;
  /// under BuiltLock (builds of candidates prepared ahead run on other threads).
  std::map<std::string, std::string> Built;
  std::mutex BuiltLock;
  /// The build of \p SourceDir recorded in Built, if any.
  std::optional<std::string> builtDir(StringRef SourceDir) {
    std::lock_guard<std::mutex> L(BuiltLock);
    auto It = Built.find(SourceDir.str());
    return It == Built.end() ? std::nullopt : std::optional<std::string>(It->second);
  }
  ReplayStage Replay;
  /// The run's precompiled preambles, shared by every apply (and thread) of the run.
  PreambleCache Preambles;
  /// The directory the last apply parsed, under PreamblesFromLock.
  std::string PreamblesFrom;
  std::mutex PreamblesFromLock;
  /// Drops the preambles of the sources parsed before \p From, once the incumbent changed.
  void keepPreamblesOf(StringRef From) {
    std::lock_guard<std::mutex> L(PreamblesFromLock);
    if (PreamblesFrom == From)
      return;
    PreamblesFrom = From.str();
    Preambles.keepOnly(From);
  }

  static std::string tail(const std::string &S, size_t N = 2000) {
    return S.size() <= N ? S : "..." + S.substr(S.size() - N);
  }
  Expected<CommandResult> run(std::vector<std::string> Argv, StringRef Cwd, unsigned TimeoutS) {
    CommandConfig CC;
    CC.Argv = std::move(Argv);
    CC.WorkingDir = Cwd.str();
    CC.Timeout = std::chrono::milliseconds((int64_t)TimeoutS * 1000);
    CC.MaxOutputBytes = 256u << 20;
    return runCommand(CC, "");
  }
};
} // namespace

std::unique_ptr<Stages> makeProcessStages(const measure::WorkloadConfig &C, ProcessStagesOptions O) {
  return std::make_unique<ProcessStages>(C, std::move(O));
}

} // namespace optimize
} // namespace kloop
