//===- GpuMonitor.cpp - Who holds the GPU, seen from kloop ----------------===//
#include "kloop/Measure/GpuMonitor.h"
#include "kloop/Measure/NvmlApi.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"
#include <dlfcn.h>
#include <thread>

using namespace llvm;

namespace kloop {
namespace measure {

char DirtyGpuError::ID;

void DirtyGpuError::log(raw_ostream &OS) const { OS << "the GPU did not drain: " << Reason; }

std::string GpuProcess::describe() const {
  std::string S = "pid " + std::to_string(Pid) + ", ";
  return S + (UsedBytes ? std::to_string(*UsedBytes >> 20) + " MiB" : "memory unknown");
}

std::string describeProcesses(ArrayRef<GpuProcess> Ps) {
  SmallVector<std::string, 4> Parts;
  for (const GpuProcess &P : Ps)
    Parts.push_back(P.describe());
  return join(Parts, "; ");
}

std::vector<GpuProcess> newProcesses(const GpuSnapshot &Before, const GpuSnapshot &After) {
  std::vector<GpuProcess> New;
  for (const GpuProcess &P : After.Processes)
    if (!is_contained(Before.Processes, P))
      New.push_back(P);
  return New;
}

namespace {
using namespace nvml; // the subset of nvml.h kloop calls (kloop/Measure/NvmlApi.h)
struct Device {
  std::string Name;
  nvmlDevice_t Handle = nullptr;
};
} // namespace

struct GpuMonitor::Impl {
  std::string Library, Why;
  void *Handle = nullptr;
  bool Initialised = false;
  InitFn Init = nullptr;
  ShutdownFn Shutdown = nullptr;
  ErrorStringFn ErrorString = nullptr;
  CountFn Count = nullptr;
  ByIndexFn ByIndex = nullptr;
  ByStringFn ByPci = nullptr, ByUuid = nullptr;
  ProcessesFn Processes = nullptr;
  UtilizationFn Utilization = nullptr;
  std::vector<Device> Devices;
  bool Watched = false; ///< Devices came from watch()

