//===- Runner.cpp - One isolated run of a workload ------------------------===//
#include "kloop/Measure/Runner.h"
#include "kloop/Capture/Manifest.h"
#include "kloop/Measure/Config.h"
#include "kloop/Support/Path.h"
#include "kloop/Support/Process.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <thread>

extern char **environ;

using namespace llvm;

namespace kloop {
namespace measure {

StringRef toString(RunStatus S) {
  switch (S) {
  case RunStatus::Ok:
    return "ok";
  case RunStatus::FailedToStart:
    return "failed to start";
  case RunStatus::TimedOut:
    return "timed out";
  case RunStatus::Crashed:
    return "crashed";
  case RunStatus::ExitedNonZero:
    return "exited non-zero";
  case RunStatus::MissingProfile:
    return "missing profile";
  case RunStatus::CorruptProfile:
    return "corrupt profile";
  }
  return "unknown";
}

std::string RunResult::describe() const {
  std::string S = toString(Status).str();
  if (!Detail.empty())
    S += ": " + Detail;
  return S;
}

std::string tailOfFile(StringRef Path, size_t MaxLines, size_t MaxBytes) {
  auto Buf = MemoryBuffer::getFile(Path, /*IsText=*/true);
  if (!Buf)
    return "";
  StringRef T = (*Buf)->getBuffer().rtrim();
  if (T.size() > MaxBytes)
    T = T.take_back(MaxBytes);
  size_t Pos = T.size();
  for (size_t N = 0; N < MaxLines && Pos != StringRef::npos && Pos > 0; ++N)
    Pos = T.rfind('\n', Pos - 1);
  if (Pos != StringRef::npos && Pos < T.size())
    T = T.drop_front(Pos + (T[Pos] == '\n' ? 1 : 0));
  return T.str();
}

bool saysNoCudaDevice(StringRef Text) {
  std::string L = Text.lower();
  return StringRef(L).contains("no cuda-capable device") || StringRef(L).contains("cudaerrornodevice") ||
         StringRef(L).contains("cuda_error_no_device") ||
         StringRef(L).contains("cuda driver version is insufficient");
}

static const char *signalName(int Sig) {
  switch (Sig) {
  case SIGSEGV:
    return "SIGSEGV";
  case SIGABRT:
    return "SIGABRT";
  case SIGBUS:
    return "SIGBUS";
  case SIGFPE:
    return "SIGFPE";
  case SIGILL:
    return "SIGILL";
  case SIGKILL:
    return "SIGKILL";
  case SIGTERM:
    return "SIGTERM";
  case SIGINT:
    return "SIGINT";
  case SIGPIPE:
    return "SIGPIPE";
  default:
    return "signal";
  }
}

Expected<std::string> findCuptiLibrary(const char *Argv0, void *MainAddr) {
  if (std::optional<std::string> Env = sys::Process::GetEnv("KLOOP_CUPTI_LIB")) {
    if (sys::fs::is_regular_file(*Env))
      return *Env;
    return createStringError(inconvertibleErrorCode(),
                             "KLOOP_CUPTI_LIB is set to '%s', which is not a file", Env->c_str());
  }
  std::string Prefix = installPrefix(Argv0, MainAddr);
  std::vector<std::string> Tried;
  for (const char *Dir : CuptiLibrarySubdirs) {
    SmallString<256> P(Prefix);
    sys::path::append(P, Dir, "libkloop-cupti.so");
    if (sys::fs::is_regular_file(P))
      return P.str().str();
    Tried.push_back("'" + P.str().str() + "'");
  }
  return createStringError(inconvertibleErrorCode(),
                           "libkloop-cupti.so not found at %s (under kloop's installation prefix '%s'); "
                           "build the kloop-cupti target (it needs CUPTI) or set KLOOP_CUPTI_LIB",
                           join(Tried, " or ").c_str(), Prefix.c_str());
}

static Error kerr(const Twine &Msg) { return createStringError(inconvertibleErrorCode(), Msg.str()); }

void applyL2Policy(InjectionSettings &I, L2Policy Policy) {
  if (Policy == L2Policy::Flush)
    I.Extra["KLOOP_CUPTI_L2_FLUSH"] = "1";
  else
    I.Extra.erase("KLOOP_CUPTI_L2_FLUSH");
}

void applyKernelTrace(InjectionSettings &I, KernelTrace Trace) {
  I.Extra["KLOOP_CUPTI_KERNEL_TRACE"] = toString(Trace).str();
}

unsigned placementPadChoices(unsigned MaxMiB) { return capture::placementPadChoices(MaxMiB); }

uint64_t placementPadBytes(unsigned MaxMiB, size_t Shape, unsigned Seed, unsigned Round) {
  return capture::placementPadBytes(MaxMiB, (uint64_t(Shape) << 42) ^ (uint64_t(Seed) << 21) ^ Round);
}

void applyPlacementPad(InjectionSettings &I, uint64_t Bytes) {
  if (Bytes)
    I.Extra["KLOOP_CUPTI_PLACEMENT_PAD"] = std::to_string(Bytes);
  else
    I.Extra.erase("KLOOP_CUPTI_PLACEMENT_PAD");
}

std::string kernelTraceMismatch(const verify::Profile &P, KernelTrace Asked) {
  if (P.KernelTrace == toString(Asked))
    return "";
  if (P.KernelTrace.empty())
    return "profile " + P.Path + " does not say how kernels were traced (tracing: " + toString(Asked).str() +
           " was asked; is libkloop-cupti.so older than kloop?)";
  return "profile " + P.Path + " reports kernel_trace '" + P.KernelTrace + "' although tracing: " +
         toString(Asked).str() + " was asked";
}

std::string foreignLoadUnknown(const verify::Profile &P) {
  size_t Unknown = llvm::count_if(P.EnvSamples, [](const verify::EnvSample &S) { return !S.ForeignProcesses; });
  if (!Unknown)
    return "";
  return "profile " + P.Path + ": " + std::to_string(Unknown) + " of " + std::to_string(P.EnvSamples.size()) +
         " NVML samples do not list the GPU's compute processes, so foreign GPU load was not checked there (is "
         "libkloop-cupti.so older than kloop, or could NVML not list them? its errors say)";
}

void ProfileNotes::check(const verify::Profile &P, std::vector<std::string> &Notes) {
  if (std::string M = kernelTraceMismatch(P, Asked); !M.empty() && !TraceNoted) {
    Notes.push_back(M + " (first such run; the tracing note above may not hold)");
    TraceNoted = true;
  }
  if (std::string M = verify::profileProblems(P); !M.empty() && !ProblemNoted) {
    Notes.push_back(M + " (first such run)");
    ProblemNoted = true;
  }
  if (std::string M = foreignLoadUnknown(P); !M.empty() && !ForeignNoted) {
    Notes.push_back(M + " (first such run)");
    ForeignNoted = true;
  }
}

/// How the run ended, from the timeout flag, the shell's wait status and the status file the shell
/// wrote, and, for an injected run that exited 0, its profile.
static void classifyExit(const RunRequest &R, bool TimedOut, int WaitStatus, const std::string &StatusPath,
                         RunResult &Res) {
  if (TimedOut) {
    Res.Status = RunStatus::TimedOut;
    Res.Detail = "killed after the " + std::to_string(R.TimeoutS) + " s timeout";
    return;
  }
  // Prefer the status the shell recorded; fall back on what waitpid saw.
  bool HaveStatus = false;
  int Code = WaitStatus >= 0 && WIFEXITED(WaitStatus) ? WEXITSTATUS(WaitStatus) : -1;
  if (auto SB = MemoryBuffer::getFile(StatusPath, true)) {
    int V;
    if (!StringRef((*SB)->getBuffer()).trim().getAsInteger(10, V)) {
      Code = V;
      HaveStatus = true;
    }
  }
  sys::fs::remove(StatusPath);
  if (!HaveStatus && (WaitStatus < 0 || WIFSIGNALED(WaitStatus))) {
    Res.Status = RunStatus::Crashed;
    Res.Detail = WaitStatus < 0 ? std::string("the shell could not be waited for: ") + std::strerror(errno)
                                : "the shell was killed by signal " + std::to_string(WTERMSIG(WaitStatus)) +
                                      " (" + signalName(WTERMSIG(WaitStatus)) + ")";
    return;
  }
  Res.ExitCode = Code;
  if (Code == 125 && !HaveStatus) {
    Res.Status = RunStatus::FailedToStart;
    Res.Detail = "cannot change to working directory '" + R.Cwd + "'";
    return;
  }
  if (Code > 128 && Code < 128 + 65) {
    Res.Status = RunStatus::Crashed;
    Res.Signal = Code - 128;
    Res.Detail = "killed by signal " + std::to_string(Res.Signal) + " (" + signalName(Res.Signal) + ")";
    return;
  }
  if (Code != 0) {
    Res.Status = RunStatus::ExitedNonZero;
    Res.Detail = "exit code " + std::to_string(Code);
    if (Code == 127)
      Res.Detail += " (command not found)";
    return;
  }
  if (!R.Inject) {
    Res.Status = RunStatus::Ok;
    return;
  }
  if (!sys::fs::exists(Res.ProfilePath)) {
    Res.Status = RunStatus::MissingProfile;
    Res.Detail = "the workload exited 0 but wrote no profile at '" + Res.ProfilePath +
                 "' (was libkloop-cupti.so loaded? does the workload use CUDA?)";
    return;
  }
  Expected<verify::Profile> P = verify::readProfile(Res.ProfilePath);
  if (!P) {
    Res.Status = RunStatus::CorruptProfile;
    Res.Detail = toString(P.takeError());
    return;
  }
  Res.Prof = std::move(*P);
  Res.Status = RunStatus::Ok;
}

/// NVML's view before run \p R (none without R.Gpu); sets GpuWatched, GpuUnwatched and ForeignBefore.
static std::optional<GpuSnapshot> snapshotBefore(const RunRequest &R, RunResult &Res) {
  if (!R.Gpu)
    return std::nullopt;
  Expected<GpuSnapshot> S = R.Gpu->snapshot();
  if (!S) {
    Res.GpuUnwatched = toString(S.takeError());
    return std::nullopt;
  }
  Res.GpuWatched = true;
  Res.ForeignBefore = S->Processes;
  return *S;
}

static std::string seconds(double S) { return formatv("{0:f2} s", S).str(); }

/// "busy: nvml:0 at 100%" parts for the devices of \p Busy.
static std::string describeBusy(ArrayRef<GpuUtilization> Busy) {
  SmallVector<std::string, 2> Parts;
  for (const GpuUtilization &U : Busy)
    Parts.push_back(U.Device + " at " + std::to_string(U.Percent.value_or(0)) + "% utilization");
  return join(Parts, ", ");
}

/// The DirtyGpuError of \p Run ("run LABEL timed out"...) when \p W did not drain after \p Waited seconds.
static Error notDrained(StringRef Run, const DrainWait &W, double Waited, unsigned DrainTimeoutS) {
  std::string Still = describeProcesses(W.Held);
  if (!W.Busy.empty())
    Still += (Still.empty() ? "" : "; ") + describeBusy(W.Busy);
  return make_error<DirtyGpuError>(Run.str() + ": after " + seconds(Waited) + " NVML still shows " + Still +
                                   " (run.drain_timeout_s is " + std::to_string(DrainTimeoutS) +
                                   " s); nothing more is timed on this GPU");
}

Error drainAfter(const GpuMonitor &M, const GpuSnapshot &Before, unsigned DrainTimeoutS, StringRef Runs) {
  auto Start = std::chrono::steady_clock::now();
  Expected<DrainWait> W = waitForDrain(M, Before, Start + std::chrono::seconds(DrainTimeoutS));
  if (!W) {
    consumeError(W.takeError()); // NVML cannot say; the caller's next run looks again
    return Error::success();
  }
  if (W->Drained)
    return Error::success();
  return notDrained(Runs, *W, std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count(),
                    DrainTimeoutS);
}

/// The run's group, killed already, is reaped; with R.Gpu the GPU is looked at again (after a run
/// that did not end Ok: drained first, Runner.h). Error (DirtyGpuError) when, with R.Gpu, the group
/// or the GPU does not clear within R.DrainTimeoutS.
static Error afterRun(const RunRequest &R, pid_t Pid, const std::optional<GpuSnapshot> &Before, RunResult &Res) {
  using Clock = std::chrono::steady_clock;
  auto Start = Clock::now();
  auto Deadline = Start + std::chrono::seconds(R.DrainTimeoutS);
  auto Since = [&] { return std::chrono::duration<double>(Clock::now() - Start).count(); };
  std::string Run = "run " + R.Label + " " + Res.describe();
  bool Failed = !Res.ok();
  // Right after the kill: what the failed run still holds (a killed process stays listed while the
  // driver tears its context down).
  std::optional<GpuSnapshot> First;
  if (Failed && Before) {
    if (Expected<GpuSnapshot> S = R.Gpu->snapshot())
      First = std::move(*S);
    else
      consumeError(S.takeError()); // the wait below asks again and reports a failure
  }
  ReapResult Reap = reapProcessGroup(
      Pid, std::chrono::duration_cast<std::chrono::milliseconds>(Deadline - Clock::now()));
  if (!R.Gpu)
    return Error::success();
  if (!Reap.Left.empty()) {
    std::vector<std::string> Pids;
    for (pid_t P : Reap.Left)
      Pids.push_back(std::to_string(P));
    return make_error<DirtyGpuError>(Run + ": processes of its group are still there " + seconds(Since()) +
                                     " after SIGKILL (pids " + join(Pids, ", ") + "; run.drain_timeout_s is " +
                                     std::to_string(R.DrainTimeoutS) + " s)");
  }
  if (!Failed) {
    if (Before) {
      if (Expected<GpuSnapshot> After = R.Gpu->snapshot()) {
        Res.ForeignAfter = After->Processes;
      } else {
        Res.GpuWatched = false;
        Res.ForeignBefore.clear();
        Res.GpuUnwatched = toString(After.takeError());
      }
    }
    if (Res.Prof)
      R.Gpu->watch(Res.Prof->Device.PciBusId);
    return Error::success();
  }
  DrainReport D;
  D.Reaped = Reap.Reaped;
  Expected<DrainWait> W = Before ? waitForDrain(*R.Gpu, *Before, Deadline)
                                 : Expected<DrainWait>(createStringError(Res.GpuUnwatched));
  if (!W) {
    // NVML cannot say: wait a fixed time and say so; never claim a drain.
    D.Unwatched = toString(W.takeError());
    std::this_thread::sleep_for(std::chrono::duration<double>(UnwatchedSettleS));
    D.Seconds = Since();
    Res.GpuWatched = false;
    Res.GpuUnwatched = D.Unwatched;
    Res.ForeignBefore.clear();
    Res.Drain = std::move(D);
    return Error::success();
  }
  if (!W->Drained)
    return notDrained(Run, *W, Since(), R.DrainTimeoutS);
  D.Watched = true;
  D.Seconds = Since();
  D.HeldAtStart = First ? newProcesses(*Before, *First) : W->Held;
  Res.ForeignAfter = W->Last.Processes;
  Res.Drain = std::move(D);
  return Error::success();
}

std::string drainNote(StringRef Label, const RunResult &R) {
  if (!R.Drain)
    return "";
  const DrainReport &D = *R.Drain;
  std::string Run = ("run " + Label + " " + toString(R.Status)).str();
  if (!D.Watched)
    return Run + "; the GPU was not checked (" + D.Unwatched + "); waited a fixed " + seconds(UnwatchedSettleS) +
           " after reaping the run's processes";
  return Run + "; waited " + seconds(D.Seconds) + " for the GPU to drain (" +
         (D.HeldAtStart.empty() ? std::string("no new process held it") : describeProcesses(D.HeldAtStart)) + ")";
}

Expected<RunResult> runIsolated(const RunRequest &R) {
  if (R.TimeoutS == 0)
    return kerr("run '" + R.Label + "': timeout must be positive");
  if (R.DrainTimeoutS == 0)
    return kerr("run '" + R.Label + "': drain timeout must be positive");
  if (R.Label.empty() ||
      !all_of(R.Label, [](char C) { return isAlnum(C) || C == '-' || C == '_' || C == '.'; }))
    return kerr("run label '" + R.Label + "' may contain only letters, digits, '-', '_' and '.'");
  if (std::error_code EC = sys::fs::create_directories(R.OutDir))
    return kerr("cannot create run directory '" + R.OutDir + "': " + EC.message());

  RunResult Res;
  auto File = [&](StringRef Ext) {
    SmallString<256> P(R.OutDir);
    sys::path::append(P, R.Label + Ext);
    return P.str().str();
  };
  Res.StdoutPath = File(".stdout");
  Res.StderrPath = File(".stderr");
  std::string StatusPath = File(".status");
  sys::fs::remove(StatusPath);
  if (R.Inject) {
    Res.ProfilePath = File(".json");
    // A stale profile from an earlier run must not be mistaken for this one.
    sys::fs::remove(Res.ProfilePath);
  }

  if (!sys::fs::is_directory(R.Cwd)) {
    Res.Status = RunStatus::FailedToStart;
    Res.Detail = "working directory '" + R.Cwd + "' does not exist";
    return Res;
  }

  // Environment: kloop's own, then the workload's, then the injection's.
  std::map<std::string, std::string> EnvMap;
  for (char **E = environ; E && *E; ++E) {
    StringRef KV(*E);
    auto [K, V] = KV.split('=');
    EnvMap[K.str()] = V.str();
  }
  for (const auto &KV : R.Env)
    EnvMap[KV.first] = KV.second;
  if (R.Inject) {
    EnvMap["CUDA_INJECTION64_PATH"] = R.Inject->LibraryPath;
    EnvMap["KLOOP_CUPTI_OUT"] = Res.ProfilePath;
    EnvMap["KLOOP_CUPTI_TARGETS"] = join(R.Inject->Targets, ",");
    EnvMap["KLOOP_CUPTI_DUMP"] = R.Inject->Dump ? "1" : "0";
    if (R.Inject->Poison.empty())
      EnvMap.erase("KLOOP_CUPTI_POISON");
    else
      EnvMap["KLOOP_CUPTI_POISON"] = R.Inject->Poison;
    for (const auto &KV : R.Inject->Extra)
      EnvMap[KV.first] = KV.second;
  }
  SpawnSpec Spawn;
  Spawn.Env.emplace();
  for (const auto &KV : EnvMap)
    Spawn.Env->push_back(KV.first + "=" + KV.second);

  // The shell waits for the command (it is not the last command, so no exec
  // optimisation) and records its status: 128+N when killed by signal N.
  std::string Script = "cd " + shellQuote(R.Cwd) + " || exit 125\n" + R.Command +
                       "\n__kloop_rc=$?\necho $__kloop_rc > " + shellQuote(StatusPath) + "\nexit $__kloop_rc\n";
  Spawn.Argv = {"/bin/sh", "-c", Script};
  // What holds the GPU now is foreign to this run.
  std::optional<GpuSnapshot> Before = snapshotBefore(R, Res);
  auto Start = std::chrono::steady_clock::now();
  auto Elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
  };
  pid_t Pid = -1;
  {
    int OutFD = ::open(Res.StdoutPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int ErrFD = ::open(Res.StderrPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    Spawn.Stdout = OutFD;
    Spawn.Stderr = ErrFD;
    Expected<pid_t> P = OutFD < 0 || ErrFD < 0
                            ? Expected<pid_t>(createStringError("cannot create '" + Res.StdoutPath + "' or '" +
                                                                Res.StderrPath + "': " + std::strerror(errno)))
                            : spawnProcessGroup(Spawn);
    for (int F : {OutFD, ErrFD})
      if (F >= 0)
        ::close(F);
    if (!P) {
      Res.Status = RunStatus::FailedToStart;
      Res.Detail = "cannot start /bin/sh: " + toString(P.takeError());
      return Res;
    }
    Pid = *P;
  }

  // In its own process group, which dies with kloop (kloop/Support/Process.h) and, on a timeout
  // or when the shell ends, with this run: nothing the workload or build started outlives it.
  bool TimedOut = false;
  int WaitStatus = 0;
  auto SleepFor = std::chrono::milliseconds(1);
  while (true) {
    pid_t W = ::waitpid(Pid, &WaitStatus, WNOHANG);
    if (W == Pid)
      break;
    if (W < 0 && errno != EINTR) {
      WaitStatus = -1;
      break;
    }
    if (!TimedOut && Elapsed() >= R.TimeoutS) {
      TimedOut = true;
      killProcessGroup(Pid);
    }
    std::this_thread::sleep_for(SleepFor);
    SleepFor = std::min(SleepFor * 2, std::chrono::milliseconds(50));
  }
  killProcessGroup(Pid);
  Res.WallSeconds = Elapsed();
  Res.StderrTail = tailOfFile(Res.StderrPath);
  classifyExit(R, TimedOut, WaitStatus, StatusPath, Res);
  if (Error E = afterRun(R, Pid, Before, Res))
    return E;
  return Res;
}

} // namespace measure
} // namespace kloop
