//===- CommandProposer.cpp - Proposals from any executable ----------------===//
#include "kloop/Propose/CommandProposer.h"
#include "kloop/Support/JSON.h"
#include "kloop/Support/Process.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace llvm;
using json = nlohmann::json;

namespace kloop {

namespace {
/// Closes a file descriptor once.
struct Fd {
  int V = -1;
  ~Fd() { reset(); }
  void reset() {
    if (V >= 0)
      ::close(V);
    V = -1;
  }
};
} // namespace

static const size_t StderrKeep = 64 * 1024;
/// How long the processes of a killed command's group may take to die before kloop stops waiting
/// for them (they are killed with SIGKILL; a proposer holds no GPU, so this is generous).
static const std::chrono::milliseconds ReapBound(10000);

namespace {
/// The pipes to and from one command, and what came through them.
struct CommandIO {
  Fd In, Out, Err; // kloop's ends: the command's stdin (a socket), stdout, stderr
  size_t Written = 0;
};
} // namespace

/// Moves what is ready on \p IO (poll results \p P, \p N entries) into \p R: writes \p Input,
/// reads stdout and stderr. Returns false when stdout passed \p C.MaxOutputBytes.
static bool transfer(const CommandConfig &C, StringRef Input, CommandIO &IO, const pollfd *P, int N,
                     CommandResult &R) {
  for (int I = 0; I < N; ++I) {
    if (!P[I].revents)
      continue;
    if (P[I].fd == IO.In.V) {
      ssize_t W = send(IO.In.V, Input.data() + IO.Written, Input.size() - IO.Written, MSG_NOSIGNAL);
      if (W > 0)
        IO.Written += static_cast<size_t>(W);
      // EPIPE: the command closed its stdin; it may still answer.
      if ((W < 0 && errno != EAGAIN && errno != EINTR) || IO.Written == Input.size())
        IO.In.reset();
      continue;
    }
    char Buf[65536];
    ssize_t Got = read(P[I].fd, Buf, sizeof(Buf));
    if (Got < 0 && (errno == EAGAIN || errno == EINTR))
      continue;
    bool IsOut = P[I].fd == IO.Out.V;
    if (Got <= 0) {
      (IsOut ? IO.Out : IO.Err).reset();
      continue;
    }
    std::string &To = IsOut ? R.Stdout : R.Stderr;
    To.append(Buf, static_cast<size_t>(Got));
    if (IsOut && R.Stdout.size() > C.MaxOutputBytes)
      return false;
    if (!IsOut && R.Stderr.size() > 2 * StderrKeep)
      R.Stderr.erase(0, R.Stderr.size() - StderrKeep);
  }
  return true;
}

Expected<CommandResult> runCommand(const CommandConfig &C, StringRef Input) {
  if (C.Argv.empty())
    return createStringError("command proposer: empty command");
  std::string Name = commandName(C.Argv);
  auto SysErr = [&](const char *What) {
    return createStringError("command '" + Name + "': " + What + ": " + std::strerror(errno));
  };

  // stdin is one end of a socket pair so that writing to a command that does
  // not read its input fails with EPIPE (MSG_NOSIGNAL), never with SIGPIPE.
  int SV[2], Out[2], Err[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, SV) != 0)
    return SysErr("socketpair");
  CommandIO IO;
  IO.In.V = SV[0];
  Fd InChild{SV[1]};
  if (pipe2(Out, O_CLOEXEC) != 0)
    return SysErr("pipe");
  IO.Out.V = Out[0];
  Fd OutWrite{Out[1]};
  if (pipe2(Err, O_CLOEXEC) != 0)
    return SysErr("pipe");
  IO.Err.V = Err[0];
  Fd ErrWrite{Err[1]};

  auto Start = std::chrono::steady_clock::now();
  SpawnSpec S;
  S.Argv = C.Argv;
  S.WorkingDir = C.WorkingDir;
  S.Stdin = InChild.V;
  S.Stdout = OutWrite.V;
  S.Stderr = ErrWrite.V;
  Expected<pid_t> Spawned = spawnProcessGroup(S);
  if (!Spawned)
    return Spawned.takeError();
  const pid_t Pid = *Spawned;
  InChild.reset();
  OutWrite.reset();
  ErrWrite.reset();
  for (int F : {IO.In.V, IO.Out.V, IO.Err.V})
    fcntl(F, F_SETFL, fcntl(F, F_GETFL) | O_NONBLOCK);

