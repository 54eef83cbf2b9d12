//===- MeasureCommand.cpp - kloop measure ---------------------------------===//
//
// kloop measure --config .kloop.yaml [--build-dir DIR] [--runs N | --target-ci 0.02]
//               [--shape NAME]... [-o out.json]
// Builds the workload, runs it under libkloop-cupti.so and prints per kernel and
// shape: n, median, p10, p90, p99, CV, achieved GB/s and GFLOP/s, % of the
// measured ceilings. docs/measure.md.
//
//===----------------------------------------------------------------------===//
#include "kloop/Driver/Command.h"
#include "kloop/Support/JSON.h"
#include "kloop/Support/AtomicFile.h"
#include "kloop/Measure/Config.h"
#include "kloop/Measure/Measure.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <cmath>

using namespace llvm;
using namespace kloop;
using namespace kloop::measure;

static cl::SubCommand MeasureSub("measure", "Build and run a workload under CUPTI; print per-kernel timing statistics");

static cl::opt<std::string> ConfigPath("config", cl::desc("Workload description (.kloop.yaml)"),
                                       cl::value_desc("file"), cl::sub(MeasureSub), cl::init(".kloop.yaml"));
static cl::opt<std::string> BuildDirOpt("build-dir", cl::desc("Build directory ({build_dir}); default <config dir>/.kloop/build"),
                                        cl::value_desc("dir"), cl::sub(MeasureSub));
static cl::opt<std::string> WorkDirOpt("work-dir", cl::desc("Logs and profiles; default <build dir>/kloop-measure"),
                                       cl::value_desc("dir"), cl::sub(MeasureSub));
static cl::opt<unsigned> RunsOpt("runs", cl::desc("Runs of the workload per shape (default 5)"), cl::sub(MeasureSub),
                                 cl::init(5));
static cl::opt<double> TargetCIOpt("target-ci",
                                   cl::desc("Run until the relative 95% CI width of every median is below this "
                                            "(e.g. 0.02), at most --max-runs runs"),
                                   cl::sub(MeasureSub), cl::init(0));
static cl::opt<unsigned> MaxRunsOpt("max-runs", cl::desc("Cap on runs per shape with --target-ci (default 30)"),
                                    cl::sub(MeasureSub), cl::init(30));
static cl::list<std::string> ShapeOpt("shape", cl::desc("Only this shape (repeatable)"), cl::value_desc("name"),
                                      cl::sub(MeasureSub));
static cl::opt<unsigned> SeedOpt("seed", cl::desc("Input seed ({seed}, default 0)"), cl::sub(MeasureSub), cl::init(0));
static cl::opt<unsigned> WarmupOpt("warmup",
                                   cl::desc("Launches of each target kernel discarded at the start of every run "
                                            "(default 1)"),
                                   cl::sub(MeasureSub), cl::init(1));
static cl::opt<bool> NoBuildOpt("no-build", cl::desc("Skip build.command (the build directory is up to date)"),
                                cl::sub(MeasureSub));
static cl::opt<bool> NoCeilingsOpt("no-ceilings", cl::desc("Do not measure or report the GPU's ceilings"),
                                   cl::sub(MeasureSub));
static cl::opt<std::string> CeilingsCacheOpt("ceilings-cache",
                                             cl::desc("Ceilings cache file (default ~/.cache/kloop/ceilings.json)"),
                                             cl::value_desc("file"), cl::sub(MeasureSub));
static cl::opt<std::string> OutputOpt("o", cl::desc("Also write the results as JSON (kloop-measure/1)"),
                                      cl::value_desc("file"), cl::sub(MeasureSub));

static std::string fmtNs(double Ns) {
  char B[32];
  if (Ns >= 1e6)
    snprintf(B, sizeof(B), "%.3f ms", Ns / 1e6);
  else
    snprintf(B, sizeof(B), "%.2f us", Ns / 1e3);
  return B;
}

static std::string fmtOpt(const std::optional<double> &V, const char *Fmt) {
  if (!V)
    return "-";
  char B[32];
  snprintf(B, sizeof(B), Fmt, *V);
  return B;
}

static std::string absPath(StringRef P) {
  SmallString<256> A(P);
  sys::fs::make_absolute(A);
  sys::path::remove_dots(A, true);
  return A.str().str();
}

