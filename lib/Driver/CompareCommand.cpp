//===- CompareCommand.cpp - kloop compare ---------------------------------===//
//
// kloop compare --config .kloop.yaml BASELINE_DIR CANDIDATE_DIR [-o out.json]
// kloop compare --recheck run.db [--run N] [--config .kloop.yaml] [--work-dir DIR] [-o recheck.json]
// Builds both source directories, runs them interleaved per shape and seed with
// output capture, verifies outputs and decides per kernel and shape. Exit 0 if
// the candidate is accepted, 1 if refused or on error, 2 on usage errors.
// docs/measure.md.
//
//===----------------------------------------------------------------------===//
#include "kloop/Driver/Command.h"
#include "kloop/Support/JSON.h"
#include "kloop/Support/AtomicFile.h"
#include "kloop/Journal/Journal.h"
#include "kloop/Measure/Compare.h"
#include "kloop/Optimize/Recheck.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <cmath>

using namespace llvm;
using namespace kloop;
using namespace kloop::measure;
using nlohmann::json;

static cl::SubCommand CompareSub("compare",
                                 "Compare a candidate source directory against a baseline: outputs and speed, "
                                 "per kernel and shape");

static cl::opt<std::string> ConfigPath("config", cl::desc("Workload description (.kloop.yaml)"),
                                       cl::value_desc("file"), cl::sub(CompareSub), cl::init(".kloop.yaml"));
static cl::list<std::string> Dirs(cl::Positional, cl::desc("BASELINE_DIR CANDIDATE_DIR"), cl::sub(CompareSub));
static cl::opt<std::string> WorkDirOpt("work-dir", cl::desc("Builds and runs (default: a new temporary directory)"),
                                       cl::value_desc("dir"), cl::sub(CompareSub));
static cl::opt<unsigned> RoundsOpt("rounds", cl::desc("Timing rounds A B per shape and seed (default 3)"),
                                   cl::sub(CompareSub), cl::init(3));
static cl::opt<unsigned> VerifyJobsOpt("verify-jobs",
                                       cl::desc("Verification runs (capture, determinism) made side by side on "
                                                "the GPU; never beside a timing run (default 4)"),
                                       cl::sub(CompareSub), cl::init(4));
static cl::opt<unsigned> WarmupOpt("warmup", cl::desc("Launches of each target discarded per run (default 1)"),
                                   cl::sub(CompareSub), cl::init(1));
static cl::list<std::string> ShapeOpt("shape", cl::desc("Only this shape (repeatable)"), cl::value_desc("name"),
                                      cl::sub(CompareSub));
static cl::opt<bool> SearchOnlyOpt("search-only",
                                   cl::desc("Skip held-out shapes and seeds (a search step, not final acceptance)"),
                                   cl::sub(CompareSub));
static cl::opt<unsigned> MaxSeedsOpt("max-seeds",
                                     cl::desc("Screening: verify and time only the first N search seeds (needs "
                                              "--search-only; 0 = all, the default)"),
                                     cl::sub(CompareSub), cl::init(0));
static cl::opt<std::string> BaseCacheOpt("baseline-build-cache",
                                         cl::desc("Reuse baseline builds kept in this directory, keyed by the "
                                                  "SHA-256 of its sources and protected files"),
                                         cl::value_desc("dir"), cl::sub(CompareSub));
static cl::opt<double> MinGainOpt("min-gain", cl::desc("CI lower bound must exceed 1 + this (default 0.02)"),
                                  cl::sub(CompareSub), cl::init(0.02));
static cl::opt<double> P99TolOpt("p99-tolerance", cl::desc("Allowed relative p99 regression (default 0.05)"),
                                 cl::sub(CompareSub), cl::init(0.05));
static cl::opt<std::string> RecheckOpt(
    "recheck",
    cl::desc("Re-measure the change a kloop optimize run accepted, as its final check measured it, and say per "
             "kernel and shape whether the speed-up falls inside the run's 95% CI (exit 0: every pair, 3: not all)"),
    cl::value_desc("journal"), cl::sub(CompareSub));
