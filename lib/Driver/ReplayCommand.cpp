//===- ReplayCommand.cpp - `kloop replay`: time and check cubins on a capture ===//
///
/// kloop replay CAPTURE --cubin FILE [--candidate-cubin FILE] [--iters N] [--launch I]...
///              [--tolerance exact|abs:X|rel:X[,f32|,f64]] [--l2 flush|steady|flush-dirty|warm] [--poison]
///              [--launch-timeout-ms T] [--timeout S] [--work-dir DIR] [-o result.json]
///              [--repeat K] [--no-gate] [--placements N]
///
/// Runs the replay worker kloop-replay (beside kloop, or $KLOOP_REPLAY_WORKER) on a capture made by
/// `kloop capture` (docs/capture.md) and prints, per captured launch, the median time of the baseline
/// and the candidate, the speed-up and whether each reproduced the captured outputs. Exit 0 when every
/// check matched, 1 when the candidate mismatched, faulted or hung, or on an error, 2 on usage errors,
/// 3 when the baseline itself does not reproduce the capture. With --repeat K, one long-lived worker
/// judges the candidate against the baseline K times by decide's rule (judgeReplay, as a search step
/// of kloop optimize does) and the counts of each verdict are printed: an A/A check (the same cubin on
/// both sides) or a planted-slowdown check; exit 0 unless the replay itself fails.
///
//===----------------------------------------------------------------------===//
#include "kloop/Capture/Capture.h"
#include "kloop/Capture/Replay.h"
#include "kloop/Driver/Command.h"
#include "kloop/Optimize/ReplayTiming.h"
#include "kloop/Support/AtomicFile.h"
#include "kloop/Support/Path.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <unistd.h>

using namespace llvm;
using namespace kloop;

