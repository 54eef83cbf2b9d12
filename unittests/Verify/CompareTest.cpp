//===- CompareTest.cpp - Tests of tolerances and launch-by-launch compare -===//
#include "kloop/Verify/Compare.h"
#include "TestProfiles.h"
#include "gtest/gtest.h"
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

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

// ---- compareBuffers' fast paths against expectations and a plain reference --
//
// compareBuffers skips bitwise-equal buffers with one memcmp, skips equal
// 4 KiB chunks, and decodes elements with code templated on the dtype. The
// tests below pin its results per dtype family, and compare it bit for bit
// with a reference written plainly from the rules of Compare.h and
// AntiCheat.h, on random buffers.

const Tolerance Exact{ToleranceKind::Exact, 0};

BufferComparison cmpP(const std::vector<uint8_t> &B,
                      const std::vector<uint8_t> &C, DType T, Tolerance Tol,
                      bool Poisoned) {
  auto R = compareBuffers(B, C, T, Tol, Poisoned);
  EXPECT_TRUE(static_cast<bool>(R));
  if (!R) {
    llvm::consumeError(R.takeError());
    return BufferComparison();
  }
  return *R;
}

/// Bitwise equality of two doubles, NaNs of any payload equal.
bool sameValue(double A, double B) {
  if (std::isnan(A) || std::isnan(B))
    return std::isnan(A) && std::isnan(B);
  return std::memcmp(&A, &B, sizeof A) == 0;
}

void expectSame(const BufferComparison &Want, const BufferComparison &Got,
                const std::string &What) {
  EXPECT_EQ(Got.Elements, Want.Elements) << What;
  EXPECT_EQ(Got.Mismatched, Want.Mismatched) << What;
  EXPECT_EQ(Got.Poison, Want.Poison) << What;
  EXPECT_EQ(Got.NewNaNs, Want.NewNaNs) << What;
  EXPECT_TRUE(sameValue(Got.MaxAbsError, Want.MaxAbsError))
      << What << ": max abs " << Got.MaxAbsError << " vs " << Want.MaxAbsError;
  EXPECT_TRUE(sameValue(Got.MaxRelError, Want.MaxRelError))
      << What << ": max rel " << Got.MaxRelError << " vs " << Want.MaxRelError;
  EXPECT_EQ(Got.MaxUlpError, Want.MaxUlpError) << What;
  EXPECT_EQ(Got.FirstMismatch, Want.FirstMismatch) << What;
  if (Want.FirstMismatch && Got.FirstMismatch) {
    EXPECT_TRUE(sameValue(Got.FirstBaseline, Want.FirstBaseline)) << What;
    EXPECT_TRUE(sameValue(Got.FirstCandidate, Want.FirstCandidate)) << What;
  }
}

/// Nothing but the element count: what bitwise-equal buffers give.
void expectClean(const BufferComparison &R, uint64_t Elements,
                 const std::string &What) {
  BufferComparison Want;
  Want.Elements = Elements;
  expectSame(Want, R, What);
}

const Tolerance AllKinds[] = {{ToleranceKind::Exact, 0},
                              {ToleranceKind::Abs, 1e-3},
                              {ToleranceKind::Rel, 1e-5},
                              {ToleranceKind::Ulp, 1}};

