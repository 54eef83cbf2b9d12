//===- GpuMonitorTest.cpp - NVML's view of the GPU, on a fake NVML --------===//
#include "kloop/Measure/GpuMonitor.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <sys/wait.h>
#include <unistd.h>

using namespace kloop::measure;
using namespace llvm;
using Clock = std::chrono::steady_clock;

namespace {

/// Points KLOOP_NVML_LIBRARY at the fake NVML (test/Inputs/fake-nvml/) and gives it a script.
class GpuMonitorTest : public ::testing::Test {
protected:
  SmallString<128> Dir;
  std::string Script;
  void SetUp() override {
    ASSERT_FALSE(sys::fs::createUniqueDirectory("kloop-gpumon-test", Dir));
    Script = (Dir + "/script").str();
    ::setenv("KLOOP_NVML_LIBRARY", KLOOP_FAKE_NVML, 1);
    ::setenv("KLOOP_FAKE_NVML_SCRIPT", Script.c_str(), 1);
    ::unsetenv("CUDA_VISIBLE_DEVICES");
  }
  void TearDown() override {
    ::unsetenv("KLOOP_NVML_LIBRARY");
    ::unsetenv("KLOOP_FAKE_NVML_SCRIPT");
    ::unsetenv("CUDA_VISIBLE_DEVICES");
    sys::fs::remove_directories(Dir);
  }
  /// Replaces the script at once (its times count from now).
  void script(StringRef Text) {
    std::string Tmp = Script + ".tmp";
    {
      std::error_code EC;
      raw_fd_ostream OS(Tmp, EC);
      ASSERT_FALSE(EC);
      OS << Text;
    }
    ASSERT_FALSE(sys::fs::rename(Tmp, Script));
  }
  static double since(Clock::time_point T) { return std::chrono::duration<double>(Clock::now() - T).count(); }
};

TEST_F(GpuMonitorTest, AMissingLibraryLeavesItUnavailableWithTheReason) {
  ::setenv("KLOOP_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
  GpuMonitor M;
  EXPECT_FALSE(M.available());
  EXPECT_EQ(M.library(), "/nonexistent/libnvidia-ml.so.1");
  EXPECT_NE(M.unavailableReason().find("cannot load /nonexistent/libnvidia-ml.so.1"), std::string::npos)
      << M.unavailableReason();
  Expected<GpuSnapshot> S = M.snapshot();
  ASSERT_FALSE(bool(S));
  EXPECT_NE(toString(S.takeError()).find("NVML unavailable: cannot load"), std::string::npos);
  EXPECT_FALSE(M.watch("0000:19:00.0"));
}

TEST_F(GpuMonitorTest, AFailedInitLeavesItUnavailable) {
  script("fail-init\n");
  GpuMonitor M;
  EXPECT_FALSE(M.available());
  EXPECT_EQ(M.unavailableReason(), "nvmlInit_v2 failed: Driver Not Loaded");
}

TEST_F(GpuMonitorTest, ASnapshotListsProcessesWithTheirMemoryAndTheUtilization) {
  script("0 37 4242:1032 77:8\n");
  GpuMonitor M;
  ASSERT_TRUE(M.available()) << M.unavailableReason();
  EXPECT_EQ(M.devices(), std::vector<std::string>{"nvml:0"});
  Expected<GpuSnapshot> S = M.snapshot();
  ASSERT_TRUE(bool(S)) << toString(S.takeError());
  ASSERT_EQ(S->Processes.size(), 2u);
  EXPECT_EQ(S->Processes[0].Device, "nvml:0");
  EXPECT_EQ(S->Processes[0].Pid, 4242u);
  EXPECT_EQ(S->Processes[0].UsedBytes, std::optional<uint64_t>(1032ull << 20));
  EXPECT_EQ(describeProcesses(S->Processes), "pid 4242, 1032 MiB; pid 77, 8 MiB");
  ASSERT_EQ(S->Utilization.size(), 1u);
  EXPECT_EQ(S->Utilization[0].Percent, std::optional<unsigned>(37));
}

TEST_F(GpuMonitorTest, AFailingQueryIsAnErrorNamingTheCall) {
  script("fail-processes\n0 0 1:1\n");
  GpuMonitor M;
  ASSERT_TRUE(M.available());
  Expected<GpuSnapshot> S = M.snapshot();
  ASSERT_FALSE(bool(S));
  EXPECT_EQ(toString(S.takeError()), "nvmlDeviceGetComputeRunningProcesses(nvml:0) failed: Unknown Error");
}

TEST_F(GpuMonitorTest, WatchingAProfilesDeviceReplacesTheDefaultSet) {
  script("bus 00000000:3B:00.0\n0 0 5:1\n");
  GpuMonitor M;
  EXPECT_FALSE(M.watch("0000:19:00.0")); // not this machine's GPU
  EXPECT_EQ(M.devices(), std::vector<std::string>{"nvml:0"});
  EXPECT_TRUE(M.watch("0000:3b:00.0"));
  EXPECT_TRUE(M.watch("0000:3b:00.0"));
  EXPECT_EQ(M.devices(), std::vector<std::string>{"0000:3b:00.0"});
  Expected<GpuSnapshot> S = M.snapshot();
  ASSERT_TRUE(bool(S));
  ASSERT_EQ(S->Processes.size(), 1u);
  EXPECT_EQ(S->Processes[0].Device, "0000:3b:00.0");
}

TEST_F(GpuMonitorTest, CudaVisibleDevicesByUuidChoosesThoseDevices) {
  ::setenv("CUDA_VISIBLE_DEVICES", "GPU-fake-0", 1);
  GpuMonitor ByUuid;
  EXPECT_EQ(ByUuid.devices(), std::vector<std::string>{"GPU-fake-0"});
  ::setenv("CUDA_VISIBLE_DEVICES", "0", 1); // an index: CUDA's order need not be NVML's, so every device
  GpuMonitor ByIndex;
  EXPECT_EQ(ByIndex.devices(), std::vector<std::string>{"nvml:0"});
}

TEST_F(GpuMonitorTest, WaitForDrainWaitsForTheNewProcessAndTheUtilization) {
  script("0 0\n");
  GpuMonitor M;
  Expected<GpuSnapshot> Before = M.snapshot();
  ASSERT_TRUE(bool(Before));
  // The process goes at 300 ms, the utilization only at 500 ms.
  script("0 100 4242:1032\n300 100\n500 0\n");
  auto T0 = Clock::now();
  Expected<DrainWait> W = waitForDrain(M, *Before, T0 + std::chrono::seconds(10));
  ASSERT_TRUE(bool(W)) << toString(W.takeError());
  EXPECT_TRUE(W->Drained);
  EXPECT_GE(since(T0), 0.45);
  EXPECT_LT(since(T0), 5.0);
  EXPECT_TRUE(W->Held.empty());
  EXPECT_TRUE(W->Busy.empty());
}

TEST_F(GpuMonitorTest, WaitForDrainStopsAtTheDeadlineAndSaysWhatIsLeft) {
  GpuMonitor M;
  Expected<GpuSnapshot> Before = M.snapshot(); // no script: idle
  ASSERT_TRUE(bool(Before));
  script("0 100 4242:1032\n");
  auto T0 = Clock::now();
  Expected<DrainWait> W = waitForDrain(M, *Before, T0 + std::chrono::milliseconds(300));
  ASSERT_TRUE(bool(W));
  EXPECT_FALSE(W->Drained);
  EXPECT_GE(since(T0), 0.3);
  EXPECT_EQ(describeProcesses(W->Held), "pid 4242, 1032 MiB");
  ASSERT_EQ(W->Busy.size(), 1u);
  EXPECT_EQ(W->Busy[0].Percent, std::optional<unsigned>(100));
  // Utilization alone keeps it dirty too.
  script("0 50\n");
  W = waitForDrain(M, *Before, Clock::now() + std::chrono::milliseconds(100));
  ASSERT_TRUE(bool(W));
  EXPECT_FALSE(W->Drained);
  EXPECT_TRUE(W->Held.empty());
  ASSERT_EQ(W->Busy.size(), 1u);
}

TEST_F(GpuMonitorTest, ADeviceWithForeignWorkBeforeIsJudgedByItsProcessesAlone) {
  script("0 35 777:500\n");
  GpuMonitor M;
  Expected<GpuSnapshot> Before = M.snapshot();
  ASSERT_TRUE(bool(Before));
  ASSERT_EQ(Before->Processes.size(), 1u);
  Expected<DrainWait> W = waitForDrain(M, *Before, Clock::now() + std::chrono::seconds(5));
  ASSERT_TRUE(bool(W));
  EXPECT_TRUE(W->Drained) << "35% belongs to the foreign pid 777, not to the run";
  EXPECT_EQ(W->Last.Processes.size(), 1u);
  // A new process on it is still waited for.
  script("0 35 777:500 4242:64\n");
  W = waitForDrain(M, *Before, Clock::now() + std::chrono::milliseconds(100));
  ASSERT_TRUE(bool(W));
  EXPECT_FALSE(W->Drained);
  EXPECT_EQ(describeProcesses(W->Held), "pid 4242, 64 MiB");
}

// The fake's PID:MIB:+LINGER entries, which the runner's drain tests rely on: listed while the
// process exists and LINGER ms after it is gone, then the utilization drops to 0.
TEST_F(GpuMonitorTest, TheFakeListsAProcessUntilLingerAfterItIsGone) {
  pid_t Child = fork();
  ASSERT_GE(Child, 0);
  if (Child == 0) {
    pause();
    _exit(0);
  }
  script("0 100 " + std::to_string(Child) + ":1032:+300\n");
  GpuMonitor M;
  Expected<GpuSnapshot> S = M.snapshot();
  ASSERT_TRUE(bool(S));
  EXPECT_EQ(S->Processes.size(), 1u);
  kill(Child, SIGKILL);
  waitpid(Child, nullptr, 0);
  auto T0 = Clock::now();
  S = M.snapshot();
  ASSERT_TRUE(bool(S));
  EXPECT_EQ(S->Processes.size(), 1u) << "still listed right after it was reaped";
  Expected<DrainWait> W = waitForDrain(M, GpuSnapshot(), T0 + std::chrono::seconds(5));
  ASSERT_TRUE(bool(W));
  EXPECT_TRUE(W->Drained);
  EXPECT_GE(since(T0), 0.25);
}

} // namespace
