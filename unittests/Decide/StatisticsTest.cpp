//===- StatisticsTest.cpp - Tests of percentiles and summaries ------------===//
#include "kloop/Decide/Statistics.h"
#include "llvm/Support/Error.h"
#include "gtest/gtest.h"
#include <cmath>

using namespace kloop::decide;

namespace {

TEST(Statistics, PercentileIsHyndmanFanType7) {
  std::vector<double> V = {4, 1, 3, 2};
  // Sorted 1 2 3 4: h = 3p.
  EXPECT_DOUBLE_EQ(*percentile(V, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(*percentile(V, 0.1), 1.3);
  EXPECT_DOUBLE_EQ(*percentile(V, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(*percentile(V, 1.0), 4.0);
  std::vector<double> Hundred;
  for (int I = 1; I <= 100; ++I)
    Hundred.push_back(I);
  // h = 99 * 0.99 = 98.01 -> x[98] + 0.01 (x[99] - x[98]) = 99.01 (R's type 7).
  EXPECT_NEAR(*percentile(Hundred, 0.99), 99.01, 1e-9);
  EXPECT_NEAR(*percentile(Hundred, 0.10), 10.9, 1e-9);
  std::vector<double> One = {7};
  EXPECT_DOUBLE_EQ(*percentile(One, 0.99), 7);
}

TEST(Statistics, PercentileErrors) {
  std::vector<double> Empty;
  auto E = percentile(Empty, 0.5);
  ASSERT_FALSE(static_cast<bool>(E));
  EXPECT_NE(llvm::toString(E.takeError()).find("empty"), std::string::npos);
  std::vector<double> V = {1, 2};
  auto P = percentile(V, 1.5);
  ASSERT_FALSE(static_cast<bool>(P));
  EXPECT_NE(llvm::toString(P.takeError()).find("outside [0,1]"),
            std::string::npos);
}

TEST(Statistics, MedianInPlaceOddAndEven) {
  std::vector<double> Odd = {5, 1, 9, 3, 7};
  EXPECT_DOUBLE_EQ(medianInPlace(Odd), 5);
  std::vector<double> Even = {10, 1, 4, 3};
  EXPECT_DOUBLE_EQ(medianInPlace(Even), 3.5);
}

TEST(Statistics, SummaryOfKnownSample) {
  std::vector<double> V = {2, 4, 4, 4, 5, 5, 7, 9};
  auto S = summarize(V);
  ASSERT_TRUE(static_cast<bool>(S)) << llvm::toString(S.takeError());
  EXPECT_EQ(S->N, 8u);
  EXPECT_DOUBLE_EQ(S->Min, 2);
  EXPECT_DOUBLE_EQ(S->Max, 9);
  EXPECT_DOUBLE_EQ(S->Mean, 5);
  EXPECT_DOUBLE_EQ(S->Median, 4.5);
  // Sum of squared deviations 32, sample variance 32 / 7.
  EXPECT_NEAR(S->StdDev, std::sqrt(32.0 / 7.0), 1e-12);
  EXPECT_NEAR(S->CV, std::sqrt(32.0 / 7.0) / 5.0, 1e-12);
  // h = 7 * 0.1 = 0.7 -> 2 + 0.7 * 2 = 3.4; h = 6.3 -> 7 + 0.3 * 2 = 7.6;
  // h = 6.93 -> 7 + 0.93 * 2 = 8.86.
  EXPECT_NEAR(S->P10, 3.4, 1e-12);
  EXPECT_NEAR(S->P90, 7.6, 1e-12);
  EXPECT_NEAR(S->P99, 8.86, 1e-12);
}

TEST(Statistics, SummaryOfSingleValueHasZeroSpread) {
  std::vector<double> V = {42};
  auto S = summarize(V);
  ASSERT_TRUE(static_cast<bool>(S));
  EXPECT_EQ(S->StdDev, 0);
  EXPECT_EQ(S->CV, 0);
  EXPECT_EQ(S->P99, 42);
}

TEST(Statistics, SummaryRejectsBadDurations) {
  std::vector<double> Empty;
  auto E = summarize(Empty);
  ASSERT_FALSE(static_cast<bool>(E));
  EXPECT_NE(llvm::toString(E.takeError()).find("empty"), std::string::npos);
  std::vector<double> Neg = {1, 2, -3};
  auto N = summarize(Neg);
  ASSERT_FALSE(static_cast<bool>(N));
  EXPECT_NE(llvm::toString(N.takeError()).find("duration #2"),
            std::string::npos);
  std::vector<double> NaN = {1, std::nan("")};
  auto Q = summarize(NaN);
  ASSERT_FALSE(static_cast<bool>(Q));
  EXPECT_NE(llvm::toString(Q.takeError()).find("duration #1"),
            std::string::npos);
}

TEST(Statistics, ThrottledSamplesAreDiscardedAndCounted) {
  std::vector<Sample> S = {{100, false}, {900, true}, {110, false},
                           {950, true},  {105, false}, {990, true}};
  FilteredSamples F = filterSamples(S);
  EXPECT_EQ(F.DiscardedThrottled, 3u);
  EXPECT_EQ(F.DiscardedForeign, 0u);
  EXPECT_EQ(F.discarded(), 3u);
  ASSERT_EQ(F.KeptNs.size(), 3u);
  EXPECT_EQ(F.KeptNs[0], 100);
  EXPECT_EQ(F.KeptNs[1], 110);
  EXPECT_EQ(F.KeptNs[2], 105);
}

TEST(Statistics, ForeignSamplesAreDiscardedAndCountedApart) {
  // {duration, throttled, foreign}: a sample both throttled and foreign counts
  // once, as foreign.
  std::vector<Sample> S = {{100, false, false}, {700, false, true},
                           {900, true, false},  {800, true, true},
                           {110, false, false}, {750, false, true}};
  FilteredSamples F = filterSamples(S);
  EXPECT_EQ(F.DiscardedForeign, 3u);
  EXPECT_EQ(F.DiscardedThrottled, 1u);
  EXPECT_EQ(F.discarded(), 4u);
  EXPECT_EQ(F.KeptNs, (std::vector<double>{100, 110}));
}

} // namespace
