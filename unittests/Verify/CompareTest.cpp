//===- CompareTest.cpp - Tests of tolerances and launch-by-launch compare -===//
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

OutputSpec rel(double V) {
  return {"saxpy", 3, DType::F32, {ToleranceKind::Rel, V}};
}

BufferComparison cmp(const std::vector<uint8_t> &B,
                     const std::vector<uint8_t> &C, DType T, Tolerance Tol) {
  auto R = compareBuffers(B, C, T, Tol);
  EXPECT_TRUE(static_cast<bool>(R));
  if (!R) {
    llvm::consumeError(R.takeError());
    return BufferComparison();
  }
  return *R;
}

TEST(Compare, ParsesNames) {
  EXPECT_EQ(*parseDType("f16"), DType::F16);
  EXPECT_EQ(*parseDType("bytes"), DType::U8);
  EXPECT_EQ(dtypeSize(DType::F64), 8u);
  auto Bad = parseDType("bf16");
  ASSERT_FALSE(static_cast<bool>(Bad));
  EXPECT_TRUE(contains(llvm::toString(Bad.takeError()), "unknown dtype 'bf16'"));
  EXPECT_EQ(*parseToleranceKind("ulp"), ToleranceKind::Ulp);
  auto BadK = parseToleranceKind("fuzzy");
  ASSERT_FALSE(static_cast<bool>(BadK));
  EXPECT_TRUE(contains(llvm::toString(BadK.takeError()), "'fuzzy'"));
}

TEST(Compare, KernelBaseName) {
  EXPECT_EQ(kernelBaseName("saxpy(int, float, float const*, float*)"), "saxpy");
  EXPECT_EQ(kernelBaseName("void ns::gemm<128, float>(float*, int)"), "gemm");
  EXPECT_EQ(kernelBaseName("reduce<std::pair<int, int> >(int*)"), "reduce");
  EXPECT_EQ(kernelBaseName("plain"), "plain");
  EXPECT_TRUE(kernelMatches("saxpy", SaxpyM, SaxpyD));
  EXPECT_TRUE(kernelMatches(SaxpyM, SaxpyM, ""));
  EXPECT_FALSE(kernelMatches("sax", SaxpyM, SaxpyD));
  EXPECT_FALSE(kernelMatches("saxpy", "_Z8saxpy_v2Pf", "saxpy_v2(float*)"));
}

TEST(Compare, RelativeTolerance) {
  auto B = bytesOf(std::vector<float>{1.0f, 100.0f, -3.0f, 0.0f});
  auto Within = bytesOf(std::vector<float>{1.000001f, 100.0005f, -3.0f, 0.0f});
  BufferComparison R = cmp(B, Within, DType::F32, {ToleranceKind::Rel, 1e-5});
  EXPECT_EQ(R.Elements, 4u);
  EXPECT_EQ(R.Mismatched, 0u);
  EXPECT_GT(R.MaxRelError, 0);
  EXPECT_LT(R.MaxRelError, 1e-5);
  auto Outside = bytesOf(std::vector<float>{1.0f, 100.1f, -3.0f, 0.0f});
  R = cmp(B, Outside, DType::F32, {ToleranceKind::Rel, 1e-5});
  EXPECT_EQ(R.Mismatched, 1u);
  ASSERT_TRUE(R.FirstMismatch.has_value());
  EXPECT_EQ(*R.FirstMismatch, 1u);
  EXPECT_NEAR(R.FirstCandidate, 100.1, 1e-4);
  // A zero written where the baseline has a value fails any rel < 1.
  auto Zeros = bytesOf(std::vector<float>{0, 0, 0, 0});
  R = cmp(B, Zeros, DType::F32, {ToleranceKind::Rel, 0.5});
  EXPECT_EQ(R.Mismatched, 3u);
}

