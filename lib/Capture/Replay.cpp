//===- Replay.cpp - Run the replay worker and read its result -------------===//
#include "kloop/Capture/Replay.h"
#include "kloop/Measure/Config.h"
#include "kloop/Measure/Runner.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <nlohmann/json.hpp>

using namespace llvm;
using json = nlohmann::json;

namespace kloop {
namespace capture {

namespace {

Error fail(const Twine &Msg) { return createStringError(inconvertibleErrorCode(), Msg); }

std::string workerCommand(const ReplayOptions &O) {
  using measure::shellQuote;
  std::string C = shellQuote(O.Worker) + " " + shellQuote(O.Capture) + " --cubin " + shellQuote(O.Cubin);
  if (!O.CandidateCubin.empty())
    C += " --candidate-cubin " + shellQuote(O.CandidateCubin);
  C += " --iters " + std::to_string(O.Iters) + " --tolerance " + shellQuote(O.Tolerance) + " --l2 " +
       (O.L2Flush ? "flush" : "warm") + " --timeout-ms " + std::to_string(O.LaunchTimeoutMs);
  for (uint64_t L : O.Launches)
    C += " --launch " + std::to_string(L);
  if (O.Poison)
    C += " --poison";
  return C;
}

ReplaySide sideOf(const json &J) {
  ReplaySide S;
  S.TimesNs = J.at("times_ns").get<std::vector<uint64_t>>();
  S.MedianNs = J.at("median_ns").get<uint64_t>();
  S.Match = J.at("match").get<bool>();
  if (!J.at("mismatch").is_null())
    S.Mismatch = J.at("mismatch").get<std::string>();
  return S;
}

/// Reads the worker's kloop-replay/1 JSON; a message naming what is wrong on failure.
Expected<ReplayResult> parseResult(const std::string &Text) {
  json J = json::parse(Text, nullptr, /*allow_exceptions=*/false);
  if (J.is_discarded() || !J.is_object() || J.value("schema", "") != "kloop-replay/1")
    return fail("the replay worker printed no kloop-replay/1 result");
  ReplayResult R;
  try {
    R.Device = J.at("device").get<std::string>();
    R.Relocated = J.at("relocated").get<bool>();
    for (const json &L : J.at("launches")) {
      ReplayLaunch RL;
      RL.Index = L.at("index").get<uint64_t>();
      RL.Seq = L.at("seq").get<uint64_t>();
      RL.Kernel = L.at("kernel").get<std::string>();
      RL.Name = L.at("name").get<std::string>();
      RL.Poisoned = L.at("poisoned").get<std::vector<uint64_t>>();
      RL.Baseline = sideOf(L.at("baseline"));
      if (L.contains("candidate"))
        RL.Candidate = sideOf(L.at("candidate"));
      R.Launches.push_back(std::move(RL));
    }
    R.BaselineMatch = J.at("baseline_match").get<bool>();
    if (!J.at("candidate_match").is_null())
      R.CandidateMatch = J.at("candidate_match").get<bool>();
    if (!J.at("failed").is_null())
      R.Failed = J.at("failed").get<std::string>();
    R.TimedOut = J.at("timed_out").get<bool>();
    if (!J.at("error").is_null())
      R.Error = J.at("error").get<std::string>();
  } catch (const json::exception &E) {
    return fail(Twine("the replay worker's result is malformed: ") + E.what());
  }
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
  Expected<ReplayResult> R = parseResult((*Out)->getBuffer().str());
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

} // namespace capture
} // namespace kloop
