//===- decide_bench.cpp - kloop-decide-bench ------------------------------===//
//
// kloop-decide-bench --runs DIR [--rounds R] [--comparisons N] [--kernel NAME]
//
// Scores kloop's acceptance rule (kloop::decide::decide(), default thresholds)
// on real runs of bench/decide/ab_app.cu written by bench/decide/run.sh:
//   DIR/<i>-<arm>-<r>.json    profile of libkloop-cupti.so (kloop-cupti/1)
//   DIR/<i>-<arm>-<r>.events  the same process's per-launch CUDA-event times, ms
// for comparison i = 0, 1, ..., arm A (base), A2 (base again), S (planted 3%
// slowdown) and round r = 0..R-1. For each comparison and each timing method
// (CUPTI durations, CUDA events) it decides A/A (A vs A2) and the slowdown
// (A vs S) and reports the A/A false-accept rate and the detection rate.
// bench/decide/README.md says how to read the output.
//
// Exit 0 when the analysis ran (whatever the rates: the PASS/FAIL lines say),
// 1 on an error (the message names the file), 2 on a usage error.
//
//===----------------------------------------------------------------------===//
#include "kloop/Decide/Decision.h"
#include "kloop/Measure/Measure.h"
#include "kloop/Verify/Profile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace llvm;
using namespace kloop;

static cl::OptionCategory BenchCat("kloop-decide-bench options");
static cl::opt<std::string> RunsDir("runs", cl::desc("Directory of <i>-<arm>-<r>.json and .events files"),
                                    cl::value_desc("dir"), cl::Required, cl::cat(BenchCat));
static cl::opt<unsigned> RoundsOpt("rounds", cl::desc("Processes per arm and comparison (default 2)"),
                                   cl::init(2), cl::cat(BenchCat));
static cl::opt<unsigned> ComparisonsOpt(
    "comparisons",
    cl::desc("Use comparisons 0..N-1, all of which must be complete (default 0: every complete comparison "
             "from 0 up to the first incomplete one)"),
    cl::init(0), cl::cat(BenchCat));
static cl::opt<std::string> DetailsOpt("details",
                                       cl::desc("Also write one tab-separated line per decision to this file"),
                                       cl::value_desc("file"), cl::cat(BenchCat));
static cl::opt<unsigned> JobsOpt("jobs", cl::desc("Threads deciding comparisons (default 0: one per core)"),
                                 cl::init(0), cl::cat(BenchCat));
static cl::opt<bool> LaunchLevelOpt(
    "launch-level",
    cl::desc("Draw launches independently of their process in the bootstrap (the rule before timing rounds "
             "were resampled; default: each process is a round, as kloop compare's)"),
    cl::init(false), cl::cat(BenchCat));
static cl::opt<std::string> KernelOpt("kernel",
                                      cl::desc("Kernel: substring of the demangled name (default saxpy)"),
                                      cl::init("saxpy"), cl::cat(BenchCat));

