//===- CaptureCommand.cpp - `kloop capture`: record launches for replay ---===//
///
/// kloop capture [--kernel NAME]... [--launches N] [--timeout S] [--cost] -o DIR -- PROGRAM ARGS...
///
/// Runs PROGRAM once under libkloop-cupti.so and writes the first N launches
/// of each target kernel and launch configuration, with the device memory
/// they read and write, to the new directory DIR (docs/capture.md). Prints
/// what was captured, refused and skipped. Exit 0 when at least one launch
/// was captured; 1 when the program fails, nothing was captured or DIR
/// cannot be written (nothing is left at DIR then); 2 on usage errors.
///
//===----------------------------------------------------------------------===//
#include "kloop/Capture/Capture.h"
#include "kloop/Capture/Record.h"
#include "kloop/Driver/Command.h"
#include "kloop/Measure/Runner.h"
#include "kloop/Support/Path.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace llvm;
using namespace kloop;

namespace {

cl::SubCommand CaptureSub("capture", "Run a program once and capture its kernel launches for replay");
cl::list<std::string> KernelOpt("kernel",
                                cl::desc("Target kernel: a substring of its mangled or demangled name "
                                         "(repeatable; default: every kernel)"),
                                cl::value_desc("name"), cl::sub(CaptureSub));
cl::opt<unsigned> LaunchesOpt("launches", cl::desc("Launches captured per kernel and launch configuration (default 1)"),
                              cl::value_desc("n"), cl::init(1), cl::sub(CaptureSub));
cl::opt<std::string> OutOpt("o", cl::desc("Capture directory to create (must not exist)"), cl::value_desc("dir"),
                            cl::sub(CaptureSub));
cl::opt<unsigned> TimeoutOpt("timeout", cl::desc("Wall-clock limit of the program, seconds (default 600)"),
                             cl::value_desc("s"), cl::init(600), cl::sub(CaptureSub));
cl::opt<bool> CostOpt("cost",
                      cl::desc("Also run the program without capture: report the cost and whether its stdout "
                               "changed"),
                      cl::sub(CaptureSub));

std::string mib(uint64_t Bytes) {
  return formatv("{0:f1} MiB", static_cast<double>(Bytes) / (1024.0 * 1024.0)).str();
}

void printKernels(raw_ostream &OS, const capture::RecordResult &R) {
  std::map<std::string, capture::KernelTotals> Totals = capture::kernelTotals(R.M);
  std::vector<std::string> Order;
  for (const auto &KV : Totals)
    Order.push_back(KV.first);
  auto Gpu = [&](const std::string &K) {
    auto It = R.GpuTime.find(K);
    return It == R.GpuTime.end() ? capture::KernelGpuTime() : It->second;
  };
  std::stable_sort(Order.begin(), Order.end(),
                   [&](const std::string &A, const std::string &B) { return Gpu(A).TotalNs > Gpu(B).TotalNs; });
  OS << format("  %-48s %8s %7s %7s %12s %14s\n", "kernel (by GPU time)", "captured", "configs", "refused",
               "bytes", "GPU time");
  for (const std::string &K : Order) {
    const capture::KernelTotals &T = Totals[K];
    capture::KernelGpuTime G = Gpu(K);
    std::string Name = terminalSafe(T.Name);
    if (Name.size() > 48)
      Name = Name.substr(0, 45) + "...";
    OS << format("  %-48s %8u %7u %7u %12s %11.3f ms\n", Name.c_str(), T.Launches, T.Configs, T.Refused,
                 std::to_string(T.Bytes).c_str(), static_cast<double>(G.TotalNs) / 1e6);
  }
}

void printSummary(raw_ostream &OS, const capture::RecordResult &R) {
  const capture::Manifest &M = R.M;
  unsigned Kernels = 0;
  for (const auto &KV : capture::kernelTotals(M))
    Kernels += KV.second.Launches > 0;
  OS << "kloop capture: " << R.Dir << ": " << M.Launches.size() << " launch(es) of " << Kernels
     << " kernel(s) captured, " << M.Refusals.size() << " refused, " << M.LaunchesSkipped
     << " skipped (past the first " << M.LaunchesPerConfig << " per launch configuration)\n";
  OS << "  device memory per replay of every launch: " << mib(capture::capturedBytes(M)) << "; blobs on disk: "
     << mib(R.BlobBytes) << " (" << capture::compressionName(M.Blobs) << ")\n";
  printKernels(OS, R);
  for (const auto &[Reason, N] : capture::refusalReasons(M))
    OS << "  refused " << N << " launch(es): " << terminalSafe(Reason) << "\n";
  OS << "  globals: " << M.GlobalsNote << "\n";
  OS << formatv("  capture cost: {0:f3} s inside the program, {1} copied from the device; captured run {2:f2} s",
                static_cast<double>(M.Cost.CaptureNs) / 1e9, mib(M.Cost.BytesCopied), R.CapturedWallS);
  if (R.UncapturedWallS)
    OS << format(", uncaptured run %.2f s (%+.2f s); the program's stdout %s", *R.UncapturedWallS,
                 R.CapturedWallS - *R.UncapturedWallS, *R.SameStdout ? "is identical" : "DIFFERS (see run.stdout)");
  OS << "\n";
  for (const std::string &E : M.Errors)
    OS << "  warning: " << terminalSafe(E) << "\n";
}

int runCapture(const CommandContext &Ctx) {
  auto Usage = [](const Twine &Msg) {
    errs() << "kloop capture: error: " << Msg << "\n";
    return 2;
  };
  if (OutOpt.empty())
    return Usage("-o DIR is required: the capture directory to create");
  if (!Ctx.HasDoubleDash || Ctx.ExtraArgs.empty())
    return Usage("no program to run: give it after --, e.g. kloop capture -o cap -- ./app args");
  if (LaunchesOpt == 0)
    return Usage("--launches must be at least 1");
  if (TimeoutOpt == 0)
    return Usage("--timeout must be at least 1 second");

  capture::RecordOptions O;
  O.Command = Ctx.ExtraArgs;
  SmallString<256> Cwd;
  sys::fs::current_path(Cwd);
  O.Cwd = Cwd.str().str();
  O.OutDir = absolutePath(StringRef(OutOpt).rtrim('/'), O.Cwd); // "cap/" names the directory cap
  O.Kernels.assign(KernelOpt.begin(), KernelOpt.end());
  O.LaunchesPerConfig = LaunchesOpt;
  O.TimeoutS = TimeoutOpt;
  O.MeasureCost = CostOpt;
  Expected<std::string> Lib = measure::findCuptiLibrary(Ctx.Argv0.c_str(), reinterpret_cast<void *>(&runCapture));
  if (!Lib) {
    errs() << "kloop capture: error: " << toString(Lib.takeError()) << "\n";
    return 1;
  }
  O.CuptiLib = *Lib;

  Expected<capture::RecordResult> R = capture::recordCapture(O);
  if (!R) {
    errs() << "kloop capture: error: " << toString(R.takeError()) << "\n";
    return 1;
  }
  printSummary(outs(), *R);
  return 0;
}

CommandRegistration Reg(CaptureSub, runCapture);

} // namespace
