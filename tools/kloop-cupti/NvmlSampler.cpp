//===- NvmlSampler.cpp - NVML clock/temperature/power sampler -------------===//
#include "NvmlSampler.h"
#include "kloop/Measure/NvmlApi.h"

#include <algorithm>
#include <chrono>
#include <dlfcn.h>
#include <optional>
#include <unistd.h>

namespace kloop {
namespace cupti {
namespace {

using namespace nvml; // the subset of nvml.h kloop calls (kloop/Measure/NvmlApi.h)

struct Nvml {
  void *Handle = nullptr;
  InitFn Init = nullptr;
  ShutdownFn Shutdown = nullptr;
  ByStringFn ByPci = nullptr;
  ClockFn Clock = nullptr;
  TempFn Temp = nullptr;
  PowerFn Power = nullptr;
  ReasonsFn Reasons = nullptr;
  ErrorStringFn ErrorString = nullptr;
  /// Optional (older drivers lack them): the sample's fields stay -1 and the absence is an error once.
  ProcessesFn Processes = nullptr;
  UtilizationFn Utilization = nullptr;
  nvmlDevice_t Device = nullptr;

  std::string describe(nvmlReturn_t R) const {
    const char *S = ErrorString ? ErrorString(R) : nullptr;
    return S ? std::string(S) : "NVML error " + std::to_string(R);
  }
};

Nvml TheNvml; // Only touched by start() before the thread exists and by the sampling thread.

} // namespace

bool NvmlSampler::start(const std::string &PciBusId, uint64_t PeriodUs, std::function<uint64_t()> ClockFnArg,
                        std::string &Error) {
  if (Active.load())
    return true;
  Nvml &N = TheNvml;
  N.Handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!N.Handle) {
    const char *E = dlerror();
    Error = std::string("cannot load libnvidia-ml.so.1: ") + (E ? E : "unknown dlopen error");
    return false;
  }
  N.Init = nvmlSymbol<InitFn>(N.Handle, "nvmlInit_v2");
  N.Shutdown = nvmlSymbol<ShutdownFn>(N.Handle, "nvmlShutdown");
  N.ByPci = nvmlSymbol<ByStringFn>(N.Handle, "nvmlDeviceGetHandleByPciBusId_v2");
  N.Clock = nvmlSymbol<ClockFn>(N.Handle, "nvmlDeviceGetClockInfo");
  N.Temp = nvmlSymbol<TempFn>(N.Handle, "nvmlDeviceGetTemperature");
  N.Power = nvmlSymbol<PowerFn>(N.Handle, "nvmlDeviceGetPowerUsage");
  N.Reasons = nvmlSymbol<ReasonsFn>(N.Handle, "nvmlDeviceGetCurrentClocksEventReasons");
  if (!N.Reasons)
    N.Reasons = nvmlSymbol<ReasonsFn>(N.Handle, "nvmlDeviceGetCurrentClocksThrottleReasons");
  N.ErrorString = nvmlSymbol<ErrorStringFn>(N.Handle, "nvmlErrorString");
  N.Processes = nvmlSymbol<ProcessesFn>(N.Handle, "nvmlDeviceGetComputeRunningProcesses_v3");
  if (!N.Processes)
    N.Processes = nvmlSymbol<ProcessesFn>(N.Handle, "nvmlDeviceGetComputeRunningProcesses_v2");
  N.Utilization = nvmlSymbol<UtilizationFn>(N.Handle, "nvmlDeviceGetUtilizationRates");
  if (!N.Init || !N.Shutdown || !N.ByPci || !N.Clock || !N.Temp || !N.Power || !N.Reasons) {
    Error = "libnvidia-ml.so.1 lacks one of nvmlInit_v2, nvmlShutdown, nvmlDeviceGetHandleByPciBusId_v2, "
            "nvmlDeviceGetClockInfo, nvmlDeviceGetTemperature, nvmlDeviceGetPowerUsage, "
            "nvmlDeviceGetCurrentClocks{Event,Throttle}Reasons";
    dlclose(N.Handle);
    N = Nvml();
    return false;
  }
  nvmlReturn_t R = N.Init();
  if (R != NVML_SUCCESS) {
    Error = "nvmlInit_v2 failed: " + N.describe(R);
    dlclose(N.Handle);
    N = Nvml();
    return false;
  }
  R = N.ByPci(PciBusId.c_str(), &N.Device);
  if (R != NVML_SUCCESS) {
    Error = "nvmlDeviceGetHandleByPciBusId_v2(" + PciBusId + ") failed: " + N.describe(R);
    N.Shutdown();
    dlclose(N.Handle);
    N = Nvml();
    return false;
  }
  Clock = std::move(ClockFnArg);
  OwnGroup = static_cast<long>(getpgid(0));
  Active.store(true);
  StopRequested.store(false);
  sampleOnce();
  if (PeriodUs > 0)
    Thread = std::thread([this, PeriodUs] { run(PeriodUs); });
  return true;
}

int NvmlSampler::readProcesses(EnvSample &S) {
  Nvml &N = TheNvml;
  auto T0 = std::chrono::steady_clock::now();
  if (ProcessBuffer.empty())
    ProcessBuffer.resize(16 * sizeof(nvmlProcessInfo_t));
  nvmlReturn_t R = NVML_ERROR_INSUFFICIENT_SIZE;
  unsigned Count = 0;
  // The list can grow between the call that sizes it and the next one: retry a few times.
  for (int Try = 0; Try < 4 && R == NVML_ERROR_INSUFFICIENT_SIZE; ++Try) {
    Count = static_cast<unsigned>(ProcessBuffer.size() / sizeof(nvmlProcessInfo_t));
    R = N.Processes(N.Device, &Count, reinterpret_cast<nvmlProcessInfo_t *>(ProcessBuffer.data()));
    if (R == NVML_ERROR_INSUFFICIENT_SIZE)
      ProcessBuffer.resize((static_cast<size_t>(Count) + 8) * sizeof(nvmlProcessInfo_t));
  }
  if (R == NVML_SUCCESS) {
    std::vector<unsigned> Pids;
    const auto *Infos = reinterpret_cast<const nvmlProcessInfo_t *>(ProcessBuffer.data());
    for (unsigned I = 0; I < Count; ++I)
      Pids.push_back(Infos[I].pid);
    auto GroupOf = [](unsigned Pid) { return static_cast<long>(getpgid(static_cast<pid_t>(Pid))); };
    ProcessCensus C = censusProcesses(Pids, OwnGroup, GroupOf);
    S.ComputeProcesses = static_cast<int64_t>(C.Compute);
    S.ForeignProcesses = static_cast<int64_t>(C.Foreign);
    S.ForeignPids = std::move(C.ForeignPids);
  }
  uint64_t Ns = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - T0).count());
  std::lock_guard<std::mutex> Lock(Mutex);
  ++QueryCost.Queries;
  QueryCost.TotalNs += Ns;
  QueryCost.MaxNs = std::max(QueryCost.MaxNs, Ns);
  return R;
}

