//===- RangeProfilerTest.cpp - The metric list against CUPTI's host metric tables -===//
//
// The profiler host API (cupti_profiler_host.h) answers for a chip by name, without a GPU: every metric
// libkloop-cupti.so asks for must exist for GH100 (H100/H200), and the list must build one config image.
//
//===----------------------------------------------------------------------===//
#include "RangeProfiler.h"

#include <cupti_profiler_host.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace kloop::cupti;

namespace {

class HostObject : public ::testing::Test {
protected:
  void SetUp() override {
    auto Init = cuptiParams<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    Init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    Init.pChipName = "GH100";
    CUptiResult R = cuptiProfilerHostInitialize(&Init);
    ASSERT_EQ(R, CUPTI_SUCCESS) << cuptiFailure("cuptiProfilerHostInitialize", R);
    Host = Init.pHostObject;
  }
  void TearDown() override {
    auto Deinit = cuptiParams<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
    Deinit.pHostObject = Host;
    cuptiProfilerHostDeinitialize(&Deinit);
  }
  CUpti_Profiler_Host_Object *Host = nullptr;
};

TEST_F(HostObject, EveryMetricExistsOnGH100) {
  ASSERT_GT(KernelMetricCount, 20u);
  for (size_t I = 0; I < KernelMetricCount; ++I) {
    auto P = cuptiParams<CUpti_Profiler_Host_GetMetricProperties_Params>(
        CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE);
    P.pHostObject = Host;
    P.pMetricName = KernelMetricNames[I];
    CUptiResult R = cuptiProfilerHostGetMetricProperties(&P);
    EXPECT_EQ(R, CUPTI_SUCCESS) << KernelMetricNames[I] << ": " << cuptiFailure("GetMetricProperties", R);
  }
}

TEST_F(HostObject, AMisspelledMetricIsRefused) {
  auto P = cuptiParams<CUpti_Profiler_Host_GetMetricProperties_Params>(
      CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE);
  P.pHostObject = Host;
  P.pMetricName = "dram__bytes_reed.sum";
  EXPECT_NE(cuptiProfilerHostGetMetricProperties(&P), CUPTI_SUCCESS);
}

TEST_F(HostObject, TheListBuildsOneConfigImageOfAFewPasses) {
  std::vector<const char *> Names(KernelMetricNames, KernelMetricNames + KernelMetricCount);
  auto Add = cuptiParams<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  Add.pHostObject = Host;
  Add.ppMetricNames = Names.data();
  Add.numMetrics = Names.size();
  ASSERT_EQ(cuptiProfilerHostConfigAddMetrics(&Add), CUPTI_SUCCESS);
  auto Size = cuptiParams<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  Size.pHostObject = Host;
  ASSERT_EQ(cuptiProfilerHostGetConfigImageSize(&Size), CUPTI_SUCCESS);
  std::vector<uint8_t> Image(Size.configImageSize);
  auto Get = cuptiParams<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  Get.pHostObject = Host;
  Get.configImageSize = Image.size();
  Get.pConfigImage = Image.data();
  ASSERT_EQ(cuptiProfilerHostGetConfigImage(&Get), CUPTI_SUCCESS);
  auto Passes = cuptiParams<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  Passes.configImageSize = Image.size();
  Passes.pConfigImage = Image.data();
  ASSERT_EQ(cuptiProfilerHostGetNumOfPasses(&Passes), CUPTI_SUCCESS);
  EXPECT_GE(Passes.numOfPasses, 1u);
  EXPECT_LE(Passes.numOfPasses, 12u); // kernel replay runs each profiled launch once per pass
}

TEST(CuptiFailure, NamesTheCallAndTheResult) {
  std::string S = cuptiFailure("cuptiRangeProfilerEnable", CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
  EXPECT_NE(S.find("cuptiRangeProfilerEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"), std::string::npos) << S;
}

} // namespace
