//===- ProfileCommand.cpp - `kloop profile` ---------------------------------===//
//
// kloop profile [-p BUILD_DIR] [-o FILE] [--bytes K=N] [--flops K=N] [--metrics] -- <command> [args...]
// Runs the command once under libkloop-cupti.so and lists its kernels by total GPU time
// (docs/profile.md; issue 16, item 2); with --metrics, runs it once more for hardware counters
// (KLOOP_CUPTI_METRICS=1; issue 15, item 2).
//
//===----------------------------------------------------------------------===//
#include "kloop/Driver/Command.h"
#include "kloop/Frontend/Frontend.h"
#include "kloop/Inventory/ExtractCache.h"
#include "kloop/Inventory/Inventory.h"
#include "kloop/Measure/Config.h"
#include "kloop/Measure/KernelProfile.h"
#include "kloop/Measure/Measure.h"
#include "kloop/Measure/ProgramProfile.h"
#include "kloop/Measure/Runner.h"
#include "kloop/Support/AtomicFile.h"
#include "kloop/Support/JSON.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace kloop;
using namespace kloop::measure;

namespace {
cl::SubCommand ProfileSub("profile", "Run a program once under CUPTI and list its kernels by GPU time");
cl::opt<std::string> BuildPathOpt("p",
                                  cl::desc("Build directory holding compile_commands.json: name each kernel by its "
                                           "inventory ID"),
                                  cl::value_desc("dir"), cl::sub(ProfileSub));
cl::opt<std::string> OutputOpt("o", cl::desc("Also write the profile as JSON (kloop-profile/1) to this file"),
                               cl::value_desc("file"), cl::sub(ProfileSub));
cl::list<std::string> BytesOpt("bytes",
                               cl::desc("DRAM bytes per launch of the kernels whose demangled name contains KERNEL "
                                        "(or whose inventory ID is KERNEL), for % of roofline; repeatable"),
                               cl::value_desc("KERNEL=N"), cl::sub(ProfileSub));
cl::list<std::string> FlopsOpt("flops", cl::desc("Floating-point operations per launch, as --bytes"),
                               cl::value_desc("KERNEL=N"), cl::sub(ProfileSub));
cl::opt<unsigned> TimeoutOpt("timeout", cl::desc("Kill the command after this many seconds (default 3600)"),
                             cl::init(3600), cl::sub(ProfileSub));
cl::opt<bool> NoCeilingsOpt("no-ceilings", cl::desc("Do not measure the GPU's ceilings (no % of roofline)"),
                            cl::sub(ProfileSub));
cl::opt<std::string> CeilingsCacheOpt("ceilings-cache",
                                      cl::desc("Ceilings cache file (default: $KLOOP_CACHE_DIR/ceilings.json, "
                                               "else ~/.cache/kloop/ceilings.json)"),
                                      cl::value_desc("file"), cl::sub(ProfileSub));
cl::opt<std::string> WorkDirOpt("work-dir",
                                cl::desc("Keep the command's stdout, stderr and the raw profile here (default: a "
                                         "temporary directory, removed after a successful run)"),
                                cl::value_desc("dir"), cl::sub(ProfileSub));
cl::opt<bool> MetricsOpt("metrics",
                          cl::desc("Run the command a second time with CUPTI's range profiler and show each kernel's "
                                   "hardware counters: DRAM bytes, L2 hit rate, occupancy and its limiter, bank "
                                   "conflicts, sectors per request, top warp stalls (a separate run: never timed)"),
                          cl::sub(ProfileSub));
cl::opt<unsigned> JobsOpt("j", cl::desc("Translation units parsed in parallel for -p (0: one per hardware thread)"),
                          cl::init(0), cl::Prefix, cl::sub(ProfileSub));

int usage(const Twine &Msg) {
  errs() << "kloop profile: error: " << Msg << "\n";
  return 2;
}

int fail(const Twine &Msg) {
  errs() << "kloop profile: error: " << Msg << "\n";
  return 1;
}

/// Adds the KERNEL=N entries of \p Values to \p Work (bytes or flops). "" when
/// all are well formed, else the reason naming the bad one.
std::string parseWork(const cl::list<std::string> &Values, const char *Flag, std::vector<KernelWork> &Work) {
  for (const std::string &V : Values) {
    auto [Kernel, Number] = StringRef(V).rsplit('=');
    uint64_t N = 0;
    if (Kernel.empty() || Number.empty() || Number.getAsInteger(10, N))
      return std::string("--") + Flag + " '" + V + "': expected KERNEL=N with N a non-negative integer";
    KernelWork W;
    W.Match = Kernel.str();
    (StringRef(Flag) == "bytes" ? W.Bytes : W.Flops) = N;
    Work.push_back(W);
  }
  return "";
}

/// The program to run, found as the shell would: "" and \p Why set when it is
/// not there or not executable.
std::string findCommand(StringRef Name, std::string &Why) {
  if (Name.contains('/')) {
    if (sys::fs::can_execute(Name) && !sys::fs::is_directory(Name))
      return Name.str();
    Why = "'" + Name.str() + "' is not an executable file";
    return "";
  }
  if (ErrorOr<std::string> P = sys::findProgramByName(Name))
    return *P;
  Why = "command not found: '" + Name.str() + "' (not on PATH)";
  return "";
}

/// The inventory's kernels of the compilation database in \p BuildDir.
Expected<std::vector<InventoryKernel>> inventoryOf(const std::vector<CompileJob> &Jobs, const FrontendOptions &Opts,
                                                   std::vector<std::string> &Problems) {
  std::string CacheDir = defaultExtractCacheDir();
  std::unique_ptr<ExtractCache> Cache =
      CacheDir.empty() ? nullptr : std::make_unique<ExtractCache>(CacheDir, executableId());
  std::vector<TUResult> Results = runInventory(Jobs, Opts, Cache.get());
  SmallString<256> Root;
  sys::fs::current_path(Root);
  Expected<inv::Inventory> Inv = typedInventory(Results, Root);
  if (!Inv)
    return Inv.takeError();
  for (const inv::TranslationUnit &TU : Inv->TranslationUnits)
    if (TU.Status == "error")
      Problems.push_back("-p: " + TU.File + " failed to parse; its kernels are not matched");
  return inventoryKernels(*Inv);
}

/// The ceilings of \p Device when any kernel's work is known, else none and why.
void attachCeilings(const std::string &Device, const std::string &WorkDir, ProgramProfileInputs &In) {
  if (In.Work.empty())
    return; // every kernel's roofline is n/a for want of work; measuring the GPU would only cost time
  if (NoCeilingsOpt) {
    In.NoCeilingsReason = "--no-ceilings";
    return;
  }
  if (Device.empty()) {
    In.NoCeilingsReason = "the profile names no device";
    return;
  }
  std::string Cache = CeilingsCacheOpt.empty() ? defaultCeilingsCachePath() : std::string(CeilingsCacheOpt);
  Expected<Ceilings> C = ensureCeilings(Device, Cache, WorkDir + "/ceilings");
  if (C)
    In.Ceil = *C;
  else
    In.NoCeilingsReason = toString(C.takeError());
}

std::string commandLine(const std::vector<std::string> &Argv) {
  std::vector<std::string> Quoted;
  for (const std::string &A : Argv)
    Quoted.push_back(shellQuote(A));
  return join(Quoted, " ");
}

/// The metrics run of --metrics: \p Req once more with KLOOP_CUPTI_METRICS=1. Its counters go into \p P
/// with what it cost against the timing run \p Timing; when there are none, a note of \p P says why
/// (the timing run's table stands either way).
void addCounters(ProgramRunRequest Req, const RunResult &Timing, ProgramProfile &P) {
  Req.Metrics = true;
  errs() << "kloop profile: metrics run (hardware counters through CUPTI's range profiler)\n";
  Expected<ProgramRun> Run = runProgramUnderCupti(Req);
  if (!Run) {
    P.Notes.push_back("hardware counters: the metrics run could not run: " + toString(Run.takeError()));
    return;
  }
  const RunResult *R = &Run->Result;
  if (R->ProfilePath.empty() || !sys::fs::exists(R->ProfilePath)) {
    P.Notes.push_back("hardware counters: the metrics run " + R->describe() +
                      " and libkloop-cupti.so wrote no profile; logs: " + R->StderrPath);
    return;
  }
  Expected<MetricsRun> M = readMetricsRun(R->ProfilePath);
  if (!M) {
    P.Notes.push_back("hardware counters: " + toString(M.takeError()));
    return;
  }
  std::vector<std::string> Problems;
  std::vector<KernelProfile> Profiles = kernelProfiles(*M, "", Problems);
  CountersRun C;
  C.TimingWallS = Timing.WallSeconds;
  C.MetricsWallS = R->WallSeconds;
  C.Chip = M->Chip;
  C.Passes = M->Passes;
  C.Profiled = Profiles.size();
  attachKernelProfiles(P, std::move(Profiles), C);
  P.Notes.insert(P.Notes.end(), Problems.begin(), Problems.end());
  if (!R->ok())
    P.Notes.push_back("hardware counters: the metrics run " + R->describe() + "; logs: " + R->StderrPath);
}

/// Prints the table (and writes -o); returns false when -o cannot be written.
bool report(const ProgramProfile &Prof, const std::vector<std::string> &Argv, const RunResult &R) {
  outs() << "kloop profile: " << terminalSafe(commandLine(Argv)) << " on "
         << (Prof.Device.empty() ? std::string("(no device recorded)") : Prof.Device) << ": "
         << Prof.Kernels.size() << " kernel(s), " << Prof.Launches << " launch(es), "
         << format("%.3f ms", double(Prof.TotalNs) / 1e6) << " of GPU time\n";
  outs() << formatProgramTable(Prof);
  for (const std::string &N : Prof.Notes)
    outs() << "note: " << terminalSafe(N) << "\n";
  if (OutputOpt.empty())
    return true;
  nlohmann::json J = toJSON(Prof);
  J["command"] = Argv;
  J["run"] = {{"status", toString(R.Status).str()}, {"exit_code", R.ExitCode}, {"signal", R.Signal},
              {"wall_s", R.WallSeconds}};
  if (Error E = writeFileAtomically(OutputOpt, dumpJSON(J, 2) + "\n")) {
    errs() << "kloop profile: error: " << toString(std::move(E)) << "\n";
    return false;
  }
  return true;
}

int runProfile(const CommandContext &Ctx) {
  const std::vector<std::string> &Argv = Ctx.ExtraArgs;
  if (Argv.empty())
    return usage("no command to profile: kloop profile [options] -- <command> [args...]");
  std::vector<KernelWork> Work;
  if (std::string Why = parseWork(BytesOpt, "bytes", Work); !Why.empty())
    return usage(Why);
  if (std::string Why = parseWork(FlopsOpt, "flops", Work); !Why.empty())
    return usage(Why);
  if (TimeoutOpt == 0)
    return usage("--timeout must be at least 1 second");
  if (!OutputOpt.empty())
    if (std::string Why = checkOutputFile(OutputOpt); !Why.empty())
      return usage(Why);
  std::string Why;
  if (findCommand(Argv[0], Why).empty())
    return fail(Why);

  // -p is checked before the run: a bad build directory must not cost a run.
  FrontendOptions FOpts;
  FOpts.BuildPath = BuildPathOpt;
  FOpts.Jobs = JobsOpt;
  std::vector<CompileJob> Jobs;
  if (!BuildPathOpt.empty()) {
    Expected<std::vector<CompileJob>> Planned = planCompileJobs(FOpts);
    if (!Planned)
      return fail("-p " + BuildPathOpt + ": " + toString(Planned.takeError()));
    Jobs = std::move(*Planned);
  }

  Expected<std::string> Lib = findCuptiLibrary(Ctx.Argv0.c_str(), reinterpret_cast<void *>(&runProfile));
  if (!Lib)
    return fail(toString(Lib.takeError()));
  Expected<std::string> Gpu = probeGpu();
  if (!Gpu) {
    errs() << "kloop profile: skipped: " << toString(Gpu.takeError()) << "\n";
    return 1;
  }

  bool TempWorkDir = WorkDirOpt.empty();
  SmallString<256> WorkDir(WorkDirOpt);
  if (TempWorkDir) {
    if (std::error_code EC = sys::fs::createUniqueDirectory("kloop-profile", WorkDir))
      return fail("cannot create a temporary directory: " + EC.message());
  }
  sys::fs::make_absolute(WorkDir);
  SmallString<256> Cwd;
  sys::fs::current_path(Cwd);

  ProgramRunRequest Req;
  Req.Command = commandLine(Argv);
  Req.Cwd = std::string(Cwd);
  Req.TimeoutS = TimeoutOpt;
  Req.WorkDir = std::string(WorkDir);
  Req.CuptiLib = *Lib;
  errs() << "kloop profile: running " << terminalSafe(Req.Command) << " on " << *Gpu << "\n";
  Expected<ProgramRun> Run = runProgramUnderCupti(Req);
  if (!Run)
    return fail(toString(Run.takeError()));
  const RunResult *Res = &Run->Result;

  if (!Res->ok() && saysNoCudaDevice(Res->StderrTail)) {
    errs() << "kloop profile: skipped: no usable GPU: the command reports no CUDA device: " << Res->StderrTail
           << "\n";
    return 1;
  }
  std::optional<verify::Profile> &Prof = Run->Profile;
  if (!Prof) {
    std::string How = Res->Status == RunStatus::MissingProfile ? "exited 0 but" : Res->describe() + " and";
    errs() << "kloop profile: error: the command " << How
           << " libkloop-cupti.so wrote no readable profile (it launched no CUDA work, or it ended without "
              "running its exit handlers)\n  logs: "
           << Res->StdoutPath << ", " << Res->StderrPath << "\n";
    return 1;
  }

  ProgramProfileInputs In;
  In.Work = std::move(Work);
  std::vector<std::string> Problems;
  if (!BuildPathOpt.empty()) {
    Expected<std::vector<InventoryKernel>> Inv = inventoryOf(Jobs, FOpts, Problems);
    if (!Inv)
      return fail("-p " + BuildPathOpt + ": " + toString(Inv.takeError()));
    In.Inventory = std::move(*Inv);
  }
  attachCeilings(Prof->Device.Name, std::string(WorkDir), In);
  ProgramProfile P = summarizeProgram(*Prof, In);
  P.Notes.insert(P.Notes.end(), Problems.begin(), Problems.end());
  if (MetricsOpt && Res->ok())
    addCounters(Req, *Res, P);
  if (!report(P, Argv, *Res))
    return 1;

  if (!Res->ok()) {
    errs() << "kloop profile: the command " << Res->describe() << "; the table shows what ran before it ended\n"
           << "  logs: " << Res->StdoutPath << ", " << Res->StderrPath << "\n";
    if (!Res->StderrTail.empty())
      errs() << "  stderr:\n    | " << join(split(terminalSafe(Res->StderrTail), '\n'), "\n    | ") << "\n";
    return 1;
  }
  if (TempWorkDir)
    sys::fs::remove_directories(WorkDir);
  return 0;
}

CommandRegistration Reg(ProfileSub, runProfile);
} // namespace
