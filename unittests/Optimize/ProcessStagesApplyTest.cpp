// kloop optimize's apply stage (kloop/Optimize/Stages.h): it parses the sources where the candidate
// was copied from, so that candidates share the run's preambles, and writes the changes into the
// copy, a file reached with ".." included; the sources it parsed stay as they were.
#include "kloop/Optimize/Stages.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

#include <fstream>

using namespace kloop;
using namespace kloop::optimize;

namespace {

const std::string K2 = "#include <cuda.h>\n#define BLOCK 256\n__global__ void k2(float *p) { p[threadIdx.x] = 1; }\n"
                       "void run2(float *p) { k2<<<1, BLOCK>>>(p); }\n";

class ProcessStagesApply : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> D;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("kloop-stages-apply-test", D));
    Root = std::string(D);
    // The workload's directory is app/; its second translation unit, which holds the tunable macro,
    // lies in ../common.
    write("app/k.cu", "#include <cuda.h>\n__global__ void k(float *p) { p[threadIdx.x] = 0; }\nvoid run(float *p) { k<<<1, 64>>>(p); }\n");
    write("common/k2.cu", K2);
    C.Dir = Root + "/app";
    C.Path = C.Dir + "/.kloop.yaml";
    C.Sources = {"k.cu", "../common/k2.cu"};
    ProcessStagesOptions O;
    O.CompilerArgs = {"-nocudainc", "-nocudalib", "--cuda-gpu-arch=sm_90", "-isystem",
                      std::string(KLOOP_TEST_SRC_ROOT) + "/test/Inputs"};
    S = makeProcessStages(C, O);
  }
  void TearDown() override { llvm::sys::fs::remove_directories(Root); }

  void write(const std::string &Rel, const std::string &Text) {
    std::string P = Root + "/" + Rel;
    llvm::sys::fs::create_directories(llvm::sys::path::parent_path(P));
    std::ofstream(P) << Text;
  }
  std::string read(const std::string &P) {
    auto B = llvm::MemoryBuffer::getFile(P);
    return B ? (*B)->getBuffer().str() : "<unreadable " + P + ">";
  }
  /// A candidate: a fresh copy of the workload's sources at \p Name, \p Proposal applied to it, the
  /// sources parsed at \p From (default: the workload's directory).
  std::pair<std::string, ApplyOutcome> candidate(const std::string &Name, const std::string &Proposal,
                                                 std::string From = "") {
    if (From.empty())
      From = C.Dir;
    llvm::Expected<std::string> Dir = S->copySources(C.Dir, Root + "/cand/" + Name);
    EXPECT_TRUE(bool(Dir)) << (Dir ? "" : llvm::toString(Dir.takeError()));
    if (!Dir)
      return {};
    std::string PF = Root + "/cand/" + Name + ".proposal.json";
    std::ofstream(PF) << Proposal;
    llvm::Expected<ApplyOutcome> A = S->apply(PF, *Dir, From);
    EXPECT_TRUE(bool(A)) << (A ? "" : llvm::toString(A.takeError()));
    if (!A)
      return {};
    return {*Dir, *A};
  }

  std::string Root;
  measure::WorkloadConfig C;
  std::unique_ptr<Stages> S;
};

TEST_F(ProcessStagesApply, WritesTheCopyAndLeavesTheParsedSources) {
  const char *Set = R"({"rationale":"t","edits":[{"kind":"set_constant","id":"macro:BLOCK","value":128}]})";
  for (const char *Name : {"c1", "c2"}) {
    auto [Dir, A] = candidate(Name, Set);
    ASSERT_TRUE(A.Applied) << A.refusalText() << A.Failure.value_or("");
    EXPECT_EQ(Dir, Root + "/cand/" + Name + "/app");
    std::string Want = K2;
    Want.replace(Want.find("256"), 3, "128");
    EXPECT_EQ(read(Dir + "/../common/k2.cu"), Want);
    EXPECT_EQ(read(Root + "/common/k2.cu"), K2) << "the parsed sources are not written";
    EXPECT_FALSE(A.LaunchFormulas.empty());
  }
}

TEST_F(ProcessStagesApply, FromWithDotComponents) {
  // kloop optimize -o ./out: the directory parsed is named with a "." component.
  const char *Set = R"({"rationale":"t","edits":[{"kind":"set_constant","id":"macro:BLOCK","value":128}]})";
  auto [Dir, A] = candidate("c1", Set, Root + "/./app/../app");
  ASSERT_TRUE(A.Applied) << A.refusalText();
  EXPECT_NE(read(Dir + "/../common/k2.cu"), K2);
  EXPECT_EQ(read(Root + "/common/k2.cu"), K2) << "the parsed sources are not written";
}

TEST_F(ProcessStagesApply, ChangeOutsideTheCopyIsRefused) {
  // A header that no source names is not copied: the candidate cannot hold its change.
  write("common/cfg.h", "#define WIDTH 64\n");
  write("app/k.cu", "#include <cuda.h>\n#include \"../common/cfg.h\"\n__global__ void k(float *p) { p[threadIdx.x] = 0; }\n"
                    "void run(float *p) { k<<<1, WIDTH>>>(p); }\n");
  const char *Set = R"({"rationale":"t","edits":[{"kind":"set_constant","id":"macro:WIDTH","value":128}]})";
  auto [Dir, A] = candidate("c1", Set);
  EXPECT_FALSE(A.Applied);
  EXPECT_NE(A.refusalText().find("the proposal changes " + Root + "/common/cfg.h, which is not among the files"),
            std::string::npos)
      << A.refusalText();
  EXPECT_EQ(read(Root + "/common/cfg.h"), "#define WIDTH 64\n");
}

TEST_F(ProcessStagesApply, RefusalWritesNothing) {
  const char *Bad = R"({"rationale":"t","edits":[{"kind":"set_constant","id":"macro:NOPE","value":128}]})";
  auto [Dir, A] = candidate("c1", Bad);
  EXPECT_FALSE(A.Applied);
  EXPECT_FALSE(A.Refusals.empty());
  EXPECT_EQ(read(Dir + "/../common/k2.cu"), K2);
}

} // namespace
