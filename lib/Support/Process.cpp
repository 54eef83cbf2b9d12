//===- Process.cpp - Child processes that die with kloop ------------------===//
#include "kloop/Support/Process.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <thread>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

using namespace llvm;

namespace kloop {

namespace {
/// What a child writes to the report pipe when the command cannot start.
struct StartFailure {
  int Stage; ///< one of the Stage* values
  int Errno;
};
enum { StageChdir = 1, StageExec = 2, StageFork = 3 };
/// The report pipe's descriptor in the supervisor and the command.
const int ReportFd = 3;
} // namespace

std::string commandName(const std::vector<std::string> &Argv) {
  std::string S;
  for (const std::string &A : Argv) {
    if (!S.empty())
      S += ' ';
    S += A;
  }
  return S.size() > 200 ? S.substr(0, 197) + "..." : S;
}

void killProcessGroup(pid_t Leader) {
  if (Leader > 0)
    ::kill(-Leader, SIGKILL);
}

ReapResult reapProcessGroup(pid_t Leader, std::chrono::milliseconds Bound) {
  ReapResult R;
  if (Leader <= 0)
    return R;
  killProcessGroup(Leader);
  auto Deadline = std::chrono::steady_clock::now() + Bound;
  auto Pause = std::chrono::milliseconds(1);
  while (true) {
    pid_t W = ::waitpid(-Leader, nullptr, WNOHANG);
    if (W > 0) {
      ++R.Reaped;
      continue;
    }
    if (W < 0 && errno == EINTR)
      continue;
    if (W < 0) // ECHILD: no child of kloop is left in the group
      return R;
    if (std::chrono::steady_clock::now() >= Deadline)
      break;
    std::this_thread::sleep_for(Pause);
    Pause = std::min(Pause * 2, std::chrono::milliseconds(20));
  }
  R.Left = processGroupMembers(Leader);
  return R;
}

std::vector<pid_t> processGroupMembers(pid_t Pgid) {
  std::vector<pid_t> Members;
  DIR *D = ::opendir("/proc");
  if (!D)
    return Members;
  while (dirent *E = ::readdir(D)) {
    unsigned Pid;
    if (StringRef(E->d_name).getAsInteger(10, Pid))
      continue;
    auto Stat = MemoryBuffer::getFileAsStream("/proc/" + std::string(E->d_name) + "/stat");
    if (!Stat)
      continue; // gone meanwhile
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so start after the last ')'.
    StringRef Rest = (*Stat)->getBuffer();
    size_t Close = Rest.rfind(')');
    if (Close == StringRef::npos)
      continue;
    Rest = Rest.substr(Close + 1).ltrim();
    SmallVector<StringRef, 4> F;
    Rest.split(F, ' ', 3, /*KeepEmpty=*/false);
    long Group;
    if (F.size() >= 3 && !F[2].getAsInteger(10, Group) && Group == Pgid)
      Members.push_back(static_cast<pid_t>(Pid));
  }
  ::closedir(D);
  return Members;
}

// Everything below up to spawnProcessGroup runs in forked children of a process that may have
// threads: async-signal-safe calls only.

static void report(int Stage, int Errno, int Fd = ReportFd) {
  StartFailure F{Stage, Errno};
  (void)!::write(Fd, &F, sizeof(F));
}

static void killOwnGroup(int) { ::kill(0, SIGKILL); }

/// Closes every descriptor from \p From up.
static void closeFrom(int From) {
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, From, ~0U, 0) == 0)
    return;
#endif
  long Max = ::sysconf(_SC_OPEN_MAX);
  for (long F = From; F < (Max < 0 || Max > 65536 ? 65536 : Max); ++F)
    ::close(static_cast<int>(F));
}

/// Gives the supervisor exactly four descriptors: the command's stdin, stdout and stderr
/// as 0, 1, 2 and the report pipe as ReportFd (close-on-exec). A descriptor of kloop's held
/// open here would keep a pipe from reaching end-of-file (a command reading its stdin to the
/// end would wait for ever).
static bool arrangeDescriptors(int In, int Out, int Err, int Report) {
  int Want[4] = {In, Out, Err, Report};
  int High[4];
  for (int I = 0; I < 4; ++I) {
    int F = Want[I] >= 0 ? Want[I] : ::open("/dev/null", I == 0 ? O_RDONLY : O_WRONLY);
    if (F < 0 || (High[I] = ::fcntl(F, F_DUPFD, 16)) < 0)
      return false;
  }
  for (int I = 0; I < 4; ++I)
    if (::dup2(High[I], I) < 0)
      return false;
  closeFrom(ReportFd + 1);
  return ::fcntl(ReportFd, F_SETFD, FD_CLOEXEC) == 0;
}

