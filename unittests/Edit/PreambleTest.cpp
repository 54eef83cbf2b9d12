// Apply with a PreambleCache (kloop/Frontend/Preamble.h) gives what apply without one gives, reuses
// the preambles across applies, and keeps out of them what the inventory must see: command-line
// macros, a user header that shadows a system one, an edit inside the precompiled text.
#include "kloop/Edit/ApplyFile.h"
#include "kloop/Frontend/Preamble.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <fstream>

using namespace kloop;

namespace {

const std::string Scale = R"(__global__ void scale(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = 2.f * in[i];
}
)";
const std::string Launch = "void run(float *out, const float *in, int n) { scale<<<(n + BLOCK - 1) / BLOCK, "
                           "BLOCK>>>(out, in, n); }\n";
const std::string Kernel = Scale + Launch;

class PreambleApply : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> D;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("kloop-preamble-test", D));
    Dir = std::string(D);
  }
  void TearDown() override { llvm::sys::fs::remove_directories(Dir); }

  std::string write(const std::string &Rel, const std::string &Text) {
    std::string P = Dir + "/" + Rel;
    llvm::sys::fs::create_directories(llvm::sys::path::parent_path(P));
    std::ofstream(P) << Text;
    return P;
  }

  /// The apply of \p ProposalText to k.cu with \p Args (after the mock CUDA flags), as text: its
  /// refusals, each changed file and its text, the launches given a formula. Fails the test on an error.
  std::string apply(const std::string &ProposalText, PreambleCache *Cache, std::vector<std::string> Args = {}) {
    FrontendOptions In;
    In.Inputs = {Dir + "/k.cu"};
    In.WorkingDir = Dir;
    In.HasExtraArgs = true;
    In.ExtraArgs = {"-nocudainc", "-nocudalib", "--cuda-gpu-arch=sm_90", "-isystem",
                    std::string(KLOOP_TEST_SRC_ROOT) + "/test/Inputs"};
    In.ExtraArgs.insert(In.ExtraArgs.end(), Args.begin(), Args.end());
    ApplyOptions AO;
    AO.Root = Dir;
    AO.Preambles = Cache;
    llvm::Expected<Proposal> P = parseProposalText(ProposalText);
    EXPECT_TRUE(bool(P));
    if (!P)
      return llvm::toString(P.takeError());
    llvm::Expected<ProposalApplication> A = applyProposalToInputs(*P, In, AO, /*InPlace=*/false);
    EXPECT_TRUE(bool(A));
    if (!A)
      return llvm::toString(A.takeError());
    std::string S;
    for (const Refusal &R : A->Result.Refusals)
      S += "refused: " + R.str() + "\n";
    for (const FileChange &C : A->Result.Changes)
      S += C.RelPath + ":\n" + C.After;
    for (const auto &[ID, F] : A->Result.LaunchFormulas)
      S += "launch formula of " + ID + "\n";
    return S;
  }

  std::string Dir;
};

const char *SetBlock = R"({"rationale":"t","edits":[{"kind":"set_constant","id":"macro:BLOCK","value":128}]})";

TEST_F(PreambleApply, ReusedAcrossAppliesWithTheSameOutcome) {
  write("k.cu", std::string("#include <cuda.h>\n#include <stdint.h>\n#define BLOCK 256\n") + Kernel);
  std::string Without = apply(SetBlock, nullptr);
  ASSERT_NE(Without.find("#define BLOCK 128"), std::string::npos) << Without;
  PreambleCache Cache;
  EXPECT_EQ(apply(SetBlock, &Cache), Without);
  PreambleCache::Counts First = Cache.counts();
  EXPECT_EQ(First.Builds, 2u) << "one preamble per side (host, device)";
  EXPECT_EQ(First.Unused, 0u);
  EXPECT_GT(First.Bytes, 0u);
  EXPECT_EQ(apply(SetBlock, &Cache), Without);
  PreambleCache::Counts Second = Cache.counts();
  EXPECT_EQ(Second.Builds, 2u) << "the second apply builds nothing";
  EXPECT_EQ(Second.Reused, 2 * First.Reused);
  EXPECT_EQ(Second.Unused, 0u);
}

