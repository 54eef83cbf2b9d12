//===- KernelProfileTest.cpp - Hardware counters -> KernelProfile ---------===//
#include "kloop/Measure/KernelProfile.h"

#include "gtest/gtest.h"

using namespace kloop::measure;
using nlohmann::json;

namespace {

/// The H200's limits as cuDeviceGetAttribute answers them (sm_90).
DeviceLimits h200() {
  DeviceLimits D;
  D.SmCount = 132;
  D.WarpSize = 32;
  D.MaxThreadsPerSm = 2048;
  D.MaxBlocksPerSm = 32;
  D.RegsPerSm = 65536;
  D.RegsPerBlock = 65536;
  D.SmemPerSm = 233472;
  D.SmemPerBlockOptin = 232448;
  D.ReservedSmemPerBlock = 1024;
  D.CcMajor = 9;
  D.CcMinor = 0;
  return D;
}

LaunchResources launch(uint64_t Grid, uint64_t Block, uint64_t Regs, uint64_t StaticSmem = 0, uint64_t Dyn = 0) {
  LaunchResources L;
  L.Grid = {Grid, 1, 1};
  L.Block = {Block, 1, 1};
  L.Registers = Regs;
  L.StaticSmem = StaticSmem;
  L.DynamicSmem = Dyn;
  return L;
}

Occupancy occupancy(const LaunchResources &L) {
  llvm::Expected<Occupancy> O = theoreticalOccupancy(L, h200());
  EXPECT_TRUE(static_cast<bool>(O)) << (O ? "" : llvm::toString(O.takeError()));
  return O ? *O : Occupancy();
}

TEST(TheoreticalOccupancy, FullWhenOnlyTheBlockSizeBounds) {
  Occupancy O = occupancy(launch(100000, 256, 16));
  EXPECT_EQ(O.BlocksByWarps, 8u);
  EXPECT_EQ(O.BlocksByRegisters, 16u); // 16 x 32 = 512 registers per warp: 32 warps per sub-partition
  EXPECT_EQ(O.BlocksBySharedMemory, 228u); // only the 1 KiB the driver reserves
  EXPECT_EQ(O.ActiveBlocks, 8u);
  EXPECT_DOUBLE_EQ(O.TheoreticalPct, 100.0);
  EXPECT_EQ(O.Limiter, OccupancyLimiter::Warps);
  EXPECT_FALSE(O.GridSmallerThanGpu);
}

TEST(TheoreticalOccupancy, RegistersLimit) {
  // 128 x 32 = 4096 registers per warp: 4 warps per sub-partition, 16 per SM, 2 blocks of 8 warps.
  Occupancy O = occupancy(launch(100000, 256, 128));
  EXPECT_EQ(O.BlocksByRegisters, 2u);
  EXPECT_EQ(O.ActiveWarps, 16u);
  EXPECT_DOUBLE_EQ(O.TheoreticalPct, 25.0);
  EXPECT_EQ(O.Limiter, OccupancyLimiter::Registers);
}

TEST(TheoreticalOccupancy, RegistersRoundUpToTheAllocationUnit) {
  // 33 x 32 = 1056 registers, allocated as 1280: 12 warps per sub-partition, 48 per SM, 6 blocks of 8 warps.
  Occupancy O = occupancy(launch(100000, 256, 33));
  EXPECT_EQ(O.BlocksByRegisters, 6u);
  EXPECT_EQ(O.Limiter, OccupancyLimiter::Registers);
  EXPECT_DOUBLE_EQ(O.TheoreticalPct, 75.0);
}

TEST(TheoreticalOccupancy, SharedMemoryLimits) {
  // 48 KiB static + 1 KiB reserved = 50176 bytes per block: 4 blocks of 4 warps.
  Occupancy O = occupancy(launch(100000, 128, 32, 48 * 1024));
  EXPECT_EQ(O.BlocksBySharedMemory, 4u);
  EXPECT_EQ(O.Limiter, OccupancyLimiter::SharedMemory);
  EXPECT_DOUBLE_EQ(O.TheoreticalPct, 25.0);
  // Dynamic shared memory counts the same, rounded up to 128 bytes: 32 KiB + 1 byte + 1 KiB = 33281 bytes
  // would fit 7 times in 233472; rounded to 33408 it fits 6 times.
  Occupancy D = occupancy(launch(100000, 128, 32, 0, 32 * 1024 + 1));
  EXPECT_EQ(D.BlocksBySharedMemory, 6u);
}

TEST(TheoreticalOccupancy, SmallBlocksHitTheBlockLimit) {
  Occupancy O = occupancy(launch(100000, 32, 16));
  EXPECT_EQ(O.BlocksByWarps, 64u);
  EXPECT_EQ(O.ActiveBlocks, 32u);
  EXPECT_EQ(O.Limiter, OccupancyLimiter::Blocks);
  EXPECT_DOUBLE_EQ(O.TheoreticalPct, 50.0);
}

TEST(TheoreticalOccupancy, TiesGoToRegistersFirst) {
  // 1024 threads = 32 warps. 64 registers: 2048 per warp, 8 warps per sub-partition, 32 per SM: 1 block;
  // warps allow 2. 32 registers: 1024 per warp, 64 warps per SM: 2 blocks, as many as warps allow.
  Occupancy O = occupancy(launch(100000, 1024, 64));
  EXPECT_EQ(O.BlocksByRegisters, 1u);
  EXPECT_EQ(O.BlocksByWarps, 2u);
  Occupancy Tie = occupancy(launch(100000, 1024, 32));
  EXPECT_EQ(Tie.BlocksByRegisters, 2u);
  EXPECT_EQ(Tie.BlocksByWarps, 2u);
  EXPECT_EQ(Tie.Limiter, OccupancyLimiter::Registers);
}

TEST(TheoreticalOccupancy, ALaunchThatCannotFitHasNoBlocks) {
  // 255 registers round up to 8192 per warp; 32 warps need 262144 > 65536 registers per block.
  Occupancy O = occupancy(launch(1, 1024, 255));
  EXPECT_EQ(O.BlocksByRegisters, 0u);
  EXPECT_EQ(O.ActiveBlocks, 0u);
  EXPECT_EQ(O.Limiter, OccupancyLimiter::Registers);
}

TEST(TheoreticalOccupancy, ASmallGridIsNamed) {
  EXPECT_TRUE(occupancy(launch(132 * 8 - 1, 256, 16)).GridSmallerThanGpu);
  EXPECT_FALSE(occupancy(launch(132 * 8, 256, 16)).GridSmallerThanGpu);
}

TEST(TheoreticalOccupancy, BadInputsAreErrors) {
  llvm::Expected<Occupancy> Empty = theoreticalOccupancy(launch(1, 0, 16), h200());
  ASSERT_FALSE(static_cast<bool>(Empty));
  EXPECT_NE(llvm::toString(Empty.takeError()).find("0 threads"), std::string::npos);
  DeviceLimits D = h200();
  D.RegsPerSm = -1;
  llvm::Expected<Occupancy> Unknown = theoreticalOccupancy(launch(1, 256, 16), D);
  ASSERT_FALSE(static_cast<bool>(Unknown));
  EXPECT_NE(llvm::toString(Unknown.takeError()).find("regs_per_sm is unknown"), std::string::npos);
}

MetricRange range() {
  MetricRange R;
  R.Seq = 3;
  R.Kernel = "_Z5saxpyifPKfPf";
  R.Name = "saxpy(int, float, float const*, float*)";
  R.Grid = {65536, 1, 1};
  R.Block = {256, 1, 1};
  R.Registers = 16;
  R.StaticSmem = 0;
  R.DriverBlocksPerSm = 8;
  R.Values = {{"gpu__time_duration.sum", 50000.0},
              {"dram__bytes_read.sum", 134217728.0},
              {"dram__bytes_write.sum", 67108864.0},
              {"lts__t_sector_hit_rate.pct", 33.3},
              {"sm__warps_active.avg.pct_of_peak_sustained_active", 87.5},
              {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", 0.0},
              {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", std::nullopt},
              {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 4194304.0},
              {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 1048576.0},
              {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", 0.0},
              {"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", 0.0},
              {"smsp__warp_issue_stalled_selected_per_warp_active.pct", 90.0},
              {"smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct", 60.0},
              {"smsp__warp_issue_stalled_wait_per_warp_active.pct", 5.0},
              {"smsp__warp_issue_stalled_barrier_per_warp_active.pct", 5.0},
              {"smsp__warp_issue_stalled_drain_per_warp_active.pct", 1.0},
              {"smsp__warp_issue_stalled_sleeping_per_warp_active.pct", 0.0}};
  return R;
}

TEST(DeriveKernelProfile, ReadsTheCounters) {
  KernelProfile P = deriveKernelProfile(range(), h200());
  EXPECT_EQ(P.Name, "saxpy(int, float, float const*, float*)");
  EXPECT_EQ(P.DramReadBytes, 134217728.0);
  EXPECT_EQ(P.DramWriteBytes, 67108864.0);
  EXPECT_EQ(P.L2HitPct, 33.3);
  EXPECT_EQ(P.AchievedOccupancyPct, 87.5);
  EXPECT_EQ(P.SmemBankConflictsLoad, 0.0);
  EXPECT_FALSE(P.SmemBankConflictsStore.has_value()); // the chip did not give it
  EXPECT_EQ(P.ProfiledDurationNs, 50000.0);
  ASSERT_TRUE(P.Theoretical.has_value());
  EXPECT_EQ(P.Theoretical->Limiter, OccupancyLimiter::Warps);
  EXPECT_TRUE(P.Notes.empty());
}

TEST(DeriveKernelProfile, SectorsPerRequestOnlyWithRequests) {
  KernelProfile P = deriveKernelProfile(range(), h200());
  ASSERT_TRUE(P.GlobalLoadSectorsPerRequest.has_value());
  EXPECT_DOUBLE_EQ(*P.GlobalLoadSectorsPerRequest, 4.0);
  EXPECT_FALSE(P.GlobalStoreSectorsPerRequest.has_value()); // no store request: no ratio
  MetricRange Scattered = range();
  Scattered.Values["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] = 3200.0;
  Scattered.Values["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"] = 100.0;
  EXPECT_DOUBLE_EQ(*deriveKernelProfile(Scattered, h200()).GlobalStoreSectorsPerRequest, 32.0);
}

TEST(DeriveKernelProfile, TopStallsLargestFirstWithoutSelected) {
  KernelProfile P = deriveKernelProfile(range(), h200());
  ASSERT_EQ(P.TopStalls.size(), 3u);
  EXPECT_EQ(P.TopStalls[0].Reason, "long_scoreboard");
  EXPECT_DOUBLE_EQ(P.TopStalls[0].Pct, 60.0);
  // A tie is ordered by name; "selected" is issuing, not a stall; drain (1%) is fourth and left out.
  EXPECT_EQ(P.TopStalls[1].Reason, "barrier");
  EXPECT_EQ(P.TopStalls[2].Reason, "wait");
}

TEST(DeriveKernelProfile, UnknownRegistersOrLimitsAreNoted) {
  MetricRange R = range();
  R.Registers.reset();
  KernelProfile P = deriveKernelProfile(R, h200());
  EXPECT_FALSE(P.Theoretical.has_value());
  ASSERT_EQ(P.Notes.size(), 1u);
  EXPECT_NE(P.Notes[0].find("registers"), std::string::npos);
  KernelProfile NoLimits = deriveKernelProfile(range(), std::nullopt);
  ASSERT_EQ(NoLimits.Notes.size(), 1u);
  EXPECT_NE(NoLimits.Notes[0].find("no device limits"), std::string::npos);
}

TEST(DeriveKernelProfile, ADriverThatDisagreesIsNoted) {
  MetricRange R = range();
  R.DriverBlocksPerSm = 7;
  KernelProfile P = deriveKernelProfile(R, h200());
  ASSERT_EQ(P.Notes.size(), 1u);
  EXPECT_NE(P.Notes[0].find("the driver allows 7 blocks per SM, the occupancy calculation 8"), std::string::npos);
}

TEST(KernelProfileJSON, RoundTrips) {
  KernelProfile P = deriveKernelProfile(range(), h200());
  P.Shape = "n16M";
  json J = toJSON(P);
  llvm::Expected<KernelProfile> Back = kernelProfileFromJSON(J, "test");
  ASSERT_TRUE(static_cast<bool>(Back)) << llvm::toString(Back.takeError());
  EXPECT_EQ(toJSON(*Back), J);
  EXPECT_EQ(Back->Theoretical->Limiter, OccupancyLimiter::Warps);
  EXPECT_EQ(Back->TopStalls.size(), 3u);
  EXPECT_EQ(J["theoretical"]["limiter"], "warps");
  EXPECT_TRUE(J["smem_bank_conflicts_st"].is_null());
}

TEST(KernelProfileJSON, BadInputNamesTheMember) {
  json J = toJSON(deriveKernelProfile(range(), h200()));
  J["theoretical"]["limiter"] = "tensor cores";
  llvm::Expected<KernelProfile> Bad = kernelProfileFromJSON(J, "journal step 7");
  ASSERT_FALSE(static_cast<bool>(Bad));
  std::string Msg = llvm::toString(Bad.takeError());
  EXPECT_NE(Msg.find("journal step 7"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("theoretical.limiter"), std::string::npos) << Msg;
  json Missing = toJSON(deriveKernelProfile(range(), h200()));
  Missing.erase("launch");
  llvm::Expected<KernelProfile> M = kernelProfileFromJSON(Missing, "x");
  ASSERT_FALSE(static_cast<bool>(M));
  EXPECT_NE(llvm::toString(M.takeError()).find("launch: missing"), std::string::npos);
}

json metricsDoc() {
  return json::parse(R"J({"schema": "kloop-cupti/1", "metrics": {
    "mode": "range_profiler/kernel_replay/auto_range", "chip": "GH100", "passes": 6, "error": null,
    "metric_names": ["dram__bytes_read.sum"], "unsupported": [], "dropped_ranges": 0, "skipped_busy": 0,
    "launches_per_config": 1,
    "device_limits": {"sm_count": 132, "warp_size": 32, "max_threads_per_sm": 2048, "max_blocks_per_sm": 32,
      "regs_per_sm": 65536, "regs_per_block": 65536, "smem_per_sm": 233472, "smem_per_block_optin": 232448,
      "reserved_smem_per_block": 1024, "cc_major": 9, "cc_minor": 0},
    "ranges": [
      {"seq": 0, "kernel": "_Z1kv", "name": "k()", "grid": [264, 1, 1], "block": [1024, 1, 1], "dynamic_smem": 0,
       "registers": 40, "static_smem": 0, "driver_blocks_per_sm": 1, "wall_ns": 900000,
       "values": {"dram__bytes_read.sum": 1024, "sm__warps_active.avg.pct_of_peak_sustained_active": 45.5},
       "error": null},
      {"seq": 1, "kernel": "_Z1jv", "name": "j()", "grid": [1, 1, 1], "block": [32, 1, 1], "dynamic_smem": 0,
       "registers": -1, "static_smem": -1, "driver_blocks_per_sm": -1, "wall_ns": 5,
       "values": {}, "error": "cuptiRangeProfilerStop: CUPTI_ERROR_UNKNOWN"}]}})J");
}

TEST(MetricsRun, ParsesAndDerives) {
  llvm::Expected<MetricsRun> Run = parseMetricsRun(metricsDoc(), "run.json");
  ASSERT_TRUE(static_cast<bool>(Run)) << llvm::toString(Run.takeError());
  EXPECT_EQ(Run->Chip, "GH100");
  EXPECT_EQ(Run->Passes, 6u);
  ASSERT_TRUE(Run->Limits.has_value());
  ASSERT_EQ(Run->Ranges.size(), 2u);
  EXPECT_FALSE(Run->Ranges[1].Registers.has_value()); // -1: unknown
  std::vector<std::string> Problems;
  std::vector<KernelProfile> Ps = kernelProfiles(*Run, "small", Problems);
  ASSERT_EQ(Ps.size(), 1u);
  EXPECT_EQ(Ps[0].Shape, "small");
  // 40 registers -> 1280 per warp, 12 warps per sub-partition, 48 per SM: one block of 32 warps.
  EXPECT_EQ(Ps[0].Theoretical->ActiveBlocks, 1u);
  EXPECT_EQ(Ps[0].Theoretical->Limiter, OccupancyLimiter::Registers);
  EXPECT_TRUE(Ps[0].Notes.empty()); // the driver agrees: 1 block
  ASSERT_EQ(Problems.size(), 1u);
  EXPECT_EQ(Problems[0], "no counters for j() (launch 1) (shape small): cuptiRangeProfilerStop: CUPTI_ERROR_UNKNOWN");
}

TEST(MetricsRun, AProfilerThatFailedIsAProblem) {
  json D = metricsDoc();
  D["metrics"]["error"] = "cuptiRangeProfilerEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
  D["metrics"]["ranges"] = json::array();
  llvm::Expected<MetricsRun> Run = parseMetricsRun(D, "run.json");
  ASSERT_TRUE(static_cast<bool>(Run));
  std::vector<std::string> Problems;
  EXPECT_TRUE(kernelProfiles(*Run, "", Problems).empty());
  ASSERT_EQ(Problems.size(), 1u);
  EXPECT_EQ(Problems[0], "hardware counters unavailable: cuptiRangeProfilerEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES");
}

TEST(MetricsRun, BadDocumentsAreErrors) {
  llvm::Expected<MetricsRun> None = parseMetricsRun(json{{"schema", "kloop-cupti/1"}}, "plain.json");
  ASSERT_FALSE(static_cast<bool>(None));
  EXPECT_NE(llvm::toString(None.takeError()).find("plain.json: no \"metrics\" member"), std::string::npos);
  json D = metricsDoc();
  D["metrics"]["ranges"][0]["values"]["dram__bytes_read.sum"] = "many";
  llvm::Expected<MetricsRun> Bad = parseMetricsRun(D, "run.json");
  ASSERT_FALSE(static_cast<bool>(Bad));
  EXPECT_NE(llvm::toString(Bad.takeError()).find("metrics.ranges[0].values"), std::string::npos);
}

TEST(SummarizeKernelProfile, NamesTheLimiterAndTheStalls) {
  std::string S = summarizeKernelProfile(deriveKernelProfile(range(), h200()));
  EXPECT_EQ(S, "occupancy 87.5% achieved / 100.0% theoretical (limiter: warps); DRAM 134.22 MB read, 67.11 MB "
               "written; L2 hit 33.3%; smem bank conflicts 0 ld, ? st; sectors/request 4.00 ld, ? st; stalls "
               "long_scoreboard 60.0%, barrier 5.0%, wait 5.0%");
}

} // namespace