namespace {

const char *const Arms[] = {"A", "A2", "S"};
enum ArmIndex { ArmA = 0, ArmA2 = 1, ArmS = 2 };
enum Method { Cupti = 0, Events = 1 };
const char *const MethodNames[] = {"CUPTI", "CUDA events"};

[[noreturn]] void fail(const Twine &Msg) {
  errs() << "kloop-decide-bench: error: " << Msg << "\n";
  std::exit(1);
}

std::string runFile(unsigned I, unsigned Arm, unsigned R, StringRef Ext) {
  SmallString<256> P(RunsDir);
  sys::path::append(P, formatv("{0}-{1}-{2}.{3}", I, Arms[Arm], R, Ext).str());
  return P.str().str();
}

/// The timed launches of one process, both methods, warm-up dropped.
struct ProcessSamples {
  std::vector<decide::Sample> S[2];
  bool Nvml = false;
};

Error err(const Twine &Msg) { return createStringError(inconvertibleErrorCode(), Msg); }

/// Reads one process: its profile and its events file.
Expected<ProcessSamples> readProcess(const std::string &Json, const std::string &EventsPath) {
  Expected<verify::Profile> P = verify::readProfile(Json);
  if (!P)
    return P.takeError();
  // A profile whose library recorded errors or whose kernel records were dropped is incomplete: its launches
  // and the events file would no longer be the same launches, and the bench would time a broken run.
  if (std::string M = verify::profileProblems(*P); !M.empty())
    return err(M);
  std::vector<const verify::LaunchRecord *> L;
  for (const verify::LaunchRecord &R : P->Launches)
    if (StringRef(R.Name.empty() ? R.Kernel : R.Name).contains(KernelOpt))
      L.push_back(&R);
  llvm::stable_sort(L, [](const verify::LaunchRecord *A, const verify::LaunchRecord *B) { return A->Seq < B->Seq; });
  if (L.empty())
    return err(Json + ": no launch of kernel '" + KernelOpt + "' (" + Twine(P->Launches.size()) +
               " launches in all)");
  if (L.size() < 2)
    return err(Json + ": only 1 launch of kernel '" + KernelOpt +
               "': the first launch of a process is the warm-up, so no sample is left");

  auto Buf = MemoryBuffer::getFile(EventsPath, /*IsText=*/true);
  if (!Buf)
    return err("cannot read events file " + EventsPath + ": " + Buf.getError().message());
  std::vector<double> Ms;
  SmallVector<StringRef, 0> Lines;
  (*Buf)->getBuffer().split(Lines, '\n');
  for (size_t N = 0; N < Lines.size(); ++N) {
    StringRef Line = Lines[N].trim();
    if (Line.empty())
      continue;
    double V = 0;
    if (Line.getAsDouble(V) || !std::isfinite(V) || V <= 0)
      return err(EventsPath + ":" + Twine(N + 1) + ": '" + Line + "' is not a positive number of ms");
    Ms.push_back(V);
  }
  if (Ms.size() != L.size())
    return err(EventsPath + " has " + Twine(Ms.size()) + " event timings but " + Json + " has " +
               Twine(L.size()) + " launches of kernel '" + KernelOpt + "': they must be the same launches");

  ProcessSamples Out;
  Out.Nvml = P->Nvml;
  for (size_t K = 1; K < L.size(); ++K) {
    if (L[K]->DurationNs == 0)
      return err(Json + ": launch seq " + Twine(L[K]->Seq) + " of kernel '" + KernelOpt + "' has duration 0 ns");
    // kloop's throttle rule (kloop measure / compare), applied to both methods: the timer differs, the
    // launches kept do not.
    bool Throttled = measure::launchThrottled(*P, L[K]->StartNs);
    Out.S[Cupti].push_back({static_cast<double>(L[K]->DurationNs), Throttled});
    Out.S[Events].push_back({Ms[K] * 1e6, Throttled});
  }
  return Out;
}

/// One comparison's samples: per arm and method, all rounds concatenated in
/// round order (as `kloop compare` concatenates its timing rounds).
struct ComparisonSamples {
  std::vector<decide::Sample> Arm[3][2];
  bool NvmlEverywhere = true;
};

bool exists(const std::string &P) { return sys::fs::exists(P); }

/// First missing file of comparison \p I, or "" when it is complete.
std::string firstMissing(unsigned I) {
  for (unsigned R = 0; R < RoundsOpt; ++R)
    for (unsigned A = 0; A < 3; ++A)
      for (const char *Ext : {"json", "events"}) {
        std::string F = runFile(I, A, R, Ext);
        if (!exists(F))
          return F;
      }
  return "";
}

bool anyFileOf(unsigned I) {
  for (unsigned R = 0; R < RoundsOpt; ++R)
    for (unsigned A = 0; A < 3; ++A)
      for (const char *Ext : {"json", "events"})
        if (exists(runFile(I, A, R, Ext)))
          return true;
  return false;
}

Expected<ComparisonSamples> readComparison(unsigned I) {
  ComparisonSamples C;
  for (unsigned R = 0; R < RoundsOpt; ++R)
    for (unsigned A = 0; A < 3; ++A) {
      Expected<ProcessSamples> P = readProcess(runFile(I, A, R, "json"), runFile(I, A, R, "events"));
      if (!P)
        return P.takeError();
      C.NvmlEverywhere &= P->Nvml;
      for (unsigned M = 0; M < 2; ++M) {
        for (decide::Sample &S : P->S[M])
          S.Group = LaunchLevelOpt ? 0 : R; // round R: the baseline's and the candidate's process R
        llvm::append_range(C.Arm[A][M], P->S[M]);
      }
    }
  return C;
}

/// Timing-only evidence: the bench compares timings, so outputs are declared
/// matched on one held-out seed and deterministic on both sides. Only rules
/// 1-3 (samples, speed, tail) can decide.
decide::ShapeEvidence evidence(const std::vector<decide::Sample> &Base, const std::vector<decide::Sample> &Cand) {
  decide::ShapeEvidence E;
  E.Kernel = KernelOpt;
  E.Shape = "n16M";
  E.Baseline = Base;
  E.Candidate = Cand;
  decide::SeedCheck S;
  S.Seed = 0;
  S.HeldOut = true;
  S.Matched = true;
  E.Seeds.push_back(S);
  E.Determinism.push_back({KernelOpt + " out", true, true});
  return E;
}

/// The four decisions of one comparison: [method][0 = A/A, 1 = slowdown].
struct ComparisonResult {
  decide::ShapeVerdict V[2][2];
  size_t Discarded[2][3] = {{0, 0, 0}, {0, 0, 0}};
  size_t MinPerProcess = SIZE_MAX, MaxPerProcess = 0;
  bool NvmlEverywhere = true;
};

Expected<ComparisonResult> evaluate(unsigned I, const decide::DecisionThresholds &T) {
  Expected<ComparisonSamples> C = readComparison(I);
  if (!C)
    return C.takeError();
  ComparisonResult Res;
  Res.NvmlEverywhere = C->NvmlEverywhere;
  for (unsigned M = 0; M < 2; ++M) {
    for (unsigned A = 0; A < 3; ++A) {
      for (const decide::Sample &S : C->Arm[A][M])
        Res.Discarded[M][A] += S.Throttled;
      Res.MinPerProcess = std::min(Res.MinPerProcess, C->Arm[A][M].size() / RoundsOpt);
      Res.MaxPerProcess = std::max(Res.MaxPerProcess, C->Arm[A][M].size() / RoundsOpt);
    }
    const unsigned Cands[2] = {ArmA2, ArmS};
    for (unsigned Test = 0; Test < 2; ++Test) {
      Expected<decide::ShapeVerdict> V = decide::decide(evidence(C->Arm[ArmA][M], C->Arm[Cands[Test]][M]), T);
      if (!V)
        return err("comparison " + Twine(I) + " (" + MethodNames[M] + ", " + (Test ? "slowdown" : "A/A") +
                   "): " + toString(V.takeError()));
      Res.V[M][Test] = std::move(*V);
    }
  }
  return Res;
}

/// Tallies of one method over all comparisons.
struct Tally {
  unsigned N = 0;
  unsigned AAAccepted = 0, AAInsufficient = 0, AAExcludesOne = 0;
  unsigned SlowDetected = 0, SlowAccepted = 0, SlowInsufficient = 0;
  std::vector<double> AAEstimates, SlowEstimates, BaseMedians, SlowMedians, KeptPerSide;
  size_t Discarded[3] = {0, 0, 0};
};

double median(std::vector<double> V) {
  if (V.empty())
    return std::nan("");
  return decide::medianInPlace(V);
}

/// log P(X <= K) for X ~ Binomial(N, P), 0 < P < 1.
double binomCdf(unsigned K, unsigned N, double P) {
  double Sum = 0;
  for (unsigned J = 0; J <= K; ++J)
    Sum += std::exp(std::lgamma(N + 1.0) - std::lgamma(J + 1.0) - std::lgamma(N - J + 1.0) + J * std::log(P) +
                    (N - J) * std::log1p(-P));
  return Sum;
}

/// Clopper-Pearson exact two-sided 95% interval of a proportion K/N, by
/// bisection on the binomial CDF.
std::pair<double, double> clopperPearson(unsigned K, unsigned N) {
  auto Solve = [&](auto Pred) { // smallest P in (0,1) with Pred(P) false, Pred monotone true -> false
    double Lo = 0, Hi = 1;
    for (int It = 0; It < 100; ++It) {
      double Mid = (Lo + Hi) / 2;
      (Pred(Mid) ? Lo : Hi) = Mid;
    }
    return (Lo + Hi) / 2;
  };
  double Lower = K == 0 ? 0 : Solve([&](double P) { return 1 - binomCdf(K - 1, N, P) < 0.025; });
  double Upper = K == N ? 1 : Solve([&](double P) { return binomCdf(K, N, P) > 0.025; });
  return {Lower, Upper};
}

std::string pct(unsigned K, unsigned N) {
  if (N == 0)
    return "-";
  return formatv("{0:f1}%", 100.0 * K / N).str();
}

std::string rate(unsigned K, unsigned N) {
  if (N == 0)
    return "-";
  auto [Lo, Hi] = clopperPearson(K, N);
  return formatv("{0} ({1}/{2}; 95% CI {3:f1}-{4:f1}%)", pct(K, N), K, N, 100 * Lo, 100 * Hi).str();
}

/// A threshold fraction as a percentage: 0.02 -> "2%", 0.025 -> "2.5%".
std::string pctOf(double Fraction) {
  double P = Fraction * 100;
  if (std::fabs(P - std::round(P)) < 1e-9)
    return formatv("{0}%", static_cast<long long>(std::llround(P))).str();
  return formatv("{0}%", P).str();
}

std::string fmt(double V, const char *Spec) {
  if (std::isnan(V))
    return "-";
  return formatv(Spec, V).str();
}

} // namespace

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(BenchCat);
  cl::ParseCommandLineOptions(argc, argv,
                              "kloop-decide-bench: A/A false-accept and planted-slowdown detection rates of kloop's "
                              "acceptance rule on CUPTI and CUDA-event timings (bench/decide/README.md)\n");
  if (RoundsOpt < 1) {
    errs() << "kloop-decide-bench: error: --rounds must be at least 1\n";
    return 2;
  }
  if (!sys::fs::exists(RunsDir))
    fail("runs directory '" + RunsDir + "' does not exist");
  if (!sys::fs::is_directory(RunsDir))
    fail("runs directory '" + RunsDir + "' is not a directory");

  // Which comparisons.
  unsigned NComp = ComparisonsOpt;
  std::string Note;
  if (NComp) {
    for (unsigned I = 0; I < NComp; ++I) {
      std::string M = firstMissing(I);
      if (!M.empty())
        fail("comparison " + Twine(I) + " of " + Twine(NComp) + ": missing " + M);
    }
  } else {
    while (firstMissing(NComp).empty())
      ++NComp;
    if (anyFileOf(NComp))
      Note = formatv("comparison {0} is incomplete (missing {1}): it and any later one are not used",
                     NComp, firstMissing(NComp))
                 .str();
    if (NComp == 0)
      fail("no complete comparison in '" + RunsDir + "': missing " + firstMissing(0));
  }

  std::optional<raw_fd_ostream> Details;
  if (!DetailsOpt.empty()) {
    std::error_code EC;
    Details.emplace(DetailsOpt, EC, sys::fs::OF_Text);
    if (EC)
      fail("cannot write " + DetailsOpt + ": " + EC.message());
    *Details << "comparison\tmethod\ttest\tverdict\tspeedup\tci_lower\tci_upper\tbase_median_ns\t"
                "cand_median_ns\tbase_p99_ns\tcand_p99_ns\tbase_n\tcand_n\tbase_discarded\tcand_discarded\n";
  }
  auto Detail = [&](unsigned I, unsigned M, const char *Test, const decide::ShapeVerdict &V) {
    if (!Details)
      return;
    auto Num = [](std::optional<double> X) {
      if (!X)
        return std::string("-");
      char B[32];
      snprintf(B, sizeof(B), "%.9g", *X);
      return std::string(B);
    };
    std::optional<double> Est, Lo, Hi, BM, CM, BP, CP, BN, CN;
    if (V.Speedup)
      Est = V.Speedup->Estimate, Lo = V.Speedup->Lower, Hi = V.Speedup->Upper;
    if (V.Baseline)
      BM = V.Baseline->Median, BP = V.Baseline->P99, BN = V.Baseline->N;
    if (V.Candidate)
      CM = V.Candidate->Median, CP = V.Candidate->P99, CN = V.Candidate->N;
    *Details << I << "\t" << MethodNames[M] << "\t" << Test << "\t" << decide::verdictName(V.Outcome) << "\t"
             << Num(Est) << "\t" << Num(Lo) << "\t" << Num(Hi) << "\t" << Num(BM) << "\t" << Num(CM) << "\t"
             << Num(BP) << "\t" << Num(CP) << "\t" << Num(BN) << "\t" << Num(CN) << "\t" << V.BaselineDiscarded
             << "\t" << V.CandidateDiscarded << "\n";
  };

  decide::DecisionThresholds T; // kloop compare's defaults
  // Decide every comparison, on all cores (decide() and the readers are pure), then tally in order so
  // that the first error reported is that of the lowest comparison.
  std::vector<std::optional<ComparisonResult>> Results(NComp);
  std::vector<std::string> Errors(NComp);
  {
    std::atomic<unsigned> Next{0};
    unsigned NThreads = JobsOpt ? JobsOpt : std::max(1u, std::thread::hardware_concurrency());
    NThreads = std::min(NThreads, NComp);
    auto Work = [&] {
      for (unsigned I; (I = Next++) < NComp;) {
        Expected<ComparisonResult> R = evaluate(I, T);
        if (R)
          Results[I] = std::move(*R);
        else
          Errors[I] = toString(R.takeError());
      }
    };
    std::vector<std::thread> Pool;
    for (unsigned K = 1; K < NThreads; ++K)
      Pool.emplace_back(Work);
    Work();
    for (std::thread &Th : Pool)
      Th.join();
  }
  for (unsigned I = 0; I < NComp; ++I)
    if (!Errors[I].empty())
      fail(Errors[I]);

  Tally Tal[2];
  bool NvmlEverywhere = true;
  size_t MinPerProcess = SIZE_MAX, MaxPerProcess = 0;
  for (unsigned I = 0; I < NComp; ++I) {
    const ComparisonResult &C = *Results[I];
    NvmlEverywhere &= C.NvmlEverywhere;
    MinPerProcess = std::min(MinPerProcess, C.MinPerProcess);
    MaxPerProcess = std::max(MaxPerProcess, C.MaxPerProcess);
    for (unsigned M = 0; M < 2; ++M) {
      Tally &Y = Tal[M];
      ++Y.N;
      for (unsigned A = 0; A < 3; ++A)
        Y.Discarded[A] += C.Discarded[M][A];
      const decide::ShapeVerdict &AA = C.V[M][0], &SL = C.V[M][1];
      Detail(I, M, "A/A", AA);
      Detail(I, M, "slowdown", SL);
      Y.AAAccepted += AA.Outcome == decide::Verdict::Accepted;
      Y.AAInsufficient += AA.Outcome == decide::Verdict::InsufficientSamples;
      Y.SlowAccepted += SL.Outcome == decide::Verdict::Accepted;
      Y.SlowInsufficient += SL.Outcome == decide::Verdict::InsufficientSamples;
      if (AA.Speedup) {
        Y.AAExcludesOne += AA.Speedup->Lower > 1 || AA.Speedup->Upper < 1;
        Y.AAEstimates.push_back(AA.Speedup->Estimate);
      }
      if (SL.Speedup) {
        Y.SlowDetected += SL.Speedup->Upper < 1;
        Y.SlowEstimates.push_back(SL.Speedup->Estimate);
      }
      if (AA.Baseline) {
        Y.BaseMedians.push_back(AA.Baseline->Median);
        Y.KeptPerSide.push_back(static_cast<double>(AA.Baseline->N));
      }
      if (SL.Candidate)
        Y.SlowMedians.push_back(SL.Candidate->Median);
    }
  }

  raw_ostream &OS = outs();
  OS << "# kloop decide bench: kernel '" << KernelOpt << "', " << NComp << " comparisons from " << RunsDir << "\n\n";
  if (!Note.empty())
    OS << "Note: " << Note << ".\n\n";
  OS << "Design. Comparison i uses 3 x " << RoundsOpt << " processes, run interleaved per round (A A2 S"
     << (RoundsOpt > 1 ? " A A2 S ..." : "") << "): A = base, A2 = base again, S = the same kernel over 3% more "
        "elements (planted 3% slowdown). A/A decides A_i (baseline) vs A2_i (candidate); the slowdown test decides "
        "A_i (baseline) vs S_i (candidate). A_i is shared by the two tests of comparison i; no process is used by "
        "two comparisons, so the comparisons are independent.\n\n";
  OS << (LaunchLevelOpt ? "Bootstrap: launches drawn independently (--launch-level). "
                         : "Bootstrap: two-stage, rounds (processes) first, then their launches (docs/decide.md). ");
  OS << "Samples. Every launch of the kernel except the first of each process (warm-up), rounds concatenated; "
     << MinPerProcess << (MinPerProcess == MaxPerProcess ? "" : ("-" + std::to_string(MaxPerProcess)))
     << " per process. CUPTI: the profile's duration_ns. CUDA events: cudaEventElapsedTime around the same "
        "launches in the same processes, ms x 1e6 = ns. Throttle flags come from the profile's NVML samples "
        "(kloop's rule: any reason but idle, application clocks, display clocks) and drop the same launches "
        "for both methods"
     << (NvmlEverywhere ? "" : " (NVML was unavailable in at least one process: throttling not checked there)")
     << ".\n\n";
  OS << "Timing only. Every decision gets one matched held-out seed and one bitwise-deterministic output "
        "(no outputs are compared here), so only rules 1-3 (enough samples, speed-up CI, p99) can refuse.\n\n";
  OS << formatv("Thresholds (kloop compare's defaults): min gain {0} (accept only if the CI lower bound of "
                "median(base)/median(cand) > {1:f2}), p99 tolerance {2}, min samples {3}, {4} bootstrap CI, "
                "B = {5}, bootstrap seed {6:x}, held-out seed required, determinism evidence required.\n\n",
                pctOf(T.MinGain), 1 + T.MinGain, pctOf(T.P99Tolerance), T.MinSamples,
                pctOf(T.Bootstrap.Confidence), T.Bootstrap.Resamples, T.Bootstrap.Seed);
  OS << "Detected = the slowdown is resolved: the CI upper bound of the speed-up is < 1. Speed-up > 1 = candidate "
        "faster.\n\n";

  OS << "| method | comparisons | samples/side | median base | median slow | A/A false accepts | A/A CI "
        "excludes 1 | median speed-up A/A | 3% slowdown detected | slowdown accepted | median speed-up slow |\n";
  OS << "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (unsigned M = 0; M < 2; ++M) {
    const Tally &Y = Tal[M];
    OS << "| " << MethodNames[M] << " | " << Y.N << " | " << fmt(median(Y.KeptPerSide), "{0:f0}") << " | "
       << fmt(median(Y.BaseMedians) / 1e3, "{0:f3} us") << " | " << fmt(median(Y.SlowMedians) / 1e3, "{0:f3} us")
       << " | " << rate(Y.AAAccepted, Y.N) << " | " << rate(Y.AAExcludesOne, Y.N) << " | "
       << fmt(median(Y.AAEstimates), "{0:f4}x") << " | " << rate(Y.SlowDetected, Y.N) << " | " << Y.SlowAccepted
       << " | " << fmt(median(Y.SlowEstimates), "{0:f4}x") << " |\n";
  }
  OS << "\n";
  for (unsigned M = 0; M < 2; ++M) {
    const Tally &Y = Tal[M];
    if (Y.Discarded[0] + Y.Discarded[1] + Y.Discarded[2])
      OS << MethodNames[M] << ": throttled samples discarded: A " << Y.Discarded[0] << ", A2 " << Y.Discarded[1]
         << ", S " << Y.Discarded[2] << "\n";
    else
      OS << MethodNames[M] << ": throttled samples discarded: none\n";
    if (Y.AAInsufficient || Y.SlowInsufficient)
      OS << MethodNames[M] << ": insufficient samples: A/A " << Y.AAInsufficient << ", slowdown "
         << Y.SlowInsufficient << "\n";
  }
  OS << "\n## Targets\n\n";
  // The targets bind kloop's method (CUPTI); the CUDA-event rows are the usual method, shown side by side.
  bool AllPass = true;
  unsigned Scored = 0;
  auto Verdict = [&](bool Ok) {
    if (Scored == Cupti)
      AllPass &= Ok;
    return Ok ? "PASS" : "FAIL";
  };
  OS << "comparisons: " << NComp << " (target >= 200): " << Verdict(NComp >= 200) << "\n";
  for (unsigned M = 0; M < 2; ++M) {
    Scored = M;
    const Tally &Y = Tal[M];
    OS << "result " << MethodNames[M] << ": A/A false-accept " << pct(Y.AAAccepted, Y.N) << " (" << Y.AAAccepted
       << "/" << Y.N << ", target <= 1%): " << Verdict(Y.AAAccepted * 100 <= Y.N) << "\n";
    OS << "result " << MethodNames[M] << ": 3% slowdown detected " << pct(Y.SlowDetected, Y.N) << " ("
       << Y.SlowDetected << "/" << Y.N << ", target >= 95%): " << Verdict(Y.SlowDetected * 100 >= 95 * Y.N)
       << "\n";
    OS << "result " << MethodNames[M] << ": 3% slowdown accepted " << Y.SlowAccepted << " (target 0): "
       << Verdict(Y.SlowAccepted == 0) << "\n";
  }
  OS << "overall (kloop's rule on CUPTI durations; CUDA events are for comparison only): "
     << (AllPass ? "PASS" : "FAIL") << "\n";
  return 0;
}
