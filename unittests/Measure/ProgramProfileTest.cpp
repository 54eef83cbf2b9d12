//===- ProgramProfileTest.cpp - kloop profile's aggregation ----------------===//
#include "kloop/Measure/ProgramProfile.h"

#include "gtest/gtest.h"

#include "../InventoryFixture.h"

using namespace kloop;
using namespace kloop::measure;
using nlohmann::json;
using llvm::Expected;

namespace {

verify::LaunchRecord launch(std::string Mangled, std::string Name, uint64_t Ns, uint64_t GridX = 16,
                            uint64_t BlockX = 256, uint64_t DynSmem = 0) {
  verify::LaunchRecord L;
  L.Kernel = std::move(Mangled);
  L.Name = std::move(Name);
  L.DurationNs = Ns;
  L.Grid = {GridX, 1, 1};
  L.Block = {BlockX, 1, 1};
  L.DynamicSmem = DynSmem;
  L.Registers = 16;
  return L;
}

const char *Saxpy = "_Z5saxpyifPKfPf";
const char *Reduce = "_Z6reduceILi256EEvPKfPfi";
const char *Cub = "_ZN3cub17CUB_300000_SM_90018DeviceReduceKernelEPKfPf";

verify::Profile threeKernels() {
  verify::Profile P;
  P.Device.Name = "NVIDIA H200";
  // saxpy: 3 launches, 2 configurations, 6000 ns; reduce: 1 launch, 3000 ns; cub: 1000 ns.
  P.Launches = {launch(Saxpy, "saxpy(int, float, float const*, float*)", 1000),
                launch(Reduce, "void reduce<256>(float const*, float*, int)", 3000),
                launch(Saxpy, "saxpy(int, float, float const*, float*)", 2000, 32, 128),
                launch(Saxpy, "saxpy(int, float, float const*, float*)", 3000),
                launch(Cub, "", 1000)};
  return P;
}

TEST(ProgramProfile, SumsPerKernelAndConfigurationMostTimeFirst) {
  ProgramProfile R = summarizeProgram(threeKernels(), {});
  EXPECT_EQ(R.Device, "NVIDIA H200");
  EXPECT_EQ(R.TotalNs, 10000u);
  EXPECT_EQ(R.Launches, 5u);
  ASSERT_EQ(R.Kernels.size(), 3u);
  EXPECT_EQ(R.Kernels[0].Kernel, Saxpy);
  EXPECT_EQ(R.Kernels[0].TotalNs, 6000u);
  EXPECT_EQ(R.Kernels[0].Launches, 3u);
  EXPECT_DOUBLE_EQ(R.Kernels[0].SharePct, 60.0);
  ASSERT_EQ(R.Kernels[0].Configs.size(), 2u);
  // grid 16 (1000 + 3000 ns) before grid 32 (2000 ns).
  EXPECT_EQ(R.Kernels[0].Configs[0].Grid[0], 16u);
  EXPECT_EQ(R.Kernels[0].Configs[0].Launches, 2u);
  EXPECT_EQ(R.Kernels[0].Configs[0].TotalNs, 4000u);
  EXPECT_EQ(R.Kernels[0].Configs[1].Block[0], 128u);
  EXPECT_EQ(R.Kernels[1].Kernel, Reduce);
  EXPECT_DOUBLE_EQ(R.Kernels[1].SharePct, 30.0);
  // A record without a demangled name is demangled here.
  EXPECT_EQ(R.Kernels[2].Name.find("cub::"), 0u) << R.Kernels[2].Name;
  EXPECT_EQ(R.Kernels[2].Origin, KernelOrigin::Unknown);
}

TEST(ProgramProfile, EmptyProfileHasNoKernelsAndNoDivisionByZero) {
  ProgramProfile R = summarizeProgram(verify::Profile{}, {});
  EXPECT_EQ(R.TotalNs, 0u);
  EXPECT_TRUE(R.Kernels.empty());
  EXPECT_NE(formatProgramTable(R).find("time"), std::string::npos);
}

TEST(ProgramProfile, SharedMemoryAndRegistersSeparateConfigurations) {
  verify::Profile P;
  P.Launches = {launch(Saxpy, "saxpy", 10, 16, 256, 0), launch(Saxpy, "saxpy", 10, 16, 256, 1024)};
  P.Launches[1].Registers = 32;
  ProgramProfile R = summarizeProgram(P, {});
  ASSERT_EQ(R.Kernels.size(), 1u);
  EXPECT_EQ(R.Kernels[0].Configs.size(), 2u);
}

json inventory() {
  return json::parse(R"({"kernels": [
    {"id": "saxpy", "library": false, "symbols": [{"mangled": "_Z5saxpyifPKfPf"}]},
    {"id": "reduce", "library": false, "symbols": [{"mangled": "_Z6reduceILi256EEvPKfPfi"}],
     "instantiations": [{"id": "reduce<256>", "mangled": "_Z6reduceILi256EEvPKfPfi"}]}
  ]})");
}

