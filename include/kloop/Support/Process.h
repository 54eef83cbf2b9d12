//===- kloop/Support/Process.h - Child processes that die with kloop ------===//
///
/// \file
/// The one way kloop starts a child process (issue 12, item 7; issue 13 wants one
/// runner): the command runs in a process group of its own, led by a small
/// supervisor process forked from kloop, so that
///  - when kloop dies, even by SIGKILL, the supervisor gets SIGTERM from the kernel
///    (prctl PR_SET_PDEATHSIG) and kills the whole group with SIGKILL: an nvcc
///    build and the cicc/ptxas it started do not outlive kloop;
///  - the caller kills the whole group on a timeout and after the command exits
///    (killProcessGroup), so that a helper the command left running (holding its
///    stdout, say) neither stalls kloop nor survives it;
///  - the caller then reaps the group (reapProcessGroup): kloop makes itself a
///    child subreaper (prctl PR_SET_CHILD_SUBREAPER) on the first spawn, so a
///    process of the group whose parent died (the workload, when its shell and
///    the supervisor are killed) becomes kloop's child and is waited for here,
///    not left to PID 1, which does not reap orphans in every container (on the
///    GPU machine they stayed <defunct> for ever; issue 17, item 1).
/// The supervisor waits for the command and exits with its status (a command
/// killed by signal N ends the supervisor by signal N).
///
/// Limits: a descendant that moves to another process group or session (setsid)
/// leaves kloop's control; if it is orphaned it becomes kloop's child (subreaper)
/// and, never waited for, a zombie until kloop exits. PR_SET_PDEATHSIG fires when the *thread* that
/// spawned the group exits: spawn from a thread that outlives the command.
/// Linux only (prctl).
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_SUPPORT_PROCESS_H
#define KLOOP_SUPPORT_PROCESS_H

#include "llvm/Support/Error.h"

#include <chrono>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace kloop {

/// What to start.
struct SpawnSpec {
  /// argv; Argv[0] is looked up in PATH when it has no '/'. Must not be empty.
  std::vector<std::string> Argv;
  /// The command's environment as "NAME=value" strings; none: kloop's own.
  std::optional<std::vector<std::string>> Env;
  /// Working directory of the command; "" = kloop's.
  std::string WorkingDir;
  /// Descriptors that become the command's stdin, stdout and stderr; -1: /dev/null.
  /// The caller keeps (and closes) its own copies.
  int Stdin = -1, Stdout = -1, Stderr = -1;
};

/// Starts \p S as described in the file comment and returns the supervisor's pid,
/// which is also the process group id: wait for it with waitpid, kill the group
/// with killProcessGroup. The group exists when this returns (no race with a kill).
/// Errors, naming the command and errno's message: fork or pipe failed, the
/// working directory cannot be entered, the program cannot be executed (in the
/// last two cases the processes are already reaped).
llvm::Expected<pid_t> spawnProcessGroup(const SpawnSpec &S);

/// Sends SIGKILL to every process of the group \p Leader leads (the supervisor,
/// the command and whatever they started in the group). Harmless when the group
/// is already gone.
void killProcessGroup(pid_t Leader);

/// What reapProcessGroup did.
struct ReapResult {
  /// Processes of the group waited for (the leader too, when it had not been).
  unsigned Reaped = 0;
  /// Processes of the group still present, alive or zombie, when the bound
  /// passed (processGroupMembers); empty when every one was reaped.
  std::vector<pid_t> Left;
};

/// Kills the group \p Leader leads (SIGKILL, as killProcessGroup) and waits for
/// every process of it that is kloop's child: the leader, unless it was already
/// waited for (wait for it first with waitpid when its status matters: this
/// discards it), and every process of the group that its parent's death made
/// kloop's child (subreaper, see the file comment). Polls waitpid(-Leader,
/// WNOHANG) until no child of kloop is left in the group (ECHILD) or \p Bound
/// has passed. A killed process that held a CUDA context stays a zombie with
/// live threads for a few tenths of a second while the driver tears the context
/// down (0.25-0.5 s measured on an H200); it can only be reaped after that.
/// Never waits for a process outside the group (no waitpid(-1)).
ReapResult reapProcessGroup(pid_t Leader, std::chrono::milliseconds Bound);

/// The processes, alive or zombie, whose process group is \p Pgid, read from
/// /proc/<pid>/stat; empty when there is none or /proc cannot be read.
std::vector<pid_t> processGroupMembers(pid_t Pgid);

/// "cmd arg1 arg2 ..." (space-joined), cut to 200 characters, for messages.
std::string commandName(const std::vector<std::string> &Argv);

} // namespace kloop

#endif