TEST(CompareBuffers, BitwiseEqualBuffersHaveNothingToReport) {
  float NaN = std::nanf(""), Inf = INFINITY;
  auto F32 = bytesOf(std::vector<float>{1.5f, -0.0f, NaN, -Inf, 0.0f});
  std::vector<uint8_t> Poison(8, 0xFF), Sentinel(8, 0xA5);
  F32.insert(F32.end(), Poison.begin(), Poison.end());
  F32.insert(F32.end(), Sentinel.begin(), Sentinel.end());
  auto F16 = bytesOf(std::vector<uint16_t>{0x3C00, 0x8000, 0x7E01, 0xFFFF,
                                           0xA5A5, 0xFC00, 0x0001});
  auto F64 = bytesOf(std::vector<double>{-0.0, std::nan("7"), 1e-310, 2.0});
  F64.insert(F64.end(), Poison.begin(), Poison.end());
  auto I32 = bytesOf(std::vector<int32_t>{-1, 0, INT32_MIN, 7});
  I32.insert(I32.end(), Sentinel.begin(), Sentinel.end());
  std::vector<uint8_t> U8 = {0xFF, 0xA5, 0, 1};
  struct {
    DType T;
    const std::vector<uint8_t> &Bytes;
  } Cases[] = {{DType::F32, F32},
               {DType::F16, F16},
               {DType::F64, F64},
               {DType::I32, I32},
               {DType::U8, U8}};
  for (const auto &C : Cases)
    for (Tolerance Tol : AllKinds)
      for (bool Poisoned : {false, true}) {
        std::vector<uint8_t> Copy = C.Bytes; // other memory, same bytes
        std::string What = (dtypeName(C.T) + " " + toleranceKindName(Tol.Kind) +
                             (Poisoned ? " poisoned" : ""))
                                .str();
        expectClean(cmpP(C.Bytes, Copy, C.T, Tol, Poisoned),
                    C.Bytes.size() / dtypeSize(C.T), What);
      }
  expectClean(cmpP({}, {}, DType::F32, Exact, true), 0, "empty");
}

TEST(CompareBuffers, F32WithinAndBeyondEachKind) {
  float NaN = std::nanf(""), OtherNaN, Inf = INFINITY;
  uint32_t OtherNaNBits = 0x7FC00001;
  std::memcpy(&OtherNaN, &OtherNaNBits, 4);
  float Next2 = std::nextafter(2.0f, 3.0f), Near3 = -3.0f * (1 + 1e-4f);
  auto B = bytesOf(std::vector<float>{1, 2, -3, 0, NaN, Inf, 4});
  auto C = bytesOf(std::vector<float>{1, Next2, Near3, -0.0f, OtherNaN, Inf,
                                      4.5f});
  BufferComparison R = cmp(B, C, DType::F32, {ToleranceKind::Rel, 1e-3});
  EXPECT_EQ(R.Elements, 7u);
  EXPECT_EQ(R.Mismatched, 1u);
  ASSERT_TRUE(R.FirstMismatch.has_value());
  EXPECT_EQ(*R.FirstMismatch, 6u);
  EXPECT_EQ(R.FirstBaseline, 4.0);
  EXPECT_EQ(R.FirstCandidate, 4.5);
  // The statistics: [6] has the largest of each.
  EXPECT_EQ(R.MaxAbsError, 0.5);
  EXPECT_EQ(R.MaxRelError, 0.5 / 4.5);
  EXPECT_EQ(R.MaxUlpError, 0x40900000u - 0x40800000u);
  EXPECT_EQ(R.NewNaNs, 0u) << "NaN against NaN";
  R = cmp(B, C, DType::F32, {ToleranceKind::Rel, 1e-5});
  EXPECT_EQ(R.Mismatched, 2u);
  EXPECT_EQ(*R.FirstMismatch, 2u);
  EXPECT_EQ(R.FirstBaseline, -3.0);
  EXPECT_EQ(R.FirstCandidate, double(Near3));
  EXPECT_EQ(cmp(B, C, DType::F32, {ToleranceKind::Abs, 1e-3}).Mismatched, 1u);
  EXPECT_EQ(cmp(B, C, DType::F32, {ToleranceKind::Abs, 1e-6}).Mismatched, 2u);
  EXPECT_EQ(cmp(B, C, DType::F32, {ToleranceKind::Abs, 0.5}).Mismatched, 0u);
  EXPECT_EQ(cmp(B, C, DType::F32, {ToleranceKind::Ulp, 1}).Mismatched, 2u);
  EXPECT_EQ(cmp(B, C, DType::F32, {ToleranceKind::Ulp, 2000}).Mismatched, 1u);
  EXPECT_EQ(cmp(B, C, DType::F32, {ToleranceKind::Ulp, 1048576}).Mismatched,
            0u);
  R = cmp(B, C, DType::F32, Exact);
  EXPECT_EQ(R.Mismatched, 5u) << "all but [0] and [5]: -0 and NaN payloads too";
  EXPECT_EQ(*R.FirstMismatch, 1u);
  EXPECT_EQ(R.FirstCandidate, double(Next2));
  EXPECT_EQ(R.MaxAbsError, 0.5) << "exact keeps the statistics";
}