  std::string describe(nvmlReturn_t R) const {
    const char *S = ErrorString ? ErrorString(R) : nullptr;
    return S ? std::string(S) : "NVML error " + std::to_string(R);
  }
  bool load();
  void chooseDefaultDevices();
  Error processes(const Device &D, std::vector<GpuProcess> &Out) const;
};

bool GpuMonitor::Impl::load() {
  Handle = ::dlopen(Library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!Handle) {
    const char *E = ::dlerror();
    Why = "cannot load " + Library + ": " + (E ? E : "unknown dlopen error");
    return false;
  }
  Init = nvmlSymbol<InitFn>(Handle, "nvmlInit_v2");
  Shutdown = nvmlSymbol<ShutdownFn>(Handle, "nvmlShutdown");
  ErrorString = nvmlSymbol<ErrorStringFn>(Handle, "nvmlErrorString");
  Count = nvmlSymbol<CountFn>(Handle, "nvmlDeviceGetCount_v2");
  ByIndex = nvmlSymbol<ByIndexFn>(Handle, "nvmlDeviceGetHandleByIndex_v2");
  ByPci = nvmlSymbol<ByStringFn>(Handle, "nvmlDeviceGetHandleByPciBusId_v2");
  ByUuid = nvmlSymbol<ByStringFn>(Handle, "nvmlDeviceGetHandleByUUID");
  Processes = nvmlSymbol<ProcessesFn>(Handle, "nvmlDeviceGetComputeRunningProcesses_v3");
  if (!Processes) // drivers before 510 have the same struct under _v2
    Processes = nvmlSymbol<ProcessesFn>(Handle, "nvmlDeviceGetComputeRunningProcesses_v2");
  Utilization = nvmlSymbol<UtilizationFn>(Handle, "nvmlDeviceGetUtilizationRates");
  if (!Init || !Shutdown || !Count || !ByIndex || !ByPci || !ByUuid || !Processes || !Utilization) {
    Why = Library + " lacks one of nvmlInit_v2, nvmlShutdown, nvmlDeviceGetCount_v2, "
                    "nvmlDeviceGetHandleByIndex_v2, nvmlDeviceGetHandleByPciBusId_v2, nvmlDeviceGetHandleByUUID, "
                    "nvmlDeviceGetComputeRunningProcesses_v3 (or _v2), nvmlDeviceGetUtilizationRates";
    return false;
  }
  if (nvmlReturn_t R = Init(); R != NVML_SUCCESS) {
    Why = "nvmlInit_v2 failed: " + describe(R);
    return false;
  }
  Initialised = true;
  chooseDefaultDevices();
  if (Devices.empty()) {
    Why = "NVML lists no device";
    return false;
  }
  return true;
}

void GpuMonitor::Impl::chooseDefaultDevices() {
  // $CUDA_VISIBLE_DEVICES, when it names every device by UUID.
  if (std::optional<std::string> Visible = sys::Process::GetEnv("CUDA_VISIBLE_DEVICES")) {
    SmallVector<StringRef, 8> Entries;
    StringRef(*Visible).split(Entries, ',', -1, /*KeepEmpty=*/false);
    std::vector<Device> ByUuidList;
    for (StringRef E : Entries) {
      E = E.trim();
      Device D{E.str(), nullptr};
      if (!(E.starts_with("GPU-") || E.starts_with("MIG-")) || ByUuid(D.Name.c_str(), &D.Handle) != NVML_SUCCESS)
        break;
      ByUuidList.push_back(D);
    }
    if (!Entries.empty() && ByUuidList.size() == Entries.size()) {
      Devices = std::move(ByUuidList);
      return;
    }
  }
  unsigned N = 0;
  if (Count(&N) != NVML_SUCCESS)
    return;
  for (unsigned I = 0; I < N; ++I) {
    Device D{"nvml:" + std::to_string(I), nullptr};
    if (ByIndex(I, &D.Handle) == NVML_SUCCESS)
      Devices.push_back(D);
  }
}

Error GpuMonitor::Impl::processes(const Device &D, std::vector<GpuProcess> &Out) const {
  std::vector<nvmlProcessInfo_t> Info(16);
  for (int Attempt = 0; Attempt < 4; ++Attempt) {
    unsigned N = static_cast<unsigned>(Info.size());
    nvmlReturn_t R = Processes(D.Handle, &N, Info.data());
    if (R == NVML_ERROR_INSUFFICIENT_SIZE) { // N is the number needed now; more may start meanwhile
      Info.resize(N + 16);
      continue;
    }
    if (R != NVML_SUCCESS)
      return createStringError("nvmlDeviceGetComputeRunningProcesses(" + D.Name + ") failed: " + describe(R));
    for (unsigned K = 0; K < N && K < Info.size(); ++K) {
      GpuProcess P{D.Name, Info[K].pid, std::nullopt};
      if (Info[K].usedGpuMemory != NVML_VALUE_NOT_AVAILABLE)
        P.UsedBytes = Info[K].usedGpuMemory;
      Out.push_back(P);
    }
    return Error::success();
  }
  return createStringError("nvmlDeviceGetComputeRunningProcesses(" + D.Name +
                           ") kept reporting more processes than it had room for");
}

GpuMonitor::GpuMonitor() : I(std::make_unique<Impl>()) {
  I->Library = sys::Process::GetEnv("KLOOP_NVML_LIBRARY").value_or("libnvidia-ml.so.1");
  if (!I->load())
    I->Devices.clear();
}

GpuMonitor::~GpuMonitor() {
  // libnvidia-ml stays mapped (as in NvmlSampler.cpp): unloading a driver library gains nothing.
  if (I->Initialised)
    I->Shutdown();
}

bool GpuMonitor::available() const { return I->Why.empty(); }

const std::string &GpuMonitor::unavailableReason() const { return I->Why; }

const std::string &GpuMonitor::library() const { return I->Library; }

bool GpuMonitor::watch(StringRef PciBusId) {
  if (!available() || PciBusId.empty())
    return false;
  if (I->Watched && any_of(I->Devices, [&](const Device &D) { return D.Name == PciBusId; }))
    return true;
  Device D{PciBusId.str(), nullptr};
  if (I->ByPci(D.Name.c_str(), &D.Handle) != NVML_SUCCESS)
    return false;
  if (!I->Watched)
    I->Devices.clear();
  I->Watched = true;
  I->Devices.push_back(D);
  return true;
}

std::vector<std::string> GpuMonitor::devices() const {
  std::vector<std::string> N;
  for (const Device &D : I->Devices)
    N.push_back(D.Name);
  return N;
}

Expected<GpuSnapshot> GpuMonitor::snapshot() const {
  if (!available())
    return createStringError("NVML unavailable: " + I->Why);
  GpuSnapshot S;
  for (const Device &D : I->Devices) {
    if (Error E = I->processes(D, S.Processes))
      return E;
    nvmlUtilization_t U{0, 0};
    nvmlReturn_t R = I->Utilization(D.Handle, &U);
    if (R != NVML_SUCCESS && R != NVML_ERROR_NOT_SUPPORTED)
      return createStringError("nvmlDeviceGetUtilizationRates(" + D.Name + ") failed: " + I->describe(R));
    S.Utilization.push_back({D.Name, R == NVML_SUCCESS ? std::optional<unsigned>(U.gpu) : std::nullopt});
  }
  return S;
}

Expected<DrainWait> waitForDrain(const GpuMonitor &M, const GpuSnapshot &Before,
                                 std::chrono::steady_clock::time_point Deadline) {
  auto HadForeign = [&](StringRef Device) {
    return any_of(Before.Processes, [&](const GpuProcess &P) { return P.Device == Device; });
  };
  while (true) {
    Expected<GpuSnapshot> S = M.snapshot();
    if (!S)
      return S.takeError();
    DrainWait W;
    W.Held = newProcesses(Before, *S);
    for (const GpuUtilization &U : S->Utilization)
      if (U.Percent && *U.Percent > 0 && !HadForeign(U.Device))
        W.Busy.push_back(U);
    W.Last = std::move(*S);
    W.Drained = W.Held.empty() && W.Busy.empty();
    if (W.Drained || std::chrono::steady_clock::now() >= Deadline)
      return W;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

} // namespace measure
} // namespace kloop
