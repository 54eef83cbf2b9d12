//===- AntiCheatTest.cpp - Each planted cheat is caught -------------------===//
#include "kloop/Verify/AntiCheat.h"
#include "kloop/Verify/Compare.h"
#include "TestProfiles.h"
#include "gtest/gtest.h"
#include <cmath>

using namespace kloop::verify;
using namespace kloop::verify::test;

namespace {

bool contains(const std::string &Hay, const std::string &Needle) {
  return Hay.find(Needle) != std::string::npos;
}

const char *SaxpyM = "_Z5saxpyifPKfPf";
const char *SaxpyD = "saxpy(int, float, float const*, float*)";

std::vector<float> ramp(size_t N) {
  std::vector<float> V(N);
  for (size_t I = 0; I < N; ++I)
    V[I] = 1.0f + I;
  return V;
}

std::vector<uint8_t> withPoison(std::vector<float> V, size_t From,
                                uint8_t Byte) {
  std::vector<uint8_t> B = bytesOf(V);
  std::fill(B.begin() + From * 4, B.end(), Byte);
  return B;
}

const Finding *find(const CompareReport &R, FindingKind K) {
  for (const Finding &F : R.Findings)
    if (F.Kind == K)
      return &F;
  return nullptr;
}

OutputSpec saxpyOut(ToleranceKind K, double V) {
  return {"saxpy", 3, DType::F32, {K, V}};
}

TEST(AntiCheat, PoisonElementPatterns) {
  EXPECT_TRUE(isPoisonElement(std::vector<uint8_t>{0xFF, 0xFF, 0xFF, 0xFF}));
  EXPECT_TRUE(isPoisonElement(std::vector<uint8_t>{0xA5, 0xA5}));
  EXPECT_FALSE(isPoisonElement(std::vector<uint8_t>{0xFF, 0xA5}));
  EXPECT_FALSE(isPoisonElement(std::vector<uint8_t>{0x00, 0x00}));
  // A region the baseline leaves unwritten too, or a real -1 in both, is not
  // counted.
  auto B = bytesOf(std::vector<int32_t>{1, -1, 3, -1});
  auto C = bytesOf(std::vector<int32_t>{1, -1, -1, -1});
  EXPECT_EQ(countLeftPoison(C, B, 4), 1u);
  EXPECT_EQ(countLeftPoison(C, {}, 4), 3u);
  EXPECT_TRUE(hashIsAllPoison(bufferHashOf(std::vector<uint8_t>(64, 0xA5)), 64));
  EXPECT_TRUE(hashIsAllPoison(bufferHashOf(std::vector<uint8_t>(64, 0xFF)), 64));
  EXPECT_FALSE(hashIsAllPoison(bufferHashOf(std::vector<uint8_t>(64, 0)), 64));
}

// A baseline output with nothing to compare: all NaN (any dtype's NaN), or all
// poison when it was poisoned; from the bytes and from the hash alone.
TEST(AntiCheat, VacuousBaselineOutputs) {
  using V = VacuousOutput;
  std::vector<uint8_t> F16NaN = {0x00, 0x7E, 0x01, 0xFE}; // two f16 NaNs
  std::vector<double> F64NaN(3, std::nan(""));
  std::vector<uint8_t> Ones(16, 0xFF), Sentinel(16, 0xA5);
  EXPECT_EQ(vacuousOutput(F16NaN, DType::F16, false), V::AllNaN);
  EXPECT_EQ(vacuousOutput(bytesOf(F64NaN), DType::F64, true), V::AllNaN);
  EXPECT_EQ(vacuousOutput(Ones, DType::F32, true), V::AllPoison);
  EXPECT_EQ(vacuousOutput(Ones, DType::F32, false), V::AllNaN);
  EXPECT_EQ(vacuousOutput(Sentinel, DType::F32, true), V::AllPoison);
  // Without poisoning, the patterns are values: f32 -2.9e-16, i32 -1, u8 255.
  EXPECT_EQ(vacuousOutput(Sentinel, DType::F32, false), V::No);
  EXPECT_EQ(vacuousOutput(Ones, DType::I32, false), V::No);
  EXPECT_EQ(vacuousOutput(Ones, DType::U8, false), V::No);
  EXPECT_EQ(vacuousOutput(Ones, DType::I32, true), V::AllPoison);
  // One number is enough; an empty buffer is not vacuous.
  std::vector<float> Mixed = {std::nanf(""), 1.0f, std::nanf("")};
  EXPECT_EQ(vacuousOutput(bytesOf(Mixed), DType::F32, true), V::No);
  EXPECT_EQ(vacuousOutput({}, DType::F32, true), V::No);
  // From the hash.
  EXPECT_EQ(vacuousOutputFromHash(bufferHashOf(Sentinel), 16, DType::F32, true),
            V::AllPoison);
  EXPECT_EQ(vacuousOutputFromHash(bufferHashOf(Sentinel), 16, DType::F32, false),
            V::No);
  EXPECT_EQ(vacuousOutputFromHash(bufferHashOf(Ones), 16, DType::F64, false),
            V::AllNaN);
  EXPECT_EQ(vacuousOutputFromHash(bufferHashOf(Ones), 16, DType::I32, false), V::No);
  EXPECT_EQ(vacuousOutputFromHash(bufferHashOf(bytesOf(ramp(4))), 16, DType::F32,
                                  true),
            V::No);
}

// (a) Only part of the output written, NaN poison (0xFF).
TEST(AntiCheat, PartlyUnwrittenOutputNaNPoison) {
  TempDir D;
  ProfileBuilder B(D, "base"), C(D, "cand");
  B.capture(SaxpyM, SaxpyD, 0, 3, bytesOf(ramp(1024)));
  C.capture(SaxpyM, SaxpyD, 0, 3, withPoison(ramp(1024), 512, 0xFF));
  auto R = compareProfiles(B.read(), C.read(),
                           {saxpyOut(ToleranceKind::Rel, 1e-5)});
  ASSERT_TRUE(static_cast<bool>(R)) << llvm::toString(R.takeError());
  EXPECT_FALSE(R->Passed);
  const Finding *F = find(*R, FindingKind::UnwrittenOutput);
  ASSERT_NE(F, nullptr) << R->Explanation;
  EXPECT_TRUE(F->Fatal);
  EXPECT_TRUE(contains(F->Message, "saxpy #0 arg 3: output not fully written: "
                                   "512 of 1024 elements still poison"))
      << F->Message;
  // The poison NaNs are reported as unwritten, not as new NaNs.
  EXPECT_EQ(find(*R, FindingKind::NewNaN), nullptr);
  EXPECT_TRUE(contains(R->Explanation, "still poison"));
}

// (a) Sentinel poison (0xA5A5A5A5 = -2.9e-16 as f32) over a baseline of
// zeros passes a loose absolute tolerance; the poison check still refuses.
TEST(AntiCheat, UnwrittenOutputPassingALooseToleranceIsStillRefused) {
  TempDir D;
  ProfileBuilder B(D, "base"), C(D, "cand");
  std::vector<float> Zeros(256, 0.0f);
  B.capture(SaxpyM, SaxpyD, 0, 3, bytesOf(Zeros));
  C.capture(SaxpyM, SaxpyD, 0, 3, withPoison(Zeros, 200, 0xA5));
  auto R = compareProfiles(B.read(), C.read(),
                           {saxpyOut(ToleranceKind::Abs, 1e-3)});
  ASSERT_TRUE(static_cast<bool>(R));
  EXPECT_EQ(R->Mismatched, 0u) << "within the (too loose) tolerance";
  EXPECT_FALSE(R->Passed);
  const Finding *F = find(*R, FindingKind::UnwrittenOutput);
  ASSERT_NE(F, nullptr);
  EXPECT_TRUE(contains(F->Message, "56 of 256 elements still poison"));
}

// (a) Output not written at all, seen from the hash when there is no dump.
TEST(AntiCheat, UnwrittenOutputSeenFromHashAlone) {
  TempDir D;
  ProfileBuilder B(D, "base"), C(D, "cand");
  B.capture(SaxpyM, SaxpyD, 0, 3, bytesOf(ramp(100)), /*Dump=*/false);
  C.capture(SaxpyM, SaxpyD, 0, 3, std::vector<uint8_t>(400, 0xFF),
            /*Dump=*/false);
  auto R = compareProfiles(B.read(), C.read(),
                           {saxpyOut(ToleranceKind::Rel, 1e-5)});
  ASSERT_TRUE(static_cast<bool>(R));
  EXPECT_FALSE(R->Passed);
  const Finding *F = find(*R, FindingKind::UnwrittenOutput);
  ASSERT_NE(F, nullptr);
  EXPECT_TRUE(contains(F->Message, "100 of 100 elements still poison (seen "
                                   "from the hash)"))
      << F->Message;
}

// (b) NaN where the baseline has none (no poisoning in this run).
TEST(AntiCheat, NaNWhereBaselineHasNone) {
  TempDir D;
  ProfileBuilder B(D, "base"), C(D, "cand");
  auto V = ramp(64);
  B.capture(SaxpyM, SaxpyD, 0, 3, bytesOf(V), true, /*Poisoned=*/false);
  V[5] = std::nanf("");
  V[9] = std::nanf("");
  C.capture(SaxpyM, SaxpyD, 0, 3, bytesOf(V), true, /*Poisoned=*/false);
  auto R = compareProfiles(B.read(), C.read(),
                           {saxpyOut(ToleranceKind::Rel, 1e-5)});
  ASSERT_TRUE(static_cast<bool>(R));
  EXPECT_FALSE(R->Passed);
  const Finding *F = find(*R, FindingKind::NewNaN);
  ASSERT_NE(F, nullptr);
  EXPECT_TRUE(contains(F->Message, "2 of 64 elements are NaN where the "
                                   "baseline has a number"));
  EXPECT_EQ(find(*R, FindingKind::UnwrittenOutput), nullptr);
}

// (c) The candidate launches the target fewer times (results cached or work
// moved): the missing captures and the changed launch count are reported.
TEST(AntiCheat, MissingCaptureAndChangedLaunchCount) {
  TempDir D;
  ProfileBuilder B(D, "base"), C(D, "cand");
  for (uint64_t K = 0; K < 4; ++K)
    B.capture(SaxpyM, SaxpyD, K, 3, bytesOf(ramp(8)));
  for (uint64_t K = 0; K < 3; ++K)
    C.capture(SaxpyM, SaxpyD, K, 3, bytesOf(ramp(8)));
  auto R = compareProfiles(B.read(), C.read(),
                           {saxpyOut(ToleranceKind::Rel, 1e-5)});
  ASSERT_TRUE(static_cast<bool>(R));
  EXPECT_FALSE(R->Passed);
  EXPECT_EQ(R->Matched, 3u);
  EXPECT_EQ(R->Mismatched, 1u);
  EXPECT_EQ(R->Launches[3].Method, CompareMethod::Missing);
  const Finding *M = find(*R, FindingKind::MissingCapture);
  ASSERT_NE(M, nullptr);
  EXPECT_EQ(M->KernelOrdinal, 3u);
  EXPECT_TRUE(contains(M->Message, "saxpy #3 arg 3: capture missing in the "
                                   "candidate"));
  const Finding *L = find(*R, FindingKind::LaunchCountChanged);
  ASSERT_NE(L, nullptr);
  EXPECT_TRUE(contains(L->Message, "target kernel saxpy launched 3 times in "
                                   "the candidate but 4 times in the baseline"))
      << L->Message;
}

TEST(AntiCheat, ExtraLaunchesAndNewKernels) {
  TempDir D;
  ProfileBuilder B(D, "base"), C(D, "cand");
  B.capture(SaxpyM, SaxpyD, 0, 3, bytesOf(ramp(8)));
  C.capture(SaxpyM, SaxpyD, 0, 3, bytesOf(ramp(8)));
  C.capture(SaxpyM, SaxpyD, 1, 3, bytesOf(ramp(8)));
  // Work moved into a helper kernel (e.g. on a side stream).
  C.launch("_Z11saxpyHelperPf", "saxpyHelper(float*)");
  auto R = compareProfiles(B.read(), C.read(),
                           {saxpyOut(ToleranceKind::Rel, 1e-5)});
  ASSERT_TRUE(static_cast<bool>(R));
  EXPECT_FALSE(R->Passed);
  EXPECT_NE(find(*R, FindingKind::ExtraCapture), nullptr);
  EXPECT_NE(find(*R, FindingKind::LaunchCountChanged), nullptr);
  const Finding *N = find(*R, FindingKind::NewKernel);
  ASSERT_NE(N, nullptr);
  EXPECT_TRUE(contains(N->Message, "kernel saxpyHelper (1 times) that the "
                                   "baseline never launched"));
}

TEST(AntiCheat, LaunchCountsOnlyBindTargets) {
  TempDir D;
  ProfileBuilder B(D, "base"), C(D, "cand");
  B.launch("_Z4initPf", "init(float*)");
  B.launch("_Z4initPf", "init(float*)");
  B.launch(SaxpyM, SaxpyD);
  C.launch("_Z4initPf", "init(float*)");
  C.launch(SaxpyM, SaxpyD);
  Profile PB = B.read(), PC = C.read();
  EXPECT_TRUE(checkLaunchCounts(PB, PC, {"saxpy"}).empty());
  auto F = checkLaunchCounts(PB, PC, {"saxpy", "init"});
  ASSERT_EQ(F.size(), 1u);
  EXPECT_EQ(F[0].Kernel, "init");
}

// (d) Determinism: the same seed run twice.
TEST(AntiCheat, Determinism) {
  TempDir D;
  ProfileBuilder B1(D, "b1"), B2(D, "b2"), C1(D, "c1"), C2(D, "c2");
  for (uint64_t K = 0; K < 4; ++K) {
    B1.capture(SaxpyM, SaxpyD, K, 3, bytesOf(ramp(8)), false);
    B2.capture(SaxpyM, SaxpyD, K, 3, bytesOf(ramp(8)), false);
    C1.capture(SaxpyM, SaxpyD, K, 3, bytesOf(ramp(8)), false);
    auto V = ramp(8);
    if (K == 2)
      V[0] = std::nextafter(V[0], 0.0f); // atomics reordered a sum
    C2.capture(SaxpyM, SaxpyD, K, 3, bytesOf(V), false);
  }
  std::vector<OutputSpec> Outs = {saxpyOut(ToleranceKind::Rel, 1e-5)};
  auto BD = checkDeterminism(B1.read(), B2.read(), Outs);
  auto CD = checkDeterminism(C1.read(), C2.read(), Outs);
  ASSERT_TRUE(static_cast<bool>(BD));
  ASSERT_TRUE(static_cast<bool>(CD));
  ASSERT_EQ(BD->size(), 1u);
  EXPECT_TRUE((*BD)[0].Deterministic);
  EXPECT_EQ((*BD)[0].Launches, 4u);
  EXPECT_FALSE((*CD)[0].Deterministic);
  EXPECT_EQ((*CD)[0].DifferingLaunches, 1u);
  auto Cmp = compareDeterminism(*BD, *CD);
  ASSERT_EQ(Cmp.size(), 1u);
  EXPECT_TRUE(Cmp[0].Regressed);
  EXPECT_EQ(Cmp[0].Message, "saxpy arg 3: baseline bitwise deterministic, "
                            "candidate not (1 of 4 launches differ)");
  // A non-deterministic baseline does not bind the candidate.
  auto Rev = compareDeterminism(*CD, *BD);
  EXPECT_FALSE(Rev[0].Regressed);
  // No capture in the first run is an error.
  ProfileBuilder E(D, "empty");
  auto Err = checkDeterminism(E.read(), E.read(), Outs);
  ASSERT_FALSE(static_cast<bool>(Err));
  EXPECT_TRUE(contains(llvm::toString(Err.takeError()), "has no capture"));
}

} // namespace