static cl::opt<int64_t> RunOpt("run", cl::desc("With --recheck: the run of the journal (default: the latest)"),
                               cl::init(0), cl::sub(CompareSub));
static cl::opt<std::string> OutputOpt("o", cl::desc("Also write the result as JSON (kloop-compare/1)"),
                                      cl::value_desc("file"), cl::sub(CompareSub));

static std::string absPath(StringRef P) {
  SmallString<256> A(P);
  sys::fs::make_absolute(A);
  sys::path::remove_dots(A, true);
  return A.str().str();
}

/// "1.234x [1.200, 1.250]".
static std::string speedupText(double Estimate, double Lower, double Upper) {
  char B[64];
  snprintf(B, sizeof(B), "%.3fx [%.3f, %.3f]", Estimate, Lower, Upper);
  return B;
}

static std::string us(const std::optional<decide::Summary> &S, double decide::Summary::*F) {
  if (!S)
    return "-";
  char B[32];
  snprintf(B, sizeof(B), "%.2f us", (*S).*F / 1e3);
  return B;
}

/// Says what is wrong with the command line; returns the exit code 2.
static int usageError(const Twine &Msg) {
  errs() << "kloop compare: error: " << Msg << "\n";
  return 2;
}

/// Where a compare runs: the GPU (nvidia-smi's line), libkloop-cupti.so and the work directory (absolute).
struct Machine {
  std::string Gpu, CuptiLib, WorkDir;
};

/// Probes the GPU, finds libkloop-cupti.so and makes the work directory (--work-dir, else a new
/// temporary one); std::nullopt after saying why not.
static std::optional<Machine> prepareMachine(const CommandContext &Ctx) {
  Expected<std::string> Gpu = probeGpu();
  if (!Gpu) {
    errs() << "kloop compare: comparison skipped: " << toString(Gpu.takeError()) << "\n";
    return std::nullopt;
  }
  Expected<std::string> Lib = findCuptiLibrary(Ctx.Argv0.c_str(), reinterpret_cast<void *>(&prepareMachine));
  if (!Lib) {
    errs() << "kloop compare: error: " << toString(Lib.takeError()) << "\n";
    return std::nullopt;
  }
  Machine M{*Gpu, *Lib, absPath(WorkDirOpt)};
  if (WorkDirOpt.empty()) {
    SmallString<128> D;
    if (std::error_code EC = sys::fs::createUniqueDirectory("kloop-compare", D)) {
      errs() << "kloop compare: error: cannot create a work directory: " << EC.message() << "\n";
      return std::nullopt;
    }
    M.WorkDir = D.str().str();
  }
  return M;
}

/// Prints a compare that could not finish (no GPU, a GPU that did not drain, a baseline failure, ...);
/// returns the exit code 1.
static int compareError(Error E) {
  std::string Prefix = "kloop compare: error: ", Msg;
  handleAllErrors(
      std::move(E),
      [&](const NoGpuError &E) {
        Prefix = "kloop compare: comparison skipped: no usable GPU: ";
        Msg = E.Reason;
      },
      [&](const DirtyGpuError &E) {
        Prefix = "kloop compare: stopped: ";
        Msg = E.message();
      },
      [&](const ErrorInfoBase &E) { Msg = E.message(); });
  errs() << Prefix << Msg << "\n";
  return 1;
}

