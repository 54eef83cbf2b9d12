//===- RunnerTest.cpp - Isolated runs of fake workloads -------------------===//
#include "kloop/Measure/Runner.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"
#include <chrono>
#include <set>
#include <cstdlib>
#include <unistd.h>

using namespace kloop::measure;
using namespace llvm;

namespace {

const char *FakeProfile = R"J({"schema": "kloop-cupti/1",
 "device": {"name": "Fake GPU", "cc": "9.0", "l2_bytes": 1024},
 "launches": [
  {"seq": 0, "kernel": "_Z5saxpyifPKfPf", "name": "saxpy(int, float, float const*, float*)", "grid": [1,1,1],
   "block": [32,1,1], "registers": 8, "static_smem": 0, "dynamic_smem": 0, "stream": 7, "context": 1,
   "start_ns": 1000, "end_ns": 1500, "duration_ns": 500},
  {"seq": 1, "kernel": "_Z5saxpyifPKfPf", "name": "saxpy(int, float, float const*, float*)", "grid": [1,1,1],
   "block": [32,1,1], "registers": 8, "static_smem": 0, "dynamic_smem": 0, "stream": 7, "context": 1,
   "start_ns": 3000, "end_ns": 3600, "duration_ns": 600}],
 "env_samples": [{"t_ns": 0, "sm_clock_mhz": 1980, "mem_clock_mhz": 3201, "temp_c": 40, "power_mw": 1,
                  "throttle_reasons": 1},
                 {"t_ns": 2000, "sm_clock_mhz": 1500, "mem_clock_mhz": 3201, "temp_c": 80, "power_mw": 1,
                  "throttle_reasons": 64}],
 "nvml": true, "captures": [], "overhead": {"wall_ns_in_callbacks": 42}})J";

class RunnerTest : public ::testing::Test {
protected:
  SmallString<128> Dir;
  void SetUp() override {
    ASSERT_FALSE(sys::fs::createUniqueDirectory("kloop-runner-test", Dir));
    writeFile("profile.json", FakeProfile);
  }
  void TearDown() override { sys::fs::remove_directories(Dir); }
  std::string path(StringRef Name) {
    SmallString<128> P(Dir);
    sys::path::append(P, Name);
    return P.str().str();
  }
  void writeFile(StringRef Name, StringRef Text) {
    std::error_code EC;
    raw_fd_ostream OS(path(Name), EC);
    ASSERT_FALSE(EC);
    OS << Text;
  }
  std::string readFile(StringRef Path) {
    auto B = MemoryBuffer::getFile(Path);
    return B ? (*B)->getBuffer().str() : "<unreadable>";
  }
  RunRequest request(StringRef Command, bool Inject = true) {
    RunRequest R;
    R.Command = Command.str();
    R.Cwd = Dir.str().str();
    R.TimeoutS = 20;
    R.OutDir = path("runs");
    R.Label = "r0";
    if (Inject) {
      InjectionSettings I;
      I.LibraryPath = "/nonexistent/libkloop-cupti.so";
      I.Targets = {"saxpy", "daxpy"};
      I.Dump = true;
      I.Poison = "nan";
      R.Inject = I;
    }
    return R;
  }
};

TEST_F(RunnerTest, OkRunParsesTheProfileAndSeesTheInjectionEnvironment) {
  RunRequest R = request("cp profile.json \"$KLOOP_CUPTI_OUT\" && echo "
                         "\"$CUDA_INJECTION64_PATH|$KLOOP_CUPTI_TARGETS|$KLOOP_CUPTI_DUMP|$KLOOP_CUPTI_POISON|$FOO\"");
  R.Env["FOO"] = "bar";
  auto Res = runIsolated(R);
  ASSERT_TRUE(bool(Res)) << toString(Res.takeError());
  EXPECT_EQ(Res->Status, RunStatus::Ok) << Res->describe();
  EXPECT_EQ(Res->ExitCode, 0);
  ASSERT_TRUE(Res->Prof.has_value());
  EXPECT_EQ(Res->Prof->Device.Name, "Fake GPU");
  ASSERT_EQ(Res->Prof->Launches.size(), 2u);
  EXPECT_EQ(Res->Prof->Launches[1].DurationNs, 600u);
  EXPECT_EQ(Res->Prof->OverheadWallNs, 42u);
  EXPECT_EQ(readFile(Res->StdoutPath), "/nonexistent/libkloop-cupti.so|saxpy,daxpy|1|nan|bar\n");
  EXPECT_TRUE(StringRef(Res->ProfilePath).ends_with("runs/r0.json"));
}