TEST(CompareBuffers, F16WithinAndBeyondEachKind) {
  // 1 vs 1+2^-10; 2 vs 2.5; +0 vs -0; NaN vs NaN; inf vs -inf; the smallest
  // subnormal against its negative (2 ulp apart, relative error 2).
  auto B = bytesOf(
      std::vector<uint16_t>{0x3C00, 0x4000, 0x0000, 0x7E00, 0x7C00, 0x0001});
  auto C = bytesOf(
      std::vector<uint16_t>{0x3C01, 0x4100, 0x8000, 0x7C01, 0xFC00, 0x8001});
  BufferComparison R = cmp(B, C, DType::F16, {ToleranceKind::Ulp, 256});
  EXPECT_EQ(R.Mismatched, 1u) << "only inf vs -inf";
  EXPECT_EQ(*R.FirstMismatch, 4u);
  EXPECT_EQ(R.FirstBaseline, INFINITY);
  EXPECT_EQ(R.FirstCandidate, -INFINITY);
  EXPECT_EQ(R.MaxAbsError, 0.5);
  EXPECT_EQ(R.MaxRelError, 2.0);
  EXPECT_EQ(R.MaxUlpError, 256u);
  R = cmp(B, C, DType::F16, {ToleranceKind::Ulp, 1});
  EXPECT_EQ(R.Mismatched, 3u);
  EXPECT_EQ(*R.FirstMismatch, 1u);
  EXPECT_EQ(R.FirstBaseline, 2.0);
  EXPECT_EQ(R.FirstCandidate, 2.5);
  EXPECT_EQ(cmp(B, C, DType::F16, {ToleranceKind::Ulp, 2}).Mismatched, 2u);
  EXPECT_EQ(cmp(B, C, DType::F16, {ToleranceKind::Rel, 0.25}).Mismatched, 2u);
  EXPECT_EQ(cmp(B, C, DType::F16, {ToleranceKind::Abs, 0.1}).Mismatched, 2u);
  EXPECT_EQ(cmp(B, C, DType::F16, Exact).Mismatched, 6u);
  // A new NaN, and a poison NaN (0xFFFF) reported as poison instead.
  auto NB = bytesOf(std::vector<uint16_t>{0x3C00, 0x3C00, 0xFFFF});
  auto NC = bytesOf(std::vector<uint16_t>{0x7E00, 0xFFFF, 0xFFFF});
  R = cmpP(NB, NC, DType::F16, {ToleranceKind::Abs, 1}, /*Poisoned=*/true);
  EXPECT_EQ(R.NewNaNs, 1u);
  EXPECT_EQ(R.Poison, 1u) << "[2] is poison on both sides";
  EXPECT_EQ(R.Mismatched, 2u);
  R = cmpP(NB, NC, DType::F16, {ToleranceKind::Abs, 1}, /*Poisoned=*/false);
  EXPECT_EQ(R.NewNaNs, 2u);
  EXPECT_EQ(R.Poison, 0u);
}

