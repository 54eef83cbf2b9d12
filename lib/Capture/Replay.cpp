//===- Replay.cpp - Run the replay worker and read its result -------------===//
#include "kloop/Capture/Replay.h"
#include "kloop/Capture/Manifest.h"
#include "kloop/Measure/Config.h"
#include "kloop/Measure/Runner.h"
#include "kloop/Support/JSONReader.h"
#include "kloop/Support/Process.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace llvm;
using json = nlohmann::json;

namespace kloop {
namespace capture {

namespace {

Error fail(const Twine &Msg) { return createStringError(inconvertibleErrorCode(), Msg); }

/// The worker's options that one replay and a serving worker share: tolerance, L2 mode, watchdog, launches,
/// poison, gate, placements, train and timer (docs/capture.md).
/// Whether \p O's worker draws its placements' pads (docs/capture.md, "Where the placements land").
bool drawsPads(const ReplayOptions &O) { return O.Placements > 1 && placementPadChoices(O.PlacementPadMiB); }

std::vector<std::string> sharedArgs(const ReplayOptions &O) {
  std::vector<std::string> A = {"--tolerance", O.Tolerance, "--l2", O.L2, "--timeout-ms", std::to_string(O.LaunchTimeoutMs)};
  for (uint64_t L : O.Launches)
    A.insert(A.end(), {"--launch", std::to_string(L)});
  if (O.Poison)
    A.push_back("--poison");
  if (!O.Gate)
    A.push_back("--no-gate");
  if (O.Placements > 1)
    A.insert(A.end(), {"--placements", std::to_string(O.Placements)});
  if (drawsPads(O))
    A.insert(A.end(), {"--placement-pad-mib", std::to_string(O.PlacementPadMiB), "--placement-seed",
                       std::to_string(O.PlacementSeed)});
  if (O.Train && O.L2 == "rotate-sets")
    A.insert(A.end(), {"--back-to-back", "--train", std::to_string(O.Train)});
  A.insert(A.end(), {"--timer", O.Timer});
  return A;
}

/// The shell command of one replay of \p O's cubins.
std::string workerCommand(const ReplayOptions &O) {
  std::vector<std::string> A = {O.Worker, O.Capture, "--cubin", O.Cubin};
  if (!O.CandidateCubin.empty())
    A.insert(A.end(), {"--candidate-cubin", O.CandidateCubin});
  A.insert(A.end(), {"--iters", std::to_string(O.Iters)});
  std::vector<std::string> Shared = sharedArgs(O);
  A.insert(A.end(), Shared.begin(), Shared.end());
  std::string C;
  for (const std::string &Arg : A)
    C += (C.empty() ? "" : " ") + measure::shellQuote(Arg);
  return C;
}

/// Member \p Key of \p O: an array of non-negative integers.
void readCounts(JSONObject &O, StringRef Key, std::vector<uint64_t> &Out, JSONReadErrors &Errors) {
  Out.clear();
  const json *M = O.member(Key, /*Required=*/true);
  if (!M)
    return;
  if (!M->is_array())
    return Errors.fail(O.pathOf(Key), "expected an array of non-negative integers");
  for (const json &V : *M) {
    if (!V.is_number_unsigned())
      return Errors.fail(O.pathOf(Key), "expected an array of non-negative integers");
    Out.push_back(V.get<uint64_t>());
  }
}

void readFields(JSONObject &O, ReplaySide &S, JSONReadErrors &Errors) {
  readCounts(O, "times_ns", S.TimesNs, Errors);
  if (O.has("placements")) { // absent when the worker timed at one placement
    readCounts(O, "placements", S.Placements, Errors);
    if (S.Placements.size() != S.TimesNs.size())
      Errors.fail(O.pathOf("placements"), "expected one placement per entry of times_ns");
  }
  int64_t Median = 0;
  O.read("median_ns", Median);
  S.MedianNs = static_cast<uint64_t>(std::max<int64_t>(Median, 0));
  O.read("match", S.Match);
  std::optional<std::string> Mismatch;
  O.read("mismatch", Mismatch);
  S.Mismatch = Mismatch.value_or("");
  std::optional<int64_t> Allocation;
  if (O.has("mismatch_allocation")) // absent from workers built before it existed
    O.read("mismatch_allocation", Allocation);
  if (Allocation && *Allocation >= 0)
    S.MismatchAllocation = static_cast<uint64_t>(*Allocation);
}

/// One side of launch \p L, member \p Key ("baseline", "candidate").
void readSide(const json &L, const std::string &Path, StringRef Key, ReplaySide &S, JSONReadErrors &Errors) {
  JSONObject O(L.at(Key.str()), Path + "." + Key.str(), Errors);
  readFields(O, S, Errors);
}

void readLaunch(const json &L, const std::string &Path, ReplayLaunch &RL, JSONReadErrors &Errors) {
  JSONObject O(L, Path, Errors);
  int64_t Index = 0, Seq = 0;
  O.read("index", Index);
  O.read("seq", Seq);
  RL.Index = static_cast<uint64_t>(Index);
  RL.Seq = static_cast<uint64_t>(Seq);
  O.read("kernel", RL.Kernel);
  O.read("name", RL.Name);
  readCounts(O, "poisoned", RL.Poisoned, Errors);
  if (O.member("baseline", true))
    readSide(L, Path, "baseline", RL.Baseline, Errors);
  if (O.has("candidate") && O.member("candidate", false))
    readSide(L, Path, "candidate", RL.Candidate.emplace(), Errors);
}

/// The worker's time_ns (serve mode) as ReplayTimes' worker figures.
void readWorkerTimes(const json &J, ReplayTimes &T, JSONReadErrors &Errors) {
  JSONObject O(J, "time_ns", Errors);
  for (auto [Key, Out] : {std::pair{"modules", &T.ModulesS}, {"restore", &T.RestoreS}, {"timed", &T.TimedS},
                          {"check", &T.CheckS}, {"total", &T.WorkerS}}) {
    int64_t Ns = 0;
    O.read(Key, Ns);
    *Out = double(Ns) * 1e-9;
  }
}

/// Checks \p R's placements against the \p Asked the worker was given (ReplayOptions::Placements): 1 to
/// Asked in all; each side's list present exactly when there are several, each entry below their number,
/// and both sides of a launch at the same placement per iteration (docs/capture.md, "Placements"), since
/// decide takes them as the groups of its bootstrap. Failures go to \p Errors, named by path.
void checkPlacements(const ReplayResult &R, unsigned Asked, JSONReadErrors &Errors) {
  if (R.Placements > Asked) // parseResult clamped it to 1..MaxPlacements
    return Errors.fail("placements", "expected 1 to " + Twine(Asked) + " (the placements asked for), got " +
                                         Twine(R.Placements));
  for (size_t I = 0; I < R.Launches.size(); ++I) {
    const ReplayLaunch &L = R.Launches[I];
    std::string At = "launches[" + std::to_string(I) + "]";
    for (auto [Name, S] : {std::pair{"baseline", &L.Baseline}, {"candidate", L.Candidate ? &*L.Candidate : nullptr}}) {
      if (!S || S->TimesNs.empty())
        continue;
      std::string Path = At + "." + Name + ".placements";
      if (R.Placements > 1 && S->Placements.empty())
        return Errors.fail(Path, "missing: the worker timed at " + Twine(R.Placements) + " placements");
      if (R.Placements == 1 && !S->Placements.empty())
        return Errors.fail(Path, "present, but the worker timed at one placement");
      for (uint64_t P : S->Placements)
        if (P >= R.Placements)
          return Errors.fail(Path, "placement " + Twine(P) + " of " + Twine(R.Placements));
    }
    if (L.Candidate && !L.Candidate->TimesNs.empty() && !L.Baseline.TimesNs.empty() &&
        L.Candidate->Placements != L.Baseline.Placements)
      return Errors.fail(At, "the baseline and the candidate were timed at different placements");
  }
}

/// The worker's placement_seed, placement_pads_mib and placement_pad_note (absent without pads) into \p R.
void readPlacementPads(JSONObject &O, ReplayResult &R, JSONReadErrors &Errors) {
  if (const json *S = O.has("placement_seed") ? O.member("placement_seed", true) : nullptr) {
    if (!S->is_number_unsigned())
      return Errors.fail("placement_seed", "expected an unsigned 64-bit integer");
    R.PlacementSeed = S->get<uint64_t>();
  }
  if (O.has("placement_pads_mib"))
    readCounts(O, "placement_pads_mib", R.PlacementPadsMiB, Errors);
  std::optional<std::string> Note;
  O.read("placement_pad_note", Note);
  R.PlacementPadNote = Note.value_or("");
}

/// The placement_seed of a ReplayServer's request \p N (0 for the first) under ReplayOptions::PlacementSeed
/// \p Seed: the first request keeps the worker's own seed (its copies are drawn already), the next ones
/// step by splitmix64's increment (Steele, Lea and Flood, OOPSLA 2014), which capture::placementPadBytes
/// then mixes.
uint64_t requestSeed(uint64_t Seed, uint64_t N) { return Seed + N * 0x9E3779B97F4A7C15ULL; }

/// Reads the worker's kloop-replay/1 JSON, given \p AskedPlacements (checkPlacements); a message naming
/// what is wrong on failure.
Expected<ReplayResult> parseResult(const std::string &Text, unsigned AskedPlacements) {
  json J = json::parse(Text, nullptr, /*allow_exceptions=*/false);
  if (J.is_discarded() || !J.is_object() || J.value("schema", "") != "kloop-replay/1")
    return fail("the replay worker printed no kloop-replay/1 result");
  JSONReadErrors Errors("the replay worker's result");
  JSONObject O(J, "", Errors);
  ReplayResult R;
  O.read("device", R.Device);
  O.read("relocated", R.Relocated);
  if (const json *L = O.member("launches", true)) {
    if (!L->is_array())
      Errors.fail("launches", "expected an array");
    else
      for (size_t I = 0; I < L->size() && !Errors.failed(); ++I)
        readLaunch((*L)[I], "launches[" + std::to_string(I) + "]", R.Launches.emplace_back(), Errors);
  }
  O.read("baseline_match", R.BaselineMatch);
  O.read("candidate_match", R.CandidateMatch);
  std::optional<std::string> Failed, Err;
  O.read("failed", Failed);
  O.read("timed_out", R.TimedOut);
  O.read("error", Err);
  R.Failed = Failed.value_or("");
  R.Error = Err.value_or("");
  std::optional<bool> Gated;
  O.read("gated", Gated);
  R.Gated = Gated.value_or(false);
  std::optional<std::string> Timer, TimerNote;
  O.read("timer", Timer);
  O.read("timer_note", TimerNote);
  R.Timer = Timer.value_or("events");
  R.TimerNote = TimerNote.value_or("");
  std::optional<std::string> L2, L2Note;
  O.read("l2", L2);
  O.read("l2_note", L2Note);
  R.L2 = L2.value_or("");
  R.L2Note = L2Note.value_or("");
  std::optional<int64_t> Placements;
  std::optional<std::string> PlacementNote;
  O.read("placements", Placements);
  O.read("placement_note", PlacementNote);
  if (Placements && (*Placements < 1 || *Placements > int64_t(MaxPlacements)))
    Errors.fail("placements", "expected 1 to " + Twine(MaxPlacements) + ", got " + Twine(*Placements));
  R.Placements = static_cast<unsigned>(std::clamp<int64_t>(Placements.value_or(1), 1, MaxPlacements));
  R.PlacementNote = PlacementNote.value_or("");
  readPlacementPads(O, R, Errors);
  std::optional<int64_t> Train;
  O.read("train", Train);
  if (Train && (*Train < 0 || *Train > int64_t(MaxTrain)))
    Errors.fail("train", "expected 0 to " + Twine(MaxTrain) + ", got " + Twine(*Train));
  R.Train = static_cast<unsigned>(std::clamp<int64_t>(Train.value_or(0), 0, MaxTrain));
  if (!Errors.failed())
    checkPlacements(R, AskedPlacements, Errors);
  if (const json *T = O.has("time_ns") ? O.member("time_ns", true) : nullptr) // null after an earlier failure
    readWorkerTimes(*T, R.Times.emplace(), Errors);
  if (Error E = Errors.take())
    return fail("the replay worker's result is malformed: " + toString(std::move(E)));
  R.Json = Text;
  return R;
}

} // namespace

Expected<ReplayResult> runReplayWorker(const ReplayOptions &O) {
  measure::RunRequest Req;
  Req.Command = workerCommand(O);
  Req.Cwd = O.WorkDir;
  Req.OutDir = O.WorkDir;
  Req.Label = "replay";
  Req.TimeoutS = O.TimeoutS;
  Expected<measure::RunResult> Run = measure::runIsolated(Req);
  if (!Run)
    return Run.takeError();
  std::string Tail = Run->StderrTail.empty() ? "" : "; its stderr ends with:\n" + Run->StderrTail;
  if (Run->Status == measure::RunStatus::TimedOut)
    return fail("the replay worker did not finish within " + Twine(O.TimeoutS) + " s and was killed" + Tail);
  if (Run->Status != measure::RunStatus::Ok && Run->Status != measure::RunStatus::ExitedNonZero)
    return fail("the replay worker " + Run->describe() + Tail);
  auto Out = MemoryBuffer::getFile(Run->StdoutPath);
  if (!Out)
    return fail("cannot read the replay worker's output " + Run->StdoutPath);
  Expected<ReplayResult> R = parseResult((*Out)->getBuffer().str(), O.Placements);
  if (!R)
    return fail(toString(R.takeError()) + " (exit code " + Twine(Run->ExitCode) + ")" + Tail);
  R->ExitCode = Run->ExitCode;
  return R;
}

Expected<std::string> findReplayWorker(const char *Argv0, void *MainAddr) {
  if (std::optional<std::string> Env = sys::Process::GetEnv("KLOOP_REPLAY_WORKER")) {
    if (!sys::fs::can_execute(*Env))
      return fail("KLOOP_REPLAY_WORKER=" + *Env + " is not executable");
    return *Env;
  }
  std::string Self = sys::fs::getMainExecutable(Argv0, MainAddr);
  std::string Worker = (sys::path::parent_path(Self) + "/kloop-replay").str();
  if (!sys::fs::can_execute(Worker))
    return fail("the replay worker " + Worker +
                " does not exist (built only where cuda.h and libcuda are found; or set KLOOP_REPLAY_WORKER)");
  return Worker;
}

namespace {
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point T) { return std::chrono::duration<double>(Clock::now() - T).count(); }

/// The worker's arguments for serving \p O.
std::vector<std::string> serveArgv(const ReplayOptions &O) {
  std::vector<std::string> A = {O.Worker, O.Capture, "--serve"};
  std::vector<std::string> Shared = sharedArgs(O);
  A.insert(A.end(), Shared.begin(), Shared.end());
  return A;
}

/// A kloop-replay/1 result that the worker could not give: it died or hung during a candidate's replay.
ReplayResult lostWorker(const std::string &Why, bool TimedOut) {
  ReplayResult R;
  R.ExitCode = 1;
  R.Failed = "candidate";
  R.TimedOut = TimedOut;
  R.Error = "candidate: " + Why;
  R.Json = json{{"schema", "kloop-replay/1"}, {"launches", json::array()}, {"failed", "candidate"},
                {"timed_out", TimedOut}, {"error", R.Error}}
               .dump();
  return R;
}
} // namespace

ReplayServer::ReplayServer(ReplayOptions O) : O(std::move(O)) {}

ReplayServer::~ReplayServer() { stop(); }

void ReplayServer::stop() {
  if (In >= 0)
    ::close(In); // end of input: a worker that is waiting for a request exits
  if (Out >= 0)
    ::close(Out);
  In = Out = -1;
  Pending.clear();
  if (Pid < 0)
    return;
  // Give an idle worker a moment to exit by itself (it tears its context down), then kill the group.
  for (int I = 0; I < 100 && waitpid(Pid, nullptr, WNOHANG) == 0; ++I)
    usleep(10000);
  reapProcessGroup(Pid, std::chrono::milliseconds(2000));
  Pid = -1;
}

std::string ReplayServer::stderrTail() const {
  auto B = MemoryBuffer::getFile(O.WorkDir + "/replay-worker-" + std::to_string(Starts) + ".stderr");
  if (!B || (*B)->getBuffer().empty())
    return "";
  StringRef T = (*B)->getBuffer();
  return "; its stderr ends with:\n" + T.substr(T.size() > 2000 ? T.size() - 2000 : 0).str();
}

std::optional<std::string> ReplayServer::readLine(Clock::time_point Deadline, bool &TimedOut) {
  TimedOut = false;
  for (;;) {
    if (size_t NL = Pending.find('\n'); NL != std::string::npos) {
      std::string Line = Pending.substr(0, NL);
      Pending.erase(0, NL + 1);
      return Line;
    }
    auto Left = std::chrono::duration_cast<std::chrono::milliseconds>(Deadline - Clock::now()).count();
    if (Left <= 0) {
      TimedOut = true;
      return std::nullopt;
    }
    pollfd P = {Out, POLLIN, 0};
    int Ready = ::poll(&P, 1, static_cast<int>(std::min<int64_t>(Left, 1000)));
    if (Ready < 0 && errno != EINTR)
      return std::nullopt;
    if (Ready <= 0)
      continue;
    char Buf[65536];
    ssize_t N = ::read(Out, Buf, sizeof Buf);
    if (N < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (N <= 0)
      return std::nullopt; // end of output: the worker exited
    Pending.append(Buf, static_cast<size_t>(N));
  }
}

Error ReplayServer::start(ReplayTimes &T) {
  auto Began = Clock::now();
  ++Starts;
  if (std::error_code EC = sys::fs::create_directories(O.WorkDir))
    return fail("cannot create " + O.WorkDir + ": " + EC.message());
  std::string ErrPath = O.WorkDir + "/replay-worker-" + std::to_string(Starts) + ".stderr";
  int ErrFd = ::open(ErrPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  // stdin is one end of a socket pair: writing to a worker that died fails with EPIPE (MSG_NOSIGNAL),
  // never with SIGPIPE.
  int SV[2] = {-1, -1}, Pipe[2] = {-1, -1};
  if (ErrFd < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, SV) != 0 || pipe2(Pipe, O_CLOEXEC) != 0) {
    std::string Why = std::strerror(errno);
    for (int F : {ErrFd, SV[0], SV[1], Pipe[0], Pipe[1]})
      if (F >= 0)
        ::close(F);
    return fail("cannot start the replay worker: " + Why + " (" + ErrPath + ")");
  }
  SpawnSpec S;
  S.Argv = serveArgv(O);
  S.Stdin = SV[1];
  S.Stdout = Pipe[1];
  S.Stderr = ErrFd;
  Expected<pid_t> P = spawnProcessGroup(S);
  for (int F : {SV[1], Pipe[1], ErrFd})
    ::close(F);
  In = SV[0];
  Out = Pipe[0];
  if (!P) {
    stop();
    return P.takeError();
  }
  Pid = *P;
  bool TimedOut = false;
  std::optional<std::string> Line = readLine(Began + std::chrono::seconds(O.TimeoutS), TimedOut);
  json Ready = Line ? json::parse(*Line, nullptr, false) : json();
  std::string Tail = stderrTail();
  if (!Line) {
    stop();
    return fail(TimedOut ? "the replay worker was not ready within " + Twine(O.TimeoutS) + " s" + Tail
                         : "the replay worker exited before it was ready" + Tail);
  }
  if (!Ready.is_object() || Ready.value("schema", "") != "kloop-replay-serve/1" || !Ready.value("ready", false)) {
    std::string Why = Ready.is_object() && Ready.value("error", json()).is_string()
                          ? Ready["error"].get<std::string>()
                          : "its first line is not a kloop-replay-serve/1 ready line: " + Line->substr(0, 200);
    stop();
    return fail("the replay worker could not start: " + Why + Tail);
  }
  T.WorkerStartS = secondsSince(Began);
  if (Ready.contains("time_ns") && Ready["time_ns"].value("load", json()).is_number_unsigned())
    T.CaptureLoadS = double(Ready["time_ns"]["load"].get<uint64_t>()) * 1e-9;
  return Error::success();
}

json toJSON(const ReplayConfigs &C) {
  json Out = json::array();
  for (auto [Side, M] : {std::pair{"baseline", &C.Baseline}, {"candidate", &C.Candidate}})
    for (const auto &[Launch, L] : *M) {
      Out.push_back({{"launch", Launch}, {"side", Side}, {"grid", L.Config.Grid}, {"block", L.Config.Block},
                     {"shared_memory", L.Config.SharedMemory}});
      if (!L.Kernel.empty())
        Out.back()["kernel"] = L.Kernel;
    }
  return Out;
}

Expected<ReplayResult> ReplayServer::replay(const std::string &Cubin, const std::string &CandidateCubin,
                                            unsigned Iters, const ReplayConfigs &Configs) {
  ReplayTimes T;
  if (Pid < 0)
    if (Error E = start(T))
      return E;
  json Req = {{"cubin", Cubin}, {"candidate_cubin", CandidateCubin.empty() ? json() : json(CandidateCubin)},
              {"iters", Iters}};
  if (!Configs.empty())
    Req["configs"] = toJSON(Configs);
  if (drawsPads(O)) // each request at placements of its own
    Req["placement_seed"] = requestSeed(O.PlacementSeed, Requests++);
  std::string Line = Req.dump() + "\n";
  auto Sent = Clock::now();
  for (size_t Off = 0; Off < Line.size();) {
    ssize_t N = ::send(In, Line.data() + Off, Line.size() - Off, MSG_NOSIGNAL);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0) {
      std::string Why = std::strerror(errno);
      std::string Tail = stderrTail();
      stop();
      return fail("cannot send a request to the replay worker: " + Why + Tail);
    }
    Off += static_cast<size_t>(N);
  }
  bool TimedOut = false;
  std::optional<std::string> Reply = readLine(Sent + std::chrono::seconds(O.TimeoutS), TimedOut);
  if (!Reply) {
    std::string Tail = stderrTail();
    stop(); // a worker that hangs is killed here; the next request starts a new one
    ReplayResult R = lostWorker(TimedOut ? "the replay worker did not answer within " + std::to_string(O.TimeoutS) +
                                               " s and was killed" + Tail
                                         : "the replay worker died during the replay without a result" + Tail,
                                TimedOut);
    R.Times = T;
    R.Times->RoundTripS = secondsSince(Sent);
    return R;
  }
  Expected<ReplayResult> R = parseResult(*Reply, O.Placements);
  if (!R) {
    stop();
    return R.takeError();
  }
  json J = json::parse(*Reply, nullptr, false);
  R->ExitCode = J.value("exit", json()).is_number_integer() ? J["exit"].get<int>() : 2;
  ReplayTimes W = R->Times.value_or(ReplayTimes());
  W.WorkerStartS = T.WorkerStartS;
  W.CaptureLoadS = T.CaptureLoadS;
  W.RoundTripS = secondsSince(Sent);
  R->Times = W;
  if (!R->Failed.empty())
    stop(); // the worker exits after a failed launch: its context is lost or busy
  return R;
}

} // namespace capture
} // namespace kloop
