//===- Runner.cpp - One isolated run of a workload ------------------------===//
#include "kloop/Measure/Runner.h"
#include "kloop/Measure/Config.h"
#include "kloop/Support/Process.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
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
  std::string Exe = sys::fs::getMainExecutable(Argv0, MainAddr);
  SmallString<256> P(Exe);
  sys::path::remove_filename(P); // bin/
  sys::path::remove_filename(P); // prefix
  sys::path::append(P, "lib", "libkloop-cupti.so");
  if (sys::fs::is_regular_file(P))
    return P.str().str();
  return createStringError(inconvertibleErrorCode(),
                           "libkloop-cupti.so not found at '%s' (next to the kloop executable '%s'); "
                           "build the kloop-cupti target or set KLOOP_CUPTI_LIB",
                           P.c_str(), Exe.c_str());
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

Expected<RunResult> runIsolated(const RunRequest &R) {
  if (R.TimeoutS == 0)
    return kerr("run '" + R.Label + "': timeout must be positive");
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

  if (TimedOut) {
    Res.Status = RunStatus::TimedOut;
    Res.Detail = "killed after the " + std::to_string(R.TimeoutS) + " s timeout";
    return Res;
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
    return Res;
  }
  Res.ExitCode = Code;
  if (Code == 125 && !HaveStatus) {
    Res.Status = RunStatus::FailedToStart;
    Res.Detail = "cannot change to working directory '" + R.Cwd + "'";
    return Res;
  }
  if (Code > 128 && Code < 128 + 65) {
    Res.Status = RunStatus::Crashed;
    Res.Signal = Code - 128;
    Res.Detail = "killed by signal " + std::to_string(Res.Signal) + " (" + signalName(Res.Signal) + ")";
    return Res;
  }
  if (Code != 0) {
    Res.Status = RunStatus::ExitedNonZero;
    Res.Detail = "exit code " + std::to_string(Code);
    if (Code == 127)
      Res.Detail += " (command not found)";
    return Res;
  }
  if (!R.Inject) {
    Res.Status = RunStatus::Ok;
    return Res;
  }
  if (!sys::fs::exists(Res.ProfilePath)) {
    Res.Status = RunStatus::MissingProfile;
    Res.Detail = "the workload exited 0 but wrote no profile at '" + Res.ProfilePath +
                 "' (was libkloop-cupti.so loaded? does the workload use CUDA?)";
    return Res;
  }
  Expected<verify::Profile> P = verify::readProfile(Res.ProfilePath);
  if (!P) {
    Res.Status = RunStatus::CorruptProfile;
    Res.Detail = toString(P.takeError());
    return Res;
  }
  Res.Prof = std::move(*P);
  Res.Status = RunStatus::Ok;
  return Res;
}

} // namespace measure
} // namespace kloop
