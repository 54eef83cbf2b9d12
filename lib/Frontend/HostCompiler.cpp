//===- HostCompiler.cpp - What nvcc's host compiler provides --------------===//
#include "HostCompiler.h"
#include "kloop/Support/Process.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <chrono>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace llvm;

namespace kloop {

std::string hostCompilerFor(StringRef Ccbin) {
  if (Ccbin.empty())
    return "gcc";
  if (sys::fs::is_directory(Ccbin)) {
    SmallString<256> P(Ccbin);
    sys::path::append(P, "gcc");
    return std::string(P);
  }
  return Ccbin.str();
}

/// Runs \p Argv (stdin and stderr /dev/null) and returns its standard output when it exits 0
/// within \p Limit; the whole process group is killed afterwards.
static Expected<std::string> outputOf(const std::vector<std::string> &Argv, std::chrono::seconds Limit) {
  int Pipe[2];
  if (::pipe2(Pipe, O_CLOEXEC) != 0)
    return createStringError("pipe: " + std::string(std::strerror(errno)));
  SpawnSpec S;
  S.Argv = Argv;
  S.Stdout = Pipe[1];
  Expected<pid_t> Pid = spawnProcessGroup(S);
  ::close(Pipe[1]);
  if (!Pid) {
    ::close(Pipe[0]);
    return Pid.takeError();
  }
  std::string Out;
  auto Deadline = std::chrono::steady_clock::now() + Limit;
  bool TimedOut = false;
  for (char Buf[4096];;) {
    auto Left = std::chrono::duration_cast<std::chrono::milliseconds>(Deadline - std::chrono::steady_clock::now());
    pollfd P{Pipe[0], POLLIN, 0};
    int Ready = Left.count() > 0 ? ::poll(&P, 1, static_cast<int>(Left.count())) : 0;
    if (Ready < 0 && errno == EINTR)
      continue;
    if (Ready <= 0) {
      TimedOut = Ready == 0;
      break;
    }
    ssize_t N = ::read(Pipe[0], Buf, sizeof(Buf));
    if (N <= 0 || Out.size() > (1u << 20))
      break;
    Out.append(Buf, N);
  }
  ::close(Pipe[0]);
  // Its output is closed: let it exit (until the deadline), then kill what it left in its group.
  int Status = 0;
  bool Reaped = false;
  while (!TimedOut && !Reaped) {
    pid_t W = ::waitpid(*Pid, &Status, WNOHANG);
    Reaped = W == *Pid || (W < 0 && errno != EINTR);
    TimedOut = !Reaped && std::chrono::steady_clock::now() >= Deadline;
    if (!Reaped && !TimedOut)
      ::usleep(1000);
  }
  killProcessGroup(*Pid);
  while (!Reaped && ::waitpid(*Pid, &Status, 0) < 0 && errno == EINTR) {
  }
  if (TimedOut)
    return createStringError("'" + commandName(Argv) + "' did not finish within " +
                             std::to_string(Limit.count()) + " s");
  if (!WIFEXITED(Status) || WEXITSTATUS(Status) != 0)
    return createStringError("'" + commandName(Argv) + "' failed");
  return Out;
}

static Expected<HostOpenMP> askHostOpenMP(StringRef Compiler) {
  const std::chrono::seconds Limit(30);
  HostOpenMP R;
  Expected<std::string> Path = outputOf({Compiler.str(), "-print-file-name=include/omp.h"}, Limit);
  if (!Path)
    return Path.takeError();
  StringRef OmpH = StringRef(*Path).trim();
  // gcc prints the name back unchanged when it has no such file.
  if (!sys::path::is_absolute(OmpH) || !sys::fs::is_regular_file(OmpH))
    return createStringError("it has no omp.h ('" + Compiler.str() +
                             " -print-file-name=include/omp.h' printed '" + OmpH.str() + "')");
  R.IncludeDir = sys::path::parent_path(OmpH).str();
  Expected<std::string> Macros = outputOf({Compiler.str(), "-fopenmp", "-dM", "-E", "-x", "c++", "/dev/null"}, Limit);
  if (!Macros)
    return Macros.takeError();
  SmallVector<StringRef, 0> Lines;
  StringRef(*Macros).split(Lines, '\n');
  for (StringRef L : Lines)
    if (L.consume_front("#define _OPENMP "))
      R.Version = L.trim().str();
  if (R.Version.empty())
    return createStringError("its -fopenmp defines no _OPENMP");
  return R;
}

Expected<HostOpenMP> queryHostOpenMP(StringRef Compiler) {
  static std::mutex M;
  static StringMap<std::pair<HostOpenMP, std::string>> Cache; // answer, or the error's text
  std::lock_guard<std::mutex> L(M);
  auto It = Cache.find(Compiler);
  if (It == Cache.end()) {
    Expected<HostOpenMP> R = askHostOpenMP(Compiler);
    std::pair<HostOpenMP, std::string> Entry;
    if (R)
      Entry.first = std::move(*R);
    else
      Entry.second = toString(R.takeError());
    It = Cache.try_emplace(Compiler, std::move(Entry)).first;
  }
  if (!It->second.second.empty())
    return createStringError(It->second.second);
  return It->second.first;
}

} // namespace kloop