TEST(CompareBuffers, F64WithinAndBeyondEachKind) {
  double Max = std::numeric_limits<double>::max();
  double Big = 1e300 * (1 + 1e-12);
  auto B = bytesOf(std::vector<double>{1.0, 1e300, -1e-300, Max});
  auto C = bytesOf(
      std::vector<double>{std::nextafter(1.0, 2.0), Big, -1e-300, -Max});
  BufferComparison R = cmp(B, C, DType::F64, {ToleranceKind::Rel, 1e-11});
  // Max against -Max: |c - b| overflows to inf; the ulp distance is twice
  // the magnitude's bits.
  EXPECT_EQ(R.MaxAbsError, INFINITY);
  EXPECT_EQ(R.MaxRelError, INFINITY);
  EXPECT_EQ(R.MaxUlpError, 2 * 0x7FEFFFFFFFFFFFFFull);
  EXPECT_EQ(R.Mismatched, 1u);
  EXPECT_EQ(*R.FirstMismatch, 3u);
  EXPECT_EQ(R.FirstCandidate, -Max);
  R = cmp(B, C, DType::F64, {ToleranceKind::Rel, 1e-13});
  EXPECT_EQ(R.Mismatched, 2u);
  EXPECT_EQ(*R.FirstMismatch, 1u);
  EXPECT_EQ(R.FirstCandidate, Big);
  // 2.5 x Max overflows too, and inf <= inf: within, as the true relative
  // error (2) is.
  EXPECT_EQ(cmp(B, C, DType::F64, {ToleranceKind::Rel, 2.5}).Mismatched, 0u);
  EXPECT_EQ(cmp(B, C, DType::F64, {ToleranceKind::Ulp, 1}).Mismatched, 2u);
  EXPECT_EQ(cmp(B, C, DType::F64, {ToleranceKind::Abs, 1e308}).Mismatched, 1u)
      << "[1] is 1e288 off, [3] inf";
  EXPECT_EQ(cmp(B, C, DType::F64, Exact).Mismatched, 3u);
}

TEST(CompareBuffers, IntegersWithinAndBeyondEachKind) {
  int32_t Sentinel = static_cast<int32_t>(0xA5A5A5A5u);
  auto B = bytesOf(std::vector<int32_t>{5, -7, 100, -1, INT32_MAX, INT32_MIN,
                                        3, Sentinel});
  auto C = bytesOf(std::vector<int32_t>{6, -7, 90, 0, INT32_MIN, INT32_MAX,
                                        -1, Sentinel});
  BufferComparison R =
      cmpP(B, C, DType::I32, {ToleranceKind::Abs, 1}, /*Poisoned=*/true);
  EXPECT_EQ(R.Mismatched, 4u);
  EXPECT_EQ(*R.FirstMismatch, 2u);
  EXPECT_EQ(R.FirstBaseline, 100);
  EXPECT_EQ(R.FirstCandidate, 90);
  EXPECT_EQ(R.MaxAbsError, 4294967295.0);
  EXPECT_EQ(R.MaxUlpError, 4294967295u) << "|c - b| for integers";
  EXPECT_EQ(R.MaxRelError, 4294967295.0 / 2147483648.0);
  EXPECT_EQ(R.Poison, 1u) << "[6]: -1 is 0xFFFFFFFF where the baseline has 3";
  EXPECT_EQ(R.NewNaNs, 0u);
  EXPECT_EQ(cmp(B, C, DType::I32, {ToleranceKind::Abs, 10}).Mismatched, 2u);
  EXPECT_EQ(cmp(B, C, DType::I32, {ToleranceKind::Ulp, 4}).Mismatched, 3u);
  EXPECT_EQ(cmp(B, C, DType::I32, {ToleranceKind::Rel, 0.2}).Mismatched, 4u);
  EXPECT_EQ(cmp(B, C, DType::I32, Exact).Mismatched, 6u);
  std::vector<uint8_t> BU = {1, 2, 3, 255, 0xA5, 7}, CU = {1, 2, 4, 0, 0xFF,
                                                          0xA5};
  R = cmpP(BU, CU, DType::U8, {ToleranceKind::Abs, 90}, /*Poisoned=*/true);
  EXPECT_EQ(R.Mismatched, 2u) << "[3] 255 vs 0 and [5] 7 vs 165";
  EXPECT_EQ(*R.FirstMismatch, 3u);
  EXPECT_EQ(R.MaxAbsError, 255);
  EXPECT_EQ(R.MaxRelError, 1);
  EXPECT_EQ(R.Poison, 1u) << "[4] is poison on both sides, [5] only in C";
}

