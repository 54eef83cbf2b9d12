//===- RangeProfiler.cpp - Hardware counters per kernel launch ------------------===//
#include "RangeProfiler.h"

#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace kloop {
namespace cupti {

namespace {

/// Calls \p Fn(&P); on failure appends the call's name and result to \p Err. True on success.
template <typename Fn, typename T> bool call(const char *Name, Fn F, T &P, std::string &Err) {
  CUptiResult R = F(&P);
  if (R == CUPTI_SUCCESS)
    return true;
  Err += (Err.empty() ? "" : "; ") + cuptiFailure(Name, R);
  return false;
}

int attribute(CUdevice Dev, CUdevice_attribute A) {
  int V = -1;
  if (cuDeviceGetAttribute(&V, A, Dev) != CUDA_SUCCESS)
    return -1;
  return V;
}

} // namespace

DeviceLimits queryDeviceLimits(CUdevice Dev) {
  DeviceLimits L;
  L.SmCount = attribute(Dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  L.WarpSize = attribute(Dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  L.MaxThreadsPerSm = attribute(Dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  L.MaxBlocksPerSm = attribute(Dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  L.RegsPerSm = attribute(Dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  L.RegsPerBlock = attribute(Dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  L.SmemPerSm = attribute(Dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  L.SmemPerBlockOptin = attribute(Dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  L.ReservedSmemPerBlock = attribute(Dev, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK);
  L.CcMajor = attribute(Dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  L.CcMinor = attribute(Dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  return L;
}

bool RangeProfiler::setup(CUcontext C, std::string &Err) {
  Ctx = C;
  auto Init = cuptiParams<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
  if (!call("cuptiProfilerInitialize", cuptiProfilerInitialize, Init, Err))
    return false;

  CUdevice Dev = 0;
  if (CUresult R = cuCtxGetDevice(&Dev); R != CUDA_SUCCESS) {
    Err = "cuCtxGetDevice failed (CUresult " + std::to_string(static_cast<int>(R)) + ")";
    return false;
  }
  auto Support = cuptiParams<CUpti_Profiler_DeviceSupported_Params>(CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
  Support.cuDevice = Dev;
  Support.api = CUPTI_PROFILER_RANGE_PROFILING;
  // Not fatal by itself: the support query can answer "unknown" for a flag; the calls below decide, and
  // their error carries what the query said.
  if (call("cuptiProfilerDeviceSupported", cuptiProfilerDeviceSupported, Support, Err) &&
      Support.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
    auto Level = [](CUpti_Profiler_Support_Level L) {
      return L == CUPTI_PROFILER_CONFIGURATION_SUPPORTED  ? "supported"
             : L == CUPTI_PROFILER_CONFIGURATION_DISABLED ? "disabled"
             : L == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED ? "unsupported"
                                                              : "unknown";
    };
    SupportNote = std::string("; cuptiProfilerDeviceSupported says range profiling is not supported (architecture ") +
                  Level(Support.architecture) + ", sli " + Level(Support.sli) + ", vGPU " + Level(Support.vGpu) +
                  ", confidential compute " + Level(Support.confidentialCompute) + ", cmp " + Level(Support.cmp) +
                  ", wsl " + Level(Support.wsl) + ")";
  }
  Err.clear(); // a failing support query is not fatal: the calls below say more

  auto Name = cuptiParams<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  Name.deviceIndex = static_cast<size_t>(Dev);
  if (!call("cuptiDeviceGetChipName", cuptiDeviceGetChipName, Name, Err))
    return false;
  Chip = Name.pChipName ? Name.pChipName : "";

  auto Enable = cuptiParams<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  Enable.ctx = Ctx;
  if (!call("cuptiRangeProfilerEnable", cuptiRangeProfilerEnable, Enable, Err))
    return false;
  Object = Enable.pRangeProfilerObject;

  auto Avail =
      cuptiParams<CUpti_Profiler_GetCounterAvailability_Params>(CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  Avail.ctx = Ctx;
  if (!call("cuptiProfilerGetCounterAvailability (size)", cuptiProfilerGetCounterAvailability, Avail, Err))
    return false;
  Availability.assign(Avail.counterAvailabilityImageSize, 0);
  Avail.pCounterAvailabilityImage = Availability.data();
  if (!call("cuptiProfilerGetCounterAvailability", cuptiProfilerGetCounterAvailability, Avail, Err))
    return false;

  auto HostInit = cuptiParams<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  HostInit.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  HostInit.pChipName = Chip.c_str();
  HostInit.pCounterAvailabilityImage = Availability.data();
  if (!call("cuptiProfilerHostInitialize", cuptiProfilerHostInitialize, HostInit, Err))
    return false;
  Host = HostInit.pHostObject;

  // Keep only the metrics this chip has; the others are reported, not fatal.
  for (size_t I = 0; I < KernelMetricCount; ++I) {
    auto Props = cuptiParams<CUpti_Profiler_Host_GetMetricProperties_Params>(
        CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE);
    Props.pHostObject = Host;
    Props.pMetricName = KernelMetricNames[I];
    if (cuptiProfilerHostGetMetricProperties(&Props) == CUPTI_SUCCESS) {
      Collected.push_back(KernelMetricNames[I]);
      CollectedIndex.push_back(I);
    } else {
      Unsupported.push_back(KernelMetricNames[I]);
    }
  }
  if (Collected.empty()) {
    Err = "no metric of the list exists on chip " + Chip;
    return false;
  }
  auto Add = cuptiParams<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  Add.pHostObject = Host;
  Add.ppMetricNames = Collected.data();
  Add.numMetrics = Collected.size();
  if (!call("cuptiProfilerHostConfigAddMetrics", cuptiProfilerHostConfigAddMetrics, Add, Err))
    return false;
  auto ImageSize =
      cuptiParams<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  ImageSize.pHostObject = Host;
  if (!call("cuptiProfilerHostGetConfigImageSize", cuptiProfilerHostGetConfigImageSize, ImageSize, Err))
    return false;
  Config.assign(ImageSize.configImageSize, 0);
  auto Image = cuptiParams<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  Image.pHostObject = Host;
  Image.configImageSize = Config.size();
  Image.pConfigImage = Config.data();
  if (!call("cuptiProfilerHostGetConfigImage", cuptiProfilerHostGetConfigImage, Image, Err))
    return false;
  auto NumPasses =
      cuptiParams<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  NumPasses.configImageSize = Config.size();
  NumPasses.pConfigImage = Config.data();
  if (call("cuptiProfilerHostGetNumOfPasses", cuptiProfilerHostGetNumOfPasses, NumPasses, Err))
    Passes = NumPasses.numOfPasses;
  Err.clear(); // the pass count is informational

  auto DataSize = cuptiParams<CUpti_RangeProfiler_GetCounterDataSize_Params>(
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  DataSize.pRangeProfilerObject = Object;
  DataSize.pMetricNames = Collected.data();
  DataSize.numMetrics = Collected.size();
  DataSize.maxNumOfRanges = MaxRanges;
  DataSize.maxNumRangeTreeNodes = static_cast<uint32_t>(MaxRanges);
  if (!call("cuptiRangeProfilerGetCounterDataSize", cuptiRangeProfilerGetCounterDataSize, DataSize, Err))
    return false;
  CounterData.assign(DataSize.counterDataSize, 0);
  auto DataInit = cuptiParams<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  DataInit.pRangeProfilerObject = Object;
  DataInit.counterDataSize = CounterData.size();
  DataInit.pCounterData = CounterData.data();
  if (!call("cuptiRangeProfilerCounterDataImageInitialize", cuptiRangeProfilerCounterDataImageInitialize, DataInit,
            Err))
    return false;

  auto Set = cuptiParams<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  Set.pRangeProfilerObject = Object;
  Set.configSize = Config.size();
  Set.pConfig = Config.data();
  Set.counterDataImageSize = CounterData.size();
  Set.pCounterDataImage = CounterData.data();
  Set.range = CUPTI_AutoRange;
  Set.replayMode = CUPTI_KernelReplay;
  Set.maxRangesPerPass = MaxRanges;
  Set.numNestingLevels = 1;
  Set.minNestingLevel = 1;
  Set.passIndex = 0;
  Set.targetNestingLevel = 1;
  return call("cuptiRangeProfilerSetConfig", cuptiRangeProfilerSetConfig, Set, Err);
}

bool RangeProfiler::begin(CUcontext C, std::string &Err) {
  if (broken()) {
    Err = SetupError;
    return false;
  }
  if (!Ctx) {
    if (!setup(C, Err)) {
      SetupError = (Err.empty() ? std::string("range profiler setup failed") : Err) + SupportNote;
      Err = SetupError;
      return false;
    }
  } else if (C != Ctx) {
    Err = "launch in a second CUDA context: not profiled (only the first profiled context is)";
    return false;
  }
  if (full()) {
    Err = "the counter data image is full (" + std::to_string(MaxRanges) +
          " ranges, KLOOP_CUPTI_METRICS_MAX_RANGES): not profiled";
    return false;
  }
  auto Start = cuptiParams<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
  Start.pRangeProfilerObject = Object;
  if (!call("cuptiRangeProfilerStart", cuptiRangeProfilerStart, Start, Err))
    return false;
  Started = true;
  return true;
}

bool RangeProfiler::end(std::vector<double> &Values, std::string &Err) {
  Values.assign(KernelMetricCount, std::numeric_limits<double>::quiet_NaN());
  if (!Started) {
    Err = "range profiler end without a begin";
    return false;
  }
  Started = false;
  auto Stop = cuptiParams<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
  Stop.pRangeProfilerObject = Object;
  if (!call("cuptiRangeProfilerStop", cuptiRangeProfilerStop, Stop, Err))
    return false;
  // With CUPTI_KernelReplay every pass ran inside the launch; isAllPassSubmitted is not checked (a
  // missing pass shows as a range that does not decode, below).
  auto Decode = cuptiParams<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  Decode.pRangeProfilerObject = Object;
  if (!call("cuptiRangeProfilerDecodeData", cuptiRangeProfilerDecodeData, Decode, Err))
    return false;
  Dropped += Decode.numOfRangeDropped;
  auto Info =
      cuptiParams<CUpti_RangeProfiler_GetCounterDataInfo_Params>(CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  Info.pCounterDataImage = CounterData.data();
  Info.counterDataImageSize = CounterData.size();
  if (!call("cuptiRangeProfilerGetCounterDataInfo", cuptiRangeProfilerGetCounterDataInfo, Info, Err))
    return false;
  if (Info.numTotalRanges <= Decoded) {
    Err = "the launch produced no range (the counter data image holds " + std::to_string(Info.numTotalRanges) +
          " ranges, " + std::to_string(Decoded) + " already read; " + std::to_string(Decode.numOfRangeDropped) +
          " dropped)";
    return false;
  }
  size_t Range = Info.numTotalRanges - 1; // a launch is one range (CUPTI_AutoRange)
  Decoded = Info.numTotalRanges;
  std::vector<double> Got(Collected.size(), std::numeric_limits<double>::quiet_NaN());
  auto Eval = cuptiParams<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
      CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
  Eval.pHostObject = Host;
  Eval.pCounterDataImage = CounterData.data();
  Eval.counterDataImageSize = CounterData.size();
  Eval.rangeIndex = Range;
  Eval.ppMetricNames = Collected.data();
  Eval.numMetrics = Collected.size();
  Eval.pMetricValues = Got.data();
  if (!call("cuptiProfilerHostEvaluateToGpuValues", cuptiProfilerHostEvaluateToGpuValues, Eval, Err))
    return false;
  for (size_t I = 0; I < Collected.size(); ++I)
    Values[CollectedIndex[I]] = Got[I];
  return true;
}

} // namespace cupti
} // namespace kloop
