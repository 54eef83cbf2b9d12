//===- PtxasTest.cpp - The one ptxas resource-usage parser -----------------===//
#include "kloop/Support/Ptxas.h"

#include "gtest/gtest.h"

using namespace kloop;
using nlohmann::json;

namespace {

/// The message of \p E's error; "" when it holds a value.
std::string errorOf(llvm::Expected<std::vector<PtxasFunction>> E) {
  return E ? std::string() : llvm::toString(E.takeError());
}

/// True when \p E holds a value; its error is printed otherwise.
bool succeeded(llvm::Expected<std::vector<PtxasFunction>> &E) {
  if (E)
    return true;
  ADD_FAILURE() << llvm::toString(E.takeError());
  return false;
}

// The output of `nvcc -Xptxas -v` for two architectures of one TU (a kernel with a non-inlined
// __device__ helper, and a template kernel), as nvcc 13.0 prints it.
const char *TwoArchs = "ptxas info    : 0 bytes gmem\n"
                       "ptxas info    : Compiling entry function '_Z5saxpyifPKfPf' for 'sm_80'\n"
                       "ptxas info    : Function properties for _Z5saxpyifPKfPf\n"
                       "    256 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n"
                       "ptxas info    : Used 40 registers, used 1 barriers, 256 bytes cumulative stack size, "
                       "512 bytes smem, 380 bytes cmem[0], 8 bytes cmem[2]\n"
                       "ptxas info    : Compile time = 32.299 ms\n"
                       "ptxas info    : Function properties for _Z6helperf\n"
                       "    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                       "ptxas info    : Compiling entry function '_Z2tkILi4EEvPf' for 'sm_90'\n"
                       "ptxas info    : Function properties for _Z2tkILi4EEvPf\n"
                       "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                       "ptxas info    : Used 8 registers, used 0 barriers\n";

TEST(Ptxas, ReadsKernelsAndDeviceFunctions) {
  std::vector<PtxasFunction> F = parsePtxasVerbose(TwoArchs);
  ASSERT_EQ(F.size(), 3u);
  EXPECT_EQ(F[0].Name, "_Z5saxpyifPKfPf");
  EXPECT_EQ(F[0].Arch, "sm_80");
  EXPECT_TRUE(F[0].Entry);
  EXPECT_EQ(F[0].Registers, 40u);
  EXPECT_EQ(F[0].StackBytes, 256u);
  EXPECT_EQ(F[0].SpillStoreBytes, 4u);
  EXPECT_EQ(F[0].SpillLoadBytes, 12u);
  EXPECT_EQ(F[0].SharedBytes, 512u);
  EXPECT_EQ(F[0].ConstBytes, 388u); // both banks
  // The helper's stack frame is its own, not the kernel before it (the old optimize parser's mistake).
  EXPECT_EQ(F[1].Name, "_Z6helperf");
  EXPECT_FALSE(F[1].Entry);
  EXPECT_EQ(F[1].StackBytes, 16u);
  EXPECT_EQ(F[2].Arch, "sm_90");
  EXPECT_EQ(F[2].Registers, 8u);
  EXPECT_EQ(spillBytes(F), 16u);
  EXPECT_TRUE(parsePtxasVerbose("garbage\nUsed 3 registers\n").empty());
}

TEST(Ptxas, JSONRoundTripsAndReadsTheOldForm) {
  std::vector<PtxasFunction> F = parsePtxasVerbose(TwoArchs);
  json J = toJSON(F);
  EXPECT_EQ(J["kernels"].size(), 2u);
  EXPECT_EQ(J["device_functions"].size(), 1u);
  EXPECT_EQ(J["kernels"][0]["spill_store_bytes"], 4);
  auto Back = ptxasFromJSON(J);
  ASSERT_TRUE(succeeded(Back));
  ASSERT_EQ(Back->size(), 3u);
  EXPECT_EQ((*Back)[0].SharedBytes, 512u);
  EXPECT_EQ((*Back)[2].Name, "_Z6helperf"); // device functions follow the kernels
  // A journal written before issue 13.
  auto Old = ptxasFromJSON(json::parse(
      R"({"kernels":[{"name":"_Z1kPf","arch":"sm_90","registers":40,"spill_stores":4,"spill_loads":12,"smem":256,"stack":8,"cmem":380}]})"));
  ASSERT_TRUE(succeeded(Old));
  ASSERT_EQ(Old->size(), 1u);
  EXPECT_EQ((*Old)[0].SpillStoreBytes, 4u);
  EXPECT_EQ((*Old)[0].SpillLoadBytes, 12u);
  EXPECT_EQ((*Old)[0].SharedBytes, 256u);
  EXPECT_EQ((*Old)[0].StackBytes, 8u);
  EXPECT_EQ((*Old)[0].ConstBytes, 380u);
  auto None = ptxasFromJSON(json(nullptr));
  ASSERT_TRUE(succeeded(None));
  EXPECT_TRUE(None->empty());
}

TEST(Ptxas, RefusesMalformedReports) {
  EXPECT_EQ(errorOf(ptxasFromJSON(json::array())), "ptxas report: not a JSON object");
  EXPECT_EQ(errorOf(ptxasFromJSON(json::parse(R"({"kernels":3})"))), "ptxas report: \"kernels\" is not an array");
  EXPECT_EQ(errorOf(ptxasFromJSON(json::parse(R"({"kernels":[{"registers":3}]})"))), "ptxas report: an entry without a string \"name\"");
  EXPECT_EQ(errorOf(ptxasFromJSON(json::parse(R"({"kernels":[{"name":"k","registers":-1}]})"))), "ptxas report: \"registers\" of 'k' is not a non-negative integer");
  EXPECT_EQ(errorOf(ptxasFromJSON(json::parse(R"({"kernels":[{"name":"k","smem":"big"}]})"))), "ptxas report: \"smem\" of 'k' is not a non-negative integer");
}

// An nvcc compile gets only what nvcc understands of the clang arguments given after `--`
// (a --cuda-path used to make nvcc fail and the report come out empty).
TEST(Ptxas, NvccCompatibleArgsKeepIncludesDefinesAndStd) {
  std::vector<std::string> In = {"-std=c++17", "--cuda-path=/usr/local/cuda", "-I", "inc", "-Iinc2",
                                 "-isystem", "sys", "-DX=1", "-D", "Y", "-UZ", "-nocudainc", "-x",
                                 "cuda", "--cuda-gpu-arch=sm_90", "-Wall", "-include", "pre.h", "-I"};
  std::vector<std::string> Want = {"-std=c++17", "-I", "inc", "-Iinc2", "-isystem", "sys", "-DX=1",
                                   "-D", "Y", "-UZ", "-include", "pre.h"};
  EXPECT_EQ(nvccCompatibleArgs(In), Want);
}

TEST(Ptxas, AppendsVerboseOnce) {
  EXPECT_EQ(withPtxasVerbose(""), "-Xptxas -v");
  EXPECT_EQ(withPtxasVerbose(" -lineinfo "), "-lineinfo -Xptxas -v");
  EXPECT_EQ(withPtxasVerbose("-Xptxas -v"), "-Xptxas -v");
}

} // namespace