// (e) The planted "work moved to another stream": same kernel, same count, same
// outputs, but the second launch runs on a stream the baseline never used.
TEST(AntiCheat, TargetLaunchMovedToAnotherStream) {
  TempDir D;
  ProfileBuilder B(D, "base"), C(D, "cand");
  B.launch("_Z4initPf", "init(float*)", 1000, 7);
  B.launch(SaxpyM, SaxpyD, 1000, 7);
  B.launch(SaxpyM, SaxpyD, 1000, 7);
  C.launch("_Z4initPf", "init(float*)", 1000, 13); // ids differ between processes
  C.launch(SaxpyM, SaxpyD, 1000, 13);
  C.launch(SaxpyM, SaxpyD, 1000, 14);
  Profile PB = B.read(), PC = C.read();
  auto F = checkStreams(PB, PC, {"saxpy"});
  ASSERT_EQ(F.size(), 1u);
  EXPECT_EQ(F[0].Kind, FindingKind::StreamChanged);
  EXPECT_TRUE(F[0].Fatal);
  EXPECT_EQ(F[0].KernelOrdinal, 1u);
  EXPECT_TRUE(contains(F[0].Message, "1 of 2 launches launched on a different "
                                     "stream"))
      << F[0].Message;
  // Renumbered ids alone are not a move: a candidate on stream 13 throughout passes.
  ProfileBuilder C2(D, "cand2");
  C2.launch("_Z4initPf", "init(float*)", 1000, 13);
  C2.launch(SaxpyM, SaxpyD, 1000, 13);
  C2.launch(SaxpyM, SaxpyD, 1000, 13);
  EXPECT_TRUE(checkStreams(PB, C2.read(), {"saxpy"}).empty());
  // Non-target kernels may move.
  EXPECT_TRUE(checkStreams(PB, PC, {"init"}).size() == 0u);
}