TEST(CompareBuffers, EqualChunksAreSkippedNotDifferences) {
  // 5000 f32 = 20000 bytes: four whole 4 KiB chunks and a partial one, with
  // differences on both sides of chunk boundaries and in the last element.
  std::vector<float> V(5000);
  for (size_t I = 0; I < V.size(); ++I)
    V[I] = 1.0f + I;
  std::vector<float> W = V;
  for (size_t I : {1023u, 1024u, 3072u, 4999u})
    W[I] = std::nextafter(V[I], 1e9f);
  auto B = bytesOf(V), C = bytesOf(W);
  BufferComparison R = cmp(B, C, DType::F32, Exact);
  EXPECT_EQ(R.Mismatched, 4u);
  EXPECT_EQ(*R.FirstMismatch, 1023u);
  EXPECT_EQ(R.MaxUlpError, 1u);
  W = V;
  W[4999] = std::nanf("");
  R = cmpP(B, bytesOf(W), DType::F32, {ToleranceKind::Rel, 1e-5}, true);
  EXPECT_EQ(R.Mismatched, 1u);
  EXPECT_EQ(*R.FirstMismatch, 4999u);
  EXPECT_EQ(R.NewNaNs, 1u);
  EXPECT_EQ(R.MaxAbsError, 0) << "no finite pair differs";
}

// The reference: the rules, one element at a time, decoded without kloop's
// helpers.

bool refIsFloat(DType T) {
  return T == DType::F32 || T == DType::F64 || T == DType::F16;
}

double refValue(const uint8_t *P, DType T) {
  switch (T) {
  case DType::F32: {
    float F;
    std::memcpy(&F, P, 4);
    return F;
  }
  case DType::F64: {
    double D;
    std::memcpy(&D, P, 8);
    return D;
  }
  case DType::F16: {
    unsigned H = P[0] | P[1] << 8, E = (H >> 10) & 31, M = H & 1023;
    double V = E == 31  ? (M ? NAN : INFINITY)
               : E == 0 ? M * std::pow(2.0, -24)
                        : (1024 + M) * std::pow(2.0, int(E) - 25);
    return (H & 0x8000) ? -V : V;
  }
  case DType::I32: {
    int32_t I;
    std::memcpy(&I, P, 4);
    return I;
  }
  case DType::U8:
    return P[0];
  }
  return 0;
}

/// Sign-magnitude distance: magnitudes subtract on one side of zero and add
/// across it (+0 and -0 are one position).
uint64_t refUlp(const uint8_t *PB, const uint8_t *PC, size_t ES) {
  uint64_t B = 0, C = 0, Sign = 1ull << (8 * ES - 1);
  for (size_t K = 0; K < ES; ++K) {
    B |= uint64_t(PB[K]) << (8 * K);
    C |= uint64_t(PC[K]) << (8 * K);
  }
  uint64_t MB = B & ~Sign, MC = C & ~Sign;
  if ((B & Sign) == (C & Sign))
    return MB > MC ? MB - MC : MC - MB;
  return MB + MC;
}

bool refPoison(const uint8_t *P, size_t ES) {
  for (size_t K = 0; K < ES; ++K)
    if (P[K] != P[0])
      return false;
  return P[0] == 0xFF || P[0] == 0xA5;
}