TEST(ProgramProfile, MatchesInventoryIdsAndNamesLibraryKernels) {
  std::vector<InventoryKernel> Inv = inventoryKernels(test::completeInventory(inventory()));
  ASSERT_EQ(Inv.size(), 3u);
  EXPECT_EQ(Inv[1].Id, "reduce<256>"); // the instantiation before its kernel

  verify::Profile P = threeKernels();
  P.Launches.push_back(launch("_Z7unknownPf", "unknown(float*)", 500));
  ProgramProfileInputs In;
  In.Inventory = std::move(Inv);
  ProgramProfile R = summarizeProgram(P, In);
  ASSERT_EQ(R.Kernels.size(), 4u);
  EXPECT_EQ(R.Kernels[0].Origin, KernelOrigin::Inventory);
  EXPECT_EQ(R.Kernels[0].Id, "saxpy");
  // The instantiation's ID, not the template's.
  EXPECT_EQ(R.Kernels[1].Id, "reduce<256>");
  EXPECT_EQ(R.Kernels[2].Origin, KernelOrigin::Library);
  EXPECT_EQ(R.Kernels[2].Library, "cub");
  EXPECT_EQ(R.Kernels[2].Id, "");
  EXPECT_EQ(R.Kernels[3].Origin, KernelOrigin::NotInInventory);

  std::string T = formatProgramTable(R);
  EXPECT_NE(T.find("(library: cub)"), std::string::npos) << T;
  EXPECT_NE(T.find("(not in the inventory)"), std::string::npos) << T;
  EXPECT_NE(T.find("reduce<256>"), std::string::npos) << T;
}

TEST(ProgramProfile, InventoryLibraryKernelKeepsItsId) {
  json Inv = json::parse(R"({"kernels": [{"id": "cub::DeviceReduceKernel", "library": true,
    "symbols": [{"mangled": "_ZN3cub17CUB_300000_SM_90018DeviceReduceKernelEPKfPf"}]}]})");
  ProgramProfileInputs In;
  In.Inventory = inventoryKernels(test::completeInventory(Inv));
  ProgramProfile R = summarizeProgram(threeKernels(), In);
  const KernelTotal &K = R.Kernels[2];
  EXPECT_EQ(K.Origin, KernelOrigin::Library);
  EXPECT_EQ(K.Id, "cub::DeviceReduceKernel");
  EXPECT_EQ(K.Library, "cub");
}

TEST(ProgramProfile, InventoryLibraryKernelWithoutNamespace) {
  json Inv = json::parse(R"({"kernels": [{"id": "lib_fill", "library": true, "symbols": [{"mangled": "_Z5saxpyifPKfPf"}]}]})");
  ProgramProfileInputs In;
  In.Inventory = inventoryKernels(test::completeInventory(Inv));
  ProgramProfile R = summarizeProgram(threeKernels(), In);
  EXPECT_EQ(R.Kernels[0].Origin, KernelOrigin::Library);
  EXPECT_EQ(R.Kernels[0].Library, "");
  EXPECT_NE(formatProgramTable(R).find("lib_fill (library)"), std::string::npos) << formatProgramTable(R);
}

TEST(ProgramProfile, OutermostNamespace) {
  EXPECT_EQ(outermostNamespace(Cub), "cub");
  EXPECT_EQ(outermostNamespace("_ZN6thrust8cuda_cub4core13_kernel_agentEv"), "thrust");
  EXPECT_EQ(outermostNamespace(Saxpy), "");
  EXPECT_EQ(outermostNamespace("_ZN12_GLOBAL__N_16hiddenEv"), "");
  EXPECT_EQ(outermostNamespace("c_scale"), "");
}