[[noreturn]] static void execCommand(char *const *Argv, char **Envp, const char *Cwd) {
  struct sigaction Default = {};
  Default.sa_handler = SIG_DFL;
  for (int Sig : {SIGTERM, SIGPIPE, SIGINT, SIGQUIT})
    ::sigaction(Sig, &Default, nullptr);
  sigset_t None;
  sigemptyset(&None);
  ::sigprocmask(SIG_SETMASK, &None, nullptr);
  if (*Cwd && ::chdir(Cwd) != 0) {
    report(StageChdir, errno);
    ::_exit(127);
  }
  if (Envp)
    environ = Envp;
  ::execvp(Argv[0], Argv);
  report(StageExec, errno);
  ::_exit(127);
}

[[noreturn]] static void supervise(pid_t Kloop, char *const *Argv, char **Envp, const char *Cwd) {
  ::setpgid(0, 0);
  struct sigaction Kill = {};
  Kill.sa_handler = killOwnGroup;
  sigemptyset(&Kill.sa_mask);
  ::sigaction(SIGTERM, &Kill, nullptr);
  sigset_t Term;
  sigemptyset(&Term);
  sigaddset(&Term, SIGTERM);
  ::sigprocmask(SIG_UNBLOCK, &Term, nullptr);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != Kloop) // kloop died before prctl took effect
    killOwnGroup(0);
  pid_t Cmd = ::fork();
  if (Cmd < 0) {
    report(StageFork, errno);
    ::_exit(127);
  }
  if (Cmd == 0)
    execCommand(Argv, Envp, Cwd);
  for (int F = 0; F <= ReportFd; ++F)
    ::close(F);
  int Status = 0;
  while (::waitpid(Cmd, &Status, 0) < 0)
    if (errno != EINTR)
      ::_exit(127);
  if (WIFEXITED(Status))
    ::_exit(WEXITSTATUS(Status));
  // Die of the command's signal, without a core file of the supervisor.
  int Sig = WTERMSIG(Status);
  struct rlimit NoCore = {0, 0};
  ::setrlimit(RLIMIT_CORE, &NoCore);
  struct sigaction Default = {};
  Default.sa_handler = SIG_DFL;
  ::sigaction(Sig, &Default, nullptr);
  sigset_t Only;
  sigemptyset(&Only);
  sigaddset(&Only, Sig);
  ::sigprocmask(SIG_UNBLOCK, &Only, nullptr);
  ::kill(::getpid(), Sig);
  ::_exit(128 + Sig);
}

Expected<pid_t> spawnProcessGroup(const SpawnSpec &S) {
  // Orphans of the group become kloop's children, for reapProcessGroup (once per process; it cannot
  // fail on Linux >= 3.4, and if it did the orphans would only be left to PID 1 as before).
  static const bool Subreaper = ::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
  (void)Subreaper;
  std::string Name = commandName(S.Argv);
  auto SysErr = [&](const char *What, int E) {
    return createStringError("command '" + Name + "': " + What + ": " + std::strerror(E));
  };
  if (S.Argv.empty() || S.Argv[0].empty())
    return createStringError("cannot start an empty command");
  // Everything the children need, allocated before fork.
  std::vector<char *> Argv;
  for (const std::string &A : S.Argv)
    Argv.push_back(const_cast<char *>(A.c_str()));
  Argv.push_back(nullptr);
  std::vector<char *> Envp;
  if (S.Env) {
    for (const std::string &E : *S.Env)
      Envp.push_back(const_cast<char *>(E.c_str()));
    Envp.push_back(nullptr);
  }
  int Report[2];
  if (::pipe2(Report, O_CLOEXEC) != 0)
    return SysErr("pipe", errno);
  pid_t Kloop = ::getpid();
  pid_t Pid = ::fork();
  if (Pid < 0) {
    int E = errno;
    ::close(Report[0]);
    ::close(Report[1]);
    return SysErr("fork", E);
  }
  if (Pid == 0) {
    if (!arrangeDescriptors(S.Stdin, S.Stdout, S.Stderr, Report[1])) {
      report(StageFork, errno, Report[1]);
      ::_exit(127);
    }
    supervise(Kloop, Argv.data(), S.Env ? Envp.data() : nullptr, S.WorkingDir.c_str());
  }
  ::setpgid(Pid, Pid); // also from here: the group exists before anyone kills it
  ::close(Report[1]);
  StartFailure F{0, 0};
  ssize_t Got;
  do
    Got = ::read(Report[0], &F, sizeof(F));
  while (Got < 0 && errno == EINTR);
  ::close(Report[0]);
  if (Got != static_cast<ssize_t>(sizeof(F)))
    return Pid; // end of file: the command was executed
  killProcessGroup(Pid);
  while (::waitpid(Pid, nullptr, 0) < 0 && errno == EINTR)
    ;
  if (F.Stage == StageFork)
    return SysErr("fork", F.Errno);
  return createStringError("command '" + Name + "': cannot run " +
                           (F.Stage == StageChdir ? "in '" + S.WorkingDir + "' " : std::string()) + "(" +
                           std::strerror(F.Errno) + ")");
}

} // namespace kloop