TEST_F(RunnerTest, RunsInTheWorkingDirectory) {
  RunRequest R = request("pwd", /*Inject=*/false);
  R.Cwd = path("sub dir");
  ASSERT_FALSE(sys::fs::create_directories(R.Cwd));
  auto Res = runIsolated(R);
  ASSERT_TRUE(bool(Res)) << toString(Res.takeError());
  EXPECT_EQ(Res->Status, RunStatus::Ok) << Res->describe();
  SmallString<128> Real;
  sys::fs::real_path(R.Cwd, Real);
  EXPECT_EQ(StringRef(readFile(Res->StdoutPath)).rtrim(), Real.str());
}

TEST_F(RunnerTest, NonZeroExitIsRecordedWithStderr) {
  auto Res = runIsolated(request("echo 'bad input' >&2; exit 3"));
  ASSERT_TRUE(bool(Res)) << toString(Res.takeError());
  EXPECT_EQ(Res->Status, RunStatus::ExitedNonZero);
  EXPECT_EQ(Res->ExitCode, 3);
  EXPECT_EQ(Res->StderrTail, "bad input");
  EXPECT_EQ(Res->describe(), "exited non-zero: exit code 3");
}

TEST_F(RunnerTest, SignalIsRecordedAsCrash) {
  auto Res = runIsolated(request("sh -c 'kill -SEGV $$'"));
  ASSERT_TRUE(bool(Res)) << toString(Res.takeError());
  EXPECT_EQ(Res->Status, RunStatus::Crashed) << Res->describe();
  EXPECT_EQ(Res->Signal, 11);
  EXPECT_NE(Res->Detail.find("SIGSEGV"), std::string::npos) << Res->Detail;
}

TEST_F(RunnerTest, HangIsKilledAtTheTimeoutWithItsChildren) {
  // A background child would create the marker 1.5 s after the timeout kill
  // unless it is killed with the workload's process group.
  RunRequest R = request("(sleep 2; touch survived) & sleep 30", /*Inject=*/false);
  R.TimeoutS = 1;
  auto Res = runIsolated(R);
  ASSERT_TRUE(bool(Res)) << toString(Res.takeError());
  EXPECT_EQ(Res->Status, RunStatus::TimedOut) << Res->describe();
  EXPECT_LT(Res->WallSeconds, 5.0);
  EXPECT_GE(Res->WallSeconds, 1.0);
  if (sys::findProgramByName("setsid")) {
    ::sleep(2);
    EXPECT_FALSE(sys::fs::exists(path("survived"))) << "a child of the timed-out workload survived";
  }
}

TEST_F(RunnerTest, MissingProfileIsRecorded) {
  auto Res = runIsolated(request("true"));
  ASSERT_TRUE(bool(Res)) << toString(Res.takeError());
  EXPECT_EQ(Res->Status, RunStatus::MissingProfile);
  EXPECT_NE(Res->Detail.find("wrote no profile"), std::string::npos);
}

TEST_F(RunnerTest, StaleProfileFromAnEarlierRunIsNotReused) {
  ASSERT_EQ(runIsolated(request("cp profile.json \"$KLOOP_CUPTI_OUT\""))->Status, RunStatus::Ok);
  auto Res = runIsolated(request("true"));
  ASSERT_TRUE(bool(Res));
  EXPECT_EQ(Res->Status, RunStatus::MissingProfile);
}

TEST_F(RunnerTest, CorruptProfileIsRecorded) {
  auto Res = runIsolated(request("echo '{\"schema\": \"kloop-cupti/1\", \"launches\": [' > \"$KLOOP_CUPTI_OUT\""));
  ASSERT_TRUE(bool(Res)) << toString(Res.takeError());
  EXPECT_EQ(Res->Status, RunStatus::CorruptProfile);
  EXPECT_NE(Res->Detail.find("r0.json: not valid JSON"), std::string::npos) << Res->Detail;
}