bool refWithin(double BV, double CV, bool Same, uint64_t Ulp, Tolerance Tol) {
  if (Same)
    return true;
  if (Tol.Kind == ToleranceKind::Exact)
    return false;
  if (std::isnan(BV) || std::isnan(CV))
    return std::isnan(BV) && std::isnan(CV);
  if (BV == CV)
    return true;
  if (!std::isfinite(BV) || !std::isfinite(CV))
    return false;
  double Abs = std::fabs(CV - BV);
  if (Tol.Kind == ToleranceKind::Abs)
    return Abs <= Tol.Value;
  if (Tol.Kind == ToleranceKind::Rel)
    return Abs <= Tol.Value * std::max(std::fabs(BV), std::fabs(CV));
  return static_cast<double>(Ulp) <= Tol.Value;
}

BufferComparison reference(const std::vector<uint8_t> &B,
                           const std::vector<uint8_t> &C, DType T,
                           Tolerance Tol, bool Poisoned) {
  size_t ES = dtypeSize(T);
  BufferComparison R;
  R.Elements = B.size() / ES;
  for (uint64_t I = 0; I < R.Elements; ++I) {
    const uint8_t *PB = &B[I * ES], *PC = &C[I * ES];
    double BV = refValue(PB, T), CV = refValue(PC, T);
    uint64_t Ulp = 0;
    if (std::isfinite(BV) && std::isfinite(CV) && BV != CV) {
      double Abs = std::fabs(CV - BV);
      Ulp = refIsFloat(T) ? refUlp(PB, PC, ES) : static_cast<uint64_t>(Abs);
      R.MaxAbsError = std::max(R.MaxAbsError, Abs);
      R.MaxRelError = std::max(R.MaxRelError,
                               Abs / std::max(std::fabs(BV), std::fabs(CV)));
      R.MaxUlpError = std::max(R.MaxUlpError, Ulp);
    }
    if (!refWithin(BV, CV, std::equal(PB, PB + ES, PC), Ulp, Tol)) {
      if (!R.Mismatched)
        R.FirstMismatch = I, R.FirstBaseline = BV, R.FirstCandidate = CV;
      ++R.Mismatched;
    }
    bool LeftPoison = Poisoned && refPoison(PC, ES);
    R.Poison += LeftPoison && !refPoison(PB, ES);
    R.NewNaNs += refIsFloat(T) && std::isnan(CV) && !std::isnan(BV) &&
                 !LeftPoison;
  }
  return R;
}

/// Random elements of one dtype, as bit patterns in a uint64_t.
class RandomElements {
public:
  RandomElements(DType T, uint64_t Seed) : T(T), Rng(Seed) {
    size_t ES = dtypeSize(T);
    Bits = 8 * ES;
    Man = T == DType::F16 ? 10 : T == DType::F32 ? 23 : 52;
    uint64_t Ones = ~0ull >> (64 - Bits);
    Specials = {0, Ones, Ones / 0xFF * 0xA5, 1, uint64_t(1) << (Bits - 1)};
    if (refIsFloat(T)) {
      uint64_t ExpMask = (Ones >> 1) & ~((uint64_t(1) << Man) - 1);
      uint64_t Sign = uint64_t(1) << (Bits - 1);
      // +inf, -inf, a quiet NaN, a NaN with a payload, the largest finite
      // value, -1 ulp below zero's neighbour.
      for (uint64_t S : {ExpMask, ExpMask | Sign, ExpMask | (ExpMask >> 1),
                         ExpMask | 5, ExpMask - 1, Sign | 1})
        Specials.push_back(S);
    }
  }

  /// A baseline element: mostly ordinary values, a fifth special.
  uint64_t baseline() {
    if (pick(5) == 0)
      return special();
    if (!refIsFloat(T))
      return mask(Rng() % 2001 - 1000);
    uint64_t Bias = (uint64_t(1) << (Bits - Man - 2)) - 1;
    uint64_t Exp = Bias - 8 + pick(17); // magnitudes 2^-8 .. 2^8
    return mask((Rng() & ((uint64_t(1) << Man) - 1)) | (Exp << Man) |
                (pick(2) ? uint64_t(1) << (Bits - 1) : 0));
  }