TEST_F(PreambleApply, CommandLineMacroIsStillSeen) {
  write("k.cu", std::string("#include <cuda.h>\n") + Kernel);
  std::string Without = apply(SetBlock, nullptr, {"-DBLOCK=256"});
  ASSERT_NE(Without.find("is defined on the command line"), std::string::npos) << Without;
  PreambleCache Cache;
  EXPECT_EQ(apply(SetBlock, &Cache, {"-DBLOCK=256"}), Without);
  EXPECT_GT(Cache.counts().Reused, 0u);
}

TEST_F(PreambleApply, UserHeaderFoundWithAngleBracketsIsNotPrecompiled) {
  // <cfg.h> comes from a -I directory: a user header, whose #define the inventory must record.
  write("inc/cfg.h", "#define BLOCK 256\n");
  write("k.cu", std::string("#include <cuda.h>\n#include <cfg.h>\n") + Kernel);
  std::string Without = apply(SetBlock, nullptr, {"-Iinc"});
  ASSERT_NE(Without.find("inc/cfg.h:\n#define BLOCK 128"), std::string::npos) << Without;
  PreambleCache Cache;
  EXPECT_EQ(apply(SetBlock, &Cache, {"-Iinc"}), Without);
  EXPECT_EQ(apply(SetBlock, &Cache, {"-Iinc"}), Without);
  EXPECT_GT(Cache.counts().Reused, 0u) << "the implicit includes are still precompiled";
}

TEST_F(PreambleApply, EditInsideThePrecompiledTextRunsWithoutPreambles) {
  // The kernel follows the leading includes: an #include inserted before it extends them, so the
  // parse after the edit cannot load the preamble that the parse before it loaded; unless the parse
  // before it runs again without one, the two inventories differ.
  write("k.cu", "#include <cuda.h>\n" + Scale + "#define BLOCK 256\n" + Launch);
  std::string Insert = R"({"rationale":"t","edits":[{"kind":"insert_device_function","before":"scale",)"
                       R"("code":"#include <stdint.h>\n__device__ int32_t f() { return 0; }"}]})";
  std::string Without = apply(Insert, nullptr);
  ASSERT_NE(Without.find("#include <cuda.h>\n#include <stdint.h>\n__device__ int32_t f()"), std::string::npos)
      << Without;
  ASSERT_NE(Without.find("launch formula of k.cu:run/launch#1"), std::string::npos) << Without;
  PreambleCache Cache;
  EXPECT_EQ(apply(Insert, &Cache), Without);
  EXPECT_GT(Cache.counts().Unused, 0u) << "the parses after the edit ran without a preamble";
}

TEST_F(PreambleApply, LineContinuedCommentEndsThePrecompiledText) {
  // The comment after the include goes on into the next line, which declares nothing.
  write("k.cu", "#include <cuda.h> // note \\\n__global__ void hidden(float *x) { x[0] = 1.f; }\n"
                "#define BLOCK 256\n" + Kernel);
  std::string Bounds = R"({"rationale":"t","edits":[{"kind":"set_launch_bounds","id":"hidden","max_threads":128}]})";
  std::string Without = apply(Bounds, nullptr);
  ASSERT_NE(Without.find("unknown inventory ID 'hidden'"), std::string::npos) << Without;
  PreambleCache Cache;
  EXPECT_EQ(apply(Bounds, &Cache), Without);
}

TEST_F(PreambleApply, LoneCarriageReturnEndsThePrecompiledText) {
  // clang ends the comment line at the carriage return: BLOCK is the main file's macro.
  write("k.cu", "// header comment\r#define BLOCK 256\n#include <cuda.h>\n" + Kernel);
  std::string Without = apply(SetBlock, nullptr);
  ASSERT_NE(Without.find("#define BLOCK 128"), std::string::npos) << Without;
  PreambleCache Cache;
  EXPECT_EQ(apply(SetBlock, &Cache), Without);
}

