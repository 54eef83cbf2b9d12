//===- Measure.cpp - Build, run and summarise a workload ------------------===//
#include "kloop/Measure/Measure.h"
#include "kloop/Support/Error.h"
#include "kloop/Support/JSON.h"
#include "kloop/Support/AtomicFile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>
#include <cmath>
#include <limits>

using namespace llvm;
using nlohmann::json;

namespace kloop {
namespace measure {

char NoGpuError::ID;

void NoGpuError::log(raw_ostream &OS) const { OS << "no usable GPU: " << Reason; }

static std::string wallText(double S) {
  char B[32];
  snprintf(B, sizeof(B), "%.2f s", S);
  return B;
}

static std::string tmpWorkDir(StringRef Stem) {
  SmallString<128> D;
  sys::fs::createUniqueDirectory(Stem, D);
  return D.str().str();
}

Expected<std::string> probeGpu() {
  std::string Smi;
  if (std::optional<std::string> E = sys::Process::GetEnv("KLOOP_NVIDIA_SMI"))
    Smi = *E;
  else if (ErrorOr<std::string> P = sys::findProgramByName("nvidia-smi"))
    Smi = *P;
  else
    return make_error<NoGpuError>("nvidia-smi was not found on PATH");
  RunRequest R;
  R.Command = shellQuote(Smi) + " -L";
  SmallString<128> Cwd;
  sys::fs::current_path(Cwd);
  R.Cwd = Cwd.str().str();
  R.TimeoutS = 30;
  R.OutDir = tmpWorkDir("kloop-gpu-probe");
  R.Label = "nvidia-smi";
  Expected<RunResult> Res = runIsolated(R);
  if (!Res)
    return Res.takeError();
  std::string Out = tailOfFile(Res->StdoutPath, 1);
  sys::fs::remove_directories(R.OutDir);
  if (!Res->ok())
    return make_error<NoGpuError>("`nvidia-smi -L` " + Res->describe() +
                                  (Res->StderrTail.empty() ? "" : ": " + Res->StderrTail));
  StringRef First = StringRef(Out).trim();
  if (!First.starts_with("GPU"))
    return make_error<NoGpuError>("`nvidia-smi -L` lists no GPU");
  return First.str();
}

Error buildWorkload(const WorkloadConfig &C, const BuildRequest &B) {
  if (std::error_code EC = sys::fs::create_directories(B.BuildDir))
    return makeError("cannot create build directory '" + B.BuildDir + "': " + EC.message());
  PlaceholderValues V;
  V.BuildDir = B.BuildDir;
  V.SourceDir = B.SourceDir;
  Expected<std::string> Cmd = expandCommand(C.Build.Command, V, "build.command");
  if (!Cmd)
    return Cmd.takeError();
  Expected<std::string> Cwd = expandPath(C.Build.Cwd, V, "build.cwd");
  if (!Cwd)
    return Cwd.takeError();
  SmallString<256> Dir(*Cwd);
  if (!sys::path::is_absolute(Dir))
    sys::path::make_absolute(B.SourceDir, Dir);
  RunRequest R;
  R.Command = *Cmd;
  R.Cwd = Dir.str().str();
  R.Env = C.Build.Env;
  R.TimeoutS = C.Build.TimeoutS;
  R.OutDir = B.LogDir;
  R.Label = B.Label;
  Expected<RunResult> Res = runIsolated(R);
  if (!Res)
    return Res.takeError();
  if (Res->ok())
    return Error::success();
  std::string Tail = Res->StderrTail.empty() ? tailOfFile(Res->StdoutPath) : Res->StderrTail;
  std::string Msg = "build of '" + C.Name + "' failed (" + Res->describe() + ")\n  command: " + *Cmd +
                    "\n  in: " + R.Cwd + "\n  logs: " + Res->StdoutPath + ", " + Res->StderrPath;
  if (!Tail.empty()) {
    Msg += "\n  last lines of the log:";
    SmallVector<StringRef, 20> Lines;
    StringRef(Tail).split(Lines, '\n');
    for (StringRef L : Lines)
      Msg += "\n    | " + L.str();
  }
  return makeError(Msg);
}

//===----------------------------------------------------------------------===//
// Ceilings
//===----------------------------------------------------------------------===//

// The text of bench/ceilings/ceilings.cu, generated into the build tree.
#include "CeilingsSource.inc"

Expected<Ceilings> parseCeilingsOutput(StringRef Text) {
  // The program prints one line; anything before it (driver noise) is skipped.
  StringRef All = Text.trim();
  size_t P = All.rfind('\n');
  StringRef Line = P == StringRef::npos ? All : All.substr(P + 1).trim();
  if (!Line.starts_with("{"))
    return makeError("ceilings: no JSON line in the output: '" + All.take_back(200) + "'");
  json J = json::parse(Line.str(), nullptr, false);
  if (J.is_discarded() || !J.is_object() || J.value("schema", "") != "kloop-ceilings/1")
    return makeError("ceilings: output is not kloop-ceilings/1 JSON: '" + Line.take_front(200) + "'");
  Ceilings C;
  auto Num = [&](const char *K, double &Out) -> Error {
    auto It = J.find(K);
    if (It == J.end() || !It->is_number() || !(It->get<double>() > 0))
      return makeError(Twine("ceilings: \"") + K + "\" is missing or not a positive number");
    Out = It->get<double>();
    return Error::success();
  };
  if (!J.contains("device") || !J["device"].is_string())
    return makeError("ceilings: \"device\" is missing");
  C.Device = J["device"].get<std::string>();
  if (Error E = Num("copy_gbps", C.CopyGBps))
    return E;
  if (Error E = Num("fma_gflops_f32", C.FmaGFlops))
    return E;
  return C;
}

std::string defaultCeilingsCachePath() {
  SmallString<256> P;
  if (std::optional<std::string> D = sys::Process::GetEnv("KLOOP_CACHE_DIR"))
    P = *D;
  else if (std::optional<std::string> X = sys::Process::GetEnv("XDG_CACHE_HOME")) {
    P = *X;
    sys::path::append(P, "kloop");
  } else {
    sys::path::home_directory(P);
    sys::path::append(P, ".cache", "kloop");
  }
  sys::path::append(P, "ceilings.json");
  return P.str().str();
}

static Expected<json> readCache(StringRef CacheFile) {
  if (!sys::fs::exists(CacheFile))
    return json::object();
  auto Buf = MemoryBuffer::getFile(CacheFile, true);
  if (!Buf)
    return makeError("cannot read ceilings cache '" + CacheFile + "': " + Buf.getError().message());
  json J = json::parse((*Buf)->getBuffer().begin(), (*Buf)->getBuffer().end(), nullptr, false);
  if (J.is_discarded() || !J.is_object())
    return makeError("ceilings cache '" + CacheFile + "' is not a JSON object; delete it to re-measure");
  return J;
}

Expected<std::optional<Ceilings>> lookupCeilings(StringRef CacheFile, StringRef Device) {
  Expected<json> J = readCache(CacheFile);
  if (!J)
    return J.takeError();
  auto It = J->find(Device.str());
  if (It == J->end())
    return std::nullopt;
  json E = *It;
  E["schema"] = "kloop-ceilings/1";
  E["device"] = Device.str();
  Expected<Ceilings> C = parseCeilingsOutput(dumpJSON(E));
  if (!C)
    return makeError("ceilings cache '" + CacheFile + "', entry '" + Device + "': " + toString(C.takeError()));
  return std::optional<Ceilings>(*C);
}

Error storeCeilings(StringRef CacheFile, const Ceilings &C) {
  Expected<json> J = readCache(CacheFile);
  if (!J)
    return J.takeError();
  (*J)[C.Device] = {{"copy_gbps", C.CopyGBps}, {"fma_gflops_f32", C.FmaGFlops}};
  SmallString<256> Dir(CacheFile);
  sys::path::remove_filename(Dir);
  if (!Dir.empty())
    if (std::error_code EC = sys::fs::create_directories(Dir))
      return makeError("cannot create '" + Dir + "': " + EC.message());
  return writeFileAtomically(CacheFile, J->dump(2) + "\n");
}

Expected<std::string> findNvcc() {
  if (std::optional<std::string> E = sys::Process::GetEnv("KLOOP_NVCC")) {
    if (sys::fs::can_execute(*E))
      return *E;
    return makeError("KLOOP_NVCC='" + *E + "' is not executable");
  }
  if (std::optional<std::string> H = sys::Process::GetEnv("CUDA_HOME")) {
    SmallString<256> P(*H);
    sys::path::append(P, "bin", "nvcc");
    if (sys::fs::can_execute(P))
      return P.str().str();
  }
  if (ErrorOr<std::string> P = sys::findProgramByName("nvcc"))
    return *P;
  if (sys::fs::can_execute("/usr/local/cuda/bin/nvcc"))
    return std::string("/usr/local/cuda/bin/nvcc");
  return makeError("nvcc not found ($KLOOP_NVCC, $CUDA_HOME/bin, PATH, /usr/local/cuda/bin)");
}

Expected<Ceilings> ensureCeilings(StringRef Device, StringRef CacheFile, StringRef WorkDir) {
  Expected<std::optional<Ceilings>> Cached = lookupCeilings(CacheFile, Device);
  if (!Cached)
    return Cached.takeError();
  if (*Cached)
    return **Cached;
  Expected<std::string> Nvcc = findNvcc();
  if (!Nvcc)
    return Nvcc.takeError();
  SmallString<256> Src(WorkDir), Exe(WorkDir);
  sys::path::append(Src, "ceilings.cu");
  sys::path::append(Exe, "ceilings");
  if (std::error_code EC = sys::fs::create_directories(WorkDir))
    return makeError("cannot create '" + WorkDir + "': " + EC.message());
  if (Error E = writeFileAtomically(Src, CeilingsSource))
    return E;
  RunRequest B;
  B.Command = shellQuote(*Nvcc) + " -O3 -arch=native -o " + shellQuote(Exe) + " " + shellQuote(Src);
  B.Cwd = WorkDir.str();
  B.TimeoutS = 300;
  B.OutDir = WorkDir.str();
  B.Label = "ceilings-build";
  Expected<RunResult> BR = runIsolated(B);
  if (!BR)
    return BR.takeError();
  if (!BR->ok())
    return makeError("building the ceilings program failed (" + BR->describe() + "): " + BR->StderrTail);
  RunRequest R;
  R.Command = shellQuote(Exe);
  R.Cwd = WorkDir.str();
  R.TimeoutS = 300;
  R.OutDir = WorkDir.str();
  R.Label = "ceilings-run";
  Expected<RunResult> RR = runIsolated(R);
  if (!RR)
    return RR.takeError();
  if (!RR->ok()) {
    if (saysNoCudaDevice(RR->StderrTail))
      return make_error<NoGpuError>("the ceilings program found no CUDA device: " + RR->StderrTail);
    return makeError("running the ceilings program failed (" + RR->describe() + "): " + RR->StderrTail);
  }
  auto Out = MemoryBuffer::getFile(RR->StdoutPath, true);
  if (!Out)
    return makeError("cannot read '" + RR->StdoutPath + "'");
  Expected<Ceilings> C = parseCeilingsOutput((*Out)->getBuffer());
  if (!C)
    return C.takeError();
  if (C->Device != Device)
    return makeError("the ceilings program measured '" + C->Device + "' but the workload ran on '" + Device +
               "' (set CUDA_VISIBLE_DEVICES so both see the same GPU)");
  if (Error E = storeCeilings(CacheFile, *C))
    return E;
  return *C;
}

//===----------------------------------------------------------------------===//
// Statistics and rates
//===----------------------------------------------------------------------===//

double medianRelCIWidth(ArrayRef<double> Values) {
  size_t N = Values.size();
  if (N < 6)
    return std::numeric_limits<double>::infinity();
  std::vector<double> S(Values.begin(), Values.end());
  std::sort(S.begin(), S.end());
  double H = 0.98 * std::sqrt(double(N)); // 1.96 * sqrt(n) / 2
  long J = static_cast<long>(std::floor(N / 2.0 - H));
  long K = static_cast<long>(std::ceil(N / 2.0 + H));
  J = std::max(0L, J);
  K = std::min(static_cast<long>(N) - 1, K);
  double Med = decide::percentileSorted(S, 0.5);
  if (!(Med > 0))
    return std::numeric_limits<double>::infinity();
  return (S[K] - S[J]) / Med;
}

const verify::EnvSample *governingSample(const verify::Profile &P, uint64_t StartNs) {
  if (P.EnvSamples.empty())
    return nullptr;
  const verify::EnvSample *Gov = &P.EnvSamples.front();
  for (const verify::EnvSample &S : P.EnvSamples) {
    if (S.TimeNs > StartNs)
      break;
    Gov = &S;
  }
  return Gov;
}

bool launchThrottled(const verify::Profile &P, uint64_t StartNs) {
  const verify::EnvSample *Gov = governingSample(P, StartNs);
  return Gov && (Gov->ThrottleReasons.value_or(0) & ~BenignThrottleMask) != 0;
}

bool launchForeign(const verify::Profile &P, uint64_t StartNs) {
  const verify::EnvSample *Gov = governingSample(P, StartNs);
  return Gov && Gov->ForeignProcesses.value_or(0) > 0;
}

void markAllForeign(TargetSamples &Samples) {
  for (auto &[Name, List] : Samples)
    for (decide::Sample &S : List)
      S.Foreign = true;
}

bool foreignAroundRun(const RunResult &R) {
  if (!R.GpuWatched)
    return false;
  auto Alive = [](const GpuProcess &P) { return llvm::sys::fs::exists("/proc/" + std::to_string(P.Pid)); };
  return !R.ForeignBefore.empty() || llvm::any_of(R.ForeignAfter, Alive);
}

TargetSamples runSamples(const WorkloadConfig &C, const RunResult &R, unsigned Warmup) {
  TargetSamples S = targetSamples(C, *R.Prof, Warmup);
  if (foreignAroundRun(R))
    markAllForeign(S);
  return S;
}

TargetSamples targetSamples(const WorkloadConfig &C, const verify::Profile &P, unsigned Warmup) {
  TargetSamples R;
  std::map<std::string, unsigned> Seen;
  std::vector<const verify::LaunchRecord *> Sorted;
  for (const verify::LaunchRecord &L : P.Launches)
    Sorted.push_back(&L);
  llvm::stable_sort(Sorted,
                    [](const verify::LaunchRecord *A, const verify::LaunchRecord *B) { return A->Seq < B->Seq; });
  for (const verify::LaunchRecord *L : Sorted) {
    const std::string &Name = L->Name.empty() ? L->Kernel : L->Name;
    if (!C.isTarget(Name))
      continue;
    if (Seen[Name]++ < Warmup)
      continue;
    auto It = llvm::find_if(R, [&](const auto &E) { return E.first == Name; });
    if (It == R.end()) {
      R.push_back({Name, {}});
      It = std::prev(R.end());
    }
    decide::Sample S;
    S.DurationNs = static_cast<double>(L->DurationNs);
    S.Throttled = launchThrottled(P, L->StartNs);
    S.Foreign = launchForeign(P, L->StartNs);
    It->second.push_back(S);
  }
  return R;
}

void attachRates(KernelShapeStats &K, const ShapeSpec &Shape, const std::optional<Ceilings> &Ceil) {
  double Med = K.Stats.Median;
  if (!(Med > 0))
    return;
  char Buf[256];
  if (Shape.Bytes) {
    K.GBps = double(*Shape.Bytes) / Med; // bytes per ns == GB/s
    if (Ceil) {
      K.PctCopy = *K.GBps / Ceil->CopyGBps * 100.0;
      if (*K.GBps > Ceil->CopyGBps) {
        snprintf(Buf, sizeof(Buf),
                 "MEASUREMENT ERROR: %.1f GB/s is above the measured copy ceiling %.1f GB/s (%.0f%%): data "
                 "stayed in L2 between launches or shapes[%s].bytes is wrong; not a win",
                 *K.GBps, Ceil->CopyGBps, *K.PctCopy, Shape.Name.c_str());
        K.MeasurementErrors.push_back(Buf);
      }
    }
  }
  if (Shape.Flops) {
    K.GFlops = double(*Shape.Flops) / Med;
    if (Ceil) {
      K.PctFma = *K.GFlops / Ceil->FmaGFlops * 100.0;
      if (*K.GFlops > Ceil->FmaGFlops) {
        snprintf(Buf, sizeof(Buf),
                 "MEASUREMENT ERROR: %.1f GFLOP/s is above the measured f32 FMA ceiling %.1f GFLOP/s (%.0f%%): "
                 "shapes[%s].flops is wrong or the kernel uses another unit (tensor cores, f16); not a win",
                 *K.GFlops, Ceil->FmaGFlops, *K.PctFma, Shape.Name.c_str());
        K.MeasurementErrors.push_back(Buf);
      }
    }
  }
}

std::string tracingNote(KernelTrace T) {
  if (T == KernelTrace::Concurrent)
    return "tracing: concurrent: CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL; on the H200 it slowed some launch "
           "configurations by up to 6.5% and others not at all (docs/results.md), so compare launch "
           "configurations with care";
  return "tracing: serial: CUPTI_ACTIVITY_KIND_KERNEL; kernels are serialized, duration ratios across launch "
         "configurations stayed within 0.9% of untraced ones on the H200 (docs/results.md)";
}

static std::string l2Note(L2Policy P) {
  switch (P) {
  case L2Policy::Rotate:
    return "l2: rotate: the workload rotates its buffers so timed launches do not find their data in L2";
  case L2Policy::Flush:
    return "l2: flush: libkloop-cupti.so clears L2 before every launch (an asynchronous memset of twice the L2 "
           "size on the launch's stream, not timed)";
  case L2Policy::None:
    return "l2: none: nothing defeats L2 residency; timings may include L2 hits";
  }
  return "";
}

//===----------------------------------------------------------------------===//
// Orchestration
//===----------------------------------------------------------------------===//

/// The shapes named in \p Names (all of the workload's when none).
static Expected<std::vector<const ShapeSpec *>> selectShapes(const WorkloadConfig &C,
                                                             const std::vector<std::string> &Names) {
  std::vector<const ShapeSpec *> Shapes;
  for (const std::string &N : Names) {
    const ShapeSpec *S = C.findShape(N);
    if (!S) {
      std::string Known;
      for (const ShapeSpec &K : C.Shapes)
        Known += (Known.empty() ? "" : ", ") + K.Name;
      return makeError(C.Path + ": no shape named '" + N + "' (shapes: " + Known + ")");
    }
    Shapes.push_back(S);
  }
  if (Shapes.empty())
    for (const ShapeSpec &S : C.Shapes)
      Shapes.push_back(&S);
  return Shapes;
}

/// The statistics of each kernel's samples of shape \p S (throttled and foreign-load samples
/// discarded) into Rep.Kernels.
static Error addShapeStats(const ShapeSpec &S, const TargetSamples &Pool, const std::optional<Ceilings> &Ceil,
                           MeasureReport &Rep) {
  for (auto &[Name, Samples] : Pool) {
    KernelShapeStats K;
    K.Kernel = Name;
    K.Shape = S.Name;
    K.Launches = Samples.size();
    decide::FilteredSamples F = decide::filterSamples(Samples);
    K.Discarded = F.DiscardedThrottled;
    K.DiscardedForeign = F.DiscardedForeign;
    if (F.KeptNs.empty()) {
      Rep.Notes.push_back(("kernel " + Name + " shape " + S.Name + ": every sample was discarded (" +
                          Twine(F.DiscardedForeign) + " foreign GPU load, " + Twine(F.DiscardedThrottled) +
                          " throttled)")
                              .str());
      Rep.Kernels.push_back(K);
      continue;
    }
    Expected<decide::Summary> Sum = decide::summarize(F.KeptNs);
    if (!Sum)
      return makeError("kernel " + Name + " shape " + S.Name + ": " + toString(Sum.takeError()));
    K.Stats = *Sum;
    K.MedianRelCI = medianRelCIWidth(F.KeptNs);
    K.KeptNs = F.KeptNs;
    K.KeptGroups = F.KeptGroups;
    attachRates(K, S, Ceil);
    Rep.Kernels.push_back(std::move(K));
  }
  return Error::success();
}

Expected<MeasureReport> measureWorkload(const WorkloadConfig &C, const MeasureOptions &O,
                                        const ProgressFn &Progress) {
  auto Say = [&](const Twine &T) {
    if (Progress)
      Progress(T.str());
  };
  if (O.BuildDir.empty() || O.WorkDir.empty())
    return makeError("measure: build and work directories are required");
  if (O.CuptiLib.empty())
    return makeError("measure: the path of libkloop-cupti.so is required");
  Expected<std::vector<const ShapeSpec *>> Shapes = selectShapes(C, O.Shapes);
  if (!Shapes)
    return Shapes.takeError();
  std::string SourceDir = O.SourceDir.empty() ? C.Dir : O.SourceDir;

  if (O.Build) {
    BuildRequest B;
    B.SourceDir = SourceDir;
    B.BuildDir = O.BuildDir;
    B.LogDir = O.WorkDir;
    if (Error E = buildWorkload(C, B))
      return E;
    Say("build ok");
  }

  MeasureReport Rep;
  Rep.Workload = C.Name;
  Rep.L2 = C.L2;
  Rep.L2Note = l2Note(C.L2);
  Rep.Tracing = C.Tracing;
  Rep.TracingNote = tracingNote(C.Tracing);
  Rep.Ceil = O.Ceil;
  bool NvmlMissing = false;
  ProfileNotes Noted(C.Tracing);
  GpuMonitor Gpu; // drains the GPU after a failed run (Runner.h)

  PlaceholderValues V;
  V.BuildDir = O.BuildDir;
  V.SourceDir = SourceDir;
  V.Iters = C.Iters;
  Expected<std::string> CwdT = expandPath(C.Run.Cwd, V, "run.cwd");
  if (!CwdT)
    return CwdT.takeError();
  SmallString<256> Cwd(*CwdT);
  if (!sys::path::is_absolute(Cwd))
    sys::path::make_absolute(SourceDir, Cwd);
  sys::path::remove_dots(Cwd, true);

  for (size_t ShI = 0; ShI < Shapes->size(); ++ShI) {
    const ShapeSpec *S = (*Shapes)[ShI];
    PlaceholderValues SV = V;
    SV.Seed = O.Seed;
    SV.Args = S->Args;
    Expected<std::string> Cmd = expandCommand(C.Run.Command, SV, "run.command");
    if (!Cmd)
      return Cmd.takeError();
    TargetSamples Pool;
    unsigned MaxRuns = O.TargetRelCI ? std::max(O.MaxRuns, O.MinRuns) : O.Runs;
    unsigned Done = 0;
    for (unsigned Run = 0; Run < MaxRuns; ++Run) {
      RunRequest R;
      R.Command = *Cmd;
      R.Cwd = Cwd.str().str();
      R.Env = C.Run.Env;
      R.TimeoutS = C.Run.TimeoutS;
      R.OutDir = O.WorkDir;
      R.Label = "run-" + S->Name + "-s" + std::to_string(O.Seed) + "-r" + std::to_string(Run);
      InjectionSettings I;
      I.LibraryPath = O.CuptiLib;
      applyL2Policy(I, C.L2);
      applyKernelTrace(I, C.Tracing);
      // Each run at a placement of its own, as each timing round of kloop compare (placementPadBytes).
      applyPlacementPad(I, placementPadBytes(C.PlacementPadMiB, ShI, O.Seed, Run));
      R.Inject = I; // no captures while timing: capture callbacks would perturb the launches
      R.Gpu = &Gpu;
      R.DrainTimeoutS = C.Run.DrainTimeoutS;
      Expected<RunResult> Res = runIsolated(R);
      if (!Res)
        return Res.takeError();
      if (!Res->ok()) {
        if (saysNoCudaDevice(Res->StderrTail))
          return make_error<NoGpuError>("the workload reports no CUDA device: " + Res->StderrTail);
        std::string Msg = "run " + std::to_string(Run + 1) + " of shape '" + S->Name + "' " + Res->describe() +
                          "\n  command: " + *Cmd + "\n  logs: " + Res->StdoutPath + ", " + Res->StderrPath;
        if (!Res->StderrTail.empty())
          Msg += "\n  stderr:\n    | " + join(split(Res->StderrTail, '\n'), "\n    | ");
        if (std::string Drained = drainNote(R.Label, *Res); !Drained.empty())
          Msg += "\n  gpu: " + Drained;
        return makeError(Msg);
      }
      const verify::Profile &P = *Res->Prof;
      Noted.check(P, Rep.Notes);
      if (Rep.Device.empty())
        Rep.Device = P.Device.Name;
      NvmlMissing |= !P.Nvml;
      Rep.MaxOverheadNs = std::max(Rep.MaxOverheadNs, P.OverheadWallNs);
      for (auto &[Name, Samples] : runSamples(C, *Res, O.Warmup)) {
        for (decide::Sample &X : Samples)
          X.Group = Run;
        auto It = llvm::find_if(Pool, [&](const auto &E) { return E.first == Name; });
        if (It == Pool.end()) {
          Pool.push_back({Name, {}});
          It = std::prev(Pool.end());
        }
        It->second.insert(It->second.end(), Samples.begin(), Samples.end());
      }
      ++Done;
      Say("run " + S->Name + " " + Twine(Done) + (O.TargetRelCI ? "" : "/" + Twine(MaxRuns)) + " ok (" +
          wallText(Res->WallSeconds) + ")");
      if (O.TargetRelCI && Done >= O.MinRuns && !Pool.empty() && all_of(Pool, [&](const auto &E) {
            decide::FilteredSamples F = decide::filterSamples(E.second);
            return medianRelCIWidth(F.KeptNs) < *O.TargetRelCI;
          }))
        break;
    }
    Rep.RunsPerShape.push_back({S->Name, Done});
    if (Pool.empty())
      return makeError("shape '" + S->Name + "': no launch of a target kernel (" + join(C.Targets, ", ") +
                 ") after warm-up in " + Twine(Done) +
                 " runs; check `targets` against the demangled kernel names in " + O.WorkDir + "/run-*.json");
    if (Error E = addShapeStats(*S, Pool, O.Ceil, Rep))
      return E;
  }
  if (NvmlMissing)
    Rep.Notes.push_back("NVML was unavailable in at least one run: throttling was not checked there");
  return Rep;
}

static json optNum(const std::optional<double> &V) { return V ? json(*V) : json(nullptr); }

json toJSON(const MeasureReport &R) {
  json J;
  J["schema"] = "kloop-measure/1";
  J["workload"] = R.Workload;
  J["l2"] = toString(R.L2).str();
  J["l2_note"] = R.L2Note;
  J["tracing"] = toString(R.Tracing).str();
  J["tracing_note"] = R.TracingNote;
  J["device"] = R.Device;
  if (R.Ceil)
    J["ceilings"] = {{"device", R.Ceil->Device}, {"copy_gbps", R.Ceil->CopyGBps},
                     {"fma_gflops_f32", R.Ceil->FmaGFlops}};
  else
    J["ceilings"] = nullptr;
  J["runs"] = json::object();
  for (const auto &[S, N] : R.RunsPerShape)
    J["runs"][S] = N;
  J["max_overhead_ns"] = R.MaxOverheadNs;
  J["notes"] = R.Notes;
  J["kernels"] = json::array();
  for (const KernelShapeStats &K : R.Kernels) {
    json E = {{"kernel", K.Kernel},
              {"shape", K.Shape},
              {"launches", K.Launches},
              {"discarded_throttled", K.Discarded},
              {"discarded_foreign", K.DiscardedForeign},
              {"n", K.Stats.N},
              {"median_ns", K.Stats.Median},
              {"p10_ns", K.Stats.P10},
              {"p90_ns", K.Stats.P90},
              {"p99_ns", K.Stats.P99},
              {"mean_ns", K.Stats.Mean},
              {"cv", K.Stats.CV},
              {"median_rel_ci95", std::isfinite(K.MedianRelCI) ? json(K.MedianRelCI) : json(nullptr)},
              {"gbps", optNum(K.GBps)},
              {"gflops", optNum(K.GFlops)},
              {"pct_copy_ceiling", optNum(K.PctCopy)},
              {"pct_fma_ceiling", optNum(K.PctFma)},
              {"measurement_errors", K.MeasurementErrors}};
    J["kernels"].push_back(std::move(E));
  }
  return J;
}

} // namespace measure
} // namespace kloop
