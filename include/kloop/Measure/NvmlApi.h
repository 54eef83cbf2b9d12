//===- kloop/Measure/NvmlApi.h - The part of NVML kloop calls ---*- C++ -*-===//
///
/// \file
/// The subset of nvml.h that kloop's GPU monitor (lib/Measure/GpuMonitor.cpp)
/// and the injection library's sampler (tools/kloop-cupti/NvmlSampler.cpp)
/// call, declared once from the NVML API reference
/// (https://docs.nvidia.com/deploy/nvml-api/): every function returns
/// nvmlReturn_t (NVML_SUCCESS == 0), nvmlDevice_t is an opaque pointer, the
/// constants and structs are the documented ones. Both load libnvidia-ml.so.1
/// with dlopen, so neither needs the NVML headers or links NVML; the function
/// pointer types below are what dlsym's results are cast to (nvmlSymbol).
/// Plain C++ (no LLVM): the injection library includes it too.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_MEASURE_NVMLAPI_H
#define KLOOP_MEASURE_NVMLAPI_H

#include <dlfcn.h>

namespace kloop {
namespace nvml {

/// nvmlReturn_t: NVML_SUCCESS or an error code (nvmlErrorString names it).
using nvmlReturn_t = int;
/// nvmlDevice_t: an opaque device handle.
using nvmlDevice_t = struct nvmlDevice_st *;

constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
/// The buffer is too small; the count argument now holds the size needed.
constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
/// nvmlProcessInfo_t::usedGpuMemory when NVML cannot tell (NVML_VALUE_NOT_AVAILABLE).
constexpr unsigned long long NVML_VALUE_NOT_AVAILABLE = ~0ULL;
constexpr int NVML_CLOCK_SM = 1;        ///< nvmlClockType_t
constexpr int NVML_CLOCK_MEM = 2;       ///< nvmlClockType_t
constexpr int NVML_TEMPERATURE_GPU = 0; ///< nvmlTemperatureSensors_t

/// nvmlProcessInfo_t (nvmlProcessInfo_v2_t), as nvmlDeviceGetComputeRunningProcesses_v3 and _v2
/// fill it; usedGpuMemory in bytes.
struct nvmlProcessInfo_t {
  unsigned pid;
  unsigned long long usedGpuMemory;
  unsigned gpuInstanceId;
  unsigned computeInstanceId;
};

/// nvmlUtilization_t: percent of the last sample period with a kernel running / memory busy.
struct nvmlUtilization_t {
  unsigned gpu;
  unsigned memory;
};

using InitFn = nvmlReturn_t (*)();                                       ///< nvmlInit_v2
using ShutdownFn = nvmlReturn_t (*)();                                   ///< nvmlShutdown
using ErrorStringFn = const char *(*)(nvmlReturn_t);                     ///< nvmlErrorString
using CountFn = nvmlReturn_t (*)(unsigned *);                            ///< nvmlDeviceGetCount_v2
using ByIndexFn = nvmlReturn_t (*)(unsigned, nvmlDevice_t *);            ///< nvmlDeviceGetHandleByIndex_v2
using ByStringFn = nvmlReturn_t (*)(const char *, nvmlDevice_t *);       ///< ...ByPciBusId_v2, ...ByUUID
using ProcessesFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned *, nvmlProcessInfo_t *); ///< ...ComputeRunningProcesses
using UtilizationFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlUtilization_t *); ///< nvmlDeviceGetUtilizationRates
using ClockFn = nvmlReturn_t (*)(nvmlDevice_t, int, unsigned *);         ///< nvmlDeviceGetClockInfo (MHz)
using TempFn = nvmlReturn_t (*)(nvmlDevice_t, int, unsigned *);          ///< nvmlDeviceGetTemperature (C)
using PowerFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned *);              ///< nvmlDeviceGetPowerUsage (mW)
using ReasonsFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned long long *);  ///< ...CurrentClocks{Event,Throttle}Reasons

/// Symbol \p Name of the library dlopen returned as \p Handle, as function pointer type T; nullptr
/// when the library lacks it.
template <typename T> T nvmlSymbol(void *Handle, const char *Name) { return reinterpret_cast<T>(::dlsym(Handle, Name)); }

} // namespace nvml
} // namespace kloop

#endif