TEST_F(PreambleApply, CounterContinuesWhereThePreambleLeftIt) {
  // A system header advances __COUNTER__ (CCCL's do); the main file's code depends on its value.
  write("sys/counter.h", "enum { CounterA = __COUNTER__, CounterB = __COUNTER__ };\n");
  write("k.cu", "#include <cuda.h>\n#include <counter.h>\n#if __COUNTER__ == 0\n"
                "__global__ void first(float *x) { x[0] = 1.f; }\n#endif\n#define BLOCK 256\n" + Kernel);
  std::string Bounds = R"({"rationale":"t","edits":[{"kind":"set_launch_bounds","id":"first","max_threads":128}]})";
  std::string Without = apply(Bounds, nullptr, {"-isystem", "sys"});
  ASSERT_NE(Without.find("unknown inventory ID 'first'"), std::string::npos) << Without;
  PreambleCache Cache;
  EXPECT_EQ(apply(Bounds, &Cache, {"-isystem", "sys"}), Without);
  EXPECT_EQ(Cache.counts().Unused, 0u) << "the header is precompiled";
}

TEST_F(PreambleApply, MacroPushedInAPrecompiledHeaderAndPoppedAfter) {
  // A loaded preamble does not carry the push_macro stack: the parse notices the pop that finds
  // nothing, drops the preamble, and apply runs again without preambles.
  write("sys/push.h", "#define WIDE 1\n#pragma push_macro(\"WIDE\")\n#undef WIDE\n#define WIDE 0\n");
  write("k.cu", "#include <cuda.h>\n#include <push.h>\n#pragma pop_macro(\"WIDE\")\n#if WIDE\n"
                "__global__ void wide(float *x) { x[0] = 1.f; }\n#endif\n#define BLOCK 256\n" + Kernel);
  std::string Bounds = R"({"rationale":"t","edits":[{"kind":"set_launch_bounds","id":"wide","max_threads":128}]})";
  std::string Without = apply(Bounds, nullptr, {"-isystem", "sys"});
  ASSERT_NE(Without.find("__launch_bounds__(128) wide"), std::string::npos) << Without;
  PreambleCache Cache;
  EXPECT_EQ(apply(Bounds, &Cache, {"-isystem", "sys"}), Without);
  EXPECT_EQ(apply(Bounds, &Cache, {"-isystem", "sys"}), Without);
  EXPECT_EQ(Cache.counts().Bytes, 0u) << "the preamble that lost the push is dropped";
}

TEST_F(PreambleApply, OverTheBudgetNothingIsKept) {
  write("k.cu", std::string("#include <cuda.h>\n#define BLOCK 256\n") + Kernel);
  std::string Without = apply(SetBlock, nullptr);
  PreambleCache Tiny(/*MaxBytes=*/1);
  EXPECT_EQ(apply(SetBlock, &Tiny), Without);
  EXPECT_EQ(apply(SetBlock, &Tiny), Without);
  PreambleCache::Counts C = Tiny.counts();
  EXPECT_EQ(C.Builds, 0u);
  EXPECT_EQ(C.Reused, 0u);
  EXPECT_EQ(C.Bytes, 0u);
}

TEST_F(PreambleApply, KeepOnlyDropsOtherDirectories) {
  write("k.cu", std::string("#include <cuda.h>\n#define BLOCK 256\n") + Kernel);
  PreambleCache Cache;
  apply(SetBlock, &Cache);
  uint64_t Held = Cache.counts().Bytes;
  ASSERT_GT(Held, 0u);
  Cache.keepOnly(Dir);
  EXPECT_EQ(Cache.counts().Bytes, Held);
  Cache.keepOnly(Dir + "/elsewhere");
  EXPECT_EQ(Cache.counts().Bytes, 0u);
}

} // namespace
