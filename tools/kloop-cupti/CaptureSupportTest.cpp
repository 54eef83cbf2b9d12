//===- CaptureSupportTest.cpp - unit tests of libkloop-cupti's helpers ----===//
#include "CaptureSupport.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace kloop::cupti;

TEST(Format, Hex) {
  EXPECT_EQ(hex16(0xaf63dc4c8601ec8cULL), "af63dc4c8601ec8c");
  EXPECT_EQ(hex16(1), "0000000000000001");
  EXPECT_EQ(hexPointer(0x7f0000001000ULL), "0x7f0000001000");
}

TEST(Demangle, CxxAndC) {
  EXPECT_EQ(demangle("_Z5saxpyifPKfPf"), "saxpy(int, float, float const*, float*)");
  EXPECT_EQ(demangle("plain_c_kernel"), "plain_c_kernel");
  EXPECT_EQ(demangle("_Znot_a_valid_name"), "_Znot_a_valid_name");
}

TEST(Signature, PointersAndScalars) {
  auto Sig = parseSignature("saxpy(int, float, float const*, float*)");
  ASSERT_TRUE(Sig.has_value());
  ASSERT_EQ(Sig->size(), 4u);
  EXPECT_FALSE((*Sig)[0].IsPointer);
  EXPECT_FALSE((*Sig)[1].IsPointer);
  EXPECT_TRUE((*Sig)[2].IsPointer);
  EXPECT_TRUE((*Sig)[3].IsPointer);
  EXPECT_EQ((*Sig)[2].Type, "float const*");
}

TEST(Signature, TemplatesQualifiersAndFunctionPointers) {
  auto Sig = parseSignature(
      "void scale<128, Pair<int, float> >(float* restrict, Pair<int, float>, void (*)(int, int), double* const)");
  ASSERT_TRUE(Sig.has_value());
  ASSERT_EQ(Sig->size(), 4u);
  EXPECT_TRUE((*Sig)[0].IsPointer);
  EXPECT_FALSE((*Sig)[1].IsPointer);
  EXPECT_EQ((*Sig)[1].Type, "Pair<int, float>");
  EXPECT_FALSE((*Sig)[2].IsPointer); // a function pointer is not a data buffer
  EXPECT_TRUE((*Sig)[3].IsPointer);
}

TEST(Signature, FromRealMangledNames) {
  auto Sig = parseSignature(demangle("_Z6kernelILi4EEvPfPKfi")); // void kernel<4>(float*, float const*, int)
  ASSERT_TRUE(Sig.has_value());
  ASSERT_EQ(Sig->size(), 3u);
  EXPECT_TRUE((*Sig)[0].IsPointer);
  EXPECT_TRUE((*Sig)[1].IsPointer);
  EXPECT_FALSE((*Sig)[2].IsPointer);
  auto Anon = parseSignature(demangle("_ZN12_GLOBAL__N_13fooEPi")); // (anonymous namespace)::foo(int*)
  ASSERT_TRUE(Anon.has_value());
  ASSERT_EQ(Anon->size(), 1u);
  EXPECT_TRUE((*Anon)[0].IsPointer);
}

TEST(Signature, NoParametersAndNoSignature) {
  auto Empty = parseSignature("k()");
  ASSERT_TRUE(Empty.has_value());
  EXPECT_TRUE(Empty->empty());
  EXPECT_FALSE(parseSignature("plain_c_kernel").has_value());
  EXPECT_FALSE(parseSignature("broken(int, float*").has_value());
  EXPECT_FALSE(parseSignature("k(int,, float*)").has_value());
}