TEST(Compare, AbsoluteUlpAndExact) {
  float One = 1.0f, Next = std::nextafter(1.0f, 2.0f),
        Next3 = std::nextafter(std::nextafter(Next, 2.0f), 2.0f);
  auto B = bytesOf(std::vector<float>{One, One, 0.0f});
  auto C = bytesOf(std::vector<float>{Next, Next3, -0.0f});
  BufferComparison U1 = cmp(B, C, DType::F32, {ToleranceKind::Ulp, 1});
  EXPECT_EQ(U1.MaxUlpError, 3u);
  EXPECT_EQ(U1.Mismatched, 1u) << "3 ulp > 1 ulp; +0 == -0 by value";
  EXPECT_EQ(cmp(B, C, DType::F32, {ToleranceKind::Ulp, 3}).Mismatched, 0u);
  EXPECT_EQ(cmp(B, C, DType::F32, {ToleranceKind::Abs, 1e-6}).Mismatched, 0u);
  EXPECT_EQ(cmp(B, C, DType::F32, {ToleranceKind::Abs, 1e-8}).Mismatched, 2u);
  // Exact is bitwise: -0 differs from +0.
  EXPECT_EQ(cmp(B, C, DType::F32, {ToleranceKind::Exact, 0}).Mismatched, 3u);
  // Across zero: the ulp distance counts the representable values between.
  auto PZ = bytesOf(std::vector<float>{std::numeric_limits<float>::denorm_min()});
  auto NZ =
      bytesOf(std::vector<float>{-std::numeric_limits<float>::denorm_min()});
  EXPECT_EQ(cmp(PZ, NZ, DType::F32, {ToleranceKind::Ulp, 10}).MaxUlpError, 2u);
}

TEST(Compare, NaNAndInfinity) {
  float NaN = std::nanf(""), Inf = INFINITY;
  auto B = bytesOf(std::vector<float>{NaN, Inf, 1.0f});
  auto Same = bytesOf(std::vector<float>{NaN, Inf, 1.0f});
  EXPECT_EQ(cmp(B, Same, DType::F32, {ToleranceKind::Rel, 1e-5}).Mismatched, 0u);
  auto C = bytesOf(std::vector<float>{1.0f, -Inf, NaN});
  BufferComparison R = cmp(B, C, DType::F32, {ToleranceKind::Abs, 1e30});
  EXPECT_EQ(R.Mismatched, 3u);
  EXPECT_EQ(R.NewNaNs, 1u) << "NaN at [2] where the baseline has 1.0";
}

TEST(Compare, OtherDTypes) {
  auto B64 = bytesOf(std::vector<double>{1.0, 2.0});
  auto C64 = bytesOf(std::vector<double>{1.0 + 1e-12, 2.0});
  EXPECT_EQ(cmp(B64, C64, DType::F64, {ToleranceKind::Rel, 1e-11}).Mismatched,
            0u);
  EXPECT_EQ(cmp(B64, C64, DType::F64, {ToleranceKind::Rel, 1e-13}).Mismatched,
            1u);
  // f16: 1.0 = 0x3C00, next = 0x3C01 (1 + 2^-10); -2.0 = 0xC000.
  auto B16 = bytesOf(std::vector<uint16_t>{0x3C00, 0xC000});
  auto C16 = bytesOf(std::vector<uint16_t>{0x3C01, 0xC000});
  BufferComparison H = cmp(B16, C16, DType::F16, {ToleranceKind::Ulp, 1});
  EXPECT_EQ(H.Mismatched, 0u);
  EXPECT_EQ(H.MaxUlpError, 1u);
  EXPECT_NEAR(H.MaxAbsError, 1.0 / 1024, 1e-12);
  EXPECT_EQ(cmp(B16, C16, DType::F16, {ToleranceKind::Exact, 0}).Mismatched,
            1u);
  auto BI = bytesOf(std::vector<int32_t>{5, -7, 100});
  auto CI = bytesOf(std::vector<int32_t>{6, -7, 90});
  EXPECT_EQ(cmp(BI, CI, DType::I32, {ToleranceKind::Abs, 1}).Mismatched, 1u);
  EXPECT_EQ(cmp(BI, CI, DType::I32, {ToleranceKind::Abs, 1}).MaxAbsError, 10);
  std::vector<uint8_t> BU = {1, 2, 3}, CU = {1, 2, 4};
  EXPECT_EQ(cmp(BU, CU, DType::U8, {ToleranceKind::Exact, 0}).Mismatched, 1u);
}