TEST_F(RunnerTest, MissingWorkingDirectoryFailsToStart) {
  RunRequest R = request("true");
  R.Cwd = path("nope");
  auto Res = runIsolated(R);
  ASSERT_TRUE(bool(Res));
  EXPECT_EQ(Res->Status, RunStatus::FailedToStart);
  EXPECT_NE(Res->Detail.find("does not exist"), std::string::npos);
}

TEST_F(RunnerTest, UnknownCommandExits127) {
  auto Res = runIsolated(request("/nonexistent/workload --n 1", /*Inject=*/false));
  ASSERT_TRUE(bool(Res));
  EXPECT_EQ(Res->Status, RunStatus::ExitedNonZero);
  EXPECT_EQ(Res->ExitCode, 127);
}

TEST_F(RunnerTest, BadRequestsAreKloopErrors) {
  RunRequest R = request("true");
  R.Label = "a/b";
  EXPECT_FALSE(bool(runIsolated(R)));
  consumeError(runIsolated(R).takeError());
  R = request("true");
  R.TimeoutS = 0;
  auto E = runIsolated(R);
  ASSERT_FALSE(bool(E));
  EXPECT_NE(toString(E.takeError()).find("timeout must be positive"), std::string::npos);
}

// Issue 17, item 1: a process the workload left behind is killed with the run's group and reaped
// by kloop (a child subreaper), not left a zombie of PID 1, which does not reap here.
TEST_F(RunnerTest, AChildLeftBehindIsKilledAndReaped) {
  auto Res = runIsolated(request("sleep 30 & echo $! > bg.pid; exit 0", /*Inject=*/false));
  ASSERT_TRUE(bool(Res)) << toString(Res.takeError());
  EXPECT_EQ(Res->Status, RunStatus::Ok) << Res->describe();
  int Child = 0;
  ASSERT_TRUE(!StringRef(readFile(path("bg.pid"))).trim().getAsInteger(10, Child) && Child > 0);
  EXPECT_FALSE(sys::fs::exists("/proc/" + std::to_string(Child)))
      << "the background child is still there: " << readFile("/proc/" + std::to_string(Child) + "/stat");
}