TEST(Lists, SplitAndTargets) {
  EXPECT_EQ(splitList(" a, ,b ,c"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(splitList("").empty());
  std::vector<std::string> T = splitList("saxpy,gemm");
  EXPECT_TRUE(matchesTarget(T, "saxpy(int, float, float const*, float*)"));
  EXPECT_TRUE(matchesTarget(T, "void gemm_tiled<16>(float*)"));
  EXPECT_FALSE(matchesTarget(T, "reduce(float*)"));
  EXPECT_FALSE(matchesTarget({}, "saxpy(int)"));
}

TEST(Poison, ArgsParsing) {
  std::string Err;
  auto Spec = parsePoisonArgs("1, saxpy:3", Err);
  ASSERT_TRUE(Spec.has_value()) << Err;
  ASSERT_EQ(Spec->size(), 2u);
  EXPECT_TRUE(shouldPoison(*Spec, "gemm(float*, float*)", 1));
  EXPECT_FALSE(shouldPoison(*Spec, "gemm(float*, float*, int, float*)", 3));
  EXPECT_TRUE(shouldPoison(*Spec, "saxpy(int, float, float const*, float*)", 3));
  EXPECT_FALSE(shouldPoison(*Spec, "saxpy(int, float, float const*, float*)", 2));
  auto None = parsePoisonArgs("", Err);
  ASSERT_TRUE(None.has_value());
  EXPECT_TRUE(None->empty());
}

TEST(Poison, ArgsErrorsNameTheEntry) {
  std::string Err;
  EXPECT_FALSE(parsePoisonArgs("1,x", Err).has_value());
  EXPECT_NE(Err.find("'x'"), std::string::npos) << Err;
  Err.clear();
  EXPECT_FALSE(parsePoisonArgs(":2", Err).has_value());
  EXPECT_NE(Err.find("empty kernel name"), std::string::npos) << Err;
  Err.clear();
  EXPECT_FALSE(parsePoisonArgs("k:-1", Err).has_value());
  EXPECT_NE(Err.find("k:-1"), std::string::npos) << Err;
  // The same list selects the parameters to dump (KLOOP_CUPTI_DUMP_ARGS); its errors name that variable.
  Err.clear();
  EXPECT_FALSE(parsePoisonArgs("k:x", Err, "KLOOP_CUPTI_DUMP_ARGS").has_value());
  EXPECT_EQ(Err.rfind("KLOOP_CUPTI_DUMP_ARGS entry 'k:x'", 0), 0u) << Err;
}

TEST(Poison, Mode) {
  std::string Err;
  EXPECT_EQ(parsePoisonMode("nan", Err), std::optional<uint8_t>(0xFF));
  EXPECT_EQ(parsePoisonMode("sentinel", Err), std::optional<uint8_t>(0xA5));
  EXPECT_FALSE(parsePoisonMode("", Err).has_value());
  EXPECT_FALSE(parsePoisonMode("none", Err).has_value());
  EXPECT_TRUE(Err.empty());
  EXPECT_FALSE(parsePoisonMode("zeros", Err).has_value());
  EXPECT_NE(Err.find("zeros"), std::string::npos);
  // 0xFF bytes are a NaN in both float widths.
  float F;
  double D;
  std::memset(&F, 0xFF, sizeof(F));
  std::memset(&D, 0xFF, sizeof(D));
  EXPECT_NE(F, F);
  EXPECT_NE(D, D);
}

TEST(Paths, OutputAndDumps) {
  EXPECT_EQ(expandOutputPath("/tmp/run.%p.json", 42), "/tmp/run.42.json");
  EXPECT_EQ(expandOutputPath("/tmp/100%%.json", 42), "/tmp/100%.json");
  EXPECT_EQ(expandOutputPath("/tmp/a%", 42), "/tmp/a%");
  EXPECT_EQ(dumpFileName("/tmp/x/run.json", 3, 1), "run.json.k3.a1.bin");
  EXPECT_EQ(dumpFileName("run.json", 0, 0), "run.json.k0.a0.bin");
  EXPECT_EQ(directoryOf("/tmp/x/run.json"), "/tmp/x");
  EXPECT_EQ(directoryOf("run.json"), ".");
  EXPECT_EQ(directoryOf("/run.json"), "/");
}

TEST(Numbers, ParseUnsigned) {
  EXPECT_EQ(parseUnsigned("1000"), std::optional<uint64_t>(1000));
  EXPECT_EQ(parseUnsigned(" 7 "), std::optional<uint64_t>(7));
  EXPECT_FALSE(parseUnsigned("").has_value());
  EXPECT_FALSE(parseUnsigned("1e3").has_value());
  EXPECT_FALSE(parseUnsigned("-1").has_value());
  EXPECT_FALSE(parseUnsigned("99999999999999999999999").has_value());
}

TEST(Allocations, FindInsertErase) {
  AllocationMap M;
  M.insert(0x1000, 0x100);
  M.insert(0x2000, 0x10);
  M.insert(0x3000, 0); // ignored
  EXPECT_EQ(M.size(), 2u);
  auto R = M.find(0x10ff);
  ASSERT_TRUE(R.has_value());
  EXPECT_EQ(R->Base, 0x1000u);
  EXPECT_EQ(R->Size, 0x100u);
  EXPECT_FALSE(M.find(0x1100).has_value()); // one past the end
  EXPECT_FALSE(M.find(0xfff).has_value());
  EXPECT_TRUE(M.find(0x2000).has_value());
  EXPECT_FALSE(M.find(0x3000).has_value());
  EXPECT_TRUE(M.erase(0x1000));
  EXPECT_FALSE(M.erase(0x1000));
  EXPECT_FALSE(M.find(0x1010).has_value());
  M.insert(0x2000, 0x40); // re-allocation at the same base replaces the size
  ASSERT_TRUE(M.find(0x203f).has_value());
  EXPECT_EQ(M.find(0x203f)->Size, 0x40u);
}

// Live and peak bytes are what the leak check of `kloop compare` reads from the profile.
TEST(Allocations, LiveAndPeakBytes) {
  AllocationMap M;
  EXPECT_EQ(M.bytes(), 0u);
  M.insert(0x1000, 100);
  M.insert(0x2000, 50);
  EXPECT_EQ(M.bytes(), 150u);
  EXPECT_EQ(M.peakBytes(), 150u);
  M.insert(0x2000, 20); // same base replaced: live bytes follow the new size
  EXPECT_EQ(M.bytes(), 120u);
  EXPECT_TRUE(M.erase(0x1000));
  EXPECT_FALSE(M.erase(0x1000)); // a double free changes nothing
  EXPECT_EQ(M.bytes(), 20u);
  EXPECT_EQ(M.peakBytes(), 150u);
  M.insert(0x3000, 0); // ignored
  EXPECT_EQ(M.bytes(), 20u);
  EXPECT_EQ(M.size(), 1u);
}

TEST(ProcessCensus, ProcessesOfAnotherGroupOrInvisibleAreForeign) {
  // pid -> process group; 300 is not visible (-1).
  std::map<unsigned, long> Groups = {{100, 100}, {101, 100}, {200, 200}, {201, 201}};
  auto GroupOf = [&](unsigned Pid) -> long {
    auto It = Groups.find(Pid);
    return It == Groups.end() ? -1 : It->second;
  };
  ProcessCensus C = censusProcesses({100, 200, 101, 300, 100}, /*OwnGroup=*/100, GroupOf);
  EXPECT_EQ(C.Compute, 4u) << "pid 100 listed twice (two MIG compute instances) counts once";
  EXPECT_EQ(C.Foreign, 2u);
  EXPECT_EQ(C.ForeignPids, (std::vector<unsigned>{200, 300}));
  ProcessCensus Own = censusProcesses({100, 101}, 100, GroupOf);
  EXPECT_EQ(Own.Compute, 2u);
  EXPECT_EQ(Own.Foreign, 0u);
  EXPECT_TRUE(Own.ForeignPids.empty());
  ProcessCensus None = censusProcesses({}, 100, GroupOf);
  EXPECT_EQ(None.Compute, 0u);
  EXPECT_EQ(None.Foreign, 0u);
}

TEST(ProcessCensus, ForeignPidListIsCappedButTheCountIsExact) {
  std::vector<unsigned> Pids;
  for (unsigned P = 1000; P < 1020; ++P)
    Pids.push_back(P);
  ProcessCensus C = censusProcesses(Pids, 7, [](unsigned Pid) -> long { return Pid; });
  EXPECT_EQ(C.Compute, 20u);
  EXPECT_EQ(C.Foreign, 20u);
  ASSERT_EQ(C.ForeignPids.size(), MaxForeignPids);
  EXPECT_EQ(C.ForeignPids.front(), 1000u);
  EXPECT_EQ(C.ForeignPids.back(), 1000u + MaxForeignPids - 1);
}

TEST(ProcessCensus, RealProcessGroups) {
  // What the sampler passes: getpgid. A child in our group is ours; one that made its own group (as a
  // second program started elsewhere would be) and a pid that no longer exists are foreign.
  auto GroupOf = [](unsigned Pid) -> long { return getpgid(static_cast<pid_t>(Pid)); };
  pid_t Same = fork();
  ASSERT_GE(Same, 0);
  if (Same == 0) {
    pause();
    _exit(0);
  }
  int Ready[2];
  ASSERT_EQ(pipe(Ready), 0);
  pid_t Other = fork();
  ASSERT_GE(Other, 0);
  if (Other == 0) {
    setpgid(0, 0);
    char C = 1;
    (void)!write(Ready[1], &C, 1);
    pause();
    _exit(0);
  }
  char C = 0;
  ASSERT_EQ(read(Ready[0], &C, 1), 1);
  pid_t Gone = fork();
  ASSERT_GE(Gone, 0);
  if (Gone == 0)
    _exit(0);
  ASSERT_EQ(waitpid(Gone, nullptr, 0), Gone);
  ProcessCensus Census =
      censusProcesses({static_cast<unsigned>(getpid()), static_cast<unsigned>(Same), static_cast<unsigned>(Other),
                       static_cast<unsigned>(Gone)},
                      getpgid(0), GroupOf);
  kill(Same, SIGKILL);
  kill(Other, SIGKILL);
  waitpid(Same, nullptr, 0);
  waitpid(Other, nullptr, 0);
  close(Ready[0]);
  close(Ready[1]);
  EXPECT_EQ(Census.Compute, 4u);
  EXPECT_EQ(Census.Foreign, 2u);
  EXPECT_EQ(Census.ForeignPids, (std::vector<unsigned>{static_cast<unsigned>(Other), static_cast<unsigned>(Gone)}));
}