TEST(Compare, BufferShapeErrors) {
  std::vector<uint8_t> A(8), B(12), C(6);
  auto E = compareBuffers(A, B, DType::F32, {});
  ASSERT_FALSE(static_cast<bool>(E));
  EXPECT_TRUE(contains(llvm::toString(E.takeError()), "sizes differ"));
  auto F = compareBuffers(C, C, DType::F32, {});
  ASSERT_FALSE(static_cast<bool>(F));
  EXPECT_TRUE(contains(llvm::toString(F.takeError()), "not a whole number"));
}

std::vector<float> ramp(size_t N, float Scale = 1.0f) {
  std::vector<float> V(N);
  for (size_t I = 0; I < N; ++I)
    V[I] = Scale * (1.0f + I);
  return V;
}

TEST(CompareProfiles, IdenticalAndWithinTolerancePass) {
  TempDir D;
  ProfileBuilder B(D, "base"), C(D, "cand");
  for (uint64_t K = 0; K < 3; ++K) {
    B.capture(SaxpyM, SaxpyD, K, 3, bytesOf(ramp(256)));
    auto V = ramp(256);
    V[10] *= 1.000001f;
    C.capture(SaxpyM, SaxpyD, K, 3, bytesOf(V));
  }
  Profile PB = B.read(), PC = C.read();
  auto R = compareProfiles(PB, PC, {rel(1e-5)});
  ASSERT_TRUE(static_cast<bool>(R)) << llvm::toString(R.takeError());
  EXPECT_TRUE(R->Passed) << R->Explanation;
  EXPECT_EQ(R->Matched, 3u);
  ASSERT_EQ(R->Launches.size(), 3u);
  EXPECT_EQ(R->Launches[0].Method, CompareMethod::Dumps);
  EXPECT_TRUE(R->Findings.empty());
  EXPECT_TRUE(contains(R->Explanation, "3 compared element-wise from dumps"))
      << R->Explanation;
  // The same candidate against itself under exact tolerance.
  auto Self = compareProfiles(PC, PC, {{"saxpy", 3, DType::F32, {}}});
  ASSERT_TRUE(static_cast<bool>(Self));
  EXPECT_TRUE(Self->Passed);
}

TEST(CompareProfiles, PrecisionLoweredBeyondToleranceIsRefused) {
  TempDir D;
  ProfileBuilder B(D, "base"), C(D, "cand");
  auto V = ramp(1024, 0.1f);
  std::vector<float> Lowered(V.size());
  for (size_t I = 0; I < V.size(); ++I) // rounded to ~bf16 precision
    Lowered[I] = std::ldexp(std::round(std::ldexp(V[I], 6)), -6);
  B.capture(SaxpyM, SaxpyD, 0, 3, bytesOf(V));
  C.capture(SaxpyM, SaxpyD, 0, 3, bytesOf(Lowered));
  auto R = compareProfiles(B.read(), C.read(), {rel(1e-5)});
  ASSERT_TRUE(static_cast<bool>(R));
  EXPECT_FALSE(R->Passed);
  EXPECT_EQ(R->Mismatched, 1u);
  ASSERT_TRUE(R->Launches[0].Stats.has_value());
  EXPECT_GT(R->Launches[0].Stats->Mismatched, 500u);
  EXPECT_TRUE(contains(R->Explanation, "saxpy #0 arg 3: "));
  EXPECT_TRUE(contains(R->Explanation, "elements outside rel 1e-05 (max abs error"))
      << R->Explanation;
}

