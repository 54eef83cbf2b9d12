//===- CommandProposer.cpp - Proposals from any executable ----------------===//
#include "kloop/Propose/CommandProposer.h"
#include "kloop/Support/JSON.h"

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

static std::string commandName(const std::vector<std::string> &Argv) {
  std::string S;
  for (const std::string &A : Argv) {
    if (!S.empty())
      S += ' ';
    S += A;
  }
  return S.size() > 200 ? S.substr(0, 197) + "..." : S;
}

static const size_t StderrKeep = 64 * 1024;

Expected<CommandResult> runCommand(const CommandConfig &C, StringRef Input) {
  if (C.Argv.empty())
    return createStringError("command proposer: empty command");
  std::string Name = commandName(C.Argv);
  auto SysErr = [&](const char *What) {
    return createStringError("command '" + Name + "': " + What + ": " + std::strerror(errno));
  };

  // stdin is one end of a socket pair so that writing to a command that does
  // not read its input fails with EPIPE (MSG_NOSIGNAL), never with SIGPIPE.
  int SV[2], Out[2], Err[2], ExecErr[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, SV) != 0)
    return SysErr("socketpair");
  Fd InParent{SV[0]}, InChild{SV[1]};
  if (pipe2(Out, O_CLOEXEC) != 0)
    return SysErr("pipe");
  Fd OutRead{Out[0]}, OutWrite{Out[1]};
  if (pipe2(Err, O_CLOEXEC) != 0)
    return SysErr("pipe");
  Fd ErrRead{Err[0]}, ErrWrite{Err[1]};
  if (pipe2(ExecErr, O_CLOEXEC) != 0)
    return SysErr("pipe");
  Fd ExecRead{ExecErr[0]}, ExecWrite{ExecErr[1]};

  std::vector<char *> Args;
  for (const std::string &A : C.Argv)
    Args.push_back(const_cast<char *>(A.c_str()));
  Args.push_back(nullptr);

  auto Start = std::chrono::steady_clock::now();
  pid_t Pid = fork();
  if (Pid < 0)
    return SysErr("fork");
  if (Pid == 0) {
    // Child: only async-signal-safe calls from here on.
    setpgid(0, 0);
    dup2(InChild.V, 0);
    dup2(OutWrite.V, 1);
    dup2(ErrWrite.V, 2);
    signal(SIGPIPE, SIG_DFL);
    if (!C.WorkingDir.empty() && chdir(C.WorkingDir.c_str()) != 0) {
      int E = errno;
      (void)!write(ExecWrite.V, &E, sizeof(E));
      _exit(127);
    }
    execvp(Args[0], Args.data());
    int E = errno;
    (void)!write(ExecWrite.V, &E, sizeof(E));
    _exit(127);
  }
  setpgid(Pid, Pid); // also from the parent, to close the race with kill(-Pid)
  InChild.reset();
  OutWrite.reset();
  ErrWrite.reset();
  ExecWrite.reset();
  int ChildErrno = 0;
  ssize_t NE = read(ExecRead.V, &ChildErrno, sizeof(ChildErrno));
  if (NE == static_cast<ssize_t>(sizeof(ChildErrno))) {
    waitpid(Pid, nullptr, 0);
    return createStringError("command '" + Name + "': cannot run " +
                             (C.WorkingDir.empty() ? "" : "in '" + C.WorkingDir + "' ") +
                             "(" + std::strerror(ChildErrno) + ")");
  }

  for (int F : {InParent.V, OutRead.V, ErrRead.V})
    fcntl(F, F_SETFL, fcntl(F, F_GETFL) | O_NONBLOCK);

  CommandResult R;
  size_t Written = 0;
  if (Input.empty())
    InParent.reset();
  auto Deadline = Start + C.Timeout;
  bool Kill = false;
  while (OutRead.V >= 0 || ErrRead.V >= 0) {
    auto Now = std::chrono::steady_clock::now();
    if (Now >= Deadline) {
      R.TimedOut = Kill = true;
      break;
    }
    int WaitMs = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(Deadline - Now).count() + 1);
    pollfd P[3];
    int N = 0;
    if (OutRead.V >= 0)
      P[N++] = {OutRead.V, POLLIN, 0};
    if (ErrRead.V >= 0)
      P[N++] = {ErrRead.V, POLLIN, 0};
    if (InParent.V >= 0)
      P[N++] = {InParent.V, POLLOUT, 0};
    int Ready = poll(P, N, WaitMs);
    if (Ready < 0) {
      if (errno == EINTR)
        continue;
      kill(-Pid, SIGKILL);
      waitpid(Pid, nullptr, 0);
      return SysErr("poll");
    }
    for (int I = 0; I < N; ++I) {
      if (!P[I].revents)
        continue;
      if (P[I].fd == InParent.V) {
        ssize_t W = send(InParent.V, Input.data() + Written, Input.size() - Written,
                         MSG_NOSIGNAL);
        if (W > 0)
          Written += static_cast<size_t>(W);
        // EPIPE: the command closed its stdin; it may still answer.
        if ((W < 0 && errno != EAGAIN && errno != EINTR) || Written == Input.size())
          InParent.reset();
        continue;
      }
      char Buf[65536];
      ssize_t Got = read(P[I].fd, Buf, sizeof(Buf));
      if (Got < 0 && (errno == EAGAIN || errno == EINTR))
        continue;
      bool IsOut = P[I].fd == OutRead.V;
      if (Got <= 0) {
        (IsOut ? OutRead : ErrRead).reset();
        continue;
      }
      if (IsOut) {
        R.Stdout.append(Buf, static_cast<size_t>(Got));
        if (R.Stdout.size() > C.MaxOutputBytes) {
          R.OutputTooLarge = Kill = true;
          break;
        }
      } else {
        R.Stderr.append(Buf, static_cast<size_t>(Got));
        if (R.Stderr.size() > 2 * StderrKeep)
          R.Stderr.erase(0, R.Stderr.size() - StderrKeep);
      }
    }
    if (Kill)
      break;
  }
  InParent.reset();
  if (Kill)
    kill(-Pid, SIGKILL);
  int Status = 0;
  // The outputs closed, but the process may linger: wait for it until the deadline.
  while (true) {
    pid_t W = waitpid(Pid, &Status, Kill ? 0 : WNOHANG);
    if (W == Pid)
      break;
    if (W < 0 && errno != EINTR) {
      Status = 0;
      break;
    }
    if (!Kill && std::chrono::steady_clock::now() >= Deadline) {
      R.TimedOut = Kill = true;
      kill(-Pid, SIGKILL);
      continue;
    }
    if (!Kill)
      usleep(2000);
  }
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
  auto Fail = [&](const Twine &Why) {
    std::string Msg = "command '" + Name + "': " + Why.str();
    if (!StringRef(R->Stderr).trim().empty())
      Msg += "; stderr: " + tail(R->Stderr);
    return createStringError(Msg);
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

  Provenance Prov;
  Prov.ProposerKind = "command";
  Prov.WallMs = R->WallMs;
  Prov.Attempts = 1;
  Expected<json> Parsed = parseProposalText(R->Stdout, "command '" + Name + "'", Prov);
  if (!Parsed)
    return Parsed.takeError();
  // Optional self-reported provenance (docs/proposers.md).
  if (Parsed->contains("provenance") && (*Parsed)["provenance"].is_object()) {
    const json &P = (*Parsed)["provenance"];
    if (P.contains("model") && P["model"].is_string())
      Prov.Model = P["model"].get<std::string>();
    if (P.contains("seed") && P["seed"].is_number_integer())
      Prov.Seed = P["seed"].get<int64_t>();
    if (P.contains("temperature") && P["temperature"].is_number())
      Prov.Temperature = P["temperature"].get<double>();
    if (P.contains("tokens_in") && P["tokens_in"].is_number_integer())
      Prov.TokensIn = P["tokens_in"].get<int64_t>();
    if (P.contains("tokens_out") && P["tokens_out"].is_number_integer())
      Prov.TokensOut = P["tokens_out"].get<int64_t>();
    if (P.contains("cost_usd") && P["cost_usd"].is_number())
      Prov.CostUSD = P["cost_usd"].get<double>();
  }
  ProposalReply Reply;
  Reply.RawText = std::move(R->Stdout);
  Reply.Proposal = std::move(*Parsed);
  Reply.Prov = std::move(Prov);
  return Reply;
}

} // namespace kloop