  /// A candidate element for baseline \p X; unchanged with probability
  /// 1 - \p Change.
  uint64_t candidate(uint64_t X, double Change) {
    if (std::uniform_real_distribution<double>(0, 1)(Rng) >= Change)
      return X;
    switch (pick(6)) {
    case 0: // last bits, either way
      return mask(X + (pick(2) ? 1 : -1) * int64_t(1 + pick(3)));
    case 1: // a larger step in the mantissa
      return mask(X + (pick(2) ? 1 : -1) * int64_t(1 + pick(4096)));
    case 2: // the sign
      return mask(X ^ (uint64_t(1) << (Bits - 1)));
    case 3:
      return special();
    case 4:
      return baseline();
    default:
      return mask(Rng());
    }
  }

private:
  uint64_t pick(uint64_t N) { return Rng() % N; }
  uint64_t mask(uint64_t X) const { return Bits == 64 ? X : X & ((1ull << Bits) - 1); }
  uint64_t special() { return Specials[pick(Specials.size())]; }

  DType T;
  std::mt19937_64 Rng;
  unsigned Bits = 0, Man = 0;
  std::vector<uint64_t> Specials;
};

void append(std::vector<uint8_t> &Bytes, uint64_t X, size_t ES) {
  for (size_t K = 0; K < ES; ++K)
    Bytes.push_back(uint8_t(X >> (8 * K)));
}

TEST(CompareBuffers, AgreesWithThePlainReferenceOnRandomBuffers) {
  const Tolerance Kinds[] = {
      {ToleranceKind::Exact, 0}, {ToleranceKind::Abs, 1e-3},
      {ToleranceKind::Abs, 1},   {ToleranceKind::Rel, 1e-5},
      {ToleranceKind::Rel, 1e-3}, {ToleranceKind::Ulp, 1},
      {ToleranceKind::Ulp, 4},   {ToleranceKind::Ulp, 2048}};
  uint64_t Seed = 20261202;
  for (DType T : {DType::F32, DType::F16, DType::F64, DType::I32, DType::U8})
    // Differences dense, sparse (equal chunks between), and dense in the
    // last tenth only (an equal prefix of several chunks).
    for (auto [Change, From] : {std::pair{0.5, 0}, {0.002, 0}, {0.5, 5400}}) {
      size_t ES = dtypeSize(T);
      RandomElements Gen(T, Seed++);
      std::vector<uint8_t> B, C;
      for (int I = 0; I < 6000; ++I) {
        uint64_t X = Gen.baseline();
        append(B, X, ES);
        append(C, I < From ? X : Gen.candidate(X, Change), ES);
      }
      for (Tolerance Tol : Kinds)
        for (bool Poisoned : {false, true}) {
          std::string What =
              (dtypeName(T) + " change " + std::to_string(Change) + " from " +
               std::to_string(From) + " " +
               toleranceKindName(Tol.Kind) + " " + std::to_string(Tol.Value) +
               (Poisoned ? " poisoned" : ""))
                  .str();
          BufferComparison Want = reference(B, C, T, Tol, Poisoned);
          BufferComparison Got = cmpP(B, C, T, Tol, Poisoned);
          expectSame(Want, Got, What);
          // The anti-cheat counts are those of AntiCheat.h's functions.
          EXPECT_EQ(Got.Poison, Poisoned ? countLeftPoison(C, B, ES) : 0)
              << What;
          EXPECT_EQ(Got.NewNaNs, countNewNaNs(C, B, T, Poisoned)) << What;
          // The inputs exercise what they should.
          if (Change == 0.5 && From == 0 && Tol.Kind == ToleranceKind::Rel &&
              Poisoned) {
            EXPECT_GT(Want.Mismatched, 0u) << What;
            EXPECT_LT(Want.Mismatched, Want.Elements / 2) << What;
            EXPECT_GT(Want.Poison, 0u) << What;
            EXPECT_EQ(Want.NewNaNs > 0, refIsFloat(T)) << What;
          }
        }
    }
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