TEST(CompareProfiles, HashesOnlyWithoutDumps) {
  TempDir D;
  ProfileBuilder B(D, "base"), C(D, "cand");
  B.capture(SaxpyM, SaxpyD, 0, 3, bytesOf(ramp(16)), /*Dump=*/false);
  B.capture(SaxpyM, SaxpyD, 1, 3, bytesOf(ramp(16)), /*Dump=*/false);
  C.capture(SaxpyM, SaxpyD, 0, 3, bytesOf(ramp(16)), /*Dump=*/false);
  auto V = ramp(16);
  V[0] = std::nextafter(V[0], 10.0f); // within rel 1e-5, but bits differ
  C.capture(SaxpyM, SaxpyD, 1, 3, bytesOf(V), /*Dump=*/false);
  auto R = compareProfiles(B.read(), C.read(), {rel(1e-5)});
  ASSERT_TRUE(static_cast<bool>(R));
  EXPECT_EQ(R->Launches[0].Method, CompareMethod::Hashes);
  EXPECT_TRUE(R->Launches[0].Matched);
  EXPECT_FALSE(R->Launches[1].Matched);
  EXPECT_FALSE(R->Passed);
  EXPECT_TRUE(contains(R->Launches[1].Message,
                       "only a bitwise (exact) comparison is possible"))
      << R->Launches[1].Message;
  EXPECT_TRUE(contains(R->Launches[1].Message, "KLOOP_CUPTI_DUMP=1"));
}

TEST(CompareProfiles, ReinstantiatedTemplateStillMatches) {
  TempDir D;
  ProfileBuilder B(D, "base"), C(D, "cand");
  B.capture("_Z4tileILi128EEvPf", "void tile<128>(float*)", 0, 0,
            bytesOf(ramp(8)));
  C.capture("_Z4tileILi256EEvPf", "void tile<256>(float*)", 0, 0,
            bytesOf(ramp(8)));
  auto R = compareProfiles(B.read(), C.read(),
                           {{"tile", 0, DType::F32, {ToleranceKind::Exact, 0}}});
  ASSERT_TRUE(static_cast<bool>(R)) << llvm::toString(R.takeError());
  EXPECT_TRUE(R->Passed) << R->Explanation;
  EXPECT_EQ(R->Launches[0].Kernel, "tile");
}

TEST(CompareProfiles, NonOutputArgumentChangeIsANote) {
  TempDir D;
  ProfileBuilder B(D, "base"), C(D, "cand");
  B.capture(SaxpyM, SaxpyD, 0, 3, bytesOf(ramp(8)));
  B.capture(SaxpyM, SaxpyD, 0, 2, bytesOf(ramp(8, 2)), true, false,
            /*NewLaunch=*/false);
  C.capture(SaxpyM, SaxpyD, 0, 3, bytesOf(ramp(8)));
  C.capture(SaxpyM, SaxpyD, 0, 2, bytesOf(ramp(8, 3)), true, false,
            /*NewLaunch=*/false);
  auto R = compareProfiles(B.read(), C.read(), {rel(1e-5)});
  ASSERT_TRUE(static_cast<bool>(R));
  EXPECT_TRUE(R->Passed) << R->Explanation;
  ASSERT_EQ(R->Findings.size(), 1u);
  EXPECT_EQ(R->Findings[0].Kind, FindingKind::OtherArgumentChanged);
  EXPECT_FALSE(R->Findings[0].Fatal);
  EXPECT_EQ(R->Findings[0].Arg, 2u);
}

TEST(CompareProfiles, ConfigurationErrors) {
  TempDir D;
  ProfileBuilder B(D, "base"), C(D, "cand");
  B.capture(SaxpyM, SaxpyD, 0, 3, bytesOf(ramp(8)));
  C.capture(SaxpyM, SaxpyD, 0, 3, bytesOf(ramp(8)));
  Profile PB = B.read(), PC = C.read();
  auto E = compareProfiles(PB, PC, {});
  ASSERT_FALSE(static_cast<bool>(E));
  EXPECT_TRUE(contains(llvm::toString(E.takeError()), "no outputs declared"));
  auto F = compareProfiles(PB, PC, {{"saxpy", 1, DType::F32, {}}});
  ASSERT_FALSE(static_cast<bool>(F));
  std::string Msg = llvm::toString(F.takeError());
  EXPECT_TRUE(contains(Msg, "output saxpy arg 1 has no capture in the "
                            "baseline"))
      << Msg;
  EXPECT_TRUE(contains(Msg, "base.json"));
  // A corrupted dump is an error, not a verdict.
  D.write("cand.json.k0.a3.bin", std::string(32, 'x'));
  auto G = compareProfiles(PB, PC, {rel(1e-5)});
  ASSERT_FALSE(static_cast<bool>(G));
  EXPECT_TRUE(contains(llvm::toString(G.takeError()), "corrupt or stale"));
}

