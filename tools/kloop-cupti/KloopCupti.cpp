//===- KloopCupti.cpp - CUPTI injection library (libkloop-cupti.so) -------===//
//
// Loaded by the CUDA driver through CUDA_INJECTION64_PATH into an unmodified program, the driver calls
// InitializeInjection() once, during cuInit. From then on:
//   - the CUPTI Activity API records every kernel execution (KERNEL records, or CONCURRENT_KERNEL ones with
//     KLOOP_CUPTI_KERNEL_TRACE=concurrent);
//   - an NVML thread samples clocks, temperature, power, throttle reasons, utilization and the processes
//     using the GPU (NvmlSampler);
//   - CUPTI API callbacks on kernel launches number the launches ("seq") and, for target kernels,
//     poison chosen output buffers before the launch and hash (and optionally dump) every device buffer
//     passed as a pointer argument after it; callbacks on allocation calls keep the map of live device
//     allocations that tells which arguments are device buffers and how long they are;
//   - at process exit (atexit) the activity buffers are flushed and one JSON file is written to
//     $KLOOP_CUPTI_OUT. The format is "kloop-cupti/1", described in docs/cupti.md.
// Nothing here may take the host program down: every callback catches everything, CUDA/CUPTI failures are
// recorded in the JSON's "errors" array, and nothing is printed.
//
//===----------------------------------------------------------------------===//
#include "kloop/Support/BufferHash.h"
#include "CaptureSupport.h"
#include "LaunchCapture.h"
#include "NvmlSampler.h"
#include "RangeProfiler.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h> // also brings the generated_*_meta.h params structs
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <tuple>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unistd.h>
#include <unordered_map>
#include <utility>
#include <vector>

using namespace kloop::cupti;
namespace capture = kloop::capture;