/// The output checks, the per-shape table, the time split and the verdict of \p R.
static void printCompare(raw_ostream &OS, const CompareResult &R) {
  for (const std::string &N : R.Notes)
    OS << "note: " << N << "\n";
  for (const auto &S : R.Seeds)
    OS << "outputs " << S.Shape << " seed " << S.Seed << (S.HeldOut ? " (held out)" : "") << ": "
       << (S.Matched ? "match" : "DIFFER") << ": " << S.Explanation << "\n";
  if (R.Verdict) {
    OS << format("%-12s %-16s %12s %12s %26s %12s %12s  %s\n", "shape", "kernel", "base median", "cand median",
                 "speed-up [95% CI]", "base p99", "cand p99", "verdict");
    for (const decide::ShapeVerdict &V : R.Verdict->Shapes) {
      std::string SU = V.Speedup ? speedupText(V.Speedup->Estimate, V.Speedup->Lower, V.Speedup->Upper) : "-";
      OS << format("%-12s %-16s %12s %12s %26s %12s %12s  %s\n", (V.Shape + (V.HeldOutShape ? "*" : "")).c_str(),
                   V.Kernel.c_str(), us(V.Baseline, &decide::Summary::Median).c_str(),
                   us(V.Candidate, &decide::Summary::Median).c_str(), SU.c_str(),
                   us(V.Baseline, &decide::Summary::P99).c_str(), us(V.Candidate, &decide::Summary::P99).c_str(),
                   decide::verdictName(V.Outcome).str().c_str());
    }
    OS << "(* held-out shape)\n";
    if (R.Verdict->GeomeanSpeedup)
      OS << format("geomean speed-up over the rows above (not a decision input): %.3fx\n",
                   *R.Verdict->GeomeanSpeedup);
  }
  OS << "throttled samples discarded: " << R.ThrottledDiscarded
     << ", foreign GPU load samples discarded: " << R.ForeignDiscarded << "\n";
  OS << formatv("time: builds {0:f1} s, verification runs {1:f1} s, timing runs {2:f1} s, decision {3:f2} s "
                "({4} workload runs)\n",
                R.BuildSeconds, R.VerifySeconds, R.TimingSeconds, R.DecideSeconds, R.Runs);
  for (const std::string &P : R.ProtectedChanges)
    OS << "protected: " << P << "\n";
  OS << (R.Accepted ? "ACCEPTED: " : "REFUSED: ") << R.Explanation << "\n";
}

/// Writes \p J to the -o file; false (after saying why) when it cannot.
static bool writeJSON(const json &J) {
  if (Error E = writeFileAtomically(OutputOpt, dumpJSON(J, 2) + "\n")) {
    errs() << "kloop compare: error: " << toString(std::move(E)) << "\n";
    return false;
  }
  return true;
}

static int runRecheck(const CommandContext &Ctx);