namespace {

cl::SubCommand ReplaySub("replay", "Time and check a baseline and a candidate cubin on a capture");
cl::opt<std::string> CaptureArg(cl::Positional, cl::desc("<capture dir>"), cl::sub(ReplaySub));
cl::opt<std::string> CubinOpt("cubin", cl::desc("Baseline cubin (nvcc -cubin of the original translation unit)"),
                              cl::value_desc("file"), cl::sub(ReplaySub));
cl::opt<std::string> CandidateOpt("candidate-cubin", cl::desc("Candidate cubin (the edited translation unit)"),
                                  cl::value_desc("file"), cl::sub(ReplaySub));
cl::opt<unsigned> ItersOpt("iters", cl::desc("Timed launches per captured launch and side (default 10)"),
                           cl::value_desc("n"), cl::init(10), cl::sub(ReplaySub));
cl::list<unsigned> LaunchOpt("launch", cl::desc("Replay only this launch of the capture (index; repeatable)"),
                             cl::value_desc("i"), cl::sub(ReplaySub));
cl::opt<std::string> TolOpt("tolerance",
                            cl::desc("How written allocations are compared: exact (default), abs:X or rel:X, "
                                     "optionally ,f32 or ,f64"),
                            cl::value_desc("spec"), cl::init("exact"), cl::sub(ReplaySub));
cl::opt<std::string> L2Opt("l2", cl::desc("L2 before each timed launch: flush (evicted, clean), steady (default: evicted, "
                                          "then the dirty lines the launch's own previous run would leave), "
                                          "rotate (evicted, then the dirty share of an L2 full of launches on "
                                          "other buffers, as under a workload's l2: rotate), rotate-sets (evicted, then the kernel launched on copies of "
                                          "its allocations at other addresses, as a workload with l2: rotate does; rotate when it cannot), flush-dirty (evicted, full of dirty lines) or warm (not flushed)"),
                           cl::value_desc("policy"), cl::init("steady"), cl::sub(ReplaySub));
cl::opt<unsigned> PlacementsOpt("placements",
                                cl::desc("Time iteration i at placement i mod N: the allocations at their captured "
                                         "addresses, then copies at other addresses (1 to 16, default 4, as kloop "
                                         "optimize's search.replay_placements)"),
                                cl::value_desc("n"), cl::init(4), cl::sub(ReplaySub));
cl::opt<unsigned> PlacementPadOpt(
    "placement-pad-mib",
    cl::desc("With --placements > 1: before the captured allocations and before each copy, a pad of 2 MiB x k, "
             "k below this / 2 drawn from --placement-seed, as kloop compare pads a program per round (0 to 4096, "
             "default 128, as placement_pad_mib; under 4: no pads, every run at the same placements)"),
    cl::value_desc("mib"), cl::init(128), cl::sub(ReplaySub));
cl::opt<uint64_t> PlacementSeedOpt("placement-seed",
                                   cl::desc("Seed of the placement pads' draw (default 0); with --repeat, each "
                                            "comparison draws the copies' pads again from it"),
                                   cl::value_desc("n"), cl::init(0), cl::sub(ReplaySub));
cl::opt<unsigned> TrainOpt("train",
                           cl::desc("With --l2 rotate-sets: launches queued back to back before each timed one, on "
                                    "the other buffer sets (0 to 256; default 8, as kloop optimize's "
                                    "search.replay_train)"),
                           cl::value_desc("k"), cl::init(8), cl::sub(ReplaySub));
cl::opt<bool> PoisonOpt("poison", cl::desc("Poison write-only outputs (found by the worker) before each launch"),
                        cl::sub(ReplaySub));
cl::opt<unsigned> LaunchTimeoutOpt("launch-timeout-ms",
                                   cl::desc("A kernel running longer fails its side (default 10000)"),
                                   cl::value_desc("ms"), cl::init(10000), cl::sub(ReplaySub));
cl::opt<unsigned> TimeoutOpt("timeout", cl::desc("Bound on the whole replay, seconds (default 600)"),
                             cl::value_desc("s"), cl::init(600), cl::sub(ReplaySub));
cl::opt<std::string> WorkDirOpt("work-dir", cl::desc("Where the worker's output goes (default: a temporary dir)"),
                                cl::value_desc("dir"), cl::sub(ReplaySub));
cl::opt<unsigned> RepeatOpt("repeat",
                            cl::desc("Judge the candidate K times by decide's rule with one long-lived worker and "
                                     "print the count of each verdict (A/A or planted-slowdown checks)"),
                            cl::value_desc("K"), cl::init(0), cl::sub(ReplaySub));
cl::opt<bool> NoGateOpt("no-gate",
                        cl::desc("Record the start event on an idle stream (the interval then holds the host's "
                                 "launch latency); for comparing with the default"),
                        cl::sub(ReplaySub));
cl::opt<std::string> TimerOpt("timer",
                              cl::desc("How a launch is timed: cupti (default: its CUPTI kernel record, as the "
                                       "workload path) or events (CUDA events behind the gate)"),
                              cl::value_desc("cupti|events"), cl::init("cupti"), cl::sub(ReplaySub));
cl::opt<std::string> OutputOpt("o", cl::desc("Write the worker's kloop-replay/1 JSON here"), cl::value_desc("file"),
                               cl::sub(ReplaySub));

std::string usageProblem() {
  if (CaptureArg.empty())
    return "no capture directory given: kloop replay CAPTURE --cubin FILE";
  if (CubinOpt.empty())
    return "--cubin FILE is required: the baseline's kernels, e.g. nvcc -cubin -arch=sm_90 -o base.cubin file.cu";
  for (const std::string *F : {&CubinOpt.getValue(), &CandidateOpt.getValue()})
    if (!F->empty() && !sys::fs::is_regular_file(*F))
      return "'" + *F + "': no such file";
  if (ItersOpt == 0)
    return "--iters must be at least 1";
  if (PlacementsOpt == 0 || PlacementsOpt > kloop::capture::MaxPlacements)
    return "--placements " + std::to_string(PlacementsOpt) + ": expected 1 to " +
           std::to_string(kloop::capture::MaxPlacements);
  if (PlacementPadOpt > 4096)
    return "--placement-pad-mib " + std::to_string(PlacementPadOpt) + ": expected 0 to 4096";
  if (TrainOpt > kloop::capture::MaxTrain)
    return "--train " + std::to_string(TrainOpt) + ": expected 0 to " + std::to_string(kloop::capture::MaxTrain);
  if (TimerOpt != "cupti" && TimerOpt != "events")
    return "--timer '" + TimerOpt + "': expected cupti or events";
  if (!kloop::capture::isL2Mode(L2Opt))
    return "--l2 '" + L2Opt + "': expected " + kloop::capture::L2Modes;
  if (LaunchTimeoutOpt == 0 || TimeoutOpt == 0)
    return "--launch-timeout-ms and --timeout must be at least 1";
  if (RepeatOpt > 0 && CandidateOpt.empty())
    return "--repeat needs --candidate-cubin (the same file as --cubin for an A/A check)";
  if (RepeatOpt > 0 && !OutputOpt.empty())
    return "--repeat prints its verdicts; -o is for a single replay";
  if (!OutputOpt.empty())
    return checkOutputFile(OutputOpt);
  return "";
}

/// ", placement pads 0/34/6/120 MiB (seed S)" for a result whose placements were padded, the note of pads
/// that were not used, or "".
std::string padsText(const capture::ReplayResult &R) {
  std::string T;
  if (R.PlacementSeed && !R.PlacementPadsMiB.empty()) {
    T = ", placement pads ";
    for (size_t I = 0; I < R.PlacementPadsMiB.size(); ++I)
      T += (I ? "/" : "") + std::to_string(R.PlacementPadsMiB[I]);
    T += " MiB (seed " + std::to_string(*R.PlacementSeed) + ")";
  }
  return R.PlacementPadNote.empty() ? T : T + " (" + terminalSafe(R.PlacementPadNote) + ")";
}

std::string micros(uint64_t Ns) { return formatv("{0:f3} us", static_cast<double>(Ns) / 1e3).str(); }

void printResult(raw_ostream &OS, const capture::ReplayResult &R) {
  bool Cand = R.CandidateMatch.has_value();
  OS << format("  %-6s %-40s %14s %14s %9s  %s\n", "launch", "kernel", "baseline", Cand ? "candidate" : "",
               Cand ? "speed-up" : "", "check");
  for (const capture::ReplayLaunch &L : R.Launches) {
    std::string Name = terminalSafe(L.Name);
    if (Name.size() > 40)
      Name = Name.substr(0, 37) + "...";
    std::string Check = std::string("baseline ") + (L.Baseline.Match ? "ok" : "MISMATCH");
    std::string CandTime, Speedup;
    if (L.Candidate) {
      Check += std::string(", candidate ") + (L.Candidate->Match ? "ok" : "MISMATCH");
      CandTime = L.Candidate->TimesNs.empty() ? "-" : micros(L.Candidate->MedianNs);
      if (L.Candidate->MedianNs && L.Baseline.MedianNs)
        Speedup = formatv("{0:f3}x", static_cast<double>(L.Baseline.MedianNs) / L.Candidate->MedianNs).str();
    }
    OS << format("  %-6llu %-40s %14s %14s %9s  %s\n", static_cast<unsigned long long>(L.Index), Name.c_str(),
                 L.Baseline.TimesNs.empty() ? "-" : micros(L.Baseline.MedianNs).c_str(), CandTime.c_str(),
                 Speedup.c_str(), Check.c_str());
    for (const auto *S : {&L.Baseline, L.Candidate ? &*L.Candidate : nullptr})
      if (S && !S->Mismatch.empty())
        OS << "    " << (S == &L.Baseline ? "baseline" : "candidate") << ": " << terminalSafe(S->Mismatch) << "\n";
  }
  if (R.Relocated)
    OS << "  note: the captured allocations were relocated (the driver did not give their captured addresses); "
          "pointers stored in device memory were not rewritten\n";
}

/// --repeat: \p O's candidate judged RepeatOpt times by one ReplayServer; the verdicts and their counts.
int runRepeated(const capture::ReplayOptions &O) {
  capture::ReplayServer S(O);
  std::map<std::string, unsigned> Counts;
  for (unsigned K = 1; K <= RepeatOpt; ++K) {
    Expected<capture::ReplayResult> R = S.replay(O.Cubin, O.CandidateCubin, O.Iters);
    if (!R) {
      errs() << "kloop replay: error: comparison " << K << ": " << toString(R.takeError()) << "\n";
      return 1;
    }
    Expected<optimize::ReplayCompareOutcome> V = optimize::judgeReplay(*R, "captured");
    if (!V) {
      errs() << "kloop replay: error: comparison " << K << ": " << toString(V.takeError()) << "\n";
      return 1;
    }
    std::string Outcome = V->Compare ? V->Compare->Outcome : "fallback";
    ++Counts[Outcome];
    outs() << "comparison " << K << ": " << Outcome;
    for (const capture::ReplayLaunch &L : R->Launches)
      outs() << "; launch " << L.Index << ": baseline " << micros(L.Baseline.MedianNs) << ", candidate "
             << (L.Candidate ? micros(L.Candidate->MedianNs) : std::string("-"));
    if (!V->Compare)
      outs() << "; " << terminalSafe(V->Fallback);
    outs() << "\n";
  }
  outs() << "kloop replay: " << RepeatOpt << " comparison(s) by decide's rule:";
  for (const char *Name : {"accepted", "rejected", "crashed", "failed_verification", "fallback"})
    outs() << " " << Name << " " << Counts[Name];
  outs() << "; worker started " << S.starts() << " time(s)\n";
  return 0;
}

int runReplay(const CommandContext &Ctx) {
  if (std::string Why = usageProblem(); !Why.empty()) {
    errs() << "kloop replay: error: " << Why << "\n";
    return 2;
  }
  auto Fail = [](const Twine &Msg) {
    errs() << "kloop replay: error: " << Msg << "\n";
    return 1;
  };
  // The capture is checked here too, so that a bad one is named before any GPU work starts.
  Expected<capture::Manifest> M = capture::readCapture(CaptureArg, capture::BlobCheck::Exist);
  if (!M)
    return Fail(toString(M.takeError()));
  for (unsigned L : LaunchOpt)
    if (L >= M->Launches.size())
      return Fail("--launch " + Twine(L) + ": " + CaptureArg + " holds " + Twine(M->Launches.size()) + " launches");
  Expected<std::string> Worker = capture::findReplayWorker(Ctx.Argv0.c_str(), reinterpret_cast<void *>(&runReplay));
  if (!Worker)
    return Fail(toString(Worker.takeError()));

  SmallString<256> Cwd;
  sys::fs::current_path(Cwd);
  capture::ReplayOptions O;
  O.Worker = *Worker;
  O.Capture = absolutePath(CaptureArg, Cwd);
  O.Cubin = absolutePath(CubinOpt, Cwd);
  O.CandidateCubin = CandidateOpt.empty() ? "" : absolutePath(CandidateOpt, Cwd);
  O.Iters = ItersOpt;
  O.Launches.assign(LaunchOpt.begin(), LaunchOpt.end());
  O.Tolerance = TolOpt;
  O.L2 = L2Opt;
  O.Placements = PlacementsOpt;
  O.PlacementPadMiB = PlacementPadOpt;
  O.PlacementSeed = PlacementSeedOpt;
  O.Train = TrainOpt;
  O.Poison = PoisonOpt;
  O.LaunchTimeoutMs = LaunchTimeoutOpt;
  O.TimeoutS = TimeoutOpt;
  O.Gate = !NoGateOpt;
  O.Timer = TimerOpt;
  SmallString<256> Tmp;
  if (WorkDirOpt.empty()) {
    if (std::error_code EC = sys::fs::createUniqueDirectory("kloop-replay", Tmp))
      return Fail("cannot create a temporary directory: " + EC.message());
    O.WorkDir = Tmp.str().str();
  } else {
    O.WorkDir = absolutePath(WorkDirOpt, Cwd);
  }

  if (RepeatOpt > 0) {
    int Code = runRepeated(O);
    if (!Tmp.empty())
      sys::fs::remove_directories(Tmp);
    return Code;
  }
  Expected<capture::ReplayResult> R = capture::runReplayWorker(O);
  if (!Tmp.empty())
    sys::fs::remove_directories(Tmp);
  if (!R)
    return Fail(toString(R.takeError()));
  if (!OutputOpt.empty())
    if (Error E = writeFileAtomically(OutputOpt, R->Json))
      return Fail(toString(std::move(E)));
  if (R->ExitCode == 2)
    return Fail(R->Error);
  outs() << "kloop replay: " << CaptureArg << " on " << R->Device << ": " << R->Launches.size() << " launch(es), "
         << ItersOpt << " iteration(s), L2 " << (R->L2.empty() ? L2Opt : R->L2)
         << (R->L2Note.empty() ? "" : " (" + terminalSafe(R->L2Note) + ")") << ", " << R->Placements << " placement(s)"
         << (R->PlacementNote.empty() ? "" : " (" + terminalSafe(R->PlacementNote) + ")") << padsText(*R)
         << ", tolerance " << TolOpt
         << ", timed by " << R->Timer
         << (R->TimerNote.empty() ? "" : " (" + terminalSafe(R->TimerNote) + ")") << "\n";
  printResult(outs(), *R);
  if (!R->Error.empty())
    errs() << "kloop replay: " << (R->Failed.empty() ? "error" : R->Failed + " failed") << ": "
           << terminalSafe(R->Error) << "\n";
  return R->ExitCode;
}

CommandRegistration Reg(ReplaySub, runReplay);

} // namespace