/// Runs with a GPU monitor on the fake NVML (test/Inputs/fake-nvml/), whose script the workloads
/// write (to script.tmp, then renamed, so that its times count from the write).
class RunnerDrainTest : public RunnerTest {
protected:
  void SetUp() override {
    RunnerTest::SetUp();
    ::setenv("KLOOP_NVML_LIBRARY", KLOOP_FAKE_NVML, 1);
    ::setenv("KLOOP_FAKE_NVML_SCRIPT", path("script").c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("KLOOP_NVML_LIBRARY");
    ::unsetenv("KLOOP_FAKE_NVML_SCRIPT");
    RunnerTest::TearDown();
  }
  /// A command that makes the fake list \p Entry from now on, then runs \p Then.
  static std::string holding(StringRef Entry, StringRef Then) {
    return ("echo \"0 100 " + Entry + "\" > script.tmp && mv script.tmp script; " + Then).str();
  }
};

TEST_F(RunnerDrainTest, ATimedOutRunIsDrainedBeforeTheRunnerReturns) {
  GpuMonitor Gpu;
  ASSERT_TRUE(Gpu.available()) << Gpu.unavailableReason();
  // The shell holds 1032 MiB while it lives and stays listed 400 ms after it is reaped.
  RunRequest R = request(holding("$$:1032:+400", "echo $$ > shell.pid; sleep 30"), /*Inject=*/false);
  R.TimeoutS = 1;
  R.Gpu = &Gpu;
  auto Res = runIsolated(R);
  ASSERT_TRUE(bool(Res)) << toString(Res.takeError());
  EXPECT_EQ(Res->Status, RunStatus::TimedOut);
  EXPECT_TRUE(Res->GpuWatched);
  EXPECT_TRUE(Res->ForeignBefore.empty());
  EXPECT_TRUE(Res->ForeignAfter.empty());
  ASSERT_TRUE(Res->Drain.has_value());
  EXPECT_TRUE(Res->Drain->Watched);
  EXPECT_GE(Res->Drain->Seconds, 0.35);
  EXPECT_LT(Res->Drain->Seconds, 10.0);
  std::string Shell = StringRef(readFile(path("shell.pid"))).trim().str();
  // Nothing of the run is left, not even a zombie (who reaps the shell, kloop or the run's
  // supervisor, is a race; DrainReport::Reaped counts only kloop's).
  EXPECT_FALSE(sys::fs::exists("/proc/" + Shell)) << readFile("/proc/" + Shell + "/stat");
  EXPECT_EQ(describeProcesses(Res->Drain->HeldAtStart), "pid " + Shell + ", 1032 MiB");
  std::string Note = drainNote(R.Label, *Res);
  EXPECT_EQ(Note.rfind("run r0 timed out; waited 0.", 0), 0u) << Note;
  EXPECT_NE(Note.find(" s for the GPU to drain (pid " + Shell + ", 1032 MiB)"), std::string::npos) << Note;
}

TEST_F(RunnerDrainTest, AGpuThatDoesNotDrainWithinTheBoundIsAnError) {
  GpuMonitor Gpu;
  RunRequest R = request(holding("4242:1032", "exit 3"), /*Inject=*/false);
  R.Gpu = &Gpu;
  R.DrainTimeoutS = 1;
  auto T0 = std::chrono::steady_clock::now();
  auto Res = runIsolated(R);
  ASSERT_FALSE(bool(Res));
  EXPECT_GE(std::chrono::duration<double>(std::chrono::steady_clock::now() - T0).count(), 1.0);
  std::string Msg;
  handleAllErrors(Res.takeError(), [&](const DirtyGpuError &E) { Msg = E.message(); });
  EXPECT_EQ(Msg.rfind("the GPU did not drain: run r0 exited non-zero: exit code 3: after ", 0), 0u) << Msg;
  EXPECT_NE(Msg.find(" s NVML still shows pid 4242, 1032 MiB; nvml:0 at 100% utilization (run.drain_timeout_s "
                     "is 1 s); nothing more is timed on this GPU"),
            std::string::npos)
      << Msg;
}

TEST_F(RunnerDrainTest, WithoutNvmlTheRunnerWaitsAFixedTimeAndSaysSo) {
  ::setenv("KLOOP_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
  GpuMonitor Gpu;
  RunRequest R = request("exit 3", /*Inject=*/false);
  R.Gpu = &Gpu;
  auto Res = runIsolated(R);
  ASSERT_TRUE(bool(Res)) << toString(Res.takeError());
  EXPECT_FALSE(Res->GpuWatched);
  ASSERT_TRUE(Res->Drain.has_value());
  EXPECT_FALSE(Res->Drain->Watched);
  EXPECT_GE(Res->Drain->Seconds, UnwatchedSettleS);
  EXPECT_EQ(drainNote(R.Label, *Res),
            "run r0 exited non-zero; the GPU was not checked (NVML unavailable: cannot load "
            "/nonexistent/libnvidia-ml.so.1: /nonexistent/libnvidia-ml.so.1: cannot open shared object file: No "
            "such file or directory); waited a fixed 1.00 s after reaping the run's processes");
}

TEST_F(RunnerDrainTest, AnOkRunRecordsForeignProcessesAndWatchesItsProfilesDevice) {
  writeFile("script", "0 20 777:500\n");
  std::string Profile = FakeProfile;
  Profile.replace(Profile.find("\"l2_bytes\": 1024}"), 17, "\"l2_bytes\": 1024, \"pci_bus_id\": \"0000:19:00.0\"}");
  writeFile("profile.json", Profile);
  GpuMonitor Gpu;
  RunRequest R = request("cp profile.json \"$KLOOP_CUPTI_OUT\"");
  R.Gpu = &Gpu;
  auto Res = runIsolated(R);
  ASSERT_TRUE(bool(Res)) << toString(Res.takeError());
  EXPECT_EQ(Res->Status, RunStatus::Ok) << Res->describe();
  EXPECT_FALSE(Res->Drain.has_value());
  EXPECT_TRUE(Res->GpuWatched);
  EXPECT_EQ(describeProcesses(Res->ForeignBefore), "pid 777, 500 MiB");
  EXPECT_EQ(describeProcesses(Res->ForeignAfter), "pid 777, 500 MiB");
  EXPECT_EQ(Res->Prof->Device.PciBusId, "0000:19:00.0");
  EXPECT_EQ(Gpu.devices(), std::vector<std::string>{"0000:19:00.0"});
}

TEST(RunnerHelpers, FindsCuptiLibraryFromTheEnvironment) {
  SmallString<128> F;
  ASSERT_FALSE(sys::fs::createTemporaryFile("libkloop-cupti", "so", F));
  ::setenv("KLOOP_CUPTI_LIB", F.c_str(), 1);
  auto L = findCuptiLibrary("kloop", nullptr);
  ASSERT_TRUE(bool(L)) << toString(L.takeError());
  EXPECT_EQ(*L, F.str());
  ::setenv("KLOOP_CUPTI_LIB", "/nonexistent/libkloop-cupti.so", 1);
  auto Bad = findCuptiLibrary("kloop", nullptr);
  ASSERT_FALSE(bool(Bad));
  EXPECT_NE(toString(Bad.takeError()).find("not a file"), std::string::npos);
  ::unsetenv("KLOOP_CUPTI_LIB");
  sys::fs::remove(F);
}

TEST(RunnerHelpers, PlacementPadsAreLargePagesBelowTheBoundAndVaryByRound) {
  std::set<uint64_t> Seen;
  for (unsigned Round = 0; Round < 64; ++Round) {
    uint64_t P = placementPadBytes(128, 1, 2, Round);
    EXPECT_EQ(P % (2u << 20), 0u);
    EXPECT_LT(P, uint64_t(128) << 20);
    EXPECT_EQ(P, placementPadBytes(128, 1, 2, Round)); // repeatable
    Seen.insert(P);
  }
  EXPECT_GT(Seen.size(), 30u); // 64 draws of 64 values: about 40 distinct
  bool ShapeMatters = false, SeedMatters = false;
  for (unsigned Round = 0; Round < 8; ++Round) {
    ShapeMatters |= placementPadBytes(128, 0, 0, Round) != placementPadBytes(128, 1, 0, Round);
    SeedMatters |= placementPadBytes(128, 0, 0, Round) != placementPadBytes(128, 0, 1, Round);
  }
  EXPECT_TRUE(ShapeMatters);
  EXPECT_TRUE(SeedMatters);
  // The draws of every comparison made so far, pinned: the pad moved to capture::placementPadBytes, shared
  // with the replay worker, and kloop compare's rounds must land where they did (values from the formula
  // as it was in Runner.cpp).
  const uint64_t Pinned[] = {24, 78, 92, 88};
  for (unsigned Round = 0; Round < 4; ++Round)
    EXPECT_EQ(placementPadBytes(128, 1, 2, Round), Pinned[Round] << 20) << "round " << Round;
  for (unsigned Off : {0u, 1u, 2u, 3u}) {
    EXPECT_EQ(placementPadBytes(Off, 0, 0, 5), 0u);
    EXPECT_EQ(placementPadChoices(Off), 0u);
  }
  EXPECT_EQ(placementPadChoices(4), 2u);
  EXPECT_EQ(placementPadChoices(128), 64u);
  InjectionSettings I;
  applyPlacementPad(I, 4u << 20);
  EXPECT_EQ(I.Extra["KLOOP_CUPTI_PLACEMENT_PAD"], "4194304");
  applyPlacementPad(I, 0);
  EXPECT_EQ(I.Extra.count("KLOOP_CUPTI_PLACEMENT_PAD"), 0u);
}

TEST(RunnerHelpers, RecognisesMissingCudaDevice) {
  EXPECT_TRUE(saysNoCudaDevice("CUDA error: no CUDA-capable device is detected"));
  EXPECT_TRUE(saysNoCudaDevice("error 100 cudaErrorNoDevice"));
  EXPECT_FALSE(saysNoCudaDevice("illegal memory access was encountered"));
}

} // namespace