TEST(ProgramProfile, RooflineIsTheHigherOfBandwidthAndFlopFractions) {
  verify::Profile P;
  P.Device.Name = "NVIDIA H200";
  // Two launches of 1000 ns each, 2e6 bytes and 1e6 flops per launch: 2000 GB/s, 1000 GFLOP/s.
  P.Launches = {launch(Saxpy, "saxpy(int, float, float const*, float*)", 1000),
                launch(Saxpy, "saxpy(int, float, float const*, float*)", 1000),
                launch(Reduce, "void reduce<256>(float const*, float*, int)", 1000)};
  ProgramProfileInputs In;
  In.Ceil = Ceilings{"NVIDIA H200", 4000.0, 50000.0};
  In.Work = {{"saxpy", 2000000, std::nullopt}, {"saxpy", std::nullopt, 1000000}, {"nomatch", 1, std::nullopt}};
  ProgramProfile R = summarizeProgram(P, In);
  ASSERT_EQ(R.Kernels.size(), 2u);
  const KernelTotal &S = R.Kernels[0];
  ASSERT_TRUE(S.GBps && S.GFlops && S.RooflinePct);
  EXPECT_DOUBLE_EQ(*S.GBps, 2000.0);
  EXPECT_DOUBLE_EQ(*S.GFlops, 1000.0);
  EXPECT_DOUBLE_EQ(*S.RooflinePct, 50.0); // max(2000/4000, 1000/50000) = 50%
  // reduce has no work: n/a, and why.
  EXPECT_FALSE(R.Kernels[1].RooflinePct);
  EXPECT_NE(R.Kernels[1].RooflineNote.find("bytes and flops per launch unknown"), std::string::npos);
  ASSERT_EQ(R.Notes.size(), 1u);
  EXPECT_EQ(R.Notes[0], "--bytes/--flops 'nomatch' matched no kernel of the run");
  std::string T = formatProgramTable(R);
  EXPECT_NE(T.find("50.0%"), std::string::npos) << T;
  EXPECT_NE(T.find("roofline n/a for 1 kernel(s): bytes and flops per launch unknown"), std::string::npos) << T;
}

TEST(ProgramProfile, RooflineWithoutCeilingsSaysWhy) {
  ProgramProfileInputs In;
  In.Work = {{"saxpy", 100, std::nullopt}};
  In.NoCeilingsReason = "nvcc not found";
  ProgramProfile R = summarizeProgram(threeKernels(), In);
  EXPECT_TRUE(R.Kernels[0].GBps.has_value());
  EXPECT_FALSE(R.Kernels[0].RooflinePct);
  EXPECT_EQ(R.Kernels[0].RooflineNote, "no ceilings for this GPU: nvcc not found");
}

TEST(ProgramProfile, TableColumnsAreAligned) {
  ProgramProfile R = summarizeProgram(threeKernels(), {});
  std::string T = formatProgramTable(R);
  // Every kernel row and the header put the kernel name at the same column.
  std::vector<size_t> Starts;
  size_t Pos = 0;
  while (Pos < T.size()) {
    size_t End = T.find('\n', Pos);
    std::string Line = T.substr(Pos, End - Pos);
    Pos = End + 1;
    if (Line.find(" x grid ") != std::string::npos || Line.rfind("roofline n/a", 0) == 0)
      continue; // a launch configuration or a note
    size_t At = Line.find("kernel");
    if (At == std::string::npos)
      At = Line.find("saxpy(");
    if (At == std::string::npos)
      At = Line.find("void reduce");
    if (At == std::string::npos)
      At = Line.find("cub::");
    ASSERT_NE(At, std::string::npos) << Line;
    Starts.push_back(At);
  }
  ASSERT_EQ(Starts.size(), 4u) << T;
  for (size_t S : Starts)
    EXPECT_EQ(S, Starts[0]) << T;
  EXPECT_NE(T.find("    2 x grid 16x1x1 block 256x1x1, smem 0 B static + 0 B dynamic, 16 regs, 4.000 us"),
            std::string::npos)
      << T;
  EXPECT_NE(T.find("6.000 us"), std::string::npos) << T;
  EXPECT_NE(T.find("60.0%"), std::string::npos) << T;
}

TEST(ProgramProfile, JSONHasTheSchemaAndEveryKernel) {
  verify::Profile P = threeKernels();
  P.Errors = {"cuptiActivityEnable failed"};
  json J = toJSON(summarizeProgram(P, {}));
  EXPECT_EQ(J["schema"], "kloop-profile/1");
  EXPECT_EQ(J["total_ns"], 10000);
  ASSERT_EQ(J["kernels"].size(), 3u);
  EXPECT_EQ(J["kernels"][0]["kernel"], Saxpy);
  EXPECT_EQ(J["kernels"][0]["launches"], 3);
  EXPECT_EQ(J["kernels"][0]["mean_ns"], 2000.0);
  EXPECT_EQ(J["kernels"][0]["origin"], "unknown");
  EXPECT_TRUE(J["kernels"][0]["id"].is_null());
  EXPECT_TRUE(J["kernels"][0]["roofline_pct"].is_null());
  EXPECT_EQ(J["kernels"][0]["configs"][0]["grid"], json::array({16, 1, 1}));
  EXPECT_EQ(J["kernels"][0]["configs"][0]["registers"], 16);
  EXPECT_TRUE(J["ceilings"].is_null());
  // The profile's own errors become a note.
  ASSERT_EQ(J["notes"].size(), 1u);
  EXPECT_NE(J["notes"][0].get<std::string>().find("cuptiActivityEnable failed"), std::string::npos);
}

} // namespace