static int runCompare(const CommandContext &Ctx) {
  raw_ostream &OS = outs();
  if (!RecheckOpt.empty())
    return runRecheck(Ctx);
  if (RunOpt.getNumOccurrences())
    return usageError("--run names a run of the journal given to --recheck");
  if (Dirs.size() != 2) {
    errs() << "kloop compare: error: expected BASELINE_DIR CANDIDATE_DIR\n";
    return 2;
  }
  Expected<WorkloadConfig> C = loadConfig(ConfigPath);
  if (!C) {
    errs() << toString(C.takeError()) << "\n";
    return 1;
  }
  // The command line is checked before the GPU, so that a machine without one
  // still says what is wrong with it.
  for (const std::string &D : Dirs)
    if (!sys::fs::is_directory(D)) {
      errs() << "kloop compare: error: source directory '" << absPath(D) << "' "
             << (sys::fs::exists(D) ? "is not a directory" : "does not exist") << "\n";
      return 1;
    }
  auto usage = usageError;
  if (RoundsOpt < 1)
    return usage("--rounds must be at least 1");
  if (VerifyJobsOpt < 1)
    return usage("--verify-jobs must be at least 1");
  // Checked before any build or run: an hour of GPU work must not end in "cannot write".
  if (!OutputOpt.empty())
    if (std::string Why = checkOutputFile(OutputOpt); !Why.empty())
      return usage(Why);
  if (MaxSeedsOpt && !SearchOnlyOpt)
    return usage("--max-seeds screens a search step; a final acceptance (without --search-only) checks every seed");
  if (!(MinGainOpt >= 0) || std::isinf(MinGainOpt))
    return usage("--min-gain must be a fraction >= 0 (0.02: 2%), not " + formatv("{0}", MinGainOpt.getValue()).str());
  if (!(P99TolOpt >= 0) || std::isinf(P99TolOpt))
    return usage("--p99-tolerance must be a fraction >= 0 (0.05: 5%), not " +
                 formatv("{0}", P99TolOpt.getValue()).str());
  for (const std::string &Name : ShapeOpt)
    if (none_of(C->Shapes, [&](const ShapeSpec &S) { return S.Name == Name; })) {
      std::string Known;
      for (const ShapeSpec &S : C->Shapes)
        Known += (Known.empty() ? "" : ", ") + S.Name;
      errs() << "kloop compare: error: " << C->Path << ": no shape named '" << Name << "' (shapes: " << Known << ")\n";
      return 1;
    }
  // A description that cannot be compared is said so on any machine, before the GPU probe.
  if (C->Outputs.empty()) {
    errs() << "kloop compare: error: " << C->Path
           << ": outputs: none declared; compare must verify the candidate's outputs (add the output argument "
              "of each target kernel)\n";
    return 1;
  }
  if (std::string Why = warmupProblem(WarmupOpt, *C); !Why.empty())
    return usage(Why);
  std::optional<Machine> M = prepareMachine(Ctx);
  if (!M)
    return 1;
  CompareOptions O;
  O.BaselineDir = absPath(Dirs[0]);
  O.CandidateDir = absPath(Dirs[1]);
  O.WorkDir = M->WorkDir;
  O.Rounds = RoundsOpt;
  O.VerifyJobs = VerifyJobsOpt;
  O.Warmup = WarmupOpt;
  O.CuptiLib = M->CuptiLib;
  O.IncludeHeldOut = !SearchOnlyOpt;
  O.MaxSeeds = MaxSeedsOpt;
  if (!BaseCacheOpt.empty())
    O.BaselineBuildCache = absPath(BaseCacheOpt);
  O.Shapes.assign(ShapeOpt.begin(), ShapeOpt.end());
  O.Thresholds.MinGain = MinGainOpt;
  O.Thresholds.P99Tolerance = P99TolOpt;

  OS << "kloop compare: " << C->Name << ": baseline " << O.BaselineDir << " vs candidate " << O.CandidateDir
     << " on " << M->Gpu << " (work dir " << O.WorkDir << ")\n";
  Expected<CompareResult> R = compareWorkloads(*C, O, [](StringRef L) { errs() << "  " << L << "\n"; });
  if (!R)
    return compareError(R.takeError());
  printCompare(OS, *R);
  if (!OutputOpt.empty())
    if (!writeJSON(toJSON(*R)))
      return 1;
  return R->Accepted ? 0 : 1;
}

/// Exit code of --recheck when some kernel/shape pair does not reproduce (1 is an error, 2 a usage error).
static constexpr int NotReproduced = 3;

/// "1.234x [1.200, 1.250]", or "-" when a number is missing.
static std::string speedupText(const std::optional<double> &E, const std::optional<double> &L,
                               const std::optional<double> &H) {
  return E && L && H ? speedupText(*E, *L, *H) : E ? formatv("{0:f3}x (no CI)", *E).str() : "-";
}