  CommandResult R;
  if (Input.empty())
    IO.In.reset();
  auto Deadline = Start + C.Timeout;
  int Status = 0;
  bool Exited = false;
  // Until stdout and stderr are closed, or the command has exited and nothing more is ready:
  // a helper it left running with its stdout does not hold the round up (issue 12, item 7).
  while (IO.Out.V >= 0 || IO.Err.V >= 0) {
    auto Now = std::chrono::steady_clock::now();
    if (Now >= Deadline) {
      R.TimedOut = true;
      break;
    }
    int WaitMs = Exited ? 0
                        : static_cast<int>(std::min<int64_t>(
                              50, std::chrono::duration_cast<std::chrono::milliseconds>(Deadline - Now)
                                          .count() + 1));
    pollfd P[3];
    int N = 0;
    for (auto [F, Ev] : {std::pair{IO.Out.V, POLLIN}, {IO.Err.V, POLLIN}, {IO.In.V, POLLOUT}})
      if (F >= 0)
        P[N++] = {F, static_cast<short>(Ev), 0};
    int Ready = poll(P, N, WaitMs);
    if (Ready < 0 && errno != EINTR) {
      int PollErrno = errno;
      reapProcessGroup(Pid, ReapBound);
      errno = PollErrno;
      return SysErr("poll");
    }
    if (Ready > 0 && !transfer(C, Input, IO, P, N, R)) {
      R.OutputTooLarge = true;
      break;
    }
    if (Exited && Ready == 0)
      break;
    if (!Exited && waitpid(Pid, &Status, WNOHANG) == Pid)
      Exited = true;
  }
  IO.In.reset();
  // The outputs closed, but the command may still be running: wait for it until the deadline.
  while (!Exited && !R.TimedOut && !R.OutputTooLarge) {
    pid_t W = waitpid(Pid, &Status, WNOHANG);
    if (W == Pid || (W < 0 && errno != EINTR))
      Exited = true;
    else if (std::chrono::steady_clock::now() >= Deadline)
      R.TimedOut = true;
    else
      usleep(2000);
  }
  // Whatever the command left in its group goes with it, whether it ended or not.
  killProcessGroup(Pid);
  while (!Exited) {
    pid_t W = waitpid(Pid, &Status, 0);
    if (W == Pid || (W < 0 && errno != EINTR))
      Exited = true;
  }
  // ... and is reaped: orphans of the group are kloop's children (kloop/Support/Process.h).
  reapProcessGroup(Pid, ReapBound);
  if (R.Stderr.size() > StderrKeep)
    R.Stderr.erase(0, R.Stderr.size() - StderrKeep);
  if (WIFEXITED(Status)) {
    R.ExitCode = WEXITSTATUS(Status);
  } else if (WIFSIGNALED(Status)) {
    R.Signal = WTERMSIG(Status);
    R.ExitCode = -1;
  }
  R.WallMs = std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::steady_clock::now() - Start)
                 .count();
  return R;
}

Expected<std::unique_ptr<CommandProposer>> CommandProposer::create(CommandConfig C) {
  if (C.Argv.empty() || C.Argv[0].empty())
    return createStringError("command proposer: no command given");
  if (C.Timeout.count() <= 0)
    return createStringError("command proposer: the timeout must be positive");
  return std::unique_ptr<CommandProposer>(new CommandProposer(std::move(C)));
}

/// The last \p N bytes of \p S, as a quoted, escaped string.
static std::string tail(StringRef S, size_t N = 2000) {
  std::string Out;
  raw_string_ostream OS(Out);
  StringRef T = S.trim();
  if (T.size() > N)
    OS << "...";
  OS << '"';
  OS.write_escaped(T.take_back(N));
  OS << '"';
  return Out;
}

Expected<ProposalReply> CommandProposer::propose(const json &Context) {
  std::string Name = commandName(Config.Argv);
  Expected<CommandResult> R = runCommand(Config, dumpJSON(Context));
  if (!R)
    return R.takeError();
  Provenance Prov;
  Prov.ProposerKind = "command";
  Prov.WallMs = R->WallMs;
  Prov.Attempts = 1;
  auto Fail = [&](const Twine &Why) {
    std::string Msg = Why.str();
    if (!StringRef(R->Stderr).trim().empty())
      Msg += "; stderr: " + tail(R->Stderr);
    return make_error<ProposerFailedError>("command '" + Name + "'", Msg,
                                           R->OutputTooLarge ? std::string() : R->Stdout, Prov);
  };
  if (R->TimedOut)
    return Fail("timed out after " + Twine(Config.Timeout.count()) +
                " ms and was killed");
  if (R->OutputTooLarge)
    return Fail("wrote more than " + Twine(Config.MaxOutputBytes) +
                " bytes to stdout and was killed");
  if (R->Signal)
    return Fail("killed by signal " + Twine(R->Signal) + " (" + strsignal(R->Signal) + ")");
  if (R->ExitCode != 0)
    return Fail("exited with status " + Twine(R->ExitCode));

  Expected<json> Parsed = parseReplyText(R->Stdout, "command '" + Name + "'", Prov);
  if (!Parsed)
    return Parsed.takeError();
  readSelfReported(*Parsed, Prov); // docs/proposers.md
  ProposalReply Reply;
  Reply.RawText = std::move(R->Stdout);
  Reply.Proposal = std::move(*Parsed);
  Reply.Prov = std::move(Prov);
  return Reply;
}

Expected<std::vector<ProposalReply>> CommandProposer::proposeBatch(const json &Context, unsigned N) {
  json Ctx = Context;
  Ctx["batch"] = N;
  Expected<ProposalReply> R = propose(Ctx);
  if (!R)
    return R.takeError();
  Expected<std::vector<json>> Ps =
      splitBatch(R->Proposal, N, "command '" + commandName(Config.Argv) + "'", R->RawText, R->Prov);
  if (!Ps)
    return Ps.takeError();
  std::vector<ProposalReply> Out = batchReplies(std::move(*Ps), std::move(R->RawText), R->Prov);
  for (ProposalReply &Reply : Out) // an entry's own provenance is that proposal's
    readSelfReported(Reply.Proposal, Reply.Prov);
  return Out;
}

} // namespace kloop
