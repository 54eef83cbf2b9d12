//===- ReplayStage.cpp - Capture and replay stages of kloop optimize ------===//
#include "ReplayStage.h"
#include "kloop/Support/Path.h"
#include "kloop/Capture/Capture.h"
#include "kloop/Support/Error.h"
#include "kloop/Capture/Record.h"
#include "kloop/Capture/Replay.h"
#include "kloop/Optimize/ReplayTiming.h"
#include "kloop/Propose/CommandProposer.h"
#include "kloop/Support/AtomicFile.h"
#include "kloop/Support/Ptxas.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"

#include <chrono>
#include <set>

using llvm::Error;
using llvm::Expected;
using llvm::StringRef;
using json = nlohmann::json;

namespace kloop {
namespace optimize {

namespace {
/// The file in a capture directory that holds its key (CaptureOutcome::Key).
constexpr const char *KeyFileName = "kloop-key.txt";

/// Search shape \p Name of \p C ("": the first search shape), or null (no such shape, or it is held out).
const measure::ShapeSpec *searchShape(const measure::WorkloadConfig &C, StringRef Name) {
  if (Name.empty()) {
    auto It = llvm::find_if(C.Shapes, [](const measure::ShapeSpec &S) { return !S.HeldOut; });
    return It == C.Shapes.end() ? nullptr : &*It;
  }
  const measure::ShapeSpec *S = C.findShape(Name);
  return S && !S->HeldOut ? S : nullptr;
}
} // namespace

Expected<ShapeRun> shapeRun(const measure::WorkloadConfig &C, const measure::ShapeSpec &Sh, StringRef SourceDir,
                            StringRef BuildDir) {
  measure::PlaceholderValues V;
  V.BuildDir = BuildDir.str();
  V.SourceDir = SourceDir.str();
  V.Seed = 0;
  V.Iters = C.Iters;
  V.Args = Sh.Args;
  Expected<std::string> Cmd = measure::expandCommand(C.Run.Command, V, "run.command");
  if (!Cmd)
    return Cmd.takeError();
  Expected<std::string> Cwd = measure::expandPath(C.Run.Cwd, V, "run.cwd");
  if (!Cwd)
    return Cwd.takeError();
  llvm::SmallString<256> Dir(*Cwd);
  if (!llvm::sys::path::is_absolute(Dir))
    llvm::sys::path::make_absolute(SourceDir, Dir);
  llvm::sys::path::remove_dots(Dir, true);
  return ShapeRun{*Cmd, std::string(Dir)};
}

namespace {
/// The program run of the capture: run.command of search shape \p Shape with seed 0.
Expected<ShapeRun> capturedRun(const measure::WorkloadConfig &C, StringRef Shape, StringRef SourceDir,
                               StringRef BuildDir) {
  const measure::ShapeSpec *Sh = searchShape(C, Shape);
  if (!Sh)
    return makeError(C.Path + (Shape.empty() ? std::string(": replay needs a search shape to capture (every shape is held out)")
                                             : ": replay captures search shapes; '" + Shape.str() + "' is none"));
  return shapeRun(C, *Sh, SourceDir, BuildDir);
}

/// CaptureOutcome::Key of \p Run in the baseline \p SourceDir: the command, its directory and
/// environment, and every source and protected file's name and bytes.
Expected<std::string> captureKey(const measure::WorkloadConfig &C, const ShapeRun &Run, StringRef SourceDir) {
  llvm::SHA256 H;
  auto Add = [&](StringRef S) {
    H.update(S);
    H.update(StringRef("\0", 1));
  };
  Add(Run.Command);
  Add(Run.Cwd);
  for (const auto &[K, V] : C.Run.Env)
    Add(K + "=" + V);
  for (const std::vector<std::string> *List : {&C.Sources, &C.Protected})
    for (const std::string &F : *List) {
      auto B = llvm::MemoryBuffer::getFile(SourceDir + "/" + F, /*IsText=*/false);
      if (!B)
        return makeError("cannot read " + SourceDir + "/" + F + " to key the capture: " + B.getError().message());
      Add(F);
      Add((*B)->getBuffer());
    }
  std::array<uint8_t, 32> D = H.final();
  return llvm::toHex(D, /*LowerCase=*/true).substr(0, 16);
}

/// Fills \p Out's figures from the manifest \p M.
void describe(const capture::Manifest &M, CaptureOutcome &Out) {
  Out.Launches = static_cast<unsigned>(M.Launches.size());
  std::set<std::string> Names;
  for (const capture::Launch &L : M.Launches)
    Names.insert(L.Name.empty() ? L.Kernel : L.Name);
  Out.Kernels.assign(Names.begin(), Names.end());
}

/// Why the capture in \p Dir cannot be reused under \p Key; "" when it can (then \p Out is filled).
std::string staleness(StringRef Dir, StringRef Key, CaptureOutcome &Out) {
  auto Old = llvm::MemoryBuffer::getFile(Dir + "/" + KeyFileName);
  if (!Old)
    return "it has no key (a capture kloop optimize did not finish)";
  StringRef OldKey = (*Old)->getBuffer().trim();
  if (OldKey != Key)
    return ("its key " + OldKey + " is not " + Key + ": the workload command or the baseline's sources changed").str();
  Expected<capture::Manifest> M = capture::readCapture(Dir, capture::BlobCheck::Exist);
  if (!M)
    return "it does not read: " + llvm::toString(M.takeError());
  describe(*M, Out);
  return "";
}

/// The cubin command when search.cubin_command is not set: nvcc -cubin of the one CUDA source.
Expected<std::string> defaultCubinCommand(const measure::WorkloadConfig &C) {
  std::vector<std::string> Cu;
  for (const std::string &S : C.Sources)
    if (StringRef(S).ends_with(".cu"))
      Cu.push_back(S);
  if (Cu.size() != 1)
    return makeError("search.cubin_command is not set and `sources` lists " + llvm::Twine(Cu.size()) +
               " .cu files (the default compiles exactly one); set search.cubin_command");
  return "nvcc -cubin -arch=native -o {cubin} {source_dir}/" + measure::shellQuote(Cu.front());
}

/// The verify payload's detail.replay_time: where a replayed step's time went (s), docs/optimize.md.
json replayTimeJSON(const capture::ReplayTimes &T, double CubinBuildS, unsigned WorkerStarts,
                    const capture::ReplayResult &R) {
  return {{"cubin_build_s", CubinBuildS}, {"worker_start_s", T.WorkerStartS}, {"capture_load_s", T.CaptureLoadS},
          {"modules_s", T.ModulesS},      {"restore_s", T.RestoreS},          {"timed_s", T.TimedS},
          {"check_s", T.CheckS},          {"worker_s", T.WorkerS},            {"round_trip_s", T.RoundTripS},
          {"worker_starts", WorkerStarts}, {"gated", R.Gated},
          {"timer", R.Timer}, {"l2", R.L2}, {"l2_note", R.L2Note.empty() ? json(nullptr) : json(R.L2Note)},
          {"placements", R.Placements},
          {"placement_note", R.PlacementNote.empty() ? json(nullptr) : json(R.PlacementNote)},
          {"placement_seed", R.PlacementSeed ? json(*R.PlacementSeed) : json(nullptr)},
          {"placement_pads_mib", R.PlacementPadsMiB},
          {"placement_pad_note", R.PlacementPadNote.empty() ? json(nullptr) : json(R.PlacementPadNote)},
          {"train", R.Train}};
}

std::string tail(const std::string &S, size_t N = 2000) {
  return S.size() <= N ? S : "..." + S.substr(S.size() - N);
}
} // namespace

Expected<CaptureOutcome> ReplayStage::capture(StringRef BaseDir, StringRef BuildDir, StringRef CaptureDir,
                                              StringRef Shape) {
  Expected<ShapeRun> Run = capturedRun(C, Shape, BaseDir, BuildDir);
  if (!Run)
    return Run.takeError();
  Expected<std::string> Key = captureKey(C, *Run, BaseDir);
  if (!Key)
    return Key.takeError();
  CaptureOutcome Out;
  Out.Dir = CaptureDir.str();
  Out.Key = *Key;
  if (llvm::sys::fs::exists(CaptureDir)) {
    Out.Stale = staleness(CaptureDir, *Key, Out);
    if (Out.Stale.empty()) {
      Out.Reused = true;
      return Out;
    }
    if (std::error_code EC = llvm::sys::fs::remove_directories(CaptureDir))
      return makeError("cannot remove the stale capture " + CaptureDir + ": " + EC.message());
  }
  if (O.CuptiLib.empty())
    return makeError("libkloop-cupti.so, which records the capture, was not found (set KLOOP_CUPTI_LIB)");
  capture::RecordOptions RO;
  RO.Command = {"/bin/sh", "-c", Run->Command};
  RO.Cwd = Run->Cwd;
  RO.Env = C.Run.Env;
  RO.OutDir = CaptureDir.str();
  RO.Kernels = C.Targets;
  RO.CuptiLib = O.CuptiLib;
  RO.TimeoutS = C.Run.TimeoutS;
  Expected<capture::RecordResult> R = capture::recordCapture(RO);
  if (!R)
    return R.takeError();
  if (Error E = writeFileAtomically((CaptureDir + "/" + KeyFileName).str(), *Key + "\n"))
    return E;
  describe(R->M, Out);
  return Out;
}

Expected<std::string> ReplayStage::cubin(StringRef SourceDir, StringRef WorkDir, StringRef Side) {
  CubinBuild B = build(SourceDir, WorkDir, Side);
  if (!B.Failure.empty())
    return makeError(B.Failure);
  return B.Path;
}

ReplayStage::CubinBuild ReplayStage::build(StringRef SourceDir, StringRef WorkDir, StringRef Side) {
  {
    std::lock_guard<std::mutex> L(CubinsLock);
    if (auto It = Cubins.find(SourceDir.str());
        It != Cubins.end() && (!It->second.Failure.empty() || llvm::sys::fs::exists(It->second.Path)))
      return It->second;
  }
  auto Began = std::chrono::steady_clock::now();
  CubinBuild B = runCubinCommand(SourceDir, WorkDir, Side);
  B.WallMs = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - Began).count();
  std::lock_guard<std::mutex> L(CubinsLock);
  return Cubins[SourceDir.str()] = B;
}

ReplayStage::CubinBuild ReplayStage::runCubinCommand(StringRef SourceDir, StringRef WorkDir, StringRef Side) const {
  CubinBuild B;
  std::string Template = C.Search.CubinCommand;
  if (Template.empty()) {
    Expected<std::string> D = defaultCubinCommand(C);
    if (!D) {
      B.Failure = llvm::toString(D.takeError());
      return B;
    }
    Template = *D;
  }
  if (std::error_code EC = llvm::sys::fs::create_directories(WorkDir)) {
    B.Failure = ("cannot create " + WorkDir + ": " + EC.message()).str();
    return B;
  }
  std::string Out = (WorkDir + "/" + Side + ".cubin").str();
  measure::PlaceholderValues V;
  V.SourceDir = SourceDir.str();
  V.Args["cubin"] = Out;
  Expected<std::string> Cmd = measure::expandCommand(Template, V, "search.cubin_command");
  if (!Cmd) {
    B.Failure = llvm::toString(Cmd.takeError());
    return B;
  }
  // ptxas's resource report of the cubin comes from this build, as the workload build's does
  // (kloop/Support/Ptxas.h): nvcc adds NVCC_APPEND_FLAGS to every compile; -Xptxas -v changes no code.
  std::string Verbose;
  if (O.Ptxas)
    Verbose = "NVCC_APPEND_FLAGS=" +
              measure::shellQuote(withPtxasVerbose(llvm::sys::Process::GetEnv("NVCC_APPEND_FLAGS").value_or(""))) +
              "; export NVCC_APPEND_FLAGS; ";
  CommandConfig CC;
  CC.Argv = {"/bin/sh", "-c", Verbose + *Cmd};
  CC.WorkingDir = SourceDir.str();
  CC.Timeout = std::chrono::milliseconds(int64_t(C.Build.TimeoutS) * 1000);
  Expected<CommandResult> R = runCommand(CC, "");
  if (!R) {
    B.Failure = llvm::toString(R.takeError());
    return B;
  }
  B.Output = R->Stdout + R->Stderr;
  if (R->ExitCode != 0 || R->TimedOut || !llvm::sys::fs::is_regular_file(Out)) {
    B.Failure = ("search.cubin_command failed for the " + Side + " (exit " + llvm::Twine(R->ExitCode) +
                 (R->TimedOut ? ", timed out" : "") + (R->ExitCode == 0 ? ", no cubin written" : "") +
                 "): " + tail(R->Stderr))
                    .str();
    return B;
  }
  B.Path = Out;
  return B;
}

BuildOutcome ReplayStage::buildCubin(StringRef SourceDir, StringRef WorkDir) {
  CubinBuild CB = build(SourceDir, WorkDir, "candidate");
  BuildOutcome B;
  B.Cubin = true;
  B.Succeeded = CB.Failure.empty();
  B.WallMs = CB.WallMs;
  B.Log = tail(CB.Output, 16000);
  if (!B.Succeeded)
    B.Log += (B.Log.empty() ? "" : "\n") + CB.Failure;
  if (!O.Ptxas)
    return B;
  std::vector<PtxasFunction> Fs = parsePtxasVerbose(CB.Output);
  if (B.Succeeded && Fs.empty())
    B.Log += "\nptxas report: the cubin build printed no ptxas lines (is search.cubin_command an nvcc command?)";
  B.Ptxas = toJSON(Fs);
  return B;
}

void ReplayStage::forget(StringRef Dir) {
  std::lock_guard<std::mutex> L(CubinsLock);
  for (auto It = Cubins.begin(); It != Cubins.end();)
    It = isAtOrBelow(It->first, Dir) ? Cubins.erase(It) : std::next(It);
}

Expected<ReplayCompareOutcome> ReplayStage::compare(StringRef BaseDir, StringRef CandDir, StringRef CaptureDir,
                                                    StringRef WorkDir, StringRef Shape,
                                                    const capture::ReplayConfigs &Configs) {
  auto Fallback = [](std::string Why) {
    ReplayCompareOutcome F;
    F.Fallback = std::move(Why);
    return F;
  };
  if (O.Worker.empty())
    return Fallback(O.WorkerProblem);
  if (std::error_code EC = llvm::sys::fs::create_directories(WorkDir))
    return makeError("cannot create " + WorkDir + ": " + EC.message());
  auto Began = std::chrono::steady_clock::now();
  Expected<std::string> Tol = replayTolerance(C);
  if (!Tol)
    return Fallback(llvm::toString(Tol.takeError()));
  Expected<std::string> Base = cubin(BaseDir, WorkDir, "incumbent");
  if (!Base)
    return Fallback(llvm::toString(Base.takeError()));
  Expected<std::string> Cand = cubin(CandDir, WorkDir, "candidate");
  if (!Cand)
    return Fallback(llvm::toString(Cand.takeError()));
  double BuildS = std::chrono::duration<double>(std::chrono::steady_clock::now() - Began).count();
  std::unique_ptr<capture::ReplayServer> &Server = Servers[CaptureDir.str()];
  if (!Server) {
    capture::ReplayOptions RO;
    RO.Worker = O.Worker;
    RO.Capture = CaptureDir.str();
    RO.Tolerance = *Tol;
    RO.L2 = measure::replayL2Of(C);
    RO.Placements = C.Search.ReplayPlacements;
    // The copies land as kloop compare's rounds put the program (placement_pad_mib), per request anew;
    // the shape's name seeds the draws, so a search repeats them.
    RO.PlacementPadMiB = C.PlacementPadMiB;
    RO.PlacementSeed = capture::fnv64(Shape.data(), Shape.size());
    RO.Train = C.Search.ReplayTrain;
    RO.TimeoutS = C.Run.TimeoutS;
    // Each capture's worker keeps its stderr files apart: the first capture's in the candidates
    // directory, as before there were several, the others' in replay-<capture directory>/ beside it.
    llvm::SmallString<256> Logs(llvm::sys::path::parent_path(WorkDir));
    if (Servers.size() > 1)
      llvm::sys::path::append(Logs, "replay-" + llvm::sys::path::filename(CaptureDir));
    if (std::error_code EC = llvm::sys::fs::create_directories(Logs))
      return makeError("cannot create " + Logs + ": " + EC.message());
    RO.WorkDir = std::string(Logs);
    Server = std::make_unique<capture::ReplayServer>(RO);
  }
  Expected<capture::ReplayResult> R = Server->replay(*Base, *Cand, std::max(1u, O.Rounds) * C.Iters, Configs);
  if (!R)
    return Fallback("the replay worker failed: " + llvm::toString(R.takeError()));
  const measure::ShapeSpec *Sh = searchShape(C, Shape);
  if (!Outputs.count(CaptureDir.str())) {
    Expected<capture::Manifest> M = capture::readCapture(CaptureDir, capture::BlobCheck::Exist);
    if (!M)
      return Fallback(llvm::toString(M.takeError()));
    Outputs[CaptureDir.str()] = capturedOutputs(*M, C.Outputs);
  }
  Expected<ReplayCompareOutcome> Out =
      judgeReplay(*R, Sh ? Sh->Name : Shape.str(), &Outputs[CaptureDir.str()], !Configs.Candidate.empty());
  if (Out && Out->Compare)
    Out->Compare->Detail["replay_time"] = replayTimeJSON(R->Times.value_or(capture::ReplayTimes()), BuildS,
                                                         Server->starts(), *R);
  return Out;
}

void ReplayStage::releaseGpu() { Servers.clear(); }

} // namespace optimize
} // namespace kloop
