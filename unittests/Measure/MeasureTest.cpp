//===- MeasureTest.cpp - Samples, throttling, rates, ceilings -------------===//
#include "kloop/Measure/Measure.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"
#include <cmath>
#include <unistd.h>

using namespace kloop;
using namespace kloop::measure;
using namespace llvm;

namespace {

verify::LaunchRecord launch(uint64_t Seq, const char *Name, uint64_t Start, uint64_t Dur) {
  verify::LaunchRecord L;
  L.Seq = Seq;
  L.Kernel = std::string("_Z") + Name;
  L.Name = Name;
  L.StartNs = Start;
  L.EndNs = Start + Dur;
  L.DurationNs = Dur;
  return L;
}

WorkloadConfig config() {
  auto C = parseConfig("name: w\nbuild: {command: make}\nrun: {command: ./x}\ntargets: [saxpy]\n", "w.yaml");
  EXPECT_TRUE(bool(C));
  return C ? *C : WorkloadConfig();
}

TEST(MeasureTest, ThrottleFlagFollowsTheGoverningSample) {
  verify::Profile P;
  verify::EnvSample A, B;
  A.TimeNs = 0;
  A.ThrottleReasons = 0x1; // idle: benign
  B.TimeNs = 2000;
  B.ThrottleReasons = 0x40; // HW thermal slowdown
  P.EnvSamples = {A, B};
  EXPECT_FALSE(launchThrottled(P, 1000));
  EXPECT_TRUE(launchThrottled(P, 2000));
  EXPECT_TRUE(launchThrottled(P, 5000));
  P.EnvSamples[1].ThrottleReasons = 0x100 | 0x2; // display clock + app clocks: benign
  EXPECT_FALSE(launchThrottled(P, 5000));
  verify::Profile Empty;
  EXPECT_FALSE(launchThrottled(Empty, 5000));
}

TEST(MeasureTest, ForeignFlagFollowsTheGoverningSample) {
  // The same governing sample as the throttle flag: the last at or before the
  // launch's start, else the first.
  verify::Profile P;
  verify::EnvSample A, B, C;
  A.TimeNs = 1000;
  A.ForeignProcesses = 0;
  B.TimeNs = 2000;
  B.ForeignProcesses = 1; // another process group has a context on the GPU
  B.ForeignPids = {4242};
  C.TimeNs = 3000;        // no process fields: unknown, not foreign
  P.EnvSamples = {A, B, C};
  EXPECT_FALSE(launchForeign(P, 500));
  EXPECT_FALSE(launchForeign(P, 1999));
  EXPECT_TRUE(launchForeign(P, 2000));
  EXPECT_TRUE(launchForeign(P, 2999));
  EXPECT_FALSE(launchForeign(P, 3000));
  EXPECT_EQ(governingSample(P, 2500), &P.EnvSamples[1]);
  EXPECT_EQ(governingSample(P, 10), &P.EnvSamples[0]);
  P.EnvSamples[0].ForeignProcesses = 2;
  EXPECT_TRUE(launchForeign(P, 500)) << "before the first sample, the first governs";
  verify::Profile Empty;
  EXPECT_FALSE(launchForeign(Empty, 5000));
  EXPECT_EQ(governingSample(Empty, 5000), nullptr);
}

TEST(MeasureTest, TargetSamplesFlagForeignLaunchesApartFromThrottled) {
  verify::Profile P;
  P.Launches = {launch(0, "saxpy(int)", 100, 50), launch(1, "saxpy(int)", 200, 10),
                launch(2, "saxpy(int)", 300, 30), launch(3, "saxpy(int)", 400, 11)};
  verify::EnvSample S0, S1, S2;
  S0.ForeignProcesses = 0;
  S1.TimeNs = 250;
  S1.ForeignProcesses = 1;
  S1.ThrottleReasons = 0x4; // both: counted as foreign by the filter
  S2.TimeNs = 350;
  S2.ForeignProcesses = 0;
  P.EnvSamples = {S0, S1, S2};
  TargetSamples R = targetSamples(config(), P, /*Warmup=*/1);
  ASSERT_EQ(R.size(), 1u);
  ASSERT_EQ(R[0].second.size(), 3u);
  EXPECT_FALSE(R[0].second[0].Foreign);
  EXPECT_TRUE(R[0].second[1].Foreign);
  EXPECT_TRUE(R[0].second[1].Throttled);
  EXPECT_FALSE(R[0].second[2].Foreign);
  decide::FilteredSamples F = decide::filterSamples(R[0].second);
  EXPECT_EQ(F.DiscardedForeign, 1u);
  EXPECT_EQ(F.DiscardedThrottled, 0u);
  EXPECT_EQ(F.KeptNs, (std::vector<double>{10, 11}));
}

// The host-side snapshots around a run (RunResult::ForeignBefore/After, from kloop's GpuMonitor):
// a process on the GPU before the run, or alive after it, drops all the run's samples; one listed
// after the run but gone (the run's own, lingering in NVML) does not; nothing without NVML.
TEST(MeasureTest, ForeignLoadAroundTheRunDropsItsSamples) {
  verify::Profile P;
  P.Launches = {launch(0, "saxpy(int)", 100, 50), launch(1, "saxpy(int)", 200, 10)};
  RunResult R;
  R.Status = RunStatus::Ok;
  R.Prof = P;
  R.GpuWatched = true;
  auto AllForeign = [&] {
    TargetSamples S = runSamples(config(), R, /*Warmup=*/0);
    return !S.empty() && llvm::all_of(S[0].second, [](const decide::Sample &X) { return X.Foreign; });
  };
  EXPECT_FALSE(AllForeign());
  GpuProcess Live{"nvml:0", unsigned(getpid()), 1u << 30};
  GpuProcess Gone{"nvml:0", 0x7ffffffe, 1u << 30}; // above pid_max: no such process
  R.ForeignAfter = {Gone};
  EXPECT_FALSE(foreignAroundRun(R));
  EXPECT_FALSE(AllForeign());
  R.ForeignAfter = {Gone, Live};
  EXPECT_TRUE(foreignAroundRun(R));
  EXPECT_TRUE(AllForeign());
  R.ForeignAfter.clear();
  R.ForeignBefore = {Gone}; // before the run, any process counts: it may have run beside it
  EXPECT_TRUE(AllForeign());
  R.GpuWatched = false;
  EXPECT_FALSE(foreignAroundRun(R));
}

TEST(MeasureTest, MarkAllForeignFlagsEverySampleOfTheRun) {
  // For foreign load seen right before or after a run: every sample of the
  // run goes, whatever its own flags, and is counted as foreign.
  verify::Profile P;
  P.Launches = {launch(0, "saxpy(int)", 100, 50), launch(1, "saxpy(int)", 200, 10),
                launch(2, "init(float*)", 250, 5), launch(3, "saxpy<2>(int)", 300, 30),
                launch(4, "saxpy(int)", 400, 12)};
  verify::EnvSample S;
  S.TimeNs = 390;
  S.ThrottleReasons = 0x40;
  P.EnvSamples = {verify::EnvSample(), S};
  TargetSamples R = targetSamples(config(), P, /*Warmup=*/0);
  ASSERT_EQ(R.size(), 2u);
  markAllForeign(R);
  size_t N = 0;
  for (auto &[Name, List] : R)
    for (const decide::Sample &X : List) {
      EXPECT_TRUE(X.Foreign) << Name;
      ++N;
    }
  EXPECT_EQ(N, 4u);
  decide::FilteredSamples F = decide::filterSamples(R[0].second);
  EXPECT_EQ(F.DiscardedForeign, 3u);
  EXPECT_EQ(F.DiscardedThrottled, 0u);
  EXPECT_TRUE(F.KeptNs.empty());
}

TEST(MeasureTest, TargetSamplesDropWarmupAndOtherKernels) {
  verify::Profile P;
  // Out of seq order on purpose: samples follow "seq", not file order.
  P.Launches = {launch(2, "saxpy(int)", 300, 12), launch(0, "saxpy(int)", 100, 999), launch(1, "init(float*)", 200, 5),
                launch(3, "saxpy(int)", 400, 14), launch(4, "saxpy<2>(int)", 500, 20)};
  verify::EnvSample S;
  S.TimeNs = 350;
  S.ThrottleReasons = 0x4;
  verify::EnvSample S0;
  P.EnvSamples = {S0, S};
  auto R = targetSamples(config(), P, /*Warmup=*/1);
  ASSERT_EQ(R.size(), 1u) << "the single saxpy<2> launch is its warm-up";
  EXPECT_EQ(R[0].first, "saxpy(int)");
  ASSERT_EQ(R[0].second.size(), 2u);
  EXPECT_EQ(R[0].second[0].DurationNs, 12);
  EXPECT_FALSE(R[0].second[0].Throttled);
  EXPECT_EQ(R[0].second[1].DurationNs, 14);
  EXPECT_TRUE(R[0].second[1].Throttled);
  auto All = targetSamples(config(), P, 0);
  ASSERT_EQ(All.size(), 2u);
  EXPECT_EQ(All[0].second.size(), 3u);
}

TEST(MeasureTest, MedianCIWidthUsesRankInterval) {
  EXPECT_TRUE(std::isinf(medianRelCIWidth({1, 2, 3, 4, 5})));
  // n = 100: h = 0.98 * 10 = 9.8, j = floor(50 - 9.8) = 40, k = ceil(59.8) = 60.
  std::vector<double> V;
  for (int I = 1; I <= 100; ++I)
    V.push_back(I);
  // sorted[40] = 41, sorted[60] = 61, median 50.5.
  EXPECT_DOUBLE_EQ(medianRelCIWidth(V), 20.0 / 50.5);
  std::vector<double> Same(50, 7.0);
  EXPECT_DOUBLE_EQ(medianRelCIWidth(Same), 0.0);
}

TEST(MeasureTest, RatesAboveTheCeilingAreMeasurementErrors) {
  ShapeSpec S;
  S.Name = "n1M";
  S.Bytes = 8000;
  S.Flops = 500;
  Ceilings C{"Fake", 4000.0, 60000.0};
  KernelShapeStats K;
  K.Stats.Median = 4; // ns: 2000 GB/s, 125 GFLOP/s
  attachRates(K, S, C);
  ASSERT_TRUE(K.GBps && K.PctCopy && K.GFlops && K.PctFma);
  EXPECT_DOUBLE_EQ(*K.GBps, 2000.0);
  EXPECT_DOUBLE_EQ(*K.PctCopy, 50.0);
  EXPECT_DOUBLE_EQ(*K.GFlops, 125.0);
  EXPECT_TRUE(K.MeasurementErrors.empty());
  KernelShapeStats Fast;
  Fast.Stats.Median = 1; // 8000 GB/s > 4000
  attachRates(Fast, S, C);
  ASSERT_EQ(Fast.MeasurementErrors.size(), 1u);
  EXPECT_NE(Fast.MeasurementErrors[0].find("MEASUREMENT ERROR: 8000.0 GB/s is above the measured copy ceiling"),
            std::string::npos);
  KernelShapeStats NoCeil;
  NoCeil.Stats.Median = 1;
  attachRates(NoCeil, S, std::nullopt);
  EXPECT_TRUE(NoCeil.GBps.has_value());
  EXPECT_FALSE(NoCeil.PctCopy.has_value());
  EXPECT_TRUE(NoCeil.MeasurementErrors.empty());
}

TEST(MeasureTest, ParsesCeilingsOutput) {
  auto C = parseCeilingsOutput("driver noise\n{\"schema\": \"kloop-ceilings/1\", \"device\": \"NVIDIA H200\", "
                               "\"copy_gbps\": 4263.5, \"fma_gflops_f32\": 60000}\n");
  ASSERT_TRUE(bool(C)) << toString(C.takeError());
  EXPECT_EQ(C->Device, "NVIDIA H200");
  EXPECT_DOUBLE_EQ(C->CopyGBps, 4263.5);
  EXPECT_DOUBLE_EQ(C->FmaGFlops, 60000);
  auto Bad = parseCeilingsOutput("{\"schema\": \"kloop-ceilings/1\", \"device\": \"X\", \"copy_gbps\": -1, "
                                 "\"fma_gflops_f32\": 1}");
  ASSERT_FALSE(bool(Bad));
  EXPECT_NE(toString(Bad.takeError()).find("copy_gbps"), std::string::npos);
  auto None = parseCeilingsOutput("ceilings: cudaSetDevice failed");
  ASSERT_FALSE(bool(None));
  consumeError(None.takeError());
}

TEST(MeasureTest, CeilingsCacheRoundTrips) {
  SmallString<128> Dir;
  ASSERT_FALSE(sys::fs::createUniqueDirectory("kloop-ceil", Dir));
  std::string File = (Dir + "/sub/ceilings.json").str();
  auto Missing = lookupCeilings(File, "GPU A");
  ASSERT_TRUE(bool(Missing));
  EXPECT_FALSE(Missing->has_value());
  ASSERT_FALSE(bool(storeCeilings(File, {"GPU A", 100, 200})));
  ASSERT_FALSE(bool(storeCeilings(File, {"GPU B", 300, 400})));
  auto A = lookupCeilings(File, "GPU A");
  ASSERT_TRUE(bool(A) && A->has_value());
  EXPECT_DOUBLE_EQ((*A)->CopyGBps, 100);
  EXPECT_DOUBLE_EQ((*A)->FmaGFlops, 200);
  auto B = lookupCeilings(File, "GPU B");
  ASSERT_TRUE(bool(B) && B->has_value());
  EXPECT_DOUBLE_EQ((*B)->CopyGBps, 300);
  // A cached entry is used without building anything.
  auto E = ensureCeilings("GPU B", File, (Dir + "/work").str());
  ASSERT_TRUE(bool(E)) << toString(E.takeError());
  EXPECT_DOUBLE_EQ(E->FmaGFlops, 400);
  sys::fs::remove_directories(Dir);
}

TEST(MeasureTest, CorruptCeilingsCacheIsAnError) {
  SmallString<128> F;
  int FD;
  ASSERT_FALSE(sys::fs::createTemporaryFile("ceil", "json", FD, F));
  ::write(FD, "not json", 8);
  ::close(FD);
  auto R = lookupCeilings(F, "X");
  ASSERT_FALSE(bool(R));
  EXPECT_NE(toString(R.takeError()).find("is not a JSON object"), std::string::npos);
  sys::fs::remove(F);
}

TEST(MeasureTest, ReportJSONHasTheDocumentedFields) {
  MeasureReport R;
  R.Workload = "w";
  R.L2 = L2Policy::Flush;
  R.Device = "Fake";
  R.RunsPerShape = {{"s", 3}};
  KernelShapeStats K;
  K.Kernel = "saxpy(int)";
  K.Shape = "s";
  K.Stats.N = 10;
  K.Stats.Median = 5;
  K.GBps = 2.0;
  R.Kernels.push_back(K);
  nlohmann::json J = toJSON(R);
  EXPECT_EQ(J["schema"], "kloop-measure/1");
  EXPECT_EQ(J["l2"], "flush");
  EXPECT_EQ(J["runs"]["s"], 3);
  EXPECT_EQ(J["kernels"][0]["median_ns"], 5.0);
  EXPECT_EQ(J["kernels"][0]["gbps"], 2.0);
  EXPECT_TRUE(J["kernels"][0]["gflops"].is_null());
  EXPECT_TRUE(J["ceilings"].is_null());
}

} // namespace