/// kloop compare --recheck JOURNAL: the run's final check again, and whether each speed-up reproduces.
static int runRecheck(const CommandContext &Ctx) {
  raw_ostream &OS = outs();
  if (!Dirs.empty())
    return usageError("--recheck takes both source directories from the journal; give no BASELINE_DIR CANDIDATE_DIR");
  // std::addressof: cl::list's operator& yields its vector.
  for (const cl::Option *Opt : std::initializer_list<const cl::Option *>{
           &RoundsOpt, &WarmupOpt, std::addressof(ShapeOpt), &SearchOnlyOpt, &MaxSeedsOpt, &MinGainOpt, &P99TolOpt})
    if (Opt->getNumOccurrences())
      return usageError("--" + Opt->ArgStr + " cannot be given with --recheck: a re-check repeats the run's final "
                        "check with its shapes, seeds, timing rounds, warm-up and thresholds");
  if (RunOpt < 0)
    return usageError("--run must be a run number >= 1 (0: the latest), not " + std::to_string(RunOpt));
  if (!OutputOpt.empty())
    if (std::string Why = checkOutputFile(OutputOpt); !Why.empty())
      return usageError(Why);
  auto fail = [](const Twine &Msg) {
    errs() << "kloop compare: error: " << Msg << "\n";
    return 1;
  };
  Expected<std::unique_ptr<Journal>> J = Journal::open(RecheckOpt, Journal::OpenMode::ReadOnly);
  if (!J)
    return fail(toString(J.takeError()));
  Expected<optimize::RecheckPlan> P = optimize::loadRecheckPlan(**J, RunOpt);
  if (!P)
    return fail(toString(P.takeError()));
  // --config points at the description when it moved since the run; its bytes must still be the run's.
  std::string Config = ConfigPath.getNumOccurrences() ? absPath(ConfigPath) : P->ConfigPath;
  ErrorOr<std::unique_ptr<MemoryBuffer>> Text = MemoryBuffer::getFile(Config);
  if (!Text)
    return fail("cannot read the workload description '" + Config + "' of run " + std::to_string(P->Run) + ": " +
                Text.getError().message() + " (give its new place with --config)");
  Expected<WorkloadConfig> C = loadConfig(Config);
  if (!C) {
    errs() << toString(C.takeError()) << "\n";
    return 1;
  }
  if (Error E = optimize::checkRecheckInputs(*P, *C, (*Text)->getBuffer()))
    return fail(toString(std::move(E)));
  std::optional<Machine> M = prepareMachine(Ctx);
  if (!M)
    return 1;

  OS << "kloop compare --recheck: " << RecheckOpt << ", run " << P->Run << ", " << P->Candidate
     << ": the final check again (" << P->Rounds << " timing rounds, held-out shapes and seeds included) on "
     << M->Gpu << " (work dir " << M->WorkDir << ")\n";
  Expected<CompareResult> R = compareWorkloads(*C, optimize::recheckOptions(*P, M->WorkDir, M->CuptiLib),
                                               [](StringRef L) { errs() << "  " << L << "\n"; });
  if (!R)
    return compareError(R.takeError());
  printCompare(OS, *R);
  std::vector<optimize::RecheckPair> Pairs = optimize::matchRecheck(P->Evidence, *R);
  OS << "\nre-check of " << P->Candidate << ": the run's median speed-up and 95% CI against the re-measured one\n"
     << format("%-12s %-16s %30s %30s  %s\n", "shape", "kernel", "run: speed-up [95% CI]", "re-check: speed-up [95% CI]",
               "reproduced");
  unsigned Reproduced = 0;
  for (const optimize::RecheckPair &X : Pairs) {
    Reproduced += X.Reproduced;
    OS << format("%-12s %-16s %30s %30s  %s\n", (X.Shape + (X.HeldOutShape ? "*" : "")).c_str(), X.Kernel.c_str(),
                 speedupText(X.Speedup, X.Low, X.High).c_str(), speedupText(X.NewSpeedup, X.NewLow, X.NewHigh).c_str(),
                 X.Reproduced ? "yes" : "NO");
  }
  OS << "(* held-out shape; a pair reproduces when the re-check's median speed-up lies inside the run's 95% CI)\n"
     << (Reproduced == Pairs.size() && !Pairs.empty() ? "REPRODUCED: " : "NOT REPRODUCED: ") << Reproduced << " of "
     << Pairs.size() << " kernel/shape pairs\n";
  if (!OutputOpt.empty())
    if (!writeJSON(optimize::recheckJSON(*P, RecheckOpt, Pairs, *R)))
      return 1;
  return Reproduced == Pairs.size() && !Pairs.empty() ? 0 : NotReproduced;
}

static CommandRegistration Registration(CompareSub, runCompare);