// (e) through compareProfiles: the stream finding refuses the candidate.
TEST(AntiCheat, StreamMoveRefusesThroughCompareProfiles) {
  TempDir D;
  ProfileBuilder B(D, "base"), C(D, "cand");
  B.launch(SaxpyM, SaxpyD, 1000, 7);
  B.capture(SaxpyM, SaxpyD, 1, 3, bytesOf(ramp(8)));
  C.launch(SaxpyM, SaxpyD, 1000, 7);
  C.launch(SaxpyM, SaxpyD, 1000, 9);
  C.capture(SaxpyM, SaxpyD, 1, 3, bytesOf(ramp(8)), true, true, false);
  auto R = compareProfiles(B.read(), C.read(),
                           {saxpyOut(ToleranceKind::Rel, 1e-5)});
  ASSERT_TRUE(static_cast<bool>(R));
  EXPECT_FALSE(R->Passed);
  EXPECT_NE(find(*R, FindingKind::StreamChanged), nullptr);
  EXPECT_TRUE(contains(R->Explanation, "different stream")) << R->Explanation;
}

// (f) Leaks: more live bytes at exit than the baseline refuses; as many (a
// program that leaves its buffers to process teardown) does not; profiles
// without "memory" are not judged.
TEST(AntiCheat, MemoryLeak) {
  TempDir D;
  ProfileBuilder B(D, "base"), C(D, "cand"), Same(D, "same"), Old(D, "old");
  for (ProfileBuilder *P : {&B, &C, &Same, &Old})
    P->capture(SaxpyM, SaxpyD, 0, 3, bytesOf(ramp(8)));
  B.memory(3, 3u << 20);
  C.memory(23, (3u << 20) + 20 * (1u << 20));
  Same.memory(3, 3u << 20);
  Profile PB = B.read();
  auto F = checkLeaks(PB, C.read());
  ASSERT_EQ(F.size(), 1u);
  EXPECT_EQ(F[0].Kind, FindingKind::MemoryLeak);
  EXPECT_TRUE(contains(F[0].Message, "leaks device memory: 24117248 bytes in "
                                     "23 allocation(s)"))
      << F[0].Message;
  EXPECT_TRUE(checkLeaks(PB, Same.read()).empty());
  EXPECT_TRUE(checkLeaks(PB, Old.read()).empty());
  auto R = compareProfiles(PB, C.read(), {saxpyOut(ToleranceKind::Rel, 1e-5)});
  ASSERT_TRUE(static_cast<bool>(R));
  EXPECT_FALSE(R->Passed);
  EXPECT_NE(find(*R, FindingKind::MemoryLeak), nullptr);
}

// (e) Every target launch moved from the default stream to one created
// stream: numbering alone would call both "the first stream"; the stream kind
// recorded by libkloop-cupti.so tells them apart.
TEST(AntiCheat, AllLaunchesMovedOffTheDefaultStream) {
  TempDir D;
  ProfileBuilder B(D, "base"), C(D, "cand");
  for (int I = 0; I < 3; ++I) {
    B.launch(SaxpyM, SaxpyD, 1000, 7, "default");
    C.launch(SaxpyM, SaxpyD, 1000, 21, "created");
  }
  auto F = checkStreams(B.read(), C.read(), {"saxpy"});
  ASSERT_EQ(F.size(), 1u);
  EXPECT_TRUE(contains(F[0].Message, "3 of 3 launches launched on a different "
                                     "stream than the baseline's (first: "
                                     "launch #0 on created stream #0 in the "
                                     "candidate, default in the baseline"))
      << F[0].Message;
}
