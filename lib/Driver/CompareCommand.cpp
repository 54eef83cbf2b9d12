//===- CompareCommand.cpp - kloop compare ---------------------------------===//
//
// kloop compare --config .kloop.yaml BASELINE_DIR CANDIDATE_DIR [-o out.json]
// Builds both source directories, runs them interleaved per shape and seed with
// output capture, verifies outputs and decides per kernel and shape. Exit 0 if
// the candidate is accepted, 1 if refused or on error, 2 on usage errors.
// docs/measure.md.
//
//===----------------------------------------------------------------------===//
#include "kloop/Driver/Command.h"
#include "kloop/Support/JSON.h"
#include "kloop/Support/AtomicFile.h"
#include "kloop/Measure/Compare.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <cmath>

using namespace llvm;
using namespace kloop;
using namespace kloop::measure;

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
static cl::opt<std::string> OutputOpt("o", cl::desc("Also write the result as JSON (kloop-compare/1)"),
                                      cl::value_desc("file"), cl::sub(CompareSub));

static std::string absPath(StringRef P) {
  SmallString<256> A(P);
  sys::fs::make_absolute(A);
  sys::path::remove_dots(A, true);
  return A.str().str();
}

static std::string us(const std::optional<decide::Summary> &S, double decide::Summary::*F) {
  if (!S)
    return "-";
  char B[32];
  snprintf(B, sizeof(B), "%.2f us", (*S).*F / 1e3);
  return B;
}

static int runCompare(const CommandContext &Ctx) {
  raw_ostream &OS = outs();
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
  auto usage = [](const Twine &Msg) {
    errs() << "kloop compare: error: " << Msg << "\n";
    return 2;
  };
  if (RoundsOpt < 1)
    return usage("--rounds must be at least 1");
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
  Expected<std::string> Gpu = probeGpu();
  if (!Gpu) {
    errs() << "kloop compare: comparison skipped: " << toString(Gpu.takeError()) << "\n";
    return 1;
  }
  Expected<std::string> Lib = findCuptiLibrary(Ctx.Argv0.c_str(), reinterpret_cast<void *>(&runCompare));
  if (!Lib) {
    errs() << "kloop compare: error: " << toString(Lib.takeError()) << "\n";
    return 1;
  }
  CompareOptions O;
  O.BaselineDir = absPath(Dirs[0]);
  O.CandidateDir = absPath(Dirs[1]);
  if (WorkDirOpt.empty()) {
    SmallString<128> D;
    if (std::error_code EC = sys::fs::createUniqueDirectory("kloop-compare", D)) {
      errs() << "kloop compare: error: cannot create a work directory: " << EC.message() << "\n";
      return 1;
    }
    O.WorkDir = D.str().str();
  } else {
    O.WorkDir = absPath(WorkDirOpt);
  }
  O.Rounds = RoundsOpt;
  O.Warmup = WarmupOpt;
  O.CuptiLib = *Lib;
  O.IncludeHeldOut = !SearchOnlyOpt;
  O.MaxSeeds = MaxSeedsOpt;
  if (!BaseCacheOpt.empty())
    O.BaselineBuildCache = absPath(BaseCacheOpt);
  O.Shapes.assign(ShapeOpt.begin(), ShapeOpt.end());
  O.Thresholds.MinGain = MinGainOpt;
  O.Thresholds.P99Tolerance = P99TolOpt;

  OS << "kloop compare: " << C->Name << ": baseline " << O.BaselineDir << " vs candidate " << O.CandidateDir
     << " on " << *Gpu << " (work dir " << O.WorkDir << ")\n";
  Expected<CompareResult> R = compareWorkloads(*C, O, [](StringRef L) { errs() << "  " << L << "\n"; });
  if (!R) {
    std::string Prefix = "kloop compare: error: ", Msg;
    handleAllErrors(
        R.takeError(),
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

  for (const std::string &N : R->Notes)
    OS << "note: " << N << "\n";
  for (const auto &S : R->Seeds)
    OS << "outputs " << S.Shape << " seed " << S.Seed << (S.HeldOut ? " (held out)" : "") << ": "
       << (S.Matched ? "match" : "DIFFER") << ": " << S.Explanation << "\n";
  if (R->Verdict) {
    OS << format("%-12s %-16s %12s %12s %26s %12s %12s  %s\n", "shape", "kernel", "base median", "cand median",
                 "speed-up [95% CI]", "base p99", "cand p99", "verdict");
    for (const decide::ShapeVerdict &V : R->Verdict->Shapes) {
      std::string SU = "-";
      if (V.Speedup) {
        char B[64];
        snprintf(B, sizeof(B), "%.3fx [%.3f, %.3f]", V.Speedup->Estimate, V.Speedup->Lower, V.Speedup->Upper);
        SU = B;
      }
      OS << format("%-12s %-16s %12s %12s %26s %12s %12s  %s\n", (V.Shape + (V.HeldOutShape ? "*" : "")).c_str(),
                   V.Kernel.c_str(), us(V.Baseline, &decide::Summary::Median).c_str(),
                   us(V.Candidate, &decide::Summary::Median).c_str(), SU.c_str(),
                   us(V.Baseline, &decide::Summary::P99).c_str(), us(V.Candidate, &decide::Summary::P99).c_str(),
                   decide::verdictName(V.Outcome).str().c_str());
    }
    OS << "(* held-out shape)\n";
    if (R->Verdict->GeomeanSpeedup)
      OS << format("geomean speed-up over the rows above (not a decision input): %.3fx\n",
                   *R->Verdict->GeomeanSpeedup);
  }
  OS << "throttled samples discarded: " << R->ThrottledDiscarded << "\n";
  OS << formatv("time: builds {0:f1} s, verification runs {1:f1} s, timing runs {2:f1} s, decision {3:f2} s "
                "({4} workload runs)\n",
                R->BuildSeconds, R->VerifySeconds, R->TimingSeconds, R->DecideSeconds, R->Runs);
  for (const std::string &P : R->ProtectedChanges)
    OS << "protected: " << P << "\n";
  OS << (R->Accepted ? "ACCEPTED: " : "REFUSED: ") << R->Explanation << "\n";

  if (!OutputOpt.empty()) {
    if (Error E = writeFileAtomically(OutputOpt, dumpJSON(toJSON(*R), 2) + "\n")) {
      errs() << "kloop compare: error: " << toString(std::move(E)) << "\n";
      return 1;
    }
  }
  return R->Accepted ? 0 : 1;
}

static CommandRegistration Registration(CompareSub, runCompare);