namespace {

/// Size of one CUPTI activity buffer (bytes); CUPTI asks for more buffers as they fill.
constexpr size_t ActivityBufferBytes = 8u << 20;
/// Host staging buffer used to copy a captured device buffer in pieces (bytes).
constexpr size_t CopyChunkBytes = 64u << 20;

/// __cudaLaunchKernel (CUDA 13's target of `<<<>>>`) has no params struct in the generated meta headers;
/// its CUPTI params mirror its declaration in crt/device_functions.h.
struct CudaLaunchKernelV13Params {
  cudaKernel_t kernel;
  dim3 gridDim;
  dim3 blockDim;
  void **args;
  size_t sharedMem;
  cudaStream_t stream;
};

struct Config {
  std::string OutPath;
  std::vector<std::string> Targets;
  std::string PoisonText;
  std::optional<uint8_t> PoisonByte;
  std::string PoisonArgsText;
  std::vector<PoisonArg> PoisonArgs;
  bool Dump = false;
  /// KLOOP_CUPTI_DUMP_ARGS: the parameters dumped (empty: every captured parameter).
  std::string DumpArgsText;
  std::vector<PoisonArg> DumpArgs;
  uint64_t SampleUs = 1000;
  /// KLOOP_CUPTI_L2_FLUSH=1: before every kernel launch, write a scratch buffer of twice the L2 size on the
  /// launch's stream, so that no launch finds the previous one's data in L2 (the method of NVIDIA's
  /// nvbench, which also clears L2 with an asynchronous memset of an L2-sized buffer).
  bool L2Flush = false;
  /// KLOOP_CUPTI_KERNEL_TRACE: which CUPTI activity kind times kernels. true (the default, "serial"):
  /// CUPTI_ACTIVITY_KIND_KERNEL; false ("concurrent"): CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL. Measured on the
  /// H200 (bench/overhead, docs/results.md): concurrent tracing slows some launch configurations of one
  /// kernel by up to 6.5% and others not at all, which biases a comparison of two launch configurations;
  /// serial tracing adds 1.4-2.5 us per launch but keeps the ratios of kernel durations across launch
  /// configurations within 0.9% of the untraced ones. Serial tracing serializes concurrent kernels.
  bool SerialKernelTrace = true;
  /// KLOOP_CUPTI_METRICS=1: hardware counters per launch through CUPTI's range profiler (RangeProfiler.h)
  /// instead of kernel timing: a metrics run is never a timing run (no kernel activity, no captures).
  bool Metrics = false;
  /// KLOOP_CUPTI_METRICS_LAUNCHES: launches profiled per kernel and launch configuration (the first ones).
  uint64_t MetricsLaunches = 1;
  /// KLOOP_CUPTI_METRICS_MAX_RANGES: launches profiled in the whole process (ranges of the counter data image).
  uint64_t MetricsMaxRanges = 64;
  /// KLOOP_CUPTI_PLACEMENT_PAD: bytes of device memory allocated in the program's first context as it is
  /// created, before any allocation of the program, so that every later allocation lands elsewhere in
  /// device memory. 0: none. Why: on the H200 one layernorm candidate's speed-up over its baseline moved
  /// from 0.888x to 0.934x with nothing but such a pad changed (docs/results.md, "Twenty-fourth GPU
  /// session"); kloop compare gives both sides of a timing round the same pad and each round another.
  uint64_t PlacementPadBytes = 0;
};

/// One launch profiled with KLOOP_CUPTI_METRICS (the "metrics.ranges" of the JSON).
struct MetricRange {
  uint64_t Seq = 0;
  uint32_t Correlation = 0;
  std::string Mangled, Demangled;
  uint32_t Grid[3] = {0, 0, 0};
  uint32_t Block[3] = {0, 0, 0};
  uint64_t DynamicSmem = 0;
  /// From cuFuncGetAttribute on the launched function; -1 when unknown.
  int64_t Registers = -1, StaticSmem = -1;
  /// cuOccupancyMaxActiveBlocksPerMultiprocessor for this block size and dynamic shared memory; -1 unknown.
  int64_t DriverBlocksPerSm = -1;
  /// Host wall time of the profiled launch call (all its replay passes), ns.
  uint64_t WallNs = 0;
  std::vector<double> Values; // KernelMetricNames order; NaN: not collected
  std::string Error;          // why Values is empty
};

struct KernelRecord {
  uint32_t Correlation = 0;
  std::string Mangled;
  int32_t Grid[3] = {0, 0, 0};
  int32_t Block[3] = {0, 0, 0};
  uint32_t Registers = 0;
  int64_t StaticSmem = 0;
  int64_t DynamicSmem = 0;
  uint32_t Stream = 0;
  uint32_t Context = 0;
  uint32_t Device = 0;
  uint64_t Start = 0;
  uint64_t End = 0;
  uint32_t GraphId = 0;
  uint64_t GraphNodeId = 0;
};

struct CaptureRecord {
  uint64_t Seq = 0;
  std::string Mangled;
  std::string Demangled;
  uint64_t Ordinal = 0;
  unsigned Arg = 0;
  uint64_t Ptr = 0;
  uint64_t Bytes = 0;
  uint64_t AllocationBytes = 0;
  uint64_t Hash = 0;
  std::string Dump; // empty: no dump
  bool Poisoned = false;
  bool Tracked = true;
};

/// A pointer argument of a target launch that points into device memory.
struct CandidateArg {
  unsigned Index = 0;
  uint64_t Ptr = 0;
  uint64_t Base = 0;
  uint64_t Size = 0;
  bool Tracked = true;
  bool Poisoned = false;
  uint64_t bytesFromPtr() const { return Base + Size - Ptr; }
};

/// What the launch ENTER callback leaves for the matching EXIT callback (same thread, same correlation id).
struct PendingLaunch {
  uint32_t Correlation = 0;
  uint64_t Seq = 0;
  uint64_t Ordinal = 0;
  std::string Mangled;
  std::string Demangled;
  CUstream Stream = nullptr;
  std::vector<CandidateArg> Args;
  /// A runtime launch of a kernel without parameter information (an extern "C" kernel launched through
  /// cudaLaunchKernel with a host stub): the driver launch the runtime makes inside it, if CUPTI reports
  /// it, supplies the CUfunction whose layout is asked then (see handleApiCallback).
  struct KernelInfo *NeedsDriverLayout = nullptr;
};

struct ParamSlot {
  size_t Offset = 0;
  size_t Size = 0;
};

struct KernelInfo {
  std::string Mangled;
  std::string Demangled;
  bool IsTarget = false;
  std::optional<std::vector<SignatureParam>> Signature;
  bool LayoutTried = false;
  std::optional<std::vector<ParamSlot>> Layout;
  /// Why the layout queries failed (each query with its CUresult); empty when one succeeded.
  std::string LayoutError;
  uint64_t Launches = 0;
};

struct State {
  Config Cfg;
  bool Enabled = false;
  std::mutex Mu;
  CUpti_SubscriberHandle Subscriber = nullptr;
  AllocationMap Allocs;
  std::unordered_map<std::string, std::unique_ptr<KernelInfo>> Kernels;
  std::unordered_map<const char *, KernelInfo *> KernelsByPointer;
  std::unordered_map<uint32_t, uint64_t> CorrelationToSeq;
  /// Per seq: the kind of stream the launch call named (StreamKind), for the stream check of compare.
  std::vector<uint8_t> SeqStreamKind;
  uint64_t NextSeq = 0;
  std::vector<KernelRecord> Records;
  std::vector<CaptureRecord> Captures;
  std::vector<std::pair<std::string, uint64_t>> Errors;   // message, count
  std::vector<std::pair<std::string, uint64_t>> Warnings; // message, count
  uint64_t DroppedRecords = 0;
  std::atomic<uint64_t> NsInCallbacks{0};
  std::atomic<uint64_t> Callbacks{0};
  std::atomic<uint64_t> NsCapturing{0};
  std::atomic<uint64_t> NsInBufferCallbacks{0};
  // Device of the first context, filled by the environment thread.
  std::mutex DeviceMu;
  bool DeviceKnown = false;
  std::string DeviceName;
  int CcMajor = 0, CcMinor = 0;
  int64_t L2Bytes = 0;
  std::string PciBusId;
  std::thread EnvThread;
  bool EnvThreadStarted = false;
  NvmlSampler Sampler;
  std::string NvmlError;
  std::atomic<bool> Finished{false};
  // L2 flushing (Config::L2Flush): the scratch buffer and its context (guarded by FlushMu), and how many
  // launches were flushed or not.
  std::mutex FlushMu;
  CUdeviceptr FlushBuf = 0;
  size_t FlushBytes = 0;
  CUcontext FlushCtx = nullptr;
  bool FlushFailed = false;
  std::atomic<uint64_t> Flushes{0};
  std::atomic<uint64_t> FlushesSkipped{0};
  /// Config::PlacementPadBytes allocated (0: none asked, or the allocation failed); set once, at the first
  /// context's creation.
  std::atomic<uint64_t> PlacementPadBytes{0};
  /// Process that initialised us: a fork()ed child (without exec) inherits the atexit handler but must
  /// not overwrite its parent's file.
  long Pid = 0;
  /// Set with KLOOP_CUPTI_CAPTURE_DIR: launches recorded for replay (kloop capture, LaunchCapture.h).
  std::unique_ptr<LaunchCapturer> Capturer;
  // Hardware counters (Config::Metrics), guarded by MetricsMu.
  std::mutex MetricsMu;
  std::unique_ptr<RangeProfiler> Profiler;
  std::vector<MetricRange> Ranges;
  /// Launches profiled per (kernel, grid, block, dynamic shared memory).
  std::map<std::tuple<std::string, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint64_t>, uint64_t>
      MetricLaunches;
  uint64_t MetricsSkipped = 0;
  bool LimitsKnown = false;
  DeviceLimits Limits;
};

/// Never destroyed: CUPTI may call back from its own threads while static destructors run.
State *G = nullptr;

thread_local int TlInCallback = 0;
thread_local int TlRuntimeLaunchDepth = 0;
thread_local std::vector<std::unique_ptr<PendingLaunch>> TlPending;
/// The seq of the last launch call numbered on this thread (a driver launch inside a runtime launch has
/// the runtime launch's), and whether a driver launch was reported inside the current runtime launch.
thread_local uint64_t TlLastSeq = 0;
thread_local bool TlDriverLaunchSeen = false;
/// The launch being profiled on this thread (Config::Metrics), between its ENTER and EXIT callbacks.
thread_local std::unique_ptr<MetricRange> TlMetric;
thread_local uint64_t TlMetricStartNs = 0;

uint64_t nowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

void addMessage(std::vector<std::pair<std::string, uint64_t>> &List, const std::string &Msg) {
  for (auto &Entry : List)
    if (Entry.first == Msg) {
      ++Entry.second;
      return;
    }
  if (List.size() < 1000)
    List.emplace_back(Msg, 1);
}

void addError(const std::string &Msg) {
  std::lock_guard<std::mutex> Lock(G->Mu);
  addMessage(G->Errors, Msg);
}

void addWarning(const std::string &Msg) {
  std::lock_guard<std::mutex> Lock(G->Mu);
  addMessage(G->Warnings, Msg);
}

std::string cuErrorText(CUresult R) {
  const char *Name = nullptr;
  if (cuGetErrorName(R, &Name) != CUDA_SUCCESS || !Name)
    return "CUresult " + std::to_string(static_cast<int>(R));
  return Name;
}

std::string cuptiErrorText(CUptiResult R) {
  const char *S = nullptr;
  if (cuptiGetResultString(R, &S) != CUPTI_SUCCESS || !S)
    return "CUptiResult " + std::to_string(static_cast<int>(R));
  return S;
}

std::string envString(const char *Name) {
  const char *V = std::getenv(Name);
  return V ? std::string(V) : std::string();
}

Config readConfig(std::vector<std::string> &Errors) {
  Config C;
  std::string Out = envString("KLOOP_CUPTI_OUT");
  if (!Out.empty())
    C.OutPath = expandOutputPath(Out, static_cast<long>(getpid()));
  C.Targets = splitList(envString("KLOOP_CUPTI_TARGETS"));
  C.PoisonText = envString("KLOOP_CUPTI_POISON");
  std::string Err;
  C.PoisonByte = parsePoisonMode(C.PoisonText, Err);
  if (!Err.empty())
    Errors.push_back(Err + "; poisoning disabled");
  C.PoisonArgsText = envString("KLOOP_CUPTI_POISON_ARGS");
  Err.clear();
  if (auto Spec = parsePoisonArgs(C.PoisonArgsText, Err))
    C.PoisonArgs = std::move(*Spec);
  else {
    Errors.push_back(Err + "; poisoning disabled");
    C.PoisonByte.reset();
  }
  std::string Dump = envString("KLOOP_CUPTI_DUMP");
  C.Dump = Dump == "1" || Dump == "true" || Dump == "yes";
  C.DumpArgsText = envString("KLOOP_CUPTI_DUMP_ARGS");
  Err.clear();
  if (auto Spec = parsePoisonArgs(C.DumpArgsText, Err, "KLOOP_CUPTI_DUMP_ARGS"))
    C.DumpArgs = std::move(*Spec);
  else
    Errors.push_back(Err + "; every captured parameter is dumped");
  std::string Flush = envString("KLOOP_CUPTI_L2_FLUSH");
  C.L2Flush = Flush == "1" || Flush == "true" || Flush == "yes";
  std::string Trace = envString("KLOOP_CUPTI_KERNEL_TRACE");
  if (Trace == "concurrent")
    C.SerialKernelTrace = false;
  else if (!Trace.empty() && Trace != "serial")
    Errors.push_back("KLOOP_CUPTI_KERNEL_TRACE='" + Trace + "': expected serial or concurrent; using serial");
  std::string Metrics = envString("KLOOP_CUPTI_METRICS");
  C.Metrics = Metrics == "1" || Metrics == "true" || Metrics == "yes";
  for (auto [Name, Slot] : {std::pair<const char *, uint64_t *>{"KLOOP_CUPTI_METRICS_LAUNCHES", &C.MetricsLaunches},
                            {"KLOOP_CUPTI_METRICS_MAX_RANGES", &C.MetricsMaxRanges}}) {
    std::string V = envString(Name);
    if (V.empty())
      continue;
    std::optional<uint64_t> N = parseUnsigned(V);
    if (N && *N > 0)
      *Slot = *N;
    else
      Errors.push_back(std::string(Name) + "='" + V + "': expected a positive number; using " + std::to_string(*Slot));
  }
  std::string Pad = envString("KLOOP_CUPTI_PLACEMENT_PAD");
  if (!Pad.empty()) {
    if (auto V = parseUnsigned(Pad))
      C.PlacementPadBytes = *V;
    else
      Errors.push_back("KLOOP_CUPTI_PLACEMENT_PAD='" + Pad + "': expected a number of bytes; no pad allocated");
  }
  std::string Period = envString("KLOOP_CUPTI_SAMPLE_US");
  if (!Period.empty()) {
    if (auto V = parseUnsigned(Period))
      C.SampleUs = *V;
    else
      Errors.push_back("KLOOP_CUPTI_SAMPLE_US='" + Period + "': expected a number of microseconds; using 1000");
  }
  return C;
}

// ---- Environment thread: device description and NVML -----------------------------------------------

void describeDeviceAndSample(CUcontext Ctx) {
  try {
    CUdevice Dev = 0;
    bool HaveDev = false;
    if (Ctx && cuCtxPushCurrent(Ctx) == CUDA_SUCCESS) {
      HaveDev = cuCtxGetDevice(&Dev) == CUDA_SUCCESS;
      CUcontext Popped = nullptr;
      cuCtxPopCurrent(&Popped);
    }
    if (!HaveDev && cuDeviceGet(&Dev, 0) != CUDA_SUCCESS) {
      addError("cannot find the device of the first CUDA context");
      return;
    }
    char Name[256] = {0};
    char Pci[64] = {0};
    int Major = 0, Minor = 0, L2 = 0;
    cuDeviceGetName(Name, sizeof(Name) - 1, Dev);
    cuDeviceGetAttribute(&Major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, Dev);
    cuDeviceGetAttribute(&Minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, Dev);
    cuDeviceGetAttribute(&L2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, Dev);
    CUresult PciResult = cuDeviceGetPCIBusId(Pci, sizeof(Pci) - 1, Dev);
    {
      std::lock_guard<std::mutex> Lock(G->DeviceMu);
      G->DeviceKnown = true;
      G->DeviceName = Name;
      G->CcMajor = Major;
      G->CcMinor = Minor;
      G->L2Bytes = L2;
      G->PciBusId = Pci;
    }
    if (PciResult != CUDA_SUCCESS) {
      std::lock_guard<std::mutex> Lock(G->DeviceMu);
      G->NvmlError = "cuDeviceGetPCIBusId failed: " + cuErrorText(PciResult);
      return;
    }
    if (G->Finished.load())
      return;
    std::string Err;
    auto Clock = [] {
      uint64_t T = 0;
      cuptiGetTimestamp(&T);
      return T;
    };
    if (!G->Sampler.start(Pci, G->Cfg.SampleUs, Clock, Err)) {
      std::lock_guard<std::mutex> Lock(G->DeviceMu);
      G->NvmlError = Err;
    }
  } catch (...) {
    addError("internal error while describing the device or starting NVML");
  }
}

// ---- Kernel parameters -----------------------------------------------------------------------------

/// A launch as the callback sees it, whatever the API.
struct LaunchView {
  const char *Name = nullptr;
  CUfunction Func = nullptr;
  CUkernel Kernel = nullptr;
  void **Params = nullptr; // Params[i] points to parameter i
  void **Extra = nullptr;  // cuLaunchKernel's `extra` (packed argument buffer)
  CUstream Stream = nullptr;
};

/// Asks one driver query for every parameter's offset and size. Returns nullopt, with \p Why set to the
/// CUresult, when the query fails on the first index with anything but CUDA_ERROR_INVALID_VALUE (which is
/// the answer past the last parameter, so a kernel without parameters gives an empty layout).
template <typename QueryFn>
std::optional<std::vector<ParamSlot>> layoutBy(QueryFn Query, const char *What, std::string &Why) {
  std::vector<ParamSlot> Slots;
  for (size_t I = 0; I < 4096; ++I) {
    size_t Offset = 0, Size = 0;
    CUresult R = Query(I, &Offset, &Size);
    if (R != CUDA_SUCCESS) {
      if (I == 0 && R != CUDA_ERROR_INVALID_VALUE) {
        Why += std::string(Why.empty() ? "" : ", ") + What + ": " + cuErrorText(R);
        return std::nullopt;
      }
      break;
    }
    Slots.push_back({Offset, Size});
  }
  return Slots;
}

/// The parameter layout of a launched kernel. A CUkernel (CUDA 13 `<<<>>>`, cudaKernel_t) is asked
/// through cuKernelGetParamInfo, then through the CUfunction of the current context
/// (cuKernelGetFunction + cuFuncGetParamInfo); a CUfunction through cuFuncGetParamInfo. The first
/// non-empty layout wins; an empty one is kept only when no query finds parameters. On failure of every
/// query, \p Why lists each query with its CUresult (it lands in the profile's warnings).
std::optional<std::vector<ParamSlot>> queryLayout(const LaunchView &L, std::string &Why) {
  std::optional<std::vector<ParamSlot>> Empty;
  auto Consider = [&](std::optional<std::vector<ParamSlot>> Got) -> bool {
    if (!Got)
      return false;
    if (Got->empty()) {
      Empty = std::move(Got);
      return false;
    }
    Empty = std::move(Got);
    return true;
  };
  if (L.Kernel) {
    CUkernel K = L.Kernel;
    if (Consider(layoutBy([K](size_t I, size_t *O, size_t *S) { return cuKernelGetParamInfo(K, I, O, S); },
                          "cuKernelGetParamInfo", Why)))
      return Empty;
    CUfunction F = nullptr;
    CUresult R = cuKernelGetFunction(&F, K);
    if (R != CUDA_SUCCESS)
      Why += std::string(Why.empty() ? "" : ", ") + "cuKernelGetFunction: " + cuErrorText(R);
    else if (Consider(layoutBy([F](size_t I, size_t *O, size_t *S) { return cuFuncGetParamInfo(F, I, O, S); },
                               "cuFuncGetParamInfo(cuKernelGetFunction)", Why)))
      return Empty;
  }
  if (L.Func) {
    CUfunction F = L.Func;
    if (Consider(layoutBy([F](size_t I, size_t *O, size_t *S) { return cuFuncGetParamInfo(F, I, O, S); },
                          "cuFuncGetParamInfo", Why)))
      return Empty;
    // cuLaunchKernel also takes a CUkernel cast to CUfunction, which is what the CUDA 13 runtime passes
    // for an extern "C" kernel launched through cudaLaunchKernel (seen on the H200: cuFuncGetParamInfo
    // answers CUDA_ERROR_INVALID_HANDLE for it).
    CUkernel K = reinterpret_cast<CUkernel>(F);
    if (Consider(layoutBy([K](size_t I, size_t *O, size_t *S) { return cuKernelGetParamInfo(K, I, O, S); },
                          "cuKernelGetParamInfo(CUfunction as CUkernel)", Why)))
      return Empty;
  }
  if (!L.Kernel && !L.Func)
    Why += std::string(Why.empty() ? "" : ", ") + "no CUkernel or CUfunction handle at this launch API";
  return Empty;
}

/// The packed argument buffer of cuLaunchKernel's `extra`, if given.
bool extraBuffer(void **Extra, const char *&Buf, size_t &Size) {
  Buf = nullptr;
  Size = 0;
  if (!Extra)
    return false;
  for (int I = 0; I < 64 && Extra[I] != CU_LAUNCH_PARAM_END; I += 2) {
    if (Extra[I] == CU_LAUNCH_PARAM_BUFFER_POINTER)
      Buf = static_cast<const char *>(Extra[I + 1]);
    else if (Extra[I] == CU_LAUNCH_PARAM_BUFFER_SIZE && Extra[I + 1])
      Size = *static_cast<size_t *>(Extra[I + 1]);
  }
  return Buf && Size;
}

/// Finds the arguments of a target launch that point into device memory (caller does not hold G->Mu).
std::vector<CandidateArg> findDeviceArgs(const LaunchView &L, KernelInfo &K, bool *NoParamInfo = nullptr) {
  std::vector<CandidateArg> Out;
  std::optional<std::vector<ParamSlot>> Layout;
  {
    std::lock_guard<std::mutex> Lock(G->Mu);
    Layout = K.Layout;
    if (!K.LayoutTried) {
      K.LayoutTried = true;
      Layout = K.Layout = queryLayout(L, K.LayoutError);
    }
  }
  const std::optional<std::vector<SignatureParam>> &Sig = K.Signature;
  // No query found parameters, but the signature has some: the queries cannot be trusted on this handle.
  if (Layout && Layout->empty() && Sig && !Sig->empty())
    Layout.reset();
  const char *Buf = nullptr;
  size_t BufSize = 0;
  bool HaveBuffer = !L.Params && extraBuffer(L.Extra, Buf, BufSize);

  size_t Count = 0;
  if (Layout)
    Count = Layout->size();
  else if (Sig)
    Count = Sig->size();
  else {
    if (NoParamInfo)
      *NoParamInfo = true;
    else
      addWarning("kernel " + K.Mangled + ": no parameter information (no C++ signature in the name; " +
                 K.LayoutError + "); outputs not captured");
    return Out;
  }
  bool UseSig = Sig && Sig->size() == Count;
  if (Layout && Sig && !UseSig)
    addWarning("kernel " + K.Demangled + ": demangled signature has " + std::to_string(Sig->size()) +
               " parameters, the driver reports " + std::to_string(Count) + "; matching 8-byte parameters");
  if (Count > 0 && !L.Params && !HaveBuffer) {
    addWarning("kernel " + K.Mangled + ": launch without kernel parameters or argument buffer; not captured");
    return Out;
  }

  for (size_t I = 0; I < Count; ++I) {
    size_t Size = Layout ? (*Layout)[I].Size : (Sig && (*Sig)[I].IsPointer ? 8 : 0);
    bool IsPointer = UseSig ? (*Sig)[I].IsPointer : Size == 8;
    if (!IsPointer || Size != 8)
      continue;
    uint64_t V = 0;
    if (L.Params) {
      if (!L.Params[I])
        continue;
      std::memcpy(&V, L.Params[I], 8);
    } else {
      size_t Offset = (*Layout)[I].Offset;
      if (Offset + 8 > BufSize)
        continue;
      std::memcpy(&V, Buf + Offset, 8);
    }
    if (V == 0)
      continue;
    CandidateArg A;
    A.Index = static_cast<unsigned>(I);
    A.Ptr = V;
    std::optional<AllocationMap::Range> R;
    {
      std::lock_guard<std::mutex> Lock(G->Mu);
      R = G->Allocs.find(V);
    }
    if (R) {
      A.Base = R->Base;
      A.Size = R->Size;
    } else if (UseSig) {
      // A declared pointer that no tracked call allocated (memory from a library's internal allocator,
      // the VMM API, ...): ask the driver for its allocation.
      CUdeviceptr Base = 0;
      size_t Size = 0;
      if (cuMemGetAddressRange(&Base, &Size, static_cast<CUdeviceptr>(V)) != CUDA_SUCCESS || Size == 0)
        continue;
      A.Base = Base;
      A.Size = Size;
      A.Tracked = false;
    } else {
      continue;
    }
    Out.push_back(A);
  }
  return Out;
}

bool streamIsCapturing(CUstream S) {
  CUstreamCaptureStatus Status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (cuStreamIsCapturing(S, &Status) != CUDA_SUCCESS)
    return false;
  return Status != CU_STREAM_CAPTURE_STATUS_NONE;
}

// ---- Launch callbacks ------------------------------------------------------------------------------

KernelInfo &kernelInfo(const char *Name) {
  // Caller holds G->Mu.
  if (Name) {
    auto It = G->KernelsByPointer.find(Name);
    if (It != G->KernelsByPointer.end() && It->second->Mangled == Name)
      return *It->second;
  }
  std::string Key = Name ? Name : "<unknown kernel>";
  auto &Slot = G->Kernels[Key];
  if (!Slot) {
    Slot = std::make_unique<KernelInfo>();
    Slot->Mangled = Key;
    Slot->Demangled = demangle(Key);
    Slot->IsTarget = matchesTarget(G->Cfg.Targets, Slot->Demangled);
    if (Slot->IsTarget)
      Slot->Signature = parseSignature(Slot->Demangled);
  }
  if (Name)
    G->KernelsByPointer[Name] = Slot.get();
  return *Slot;
}

void poisonArgs(PendingLaunch &P, KernelInfo &K) {
  const Config &C = G->Cfg;
  if (!C.PoisonByte)
    return;
  bool Any = false;
  for (CandidateArg &A : P.Args)
    Any |= shouldPoison(C.PoisonArgs, K.Demangled, A.Index);
  for (const PoisonArg &Spec : C.PoisonArgs) {
    if (!Spec.KernelSubstring.empty() && K.Demangled.find(Spec.KernelSubstring) == std::string::npos)
      continue;
    bool Found = false;
    for (const CandidateArg &A : P.Args)
      Found |= A.Index == Spec.Arg;
    if (!Found)
      addWarning("KLOOP_CUPTI_POISON_ARGS names parameter " + std::to_string(Spec.Arg) + " of " + K.Demangled +
                 ", which is not a device pointer into a known allocation; not poisoned");
  }
  if (!Any)
    return;
  if (streamIsCapturing(P.Stream)) {
    addWarning("launch of " + K.Demangled + " recorded into a CUDA graph (stream capture): not poisoned");
    return;
  }
  CUresult R = cuCtxSynchronize();
  if (R != CUDA_SUCCESS) {
    addError("cuCtxSynchronize before poisoning " + K.Demangled + " (seq " + std::to_string(P.Seq) +
             ") failed: " + cuErrorText(R));
    return;
  }
  for (CandidateArg &A : P.Args) {
    if (!shouldPoison(C.PoisonArgs, K.Demangled, A.Index))
      continue;
    R = cuMemsetD8(static_cast<CUdeviceptr>(A.Ptr), *C.PoisonByte, A.bytesFromPtr());
    if (R != CUDA_SUCCESS) {
      addError("cuMemsetD8 poisoning parameter " + std::to_string(A.Index) + " of " + K.Demangled + " failed: " +
               cuErrorText(R));
      continue;
    }
    A.Poisoned = true;
  }
  // The memset runs on the legacy stream; the kernel may run on a stream that does not wait for it.
  R = cuCtxSynchronize();
  if (R != CUDA_SUCCESS)
    addError("cuCtxSynchronize after poisoning " + K.Demangled + " failed: " + cuErrorText(R));
}

/// Clears L2 before a launch on \p Stream (Config::L2Flush): a cuMemsetD32Async over a scratch buffer of
/// max(2 x L2, 32 MiB) bytes, allocated on first use in the current context. The memset is ordered before
/// the kernel by the stream and is not a kernel, so it never appears among the timed launches. Skipped,
/// with a warning, for launches recorded into a graph and for contexts other than the first.
void flushL2(CUstream Stream) {
  if (!G->Cfg.L2Flush)
    return;
  if (streamIsCapturing(Stream)) {
    addWarning("launch recorded into a CUDA graph (stream capture): L2 not flushed before it");
    ++G->FlushesSkipped;
    return;
  }
  CUcontext Ctx = nullptr;
  cuCtxGetCurrent(&Ctx);
  CUdeviceptr Buf = 0;
  size_t Bytes = 0;
  std::string Problem;
  {
    std::lock_guard<std::mutex> Lock(G->FlushMu);
    if (!G->FlushBuf && !G->FlushFailed) {
      CUdevice Dev = 0;
      int L2 = 0;
      if (cuCtxGetDevice(&Dev) == CUDA_SUCCESS)
        cuDeviceGetAttribute(&L2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, Dev);
      size_t Want = std::max<size_t>(2 * static_cast<size_t>(std::max(L2, 0)), size_t(32) << 20);
      CUresult R = cuMemAlloc(&G->FlushBuf, Want);
      if (R != CUDA_SUCCESS) {
        G->FlushFailed = true;
        G->FlushBuf = 0;
        Problem = "cuMemAlloc of the " + std::to_string(Want) + "-byte L2 flush buffer failed: " + cuErrorText(R) +
                  "; L2 not flushed";
      } else {
        G->FlushBytes = Want;
        G->FlushCtx = Ctx;
      }
    }
    if (G->FlushBuf && G->FlushCtx != Ctx) {
      ++G->FlushesSkipped;
      Problem = "launch in a second CUDA context: L2 not flushed before it";
    } else if (G->FlushBuf) {
      Buf = G->FlushBuf;
      Bytes = G->FlushBytes;
    } else {
      ++G->FlushesSkipped;
    }
  }
  if (!Problem.empty()) {
    (G->FlushFailed ? addError : addWarning)(Problem);
    return;
  }
  if (!Buf)
    return;
  uint64_t N = ++G->Flushes;
  CUresult R = cuMemsetD32Async(Buf, static_cast<unsigned>(N), Bytes / 4, Stream);
  if (R != CUDA_SUCCESS) {
    addError("cuMemsetD32Async flushing L2 failed: " + cuErrorText(R));
    --G->Flushes;
    ++G->FlushesSkipped;
  }
}

/// The kind of stream a launch call names. CUPTI's stream ids are per process, so only this, and the
/// order in which created streams are first used, can be compared between two programs.
enum StreamKind : uint8_t { StreamUnknown = 0, StreamLegacyDefault, StreamPerThreadDefault, StreamCreated };

const char *streamKindName(uint8_t K) {
  switch (K) {
  case StreamLegacyDefault:
    return "default";
  case StreamPerThreadDefault:
    return "per_thread_default";
  case StreamCreated:
    return "created";
  default:
    return "unknown";
  }
}

uint8_t streamKindOf(CUstream S) {
  return (!S || S == CU_STREAM_LEGACY) ? StreamLegacyDefault
         : S == CU_STREAM_PER_THREAD   ? StreamPerThreadDefault
                                       : StreamCreated;
}

void onLaunchEnter(const CUpti_CallbackData *Data, const LaunchView &L, bool CountOnly) {
  PendingLaunch *P = nullptr;
  KernelInfo *K = nullptr;
  {
    std::lock_guard<std::mutex> Lock(G->Mu);
    uint64_t Seq = G->NextSeq++;
    TlLastSeq = Seq;
    G->CorrelationToSeq[Data->correlationId] = Seq;
    if (G->SeqStreamKind.size() <= Seq)
      G->SeqStreamKind.resize(Seq + 1, StreamUnknown);
    if (!CountOnly)
      G->SeqStreamKind[Seq] = streamKindOf(L.Stream);
    if (CountOnly) {
      if (G->Cfg.L2Flush)
        ++G->FlushesSkipped; // a graph launch: its kernels are not preceded by a flush
      return;
    }
    const char *Name = L.Name;
    if (!Name) {
      if (L.Kernel)
        cuKernelGetName(&Name, L.Kernel);
      else if (L.Func)
        cuFuncGetName(&Name, L.Func);
    }
    K = &kernelInfo(Name);
    uint64_t Ordinal = K->Launches++;
    if (K->IsTarget && !G->Cfg.Metrics) { // a metrics run is neither a timing nor a capture run
      auto Owned = std::make_unique<PendingLaunch>();
      P = Owned.get();
      P->Correlation = Data->correlationId;
      P->Seq = Seq;
      P->Ordinal = Ordinal;
      P->Mangled = K->Mangled;
      P->Demangled = K->Demangled;
      P->Stream = L.Stream;
      TlPending.push_back(std::move(Owned));
    } else {
      K = nullptr;
    }
  }
  if (K) {
    bool NoInfo = false;
    P->Args = findDeviceArgs(L, *K, &NoInfo);
    if (NoInfo) {
      // Wait for the driver launch inside this runtime launch (resolveFromDriverLaunch); no flush yet
      // either, so that it stays the last work before the kernel.
      P->NeedsDriverLayout = K;
      return;
    }
    uint64_t T0 = nowNs();
    poisonArgs(*P, *K);
    G->NsCapturing += nowNs() - T0;
  }
  // Last, so that the flush is the final work queued on the stream before the kernel.
  flushL2(L.Stream);
}

/// A driver launch inside a runtime launch whose kernel had no parameter information: the driver's
/// CUfunction gives the layout (cuFuncGetParamInfo), the runtime's argument array the values; then the
/// pending launch is poisoned and L2 flushed as onLaunchEnter would have.
void resolveFromDriverLaunch(const LaunchView &Driver) {
  if (TlPending.empty() || !TlPending.back()->NeedsDriverLayout)
    return;
  PendingLaunch &P = *TlPending.back();
  KernelInfo &K = *P.NeedsDriverLayout;
  P.NeedsDriverLayout = nullptr;
  std::string Why;
  std::optional<std::vector<ParamSlot>> Layout;
  if (Driver.Func)
    Layout = queryLayout(Driver, Why);
  {
    std::lock_guard<std::mutex> Lock(G->Mu);
    if (Layout && !Layout->empty()) {
      K.Layout = Layout;
      K.LayoutError.clear();
    } else {
      K.LayoutError += "; at the driver launch inside it: " + (Why.empty() ? std::string("no parameters") : Why);
    }
  }
  LaunchView L = Driver;
  P.Args = findDeviceArgs(L, K);
  uint64_t T0 = nowNs();
  poisonArgs(P, K);
  G->NsCapturing += nowNs() - T0;
  flushL2(P.Stream);
}

void captureArgs(PendingLaunch &P) {
  if (P.Args.empty())
    return;
  if (streamIsCapturing(P.Stream)) {
    addWarning("launch of " + P.Demangled + " recorded into a CUDA graph (stream capture): outputs not captured");
    return;
  }
  CUresult R = cuCtxSynchronize();
  if (R != CUDA_SUCCESS) {
    addError("cuCtxSynchronize after " + P.Demangled + " (seq " + std::to_string(P.Seq) +
             ") failed: " + cuErrorText(R) + "; outputs not captured");
    return;
  }
  std::vector<char> Chunk;
  for (const CandidateArg &A : P.Args) {
    CaptureRecord C;
    C.Seq = P.Seq;
    C.Mangled = P.Mangled;
    C.Demangled = P.Demangled;
    C.Ordinal = P.Ordinal;
    C.Arg = A.Index;
    C.Ptr = A.Ptr;
    C.Bytes = A.bytesFromPtr();
    C.AllocationBytes = A.Size;
    C.Poisoned = A.Poisoned;
    C.Tracked = A.Tracked;
    std::unique_ptr<FILE, int (*)(FILE *)> DumpFile(nullptr, &fclose);
    if (G->Cfg.Dump && (G->Cfg.DumpArgs.empty() || shouldPoison(G->Cfg.DumpArgs, P.Demangled, A.Index))) {
      C.Dump = dumpFileName(G->Cfg.OutPath, P.Seq, A.Index);
      std::string Path = directoryOf(G->Cfg.OutPath) + "/" + C.Dump;
      DumpFile.reset(std::fopen(Path.c_str(), "wb"));
      if (!DumpFile) {
        addError("cannot write dump " + Path + ": " + std::strerror(errno));
        C.Dump.clear();
      }
    }
    kloop::BufferHash Hash;
    bool Ok = true;
    if (Chunk.size() < std::min<uint64_t>(C.Bytes, CopyChunkBytes))
      Chunk.resize(std::min<uint64_t>(C.Bytes, CopyChunkBytes));
    for (uint64_t Done = 0; Done < C.Bytes && Ok;) {
      size_t N = static_cast<size_t>(std::min<uint64_t>(C.Bytes - Done, CopyChunkBytes));
      R = cuMemcpyDtoH(Chunk.data(), static_cast<CUdeviceptr>(A.Ptr + Done), N);
      if (R != CUDA_SUCCESS) {
        addError("cuMemcpyDtoH of parameter " + std::to_string(A.Index) + " of " + P.Demangled + " failed: " +
                 cuErrorText(R));
        Ok = false;
        break;
      }
      Hash.update(Chunk.data(), N);
      if (DumpFile && std::fwrite(Chunk.data(), 1, N, DumpFile.get()) != N) {
        addError("short write to dump " + C.Dump);
        DumpFile.reset();
        C.Dump.clear();
      }
      Done += N;
    }
    if (!Ok)
      continue;
    if (DumpFile && std::fclose(DumpFile.release()) != 0) {
      addError("cannot close dump " + C.Dump);
      C.Dump.clear();
    }
    C.Hash = Hash.value();
    std::lock_guard<std::mutex> Lock(G->Mu);
    G->Captures.push_back(std::move(C));
  }
}

void onLaunchExit(const CUpti_CallbackData *Data, bool Succeeded) {
  std::unique_ptr<PendingLaunch> P;
  for (size_t I = TlPending.size(); I-- > 0;)
    if (TlPending[I]->Correlation == Data->correlationId) {
      P = std::move(TlPending[I]);
      TlPending.erase(TlPending.begin() + static_cast<std::ptrdiff_t>(I));
      break;
    }
  if (!P)
    return;
  if (P->NeedsDriverLayout) {
    // No driver launch was reported inside the runtime launch: the kernel stays uncaptured.
    addWarning("kernel " + P->Mangled + ": no parameter information (no C++ signature in the name; " +
               P->NeedsDriverLayout->LayoutError + "; no driver launch reported inside the runtime launch); "
               "outputs not captured");
    if (G->Cfg.L2Flush)
      ++G->FlushesSkipped;
    return;
  }
  if (!Succeeded) {
    addWarning("launch of " + P->Demangled + " failed; outputs not captured");
    return;
  }
  uint64_t T0 = nowNs();
  captureArgs(*P);
  G->NsCapturing += nowNs() - T0;
}

// ---- Allocation callbacks --------------------------------------------------------------------------

void trackAlloc(const void *const *Ptr, uint64_t Size) {
  if (!Ptr || !*Ptr)
    return;
  std::lock_guard<std::mutex> Lock(G->Mu);
  G->Allocs.insert(reinterpret_cast<uint64_t>(*Ptr), Size);
}

void trackAllocDriver(const CUdeviceptr *Ptr, uint64_t Size) {
  if (!Ptr || !*Ptr)
    return;
  std::lock_guard<std::mutex> Lock(G->Mu);
  G->Allocs.insert(static_cast<uint64_t>(*Ptr), Size);
}

void trackFree(uint64_t Ptr) {
  if (!Ptr)
    return;
  std::lock_guard<std::mutex> Lock(G->Mu);
  G->Allocs.erase(Ptr);
}

void onRuntimeAlloc(CUpti_CallbackId Cbid, const void *Params) {
  switch (Cbid) {
  case CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020: {
    auto *P = static_cast<const cudaMalloc_v3020_params *>(Params);
    trackAlloc(P->devPtr, P->size);
    break;
  }
  case CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020: {
    auto *P = static_cast<const cudaMallocPitch_v3020_params *>(Params);
    if (P->pitch)
      trackAlloc(P->devPtr, static_cast<uint64_t>(*P->pitch) * P->height);
    break;
  }
  case CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000: {
    auto *P = static_cast<const cudaMallocManaged_v6000_params *>(Params);
    trackAlloc(P->devPtr, P->size);
    break;
  }
  case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020: {
    auto *P = static_cast<const cudaMallocAsync_v11020_params *>(Params);
    trackAlloc(P->devPtr, P->size);
    break;
  }
  case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020: {
    auto *P = static_cast<const cudaMallocAsync_ptsz_v11020_params *>(Params);
    trackAlloc(P->devPtr, P->size);
    break;
  }
  case CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_v11020: {
    auto *P = static_cast<const cudaMallocFromPoolAsync_v11020_params *>(Params);
    trackAlloc(P->ptr, P->size);
    break;
  }
  case CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020: {
    auto *P = static_cast<const cudaMallocFromPoolAsync_ptsz_v11020_params *>(Params);
    trackAlloc(P->ptr, P->size);
    break;
  }
  case CUPTI_RUNTIME_TRACE_CBID_cudaMalloc3D_v3020: {
    auto *P = static_cast<const cudaMalloc3D_v3020_params *>(Params);
    if (P->pitchedDevPtr) {
      void *Ptr = P->pitchedDevPtr->ptr;
      trackAlloc(&Ptr, static_cast<uint64_t>(P->pitchedDevPtr->pitch) * P->extent.height * P->extent.depth);
    }
    break;
  }
  case CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020:
    trackFree(reinterpret_cast<uint64_t>(static_cast<const cudaFree_v3020_params *>(Params)->devPtr));
    break;
  case CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020:
    trackFree(reinterpret_cast<uint64_t>(static_cast<const cudaFreeAsync_v11020_params *>(Params)->devPtr));
    break;
  case CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_ptsz_v11020:
    trackFree(reinterpret_cast<uint64_t>(static_cast<const cudaFreeAsync_ptsz_v11020_params *>(Params)->devPtr));
    break;
  default:
    break;
  }
}

void onDriverAlloc(CUpti_CallbackId Cbid, const void *Params) {
  switch (Cbid) {
  case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2: {
    auto *P = static_cast<const cuMemAlloc_v2_params *>(Params);
    trackAllocDriver(P->dptr, P->bytesize);
    break;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2: {
    auto *P = static_cast<const cuMemAllocPitch_v2_params *>(Params);
    if (P->pPitch)
      trackAllocDriver(P->dptr, static_cast<uint64_t>(*P->pPitch) * P->Height);
    break;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged: {
    auto *P = static_cast<const cuMemAllocManaged_params *>(Params);
    trackAllocDriver(P->dptr, P->bytesize);
    break;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync:
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz: {
    auto *P = static_cast<const cuMemAllocAsync_params *>(Params); // same layout for _ptsz
    trackAllocDriver(P->dptr, P->bytesize);
    break;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync:
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz: {
    auto *P = static_cast<const cuMemAllocFromPoolAsync_params *>(Params); // same layout for _ptsz
    trackAllocDriver(P->dptr, P->bytesize);
    break;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2:
    trackFree(static_cast<uint64_t>(static_cast<const cuMemFree_v2_params *>(Params)->dptr));
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync:
  case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz:
    trackFree(static_cast<uint64_t>(static_cast<const cuMemFreeAsync_params *>(Params)->dptr));
    break;
  default:
    break;
  }
}

// ---- Dispatch ----------------------------------------------------------------------------------------

enum class LaunchKind { None, Kernel, CountOnly };

/// Decodes a launch callback; returns None for callbacks that are not launches.
LaunchKind decodeRuntimeLaunch(CUpti_CallbackId Cbid, const CUpti_CallbackData *D, LaunchView &L) {
  L.Name = D->symbolName;
  switch (Cbid) {
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000: {
    // The four params structs share one layout (func, grid, block, args, sharedMem, stream).
    auto *P = static_cast<const cudaLaunchKernel_v7000_params *>(D->functionParams);
    L.Params = P->args;
    L.Stream = reinterpret_cast<CUstream>(P->stream);
    break;
  }
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060: {
    auto *P = static_cast<const cudaLaunchKernelExC_v11060_params *>(D->functionParams);
    L.Params = P->args;
    L.Stream = P->config ? reinterpret_cast<CUstream>(P->config->stream) : nullptr;
    break;
  }
#if CUPTI_API_VERSION >= 130000
  case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000:
  case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000: {
    auto *P = static_cast<const CudaLaunchKernelV13Params *>(D->functionParams);
    L.Kernel = reinterpret_cast<CUkernel>(P->kernel);
    L.Params = P->args;
    L.Stream = reinterpret_cast<CUstream>(P->stream);
    break;
  }
#endif
  case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000:
  case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000:
    return LaunchKind::CountOnly;
  default:
    return LaunchKind::None;
  }
  bool PerThread = Cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000 ||
                   Cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000 ||
#if CUPTI_API_VERSION >= 130000
                   Cbid == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000 ||
#endif
                   Cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060;
  if (PerThread && !L.Stream)
    L.Stream = CU_STREAM_PER_THREAD;
  return LaunchKind::Kernel;
}

LaunchKind decodeDriverLaunch(CUpti_CallbackId Cbid, const CUpti_CallbackData *D, LaunchView &L) {
  L.Name = D->symbolName;
  switch (Cbid) {
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
    auto *P = static_cast<const cuLaunchKernel_params *>(D->functionParams); // same layout for _ptsz
    L.Func = P->f;
    L.Params = P->kernelParams;
    L.Extra = P->extra;
    L.Stream = P->hStream;
    break;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
    auto *P = static_cast<const cuLaunchCooperativeKernel_params *>(D->functionParams);
    L.Func = P->f;
    L.Params = P->kernelParams;
    L.Stream = P->hStream;
    break;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
    auto *P = static_cast<const cuLaunchKernelEx_params *>(D->functionParams);
    L.Func = P->f;
    L.Params = P->kernelParams;
    L.Extra = P->extra;
    L.Stream = P->config ? P->config->hStream : nullptr;
    break;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
  case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz:
    return LaunchKind::CountOnly;
  default:
    return LaunchKind::None;
  }
  bool PerThread = Cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz ||
                   Cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz ||
                   Cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz;
  if (PerThread && !L.Stream)
    L.Stream = CU_STREAM_PER_THREAD;
  return LaunchKind::Kernel;
}

// ---- Capture for replay (kloop capture; LaunchCapture.h) ---------------------------------------------

/// Fills the launch configuration of \p DL from a driver launch callback's parameters.
void decodeDriverConfig(CUpti_CallbackId Cbid, const void *Params, DriverLaunch &DL) {
  auto Copy = [&DL](unsigned GX, unsigned GY, unsigned GZ, unsigned BX, unsigned BY, unsigned BZ, unsigned Smem) {
    DL.Grid[0] = GX, DL.Grid[1] = GY, DL.Grid[2] = GZ;
    DL.Block[0] = BX, DL.Block[1] = BY, DL.Block[2] = BZ;
    DL.DynamicSmem = Smem;
  };
  if (Cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx || Cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz) {
    const CUlaunchConfig *C = static_cast<const cuLaunchKernelEx_params *>(Params)->config;
    if (!C)
      return;
    Copy(C->gridDimX, C->gridDimY, C->gridDimZ, C->blockDimX, C->blockDimY, C->blockDimZ, C->sharedMemBytes);
    for (unsigned I = 0; C->attrs && I < C->numAttrs; ++I) {
      const CUlaunchAttribute &A = C->attrs[I];
      if (A.id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE)
        DL.Cooperative = A.value.cooperative != 0;
      else if (A.id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
        DL.Cluster[0] = A.value.clusterDim.x, DL.Cluster[1] = A.value.clusterDim.y, DL.Cluster[2] = A.value.clusterDim.z;
      else
        DL.OtherAttributes.push_back(static_cast<unsigned>(A.id));
    }
  } else if (Cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel ||
             Cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz) {
    auto *P = static_cast<const cuLaunchCooperativeKernel_params *>(Params);
    Copy(P->gridDimX, P->gridDimY, P->gridDimZ, P->blockDimX, P->blockDimY, P->blockDimZ, P->sharedMemBytes);
    DL.Cooperative = true;
  } else {
    auto *P = static_cast<const cuLaunchKernel_params *>(Params); // same layout for _ptsz
    Copy(P->gridDimX, P->gridDimY, P->gridDimZ, P->blockDimX, P->blockDimY, P->blockDimZ, P->sharedMemBytes);
  }
}

/// The parameter layout of a captured launch: the driver's (queryLayout). An empty layout for a kernel
/// whose signature has parameters means the queries failed on this handle.
std::optional<std::vector<capture::ParamSlot>> captureLayout(const LaunchView &L, const std::string &Mangled,
                                                             std::string &Why) {
  std::optional<std::vector<ParamSlot>> Slots = queryLayout(L, Why);
  if (!Slots)
    return std::nullopt;
  std::optional<std::vector<SignatureParam>> Sig = parseSignature(demangle(Mangled));
  if (Slots->empty() && Sig && !Sig->empty()) {
    Why = "the driver reports no parameters, the signature has " + std::to_string(Sig->size());
    return std::nullopt;
  }
  std::vector<capture::ParamSlot> Out;
  for (const ParamSlot &S : *Slots)
    Out.push_back({S.Offset, S.Size});
  return Out;
}

/// Hands a driver launch (enter or exit) to the capturer.
void captureDriverLaunch(CUpti_CallbackId Cbid, const CUpti_CallbackData *D, const LaunchView &L, bool Enter) {
  if (!G->Capturer)
    return;
  TlDriverLaunchSeen = true;
  if (!Enter) {
    G->Capturer->onExit(D->functionReturnValue && *static_cast<const int *>(D->functionReturnValue) == 0);
    return;
  }
  DriverLaunch DL;
  DL.Seq = TlLastSeq;
  const char *Name = L.Name;
  // The runtime passes a CUkernel cast to CUfunction (docs/cupti.md, Limitations): ask both ways.
  if (!Name && L.Func && cuFuncGetName(&Name, L.Func) != CUDA_SUCCESS) {
    Name = nullptr;
    cuKernelGetName(&Name, reinterpret_cast<CUkernel>(L.Func));
  }
  DL.Mangled = Name ? Name : "";
  decodeDriverConfig(Cbid, D->functionParams, DL);
  DL.StreamKind = streamKindName(streamKindOf(L.Stream));
  DL.StreamCapturing = streamIsCapturing(L.Stream);
  DL.Params = L.Params;
  if (!L.Params)
    extraBuffer(L.Extra, DL.ExtraBuf, DL.ExtraSize);
  auto Layout = [&](std::string &Why) { return captureLayout(L, DL.Mangled, Why); };
  auto Tracked = [](uint64_t V) -> std::optional<capture::AddressRange> {
    std::lock_guard<std::mutex> Lock(G->Mu);
    std::optional<AllocationMap::Range> R = G->Allocs.find(V);
    if (!R)
      return std::nullopt;
    return capture::AddressRange{R->Base, R->Size};
  };
  G->Capturer->onEnter(DL, Layout, Tracked);
}

/// A runtime launch: the capture happens at the driver launch inside it; one that never came is refused.
void noteRuntimeLaunchForCapture(CUpti_CallbackId, const CUpti_CallbackData *D, const LaunchView &L, bool Enter) {
  if (!G->Capturer)
    return;
  if (Enter) {
    TlDriverLaunchSeen = false;
    return;
  }
  const char *Name = L.Name;
  if (!TlDriverLaunchSeen && Name && D->functionReturnValue && *static_cast<const int *>(D->functionReturnValue) == 0)
    G->Capturer->refuseUnseen(TlLastSeq, Name);
}


// ---- Hardware counters (KLOOP_CUPTI_METRICS; RangeProfiler.h) -----------------------------------------

/// The launched function in the current context, for its attributes: a CUkernel through
/// cuKernelGetFunction, a CUfunction as it is, or a CUkernel passed as a CUfunction (what the CUDA 13
/// runtime passes to cuLaunchKernel, docs/cupti.md). nullptr when none answers.
CUfunction launchedFunction(const LaunchView &L) {
  CUfunction F = nullptr;
  if (L.Kernel && cuKernelGetFunction(&F, L.Kernel) == CUDA_SUCCESS)
    return F;
  if (!L.Func)
    return nullptr;
  int Regs = 0;
  if (cuFuncGetAttribute(&Regs, CU_FUNC_ATTRIBUTE_NUM_REGS, L.Func) == CUDA_SUCCESS)
    return L.Func;
  if (cuKernelGetFunction(&F, reinterpret_cast<CUkernel>(L.Func)) == CUDA_SUCCESS)
    return F;
  return nullptr;
}

/// Registers per thread, static shared memory and the driver's occupancy answer for \p M's launch
/// configuration, when \p L names the function and they are not known yet.
void fillFunctionAttributes(MetricRange &M, const LaunchView &L) {
  if (M.Registers >= 0)
    return;
  CUfunction F = launchedFunction(L);
  if (!F)
    return;
  int Regs = -1, Smem = -1, Blocks = -1;
  if (cuFuncGetAttribute(&Regs, CU_FUNC_ATTRIBUTE_NUM_REGS, F) == CUDA_SUCCESS)
    M.Registers = Regs;
  if (cuFuncGetAttribute(&Smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, F) == CUDA_SUCCESS)
    M.StaticSmem = Smem;
  int Threads = static_cast<int>(M.Block[0] * M.Block[1] * M.Block[2]);
  if (Threads > 0 &&
      cuOccupancyMaxActiveBlocksPerMultiprocessor(&Blocks, F, Threads, static_cast<size_t>(M.DynamicSmem)) ==
          CUDA_SUCCESS)
    M.DriverBlocksPerSm = Blocks;
}

/// Grid, block and dynamic shared memory of a launch call, from its callback parameters.
void launchDims(bool Runtime, CUpti_CallbackId Cbid, const void *Params, MetricRange &M) {
  auto Copy = [&M](const dim3 &G, const dim3 &B, size_t Smem) {
    M.Grid[0] = G.x, M.Grid[1] = G.y, M.Grid[2] = G.z;
    M.Block[0] = B.x, M.Block[1] = B.y, M.Block[2] = B.z;
    M.DynamicSmem = Smem;
  };
  if (!Runtime) {
    DriverLaunch DL;
    decodeDriverConfig(Cbid, Params, DL);
    std::copy(DL.Grid, DL.Grid + 3, M.Grid);
    std::copy(DL.Block, DL.Block + 3, M.Block);
    M.DynamicSmem = DL.DynamicSmem;
    return;
  }
  switch (Cbid) {
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060: {
    const cudaLaunchConfig_t *C = static_cast<const cudaLaunchKernelExC_v11060_params *>(Params)->config;
    if (C)
      Copy(C->gridDim, C->blockDim, C->dynamicSmemBytes);
    return;
  }
#if CUPTI_API_VERSION >= 130000
  case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000:
  case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000: {
    auto *P = static_cast<const CudaLaunchKernelV13Params *>(Params);
    Copy(P->gridDim, P->blockDim, P->sharedMem);
    return;
  }
#endif
  default: { // cudaLaunchKernel and cudaLaunchCooperativeKernel (one layout, decodeRuntimeLaunch)
    auto *P = static_cast<const cudaLaunchKernel_v7000_params *>(Params);
    Copy(P->gridDim, P->blockDim, P->sharedMem);
    return;
  }
  }
}

/// Whether the launch of \p M is one to profile: a target (every kernel without KLOOP_CUPTI_TARGETS),
/// within KLOOP_CUPTI_METRICS_LAUNCHES of its kernel and launch configuration. Counts it. Caller holds
/// G->MetricsMu.
bool wantMetrics(const MetricRange &M) {
  if (!G->Cfg.Targets.empty() && !matchesTarget(G->Cfg.Targets, M.Demangled))
    return false;
  uint64_t &N = G->MetricLaunches[{M.Mangled, M.Grid[0], M.Grid[1], M.Grid[2], M.Block[0], M.Block[1], M.Block[2],
                                   M.DynamicSmem}];
  if (N >= G->Cfg.MetricsLaunches)
    return false;
  ++N;
  return true;
}

/// The ENTER callback of an outermost launch call: starts a range when the launch is to be profiled.
/// The start is the last thing before the launch; the range ends in metricsExit.
void metricsEnter(bool Runtime, CUpti_CallbackId Cbid, const CUpti_CallbackData *D, const LaunchView &L) {
  TlMetric.reset();
  auto M = std::make_unique<MetricRange>();
  const char *Name = L.Name;
  if (!Name && !(L.Kernel && cuKernelGetName(&Name, L.Kernel) == CUDA_SUCCESS) &&
      !(L.Func && cuFuncGetName(&Name, L.Func) == CUDA_SUCCESS))
    Name = nullptr;
  M->Mangled = Name ? Name : "<unknown kernel>";
  M->Demangled = demangle(M->Mangled);
  M->Seq = TlLastSeq;
  M->Correlation = D->correlationId;
  launchDims(Runtime, Cbid, D->functionParams, *M);
  std::lock_guard<std::mutex> Lock(G->MetricsMu);
  if (!wantMetrics(*M))
    return;
  if (G->Profiler && G->Profiler->busy()) {
    ++G->MetricsSkipped; // another thread's launch is being profiled: one range at a time
    return;
  }
  fillFunctionAttributes(*M, L);
  CUcontext Ctx = nullptr;
  if (cuCtxGetCurrent(&Ctx) != CUDA_SUCCESS || !Ctx) {
    M->Error = "no current CUDA context at the launch call";
    G->Ranges.push_back(std::move(*M));
    return;
  }
  if (!G->LimitsKnown) {
    CUdevice Dev = 0;
    if (cuCtxGetDevice(&Dev) == CUDA_SUCCESS) {
      G->Limits = queryDeviceLimits(Dev);
      G->LimitsKnown = true;
    }
  }
  if (!G->Profiler)
    G->Profiler = std::make_unique<RangeProfiler>(G->Cfg.MetricsMaxRanges);
  std::string Err;
  if (!G->Profiler->begin(Ctx, Err)) {
    if (!G->Profiler->broken()) { // a setup failure is reported once, as "metrics.error"
      M->Error = Err;
      G->Ranges.push_back(std::move(*M));
    }
    return;
  }
  TlMetricStartNs = nowNs();
  TlMetric = std::move(M);
}

/// A driver launch inside a profiled runtime launch: it names the function when the runtime call did not.
void metricsFromDriver(const LaunchView &L) {
  if (TlMetric)
    fillFunctionAttributes(*TlMetric, L);
}

/// The EXIT callback of an outermost launch call: ends the range begun in metricsEnter and keeps its values.
void metricsExit(const CUpti_CallbackData *D, bool Succeeded) {
  if (!TlMetric || TlMetric->Correlation != D->correlationId)
    return;
  std::unique_ptr<MetricRange> M = std::move(TlMetric);
  M->WallNs = nowNs() - TlMetricStartNs;
  std::lock_guard<std::mutex> Lock(G->MetricsMu);
  std::string Err;
  if (!G->Profiler->end(M->Values, Err)) {
    M->Error = Err;
    M->Values.clear();
  } else if (!Succeeded) {
    M->Error = "the launch call failed";
  }
  G->Ranges.push_back(std::move(*M));
}

void handleApiCallback(CUpti_CallbackDomain Domain, CUpti_CallbackId Cbid, const CUpti_CallbackData *D) {
  bool Enter = D->callbackSite == CUPTI_API_ENTER;
  bool Runtime = Domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  LaunchView L;
  LaunchKind Kind = Runtime ? decodeRuntimeLaunch(Cbid, D, L) : decodeDriverLaunch(Cbid, D, L);
  if (Kind == LaunchKind::None) {
    if (!Enter && D->functionReturnValue && *static_cast<const int *>(D->functionReturnValue) == 0) {
      if (Runtime)
        onRuntimeAlloc(Cbid, D->functionParams);
      else
        onDriverAlloc(Cbid, D->functionParams);
    }
    return;
  }
  // A runtime launch that reaches the driver's launch entry point must be counted once: driver-domain
  // launches inside a runtime launch are ignored.
  if (Runtime) {
    if (Enter)
      ++TlRuntimeLaunchDepth;
    else if (TlRuntimeLaunchDepth > 0)
      --TlRuntimeLaunchDepth;
  } else if (TlRuntimeLaunchDepth > 0) {
    if (Enter && Kind == LaunchKind::Kernel && G->Cfg.Metrics)
      metricsFromDriver(L);
    if (Enter && Kind == LaunchKind::Kernel)
      resolveFromDriverLaunch(L);
    if (Kind == LaunchKind::Kernel)
      captureDriverLaunch(Cbid, D, L, Enter);
    return;
  }
  if (Enter) {
    onLaunchEnter(D, L, Kind == LaunchKind::CountOnly);
    if (Kind == LaunchKind::Kernel && G->Cfg.Metrics)
      metricsEnter(Runtime, Cbid, D, L); // last: the range holds the launch and nothing before it
  } else if (Kind == LaunchKind::Kernel) {
    bool Ok = D->functionReturnValue && *static_cast<const int *>(D->functionReturnValue) == 0;
    if (G->Cfg.Metrics)
      metricsExit(D, Ok);
    onLaunchExit(D, Ok);
  }
  if (Kind == LaunchKind::Kernel)
    (Runtime ? noteRuntimeLaunchForCapture : captureDriverLaunch)(Cbid, D, L, Enter);
}

/// Config::PlacementPadBytes of device memory in \p Ctx, never freed (the context's end frees it). A failed
/// allocation is an error of the profile; the program runs on, unshifted.
void allocatePlacementPad(CUcontext Ctx) {
  uint64_t Bytes = G->Cfg.PlacementPadBytes;
  if (!Bytes)
    return;
  CUresult R = cuCtxPushCurrent(Ctx);
  if (R == CUDA_SUCCESS) {
    CUdeviceptr Pad = 0;
    R = cuMemAlloc(&Pad, Bytes);
    CUcontext Popped = nullptr;
    cuCtxPopCurrent(&Popped);
  }
  if (R == CUDA_SUCCESS)
    G->PlacementPadBytes = Bytes;
  else
    addError("cuMemAlloc of the " + std::to_string(Bytes) + "-byte placement pad (KLOOP_CUPTI_PLACEMENT_PAD) failed: " +
             cuErrorText(R) + "; the program's allocations are not shifted");
}

void CUPTIAPI onCallback(void *, CUpti_CallbackDomain Domain, CUpti_CallbackId Cbid, const void *Data) {
  if (!G || TlInCallback || G->Finished.load(std::memory_order_relaxed))
    return;
  ++TlInCallback;
  uint64_t T0 = nowNs();
  try {
    if (Domain == CUPTI_CB_DOMAIN_RUNTIME_API || Domain == CUPTI_CB_DOMAIN_DRIVER_API) {
      handleApiCallback(Domain, Cbid, static_cast<const CUpti_CallbackData *>(Data));
    } else if (Domain == CUPTI_CB_DOMAIN_RESOURCE) {
      auto *R = static_cast<const CUpti_ResourceData *>(Data);
      if (Cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
        bool First = false;
        {
          std::lock_guard<std::mutex> Lock(G->DeviceMu);
          if (!G->EnvThreadStarted) {
            G->EnvThreadStarted = First = true;
            CUcontext Ctx = R->context;
            G->EnvThread = std::thread([Ctx] { describeDeviceAndSample(Ctx); });
          }
        }
        if (First)
          allocatePlacementPad(R->context);
      } else if (Cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
        // Records of a context still in CUPTI's buffers are delivered before the context goes away.
        if (!G->Cfg.Metrics)
          cuptiActivityFlushAll(0);
      }
    }
  } catch (...) {
    try {
      addError("internal error in a CUPTI callback (cbid " + std::to_string(Cbid) + ")");
    } catch (...) {
    }
  }
  G->NsInCallbacks += nowNs() - T0;
  ++G->Callbacks;
  --TlInCallback;
}

// ---- Activity buffers ------------------------------------------------------------------------------

void CUPTIAPI bufferRequested(uint8_t **Buffer, size_t *Size, size_t *MaxNumRecords) {
  *Buffer = static_cast<uint8_t *>(std::aligned_alloc(8, ActivityBufferBytes));
  *Size = *Buffer ? ActivityBufferBytes : 0;
  *MaxNumRecords = 0;
}

void CUPTIAPI bufferCompleted(CUcontext Ctx, uint32_t StreamId, uint8_t *Buffer, size_t Size, size_t ValidSize) {
  uint64_t T0 = nowNs();
  try {
    std::vector<KernelRecord> Got;
    CUpti_Activity *Record = nullptr;
    while (ValidSize > 0) {
      CUptiResult R = cuptiActivityGetNextRecord(Buffer, ValidSize, &Record);
      if (R == CUPTI_ERROR_MAX_LIMIT_REACHED)
        break;
      if (R != CUPTI_SUCCESS) {
        addError("cuptiActivityGetNextRecord failed: " + cuptiErrorText(R));
        break;
      }
      if (Record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && Record->kind != CUPTI_ACTIVITY_KIND_KERNEL)
        continue;
      auto *K = reinterpret_cast<const CUpti_ActivityKernel10 *>(Record);
      KernelRecord KR;
      KR.Correlation = K->correlationId;
      KR.Mangled = K->name ? K->name : "<unknown kernel>";
      KR.Grid[0] = K->gridX;
      KR.Grid[1] = K->gridY;
      KR.Grid[2] = K->gridZ;
      KR.Block[0] = K->blockX;
      KR.Block[1] = K->blockY;
      KR.Block[2] = K->blockZ;
      KR.Registers = K->registersPerThread;
      KR.StaticSmem = K->staticSharedMemory;
      KR.DynamicSmem = K->dynamicSharedMemory;
      KR.Stream = K->streamId;
      KR.Context = K->contextId;
      KR.Device = K->deviceId;
      KR.Start = K->start;
      KR.End = K->end;
      KR.GraphId = K->graphId;
      KR.GraphNodeId = K->graphNodeId;
      Got.push_back(std::move(KR));
    }
    size_t Dropped = 0;
    if (Ctx && cuptiActivityGetNumDroppedRecords(Ctx, StreamId, &Dropped) != CUPTI_SUCCESS)
      Dropped = 0;
    std::lock_guard<std::mutex> Lock(G->Mu);
    for (KernelRecord &KR : Got)
      G->Records.push_back(std::move(KR));
    G->DroppedRecords += Dropped;
  } catch (...) {
    try {
      addError("internal error while reading CUPTI activity records");
    } catch (...) {
    }
  }
  std::free(Buffer);
  G->NsInBufferCallbacks += nowNs() - T0;
}

// ---- Output ------------------------------------------------------------------------------------------

nlohmann::ordered_json messages(const std::vector<std::pair<std::string, uint64_t>> &List) {
  nlohmann::ordered_json A = nlohmann::ordered_json::array();
  for (const auto &Entry : List)
    A.push_back(Entry.second > 1 ? Entry.first + " (" + std::to_string(Entry.second) + " times)" : Entry.first);
  return A;
}

/// The "metrics" member (KLOOP_CUPTI_METRICS; docs/cupti.md).
nlohmann::ordered_json metricsJSON() {
  using nlohmann::ordered_json;
  std::lock_guard<std::mutex> Lock(G->MetricsMu);
  ordered_json M;
  M["mode"] = "range_profiler/kernel_replay/auto_range";
  M["chip"] = G->Profiler && !G->Profiler->chip().empty() ? ordered_json(G->Profiler->chip()) : ordered_json(nullptr);
  M["passes"] = G->Profiler ? G->Profiler->passes() : 0;
  M["error"] = G->Profiler && G->Profiler->broken() ? ordered_json(G->Profiler->setupError())
               : G->Profiler                          ? ordered_json(nullptr)
                                                      : ordered_json("no launch was profiled");
  ordered_json Names = ordered_json::array();
  for (size_t I = 0; I < KernelMetricCount; ++I)
    Names.push_back(KernelMetricNames[I]);
  M["metric_names"] = Names;
  M["unsupported"] = G->Profiler ? G->Profiler->unsupported() : std::vector<std::string>();
  M["dropped_ranges"] = G->Profiler ? G->Profiler->droppedRanges() : 0;
  M["skipped_busy"] = G->MetricsSkipped;
  M["launches_per_config"] = G->Cfg.MetricsLaunches;
  const DeviceLimits &L = G->Limits;
  M["device_limits"] = G->LimitsKnown ? ordered_json{{"sm_count", L.SmCount},
                                                     {"warp_size", L.WarpSize},
                                                     {"max_threads_per_sm", L.MaxThreadsPerSm},
                                                     {"max_blocks_per_sm", L.MaxBlocksPerSm},
                                                     {"regs_per_sm", L.RegsPerSm},
                                                     {"regs_per_block", L.RegsPerBlock},
                                                     {"smem_per_sm", L.SmemPerSm},
                                                     {"smem_per_block_optin", L.SmemPerBlockOptin},
                                                     {"reserved_smem_per_block", L.ReservedSmemPerBlock},
                                                     {"cc_major", L.CcMajor},
                                                     {"cc_minor", L.CcMinor}}
                                      : ordered_json(nullptr);
  ordered_json Ranges = ordered_json::array();
  for (const MetricRange &R : G->Ranges) {
    ordered_json Values = ordered_json::object();
    for (size_t I = 0; I < R.Values.size() && I < KernelMetricCount; ++I)
      Values[KernelMetricNames[I]] = std::isnan(R.Values[I]) ? ordered_json(nullptr) : ordered_json(R.Values[I]);
    Ranges.push_back({{"seq", R.Seq},
                      {"kernel", R.Mangled},
                      {"name", R.Demangled},
                      {"grid", {R.Grid[0], R.Grid[1], R.Grid[2]}},
                      {"block", {R.Block[0], R.Block[1], R.Block[2]}},
                      {"dynamic_smem", R.DynamicSmem},
                      {"registers", R.Registers},
                      {"static_smem", R.StaticSmem},
                      {"driver_blocks_per_sm", R.DriverBlocksPerSm},
                      {"wall_ns", R.WallNs},
                      {"values", Values},
                      {"error", R.Error.empty() ? ordered_json(nullptr) : ordered_json(R.Error)}});
  }
  M["ranges"] = Ranges;
  return M;
}

void writeOutput() {
  using nlohmann::ordered_json;
  ordered_json J;
  J["schema"] = "kloop-cupti/1";
  {
    std::lock_guard<std::mutex> Lock(G->DeviceMu);
    if (G->DeviceKnown)
      J["device"] = {{"name", G->DeviceName},
                     {"cc", std::to_string(G->CcMajor) + "." + std::to_string(G->CcMinor)},
                     {"l2_bytes", G->L2Bytes},
                     {"pci_bus_id", G->PciBusId}};
    else
      J["device"] = nullptr;
  }
  std::lock_guard<std::mutex> Lock(G->Mu);
  // Launches in launch order; kernels of one graph launch share its seq; records whose launch was not
  // seen (seq -1) go last, in start order.
  std::vector<std::pair<int64_t, const KernelRecord *>> Ordered;
  Ordered.reserve(G->Records.size());
  for (const KernelRecord &R : G->Records) {
    auto It = G->CorrelationToSeq.find(R.Correlation);
    Ordered.emplace_back(It == G->CorrelationToSeq.end() ? -1 : static_cast<int64_t>(It->second), &R);
  }
  std::stable_sort(Ordered.begin(), Ordered.end(), [](const auto &A, const auto &B) {
    uint64_t SA = static_cast<uint64_t>(A.first), SB = static_cast<uint64_t>(B.first); // -1 sorts last
    if (SA != SB)
      return SA < SB;
    return A.second->Start < B.second->Start;
  });
  ordered_json Launches = ordered_json::array();
  std::unordered_map<std::string, std::string> Demangled;
  for (const auto &[Seq, R] : Ordered) {
    auto D = Demangled.find(R->Mangled);
    if (D == Demangled.end())
      D = Demangled.emplace(R->Mangled, demangle(R->Mangled)).first;
    ordered_json L;
    L["seq"] = Seq;
    L["kernel"] = R->Mangled;
    L["name"] = D->second;
    L["grid"] = {R->Grid[0], R->Grid[1], R->Grid[2]};
    L["block"] = {R->Block[0], R->Block[1], R->Block[2]};
    L["registers"] = R->Registers;
    L["static_smem"] = R->StaticSmem;
    L["dynamic_smem"] = R->DynamicSmem;
    L["stream"] = R->Stream;
    L["stream_kind"] = streamKindName(Seq >= 0 && static_cast<size_t>(Seq) < G->SeqStreamKind.size()
                                          ? G->SeqStreamKind[static_cast<size_t>(Seq)]
                                          : static_cast<uint8_t>(StreamUnknown));
    L["context"] = R->Context;
    L["device"] = R->Device;
    L["start_ns"] = R->Start;
    L["end_ns"] = R->End;
    L["duration_ns"] = R->End >= R->Start ? R->End - R->Start : 0;
    L["correlation"] = R->Correlation;
    if (R->GraphId != 0) {
      L["graph_id"] = R->GraphId;
      L["graph_node_id"] = R->GraphNodeId;
    }
    Launches.push_back(std::move(L));
  }
  J["launches"] = std::move(Launches);

  ordered_json Samples = ordered_json::array();
  for (const EnvSample &S : G->Sampler.samples())
    Samples.push_back({{"t_ns", S.TimeNs},
                       {"sm_clock_mhz", S.SmClockMHz},
                       {"mem_clock_mhz", S.MemClockMHz},
                       {"temp_c", S.TempC},
                       {"power_mw", S.PowerMw},
                       {"throttle_reasons", S.ThrottleReasons},
                       {"gpu_util_pct", S.GpuUtilPct},
                       {"mem_util_pct", S.MemUtilPct},
                       {"compute_processes", S.ComputeProcesses},
                       {"foreign_processes", S.ForeignProcesses},
                       {"foreign_pids", S.ForeignPids}});
  bool Nvml = !Samples.empty();
  J["env_samples"] = std::move(Samples);
  J["nvml"] = Nvml;
  {
    std::lock_guard<std::mutex> DLock(G->DeviceMu);
    if (!G->NvmlError.empty())
      J["nvml_error"] = G->NvmlError;
    else if (!Nvml)
      J["nvml_error"] = G->EnvThreadStarted ? "no NVML sample taken" : "no CUDA context was created";
  }

  std::vector<const CaptureRecord *> Caps;
  for (const CaptureRecord &C : G->Captures)
    Caps.push_back(&C);
  std::stable_sort(Caps.begin(), Caps.end(), [](const CaptureRecord *A, const CaptureRecord *B) {
    return A->Seq != B->Seq ? A->Seq < B->Seq : A->Arg < B->Arg;
  });
  ordered_json Captures = ordered_json::array();
  for (const CaptureRecord *C : Caps) {
    ordered_json E;
    E["seq"] = C->Seq;
    E["kernel"] = C->Mangled;
    E["name"] = C->Demangled;
    E["kernel_ordinal"] = C->Ordinal;
    E["arg"] = C->Arg;
    E["ptr"] = hexPointer(C->Ptr);
    E["bytes"] = C->Bytes;
    E["hash"] = hex16(C->Hash);
    E["dump"] = C->Dump.empty() ? ordered_json(nullptr) : ordered_json(C->Dump);
    E["poisoned"] = C->Poisoned;
    E["allocation_bytes"] = C->AllocationBytes;
    E["tracked"] = C->Tracked;
    Captures.push_back(std::move(E));
  }
  J["captures"] = std::move(Captures);

  const Config &Cfg = G->Cfg;
  J["capture_config"] = {{"targets", Cfg.Targets},
                         {"poison", Cfg.PoisonByte ? ordered_json(Cfg.PoisonText) : ordered_json(nullptr)},
                         {"poison_args", Cfg.PoisonArgsText},
                         {"dump", Cfg.Dump},
                         {"dump_args", Cfg.DumpArgsText},
                         {"sample_us", Cfg.SampleUs}};
  J["kernel_trace"] = Cfg.SerialKernelTrace ? "serial" : "concurrent";
  J["placement_pad_bytes"] = G->PlacementPadBytes.load();
  ProcessQueryCost Queries = G->Sampler.processQueryCost();
  J["overhead"] = {{"wall_ns_in_callbacks", G->NsInCallbacks.load()},
                   {"callbacks", G->Callbacks.load()},
                   {"capture_ns", G->NsCapturing.load()},
                   {"activity_buffer_ns", G->NsInBufferCallbacks.load()},
                   {"nvml_process_queries", Queries.Queries},
                   {"nvml_process_query_ns", Queries.TotalNs},
                   {"nvml_process_query_max_ns", Queries.MaxNs}};
  J["dropped_records"] = G->DroppedRecords;
  {
    std::lock_guard<std::mutex> FLock(G->FlushMu);
    J["l2_flush"] = {{"enabled", Cfg.L2Flush},
                     {"flushes", G->Flushes.load()},
                     {"skipped", G->FlushesSkipped.load()},
                     {"bytes", G->FlushBytes}};
  }
  // Device memory the program allocated through the tracked calls and had not freed at exit: what the
  // leak check of `kloop compare` compares between baseline and candidate.
  J["memory"] = {{"live_allocations", G->Allocs.size()},
                 {"live_bytes", G->Allocs.bytes()},
                 {"peak_bytes", G->Allocs.peakBytes()}};
  if (Cfg.Metrics)
    J["metrics"] = metricsJSON();
  std::vector<std::pair<std::string, uint64_t>> Errors = G->Errors;
  for (const std::string &E : G->Sampler.errors())
    addMessage(Errors, E);
  J["errors"] = messages(Errors);
  J["warnings"] = messages(G->Warnings);

  std::string Tmp = Cfg.OutPath + ".tmp." + std::to_string(getpid());
  {
    std::ofstream Out(Tmp, std::ios::binary | std::ios::trunc);
    if (!Out)
      return; // Nowhere to report: the missing file is the report.
    Out << J.dump(1) << '\n';
    if (!Out.good()) {
      Out.close();
      std::remove(Tmp.c_str());
      return;
    }
  }
  if (std::rename(Tmp.c_str(), Cfg.OutPath.c_str()) != 0)
    std::remove(Tmp.c_str());
}

void onExit() {
  if (!G || G->Finished.exchange(true) || static_cast<long>(getpid()) != G->Pid)
    return;
  try {
    if (G->Subscriber)
      cuptiUnsubscribe(G->Subscriber);
    if (!G->Cfg.Metrics) { // a metrics run records no activity
      CUptiResult R = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
      if (R != CUPTI_SUCCESS)
        addError("cuptiActivityFlushAll failed: " + cuptiErrorText(R));
    }
    {
      std::unique_lock<std::mutex> Lock(G->DeviceMu);
      bool Join = G->EnvThreadStarted && G->EnvThread.joinable();
      Lock.unlock();
      if (Join)
        G->EnvThread.join();
    }
    G->Sampler.stop();
    if (G->Capturer)
      G->Capturer->finish();
    writeOutput();
  } catch (...) {
  }
}

bool enableCallback(CUpti_CallbackDomain Domain, CUpti_CallbackId Cbid, std::vector<std::string> &Errors) {
  CUptiResult R = cuptiEnableCallback(1, G->Subscriber, Domain, Cbid);
  if (R != CUPTI_SUCCESS) {
    Errors.push_back("cuptiEnableCallback(domain " + std::to_string(Domain) + ", cbid " + std::to_string(Cbid) +
                     ") failed: " + cuptiErrorText(R));
    return false;
  }
  return true;
}

} // namespace

/// The CUDA injection entry point: the driver calls it once, from cuInit, when CUDA_INJECTION64_PATH names
/// this library. Returns 1 (success) in every case: a profiler that fails must not stop the program.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static std::atomic<bool> Initialized{false};
  if (Initialized.exchange(true))
    return 1;
  try {
    G = new State;
    G->Pid = static_cast<long>(getpid());
    std::vector<std::string> Errors;
    G->Cfg = readConfig(Errors);
    std::optional<CaptureSettings> Capture = readCaptureSettings(Errors);
    if (Capture && G->Cfg.OutPath.empty())
      G->Cfg.OutPath = Capture->Dir + "/profile.json";
    if (G->Cfg.OutPath.empty())
      return 1; // No output requested: stay passive (no callbacks, no activity).
    if (Capture)
      G->Capturer = std::make_unique<LaunchCapturer>(std::move(*Capture));
    G->Enabled = true;
    for (const std::string &E : Errors)
      addMessage(G->Errors, E);
    Errors.clear();

    CUptiResult R = cuptiSubscribe(&G->Subscriber, onCallback, nullptr);
    if (R != CUPTI_SUCCESS) {
      G->Subscriber = nullptr;
      Errors.push_back("cuptiSubscribe failed: " + cuptiErrorText(R) +
                       " (CUPTI allows one subscriber per process: is another profiler attached?); no launch numbering, captures or device description");
    } else {
      const CUpti_CallbackId Runtime[] = {
          CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
          CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
          CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
          CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
          CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
          CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
#if CUPTI_API_VERSION >= 130000
          CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
          CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
#endif
          CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
          CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
          CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
          CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020,
          CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000,
          CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020,
          CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020,
          CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_v11020,
          CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020,
          CUPTI_RUNTIME_TRACE_CBID_cudaMalloc3D_v3020,
          CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020,
          CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020,
          CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_ptsz_v11020,
      };
      const CUpti_CallbackId Driver[] = {
          CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
          CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
          CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
          CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
          CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
          CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
          CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
          CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
          CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2,
          CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2,
          CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged,
          CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync,
          CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz,
          CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync,
          CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz,
          CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2,
          CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync,
          CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz,
      };
      for (CUpti_CallbackId Id : Runtime)
        enableCallback(CUPTI_CB_DOMAIN_RUNTIME_API, Id, Errors);
      for (CUpti_CallbackId Id : Driver)
        enableCallback(CUPTI_CB_DOMAIN_DRIVER_API, Id, Errors);
      enableCallback(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, Errors);
      enableCallback(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, Errors);
    }
    // A metrics run times nothing (docs/cupti.md): no kernel activity next to CUPTI's kernel replay.
    if (!G->Cfg.Metrics) {
      R = cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted);
      const char *Kind = G->Cfg.SerialKernelTrace ? "KERNEL" : "CONCURRENT_KERNEL";
      if (R != CUPTI_SUCCESS)
        Errors.push_back("cuptiActivityRegisterCallbacks failed: " + cuptiErrorText(R));
      else if ((R = cuptiActivityEnable(G->Cfg.SerialKernelTrace ? CUPTI_ACTIVITY_KIND_KERNEL
                                                                 : CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) != CUPTI_SUCCESS)
        Errors.push_back(std::string("cuptiActivityEnable(") + Kind + ") failed: " + cuptiErrorText(R));
    }
    {
      std::lock_guard<std::mutex> Lock(G->Mu);
      for (const std::string &E : Errors)
        addMessage(G->Errors, E);
    }
    std::atexit(onExit);
  } catch (...) {
  }
  return 1;
}