// An in/out buffer (C = alpha*A*B + beta*C) poisoned before the launch: the
// kernel reads the NaN poison, so the baseline computes NaN everywhere, and so
// does any candidate. NaN "matching" NaN must never pass: it is an error about
// the baseline (the workload's declaration), not a match and not a refusal.
TEST(CompareProfiles, BaselineEntirelyNaNIsAnErrorNeverAMatch) {
  TempDir D;
  ProfileBuilder B(D, "base"), C(D, "cand");
  std::vector<float> NaNs(64, std::nanf("")); // computed NaNs, not poison bytes
  B.capture(SaxpyM, SaxpyD, 0, 3, bytesOf(ramp(64)));
  C.capture(SaxpyM, SaxpyD, 0, 3, bytesOf(ramp(64)));
  B.capture(SaxpyM, SaxpyD, 1, 3, bytesOf(NaNs));
  C.capture(SaxpyM, SaxpyD, 1, 3, bytesOf(NaNs));
  Profile PB = B.read(), PC = C.read();
  auto R = compareProfiles(PB, PC, {rel(1e-5)});
  ASSERT_FALSE(static_cast<bool>(R)) << "matched: " << R->Explanation;
  std::string Msg = llvm::toString(R.takeError());
  EXPECT_TRUE(contains(Msg, "baseline output saxpy arg 3 (saxpy #1) is "
                            "entirely NaN after the launch (64 of 64 f32 "
                            "elements, from the dump)"))
      << Msg;
  EXPECT_TRUE(contains(Msg, "the kernel reads this buffer")) << Msg;
  EXPECT_TRUE(contains(Msg, "declare it `access: readwrite`")) << Msg;
  EXPECT_TRUE(contains(Msg, "or writes nothing to it")) << Msg;
  // Under exact tolerance too: equal NaN bytes are no evidence either.
  auto X = compareProfiles(PB, PC, {{"saxpy", 3, DType::F32, {}}});
  ASSERT_FALSE(static_cast<bool>(X));
  EXPECT_TRUE(contains(llvm::toString(X.takeError()), "entirely NaN"));
  // A baseline NaN in some elements only is data, compared as before.
  TempDir D2;
  ProfileBuilder B2(D2, "base"), C2(D2, "cand");
  auto Some = ramp(64);
  Some[3] = std::nanf("");
  B2.capture(SaxpyM, SaxpyD, 0, 3, bytesOf(Some));
  C2.capture(SaxpyM, SaxpyD, 0, 3, bytesOf(Some));
  auto P = compareProfiles(B2.read(), C2.read(), {rel(1e-5)});
  ASSERT_TRUE(static_cast<bool>(P)) << llvm::toString(P.takeError());
  EXPECT_TRUE(P->Passed) << P->Explanation;
}

// The candidate ignores the in/out buffer's input (beta) and writes numbers;
// the baseline's output is all NaN because it read the poison. The fault is
// the baseline's declaration, so the candidate is not the one blamed.
TEST(CompareProfiles, AllNaNBaselineIsNotBlamedOnTheCandidate) {
  TempDir D;
  ProfileBuilder B(D, "base"), C(D, "cand");
  B.capture(SaxpyM, SaxpyD, 0, 3, bytesOf(std::vector<float>(32, std::nanf(""))));
  C.capture(SaxpyM, SaxpyD, 0, 3, bytesOf(ramp(32)));
  auto R = compareProfiles(B.read(), C.read(), {rel(1e-5)});
  ASSERT_FALSE(static_cast<bool>(R)) << R->Explanation;
  std::string Msg = llvm::toString(R.takeError());
  EXPECT_TRUE(contains(Msg, "baseline output saxpy arg 3 (saxpy #0) is "
                            "entirely NaN after the launch"))
      << Msg;
  EXPECT_TRUE(contains(Msg, "no candidate can be verified against it")) << Msg;
}