static int runMeasure(const CommandContext &Ctx) {
  raw_ostream &OS = outs();
  if (TargetCIOpt.getNumOccurrences() && RunsOpt.getNumOccurrences()) {
    errs() << "kloop measure: error: --runs and --target-ci are exclusive\n";
    return 2;
  }
  if (TargetCIOpt.getNumOccurrences() && !(TargetCIOpt > 0 && TargetCIOpt < 1)) {
    errs() << "kloop measure: error: --target-ci must be in (0, 1), e.g. 0.02\n";
    return 2;
  }
  if (RunsOpt == 0) {
    errs() << "kloop measure: error: --runs must be at least 1\n";
    return 2;
  }
  Expected<WorkloadConfig> C = loadConfig(ConfigPath);
  if (!C) {
    errs() << toString(C.takeError()) << "\n";
    return 1;
  }

  // An unknown --shape is named even on a machine without a GPU.
  for (const std::string &Name : ShapeOpt)
    if (none_of(C->Shapes, [&](const ShapeSpec &S) { return S.Name == Name; })) {
      std::string Known;
      for (const ShapeSpec &S : C->Shapes)
        Known += (Known.empty() ? "" : ", ") + S.Name;
      errs() << "kloop measure: error: " << C->Path << ": no shape named '" << Name << "' (shapes: " << Known << ")\n";
      return 1;
    }

  auto usage = [](const Twine &Msg) {
    errs() << "kloop measure: error: " << Msg << "\n";
    return 2;
  };
  // Checked before any build or run: a long measurement must not end in "cannot write".
  if (!OutputOpt.empty())
    if (std::string Why = checkOutputFile(OutputOpt); !Why.empty())
      return usage(Why);
  if (std::string Why = warmupProblem(WarmupOpt, *C); !Why.empty())
    return usage(Why);

  // No GPU: say so plainly and stop before building anything.
  Expected<std::string> Gpu = probeGpu();
  if (!Gpu) {
    std::string Why = toString(Gpu.takeError());
    errs() << "kloop measure: measurement skipped: " << Why << "\n";
    return 1;
  }

  MeasureOptions O;
  O.SourceDir = C->Dir;
  O.BuildDir = absPath(BuildDirOpt.empty() ? C->Dir + "/.kloop/build" : std::string(BuildDirOpt));
  O.WorkDir = absPath(WorkDirOpt.empty() ? O.BuildDir + "/kloop-measure" : std::string(WorkDirOpt));
  O.Build = !NoBuildOpt;
  O.Runs = RunsOpt;
  if (TargetCIOpt.getNumOccurrences())
    O.TargetRelCI = TargetCIOpt;
  O.MaxRuns = MaxRunsOpt;
  O.Shapes.assign(ShapeOpt.begin(), ShapeOpt.end());
  O.Seed = SeedOpt;
  O.Warmup = WarmupOpt;
  Expected<std::string> Lib = findCuptiLibrary(Ctx.Argv0.c_str(), reinterpret_cast<void *>(&runMeasure));
  if (!Lib) {
    errs() << "kloop measure: error: " << toString(Lib.takeError()) << "\n";
    return 1;
  }
  O.CuptiLib = *Lib;

  OS << "kloop measure: " << C->Name << " (" << C->Path << ") on " << *Gpu << "\n";
  Expected<MeasureReport> Rep = measureWorkload(*C, O, [](StringRef Line) { errs() << "  " << Line << "\n"; });
  if (!Rep) {
    std::string Prefix = "kloop measure: error: ", Msg;
    handleAllErrors(
        Rep.takeError(),
        [&](const NoGpuError &E) {
          Prefix = "kloop measure: measurement skipped: no usable GPU: ";
          Msg = E.Reason;
        },
        [&](const DirtyGpuError &E) {
          Prefix = "kloop measure: stopped: ";
          Msg = E.message();
        },
        [&](const ErrorInfoBase &E) { Msg = E.message(); });
    errs() << Prefix << Msg << "\n";
    return 1;
  }

  if (!NoCeilingsOpt && !Rep->Device.empty()) {
    std::string Cache = CeilingsCacheOpt.empty() ? defaultCeilingsCachePath() : std::string(CeilingsCacheOpt);
    Expected<Ceilings> Ceil = ensureCeilings(Rep->Device, Cache, O.WorkDir + "/ceilings");
    if (Ceil) {
      Rep->Ceil = *Ceil;
      for (KernelShapeStats &K : Rep->Kernels)
        if (const ShapeSpec *S = C->findShape(K.Shape))
          attachRates(K, *S, Rep->Ceil);
    } else {
      Rep->Notes.push_back("ceilings unavailable: " + toString(Ceil.takeError()));
    }
  } else if (!NoCeilingsOpt) {
    Rep->Notes.push_back("ceilings not measured: the profiles name no device");
  }
  // Rates without ceilings when ceilings are off or failed.
  if (!Rep->Ceil)
    for (KernelShapeStats &K : Rep->Kernels)
      if (const ShapeSpec *S = C->findShape(K.Shape))
        attachRates(K, *S, std::nullopt);

  OS << Rep->L2Note << "\n" << Rep->TracingNote << "\n";
  if (Rep->Ceil)
    OS << format("ceilings of %s: copy %.1f GB/s (read+write), f32 FMA %.1f GFLOP/s\n", Rep->Ceil->Device.c_str(),
                 Rep->Ceil->CopyGBps, Rep->Ceil->FmaGFlops);
  OS << format("%-12s %-40s %5s %6s %11s %11s %11s %11s %7s %9s %6s %10s %6s %9s %7s\n", "shape", "kernel", "runs",
               "n", "median", "p10", "p90", "p99", "CV", "GB/s", "%copy", "GFLOP/s", "%fma", "throttled", "foreign");
  unsigned Errors = 0;
  for (const KernelShapeStats &K : Rep->Kernels) {
    unsigned Runs = 0;
    for (auto &[S, N] : Rep->RunsPerShape)
      if (S == K.Shape)
        Runs = N;
    std::string Kernel = K.Kernel.size() > 40 ? K.Kernel.substr(0, 37) + "..." : K.Kernel;
    if (K.Stats.N == 0) {
      OS << format("%-12s %-40s %5u %6u %11s  (%zu throttled, %zu foreign)\n", K.Shape.c_str(), Kernel.c_str(), Runs,
                   0u, "all discarded", K.Discarded, K.DiscardedForeign);
      continue;
    }
    OS << format("%-12s %-40s %5u %6zu %11s %11s %11s %11s %7.4f %9s %6s %10s %6s %9zu %7zu\n", K.Shape.c_str(),
                 Kernel.c_str(), Runs, K.Stats.N, fmtNs(K.Stats.Median).c_str(), fmtNs(K.Stats.P10).c_str(),
                 fmtNs(K.Stats.P90).c_str(), fmtNs(K.Stats.P99).c_str(), K.Stats.CV,
                 fmtOpt(K.GBps, "%.1f").c_str(), fmtOpt(K.PctCopy, "%.0f%%").c_str(),
                 fmtOpt(K.GFlops, "%.1f").c_str(), fmtOpt(K.PctFma, "%.0f%%").c_str(), K.Discarded,
                 K.DiscardedForeign);
    for (const std::string &E : K.MeasurementErrors) {
      OS << "  " << K.Shape << " " << Kernel << ": " << E << "\n";
      ++Errors;
    }
  }
  if (Rep->MaxOverheadNs)
    OS << format("injection overhead: at most %.3f ms in callbacks per run\n", Rep->MaxOverheadNs / 1e6);
  for (const std::string &N : Rep->Notes)
    OS << "note: " << N << "\n";

  if (!OutputOpt.empty()) {
    if (Error E = writeFileAtomically(OutputOpt, dumpJSON(toJSON(*Rep), 2) + "\n")) {
      errs() << "kloop measure: error: " << toString(std::move(E)) << "\n";
      return 1;
    }
  }
  if (Errors) {
    errs() << "kloop measure: " << Errors << " MEASUREMENT ERROR(S): figures above a measured ceiling are not "
           << "results; fix the workload's L2 policy or its bytes/flops\n";
    return 1;
  }
  return 0;
}

static CommandRegistration Registration(MeasureSub, runMeasure);