void NvmlSampler::sampleOnce() {
  Nvml &N = TheNvml;
  EnvSample S;
  S.TimeNs = Clock ? Clock() : 0;
  unsigned V = 0;
  unsigned Failed = 0;
  std::vector<std::string> NewErrors;
  // A reading that fails (R != NVML_SUCCESS, or no such entry point: R unset) is reported once.
  auto Check = [&](std::optional<nvmlReturn_t> R, unsigned Bit, const char *What) {
    if (R == NVML_SUCCESS)
      return true;
    Failed |= Bit;
    if (!(FailedMask & Bit))
      NewErrors.push_back(std::string(What) + (R ? " failed: " + N.describe(*R) : " is not in libnvidia-ml.so.1"));
    return false;
  };
  if (Check(N.Clock(N.Device, NVML_CLOCK_SM, &V), 1, "nvmlDeviceGetClockInfo(SM)"))
    S.SmClockMHz = V;
  if (Check(N.Clock(N.Device, NVML_CLOCK_MEM, &V), 2, "nvmlDeviceGetClockInfo(MEM)"))
    S.MemClockMHz = V;
  if (Check(N.Temp(N.Device, NVML_TEMPERATURE_GPU, &V), 4, "nvmlDeviceGetTemperature"))
    S.TempC = V;
  if (Check(N.Power(N.Device, &V), 8, "nvmlDeviceGetPowerUsage"))
    S.PowerMw = V;
  unsigned long long Reasons = 0;
  if (Check(N.Reasons(N.Device, &Reasons), 16, "nvmlDeviceGetCurrentClocksEventReasons"))
    S.ThrottleReasons = static_cast<int64_t>(Reasons);
  nvmlUtilization_t Util{0, 0};
  if (Check(N.Utilization ? std::optional<nvmlReturn_t>(N.Utilization(N.Device, &Util)) : std::nullopt, 32,
            "nvmlDeviceGetUtilizationRates")) {
    S.GpuUtilPct = Util.gpu;
    S.MemUtilPct = Util.memory;
  }
  Check(N.Processes ? std::optional<nvmlReturn_t>(readProcesses(S)) : std::nullopt, 64,
        "nvmlDeviceGetComputeRunningProcesses_v3/_v2");
  std::lock_guard<std::mutex> Lock(Mutex);
  FailedMask |= Failed;
  for (std::string &E : NewErrors)
    Errors.push_back(std::move(E));
  Samples.push_back(S);
}

void NvmlSampler::run(uint64_t PeriodUs) {
  auto Next = std::chrono::steady_clock::now();
  while (!StopRequested.load()) {
    Next += std::chrono::microseconds(PeriodUs);
    {
      std::unique_lock<std::mutex> Lock(Mutex);
      Wake.wait_until(Lock, Next, [this] { return StopRequested.load(); });
    }
    if (StopRequested.load())
      break;
    sampleOnce();
    // After a stall (a descheduled thread), resume the period from now instead of bursting.
    auto Now = std::chrono::steady_clock::now();
    if (Now > Next + std::chrono::microseconds(PeriodUs))
      Next = Now;
  }
}

void NvmlSampler::stop() {
  if (!Active.load())
    return;
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    StopRequested.store(true);
  }
  Wake.notify_all();
  if (Thread.joinable())
    Thread.join();
  sampleOnce();
  Active.store(false);
  Nvml &N = TheNvml;
  N.Shutdown();
  // libnvidia-ml stays mapped: unloading a driver library at process exit gains nothing.
  N.Device = nullptr;
}

std::vector<EnvSample> NvmlSampler::samples() const {
  std::lock_guard<std::mutex> Lock(Mutex);
  return Samples;
}

ProcessQueryCost NvmlSampler::processQueryCost() const {
  std::lock_guard<std::mutex> Lock(Mutex);
  return QueryCost;
}

std::vector<std::string> NvmlSampler::errors() const {
  std::lock_guard<std::mutex> Lock(Mutex);
  return Errors;
}

} // namespace cupti
} // namespace kloop