// Both sides leave the whole poisoned buffer untouched (sentinel 0xA5, a
// number as f32, and the NaN pattern 0xFF): bitwise equal, yet nothing was
// computed. Without poisoning the same bytes are legitimate values.
TEST(CompareProfiles, BaselineEntirelyPoisonIsAnErrorNeverAMatch) {
  for (uint8_t Byte : {PoisonSentinelByte, PoisonNaNByte}) {
    TempDir D;
    ProfileBuilder B(D, "base"), C(D, "cand");
    B.capture(SaxpyM, SaxpyD, 0, 3, std::vector<uint8_t>(256, Byte));
    C.capture(SaxpyM, SaxpyD, 0, 3, std::vector<uint8_t>(256, Byte));
    auto R = compareProfiles(B.read(), C.read(), {{"saxpy", 3, DType::F32, {}}});
    ASSERT_FALSE(static_cast<bool>(R)) << "matched: " << R->Explanation;
    std::string Msg = llvm::toString(R.takeError());
    EXPECT_TRUE(contains(Msg, "baseline output saxpy arg 3 (saxpy #0) is "
                              "entirely poison after the launch (64 of 64 f32 "
                              "elements still hold the bytes kloop wrote "
                              "before it, from the dump)"))
        << Msg;
    EXPECT_TRUE(contains(Msg, "declare it `access: readwrite`")) << Msg;
  }
  TempDir D;
  ProfileBuilder B(D, "base"), C(D, "cand");
  std::vector<uint8_t> Sentinel(256, PoisonSentinelByte);
  B.capture(SaxpyM, SaxpyD, 0, 3, Sentinel, true, /*Poisoned=*/false);
  C.capture(SaxpyM, SaxpyD, 0, 3, Sentinel, true, /*Poisoned=*/false);
  auto R = compareProfiles(B.read(), C.read(), {{"saxpy", 3, DType::F32, {}}});
  ASSERT_TRUE(static_cast<bool>(R)) << llvm::toString(R.takeError());
  EXPECT_TRUE(R->Passed) << R->Explanation;
}

// Without dumps, an all-poison or all-NaN (0xFF) baseline is recognised from
// its hash; an i32 output of -1 everywhere that was not poisoned is data.
TEST(CompareProfiles, VacuousBaselineSeenFromTheHash) {
  TempDir D;
  ProfileBuilder B(D, "base"), C(D, "cand");
  B.capture(SaxpyM, SaxpyD, 0, 3, std::vector<uint8_t>(400, 0xA5), /*Dump=*/false);
  C.capture(SaxpyM, SaxpyD, 0, 3, std::vector<uint8_t>(400, 0xA5), /*Dump=*/false);
  Profile PB = B.read(), PC = C.read();
  auto R = compareProfiles(PB, PC, {rel(1e-5)});
  ASSERT_FALSE(static_cast<bool>(R)) << "matched: " << R->Explanation;
  std::string Msg = llvm::toString(R.takeError());
  EXPECT_TRUE(contains(Msg, "is entirely poison after the launch (100 of 100 "
                            "f32 elements still hold the bytes kloop wrote "
                            "before it, seen from the hash)"))
      << Msg;

  TempDir D2;
  ProfileBuilder B2(D2, "base"), C2(D2, "cand");
  std::vector<uint8_t> Ones(400, 0xFF);
  B2.capture(SaxpyM, SaxpyD, 0, 3, Ones, /*Dump=*/false, /*Poisoned=*/false);
  C2.capture(SaxpyM, SaxpyD, 0, 3, Ones, /*Dump=*/false, /*Poisoned=*/false);
  Profile PB2 = B2.read(), PC2 = C2.read();
  auto N = compareProfiles(PB2, PC2, {rel(1e-5)});
  ASSERT_FALSE(static_cast<bool>(N)) << "matched: " << N->Explanation;
  Msg = llvm::toString(N.takeError());
  EXPECT_TRUE(contains(Msg, "is entirely NaN after the launch (100 of 100 f32 "
                            "elements, seen from the hash)"))
      << Msg;
  EXPECT_TRUE(contains(Msg, "the buffer was not poisoned")) << Msg;
  auto I = compareProfiles(PB2, PC2, {{"saxpy", 3, DType::I32, {}}});
  ASSERT_TRUE(static_cast<bool>(I)) << llvm::toString(I.takeError());
  EXPECT_TRUE(I->Passed) << I->Explanation;
}

} // namespace
