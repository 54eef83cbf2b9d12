//===- ReplayCheckTest.cpp - tolerances, comparison, address ranges -------===//
#include "ReplayCheck.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace kloop::replay;
using kloop::capture::AddressRange;

namespace {

std::vector<uint8_t> floats(std::initializer_list<float> Fs) {
  std::vector<uint8_t> B(Fs.size() * 4);
  std::memcpy(B.data(), Fs.begin(), B.size());
  return B;
}

std::vector<uint8_t> doubles(std::initializer_list<double> Ds) {
  std::vector<uint8_t> B(Ds.size() * 8);
  std::memcpy(B.data(), Ds.begin(), B.size());
  return B;
}

Tolerance tol(const std::string &Text) {
  Tolerance T;
  std::string Err;
  EXPECT_TRUE(parseTolerance(Text, T, Err)) << Err;
  return T;
}

TEST(Tolerance, ParsesAndPrints) {
  EXPECT_EQ(toleranceText(tol("exact")), "exact");
  EXPECT_EQ(toleranceText(tol("abs:1e-5")), "abs:1e-05,f32");
  EXPECT_EQ(toleranceText(tol("rel:0.01,f64")), "rel:0.01,f64");
  Tolerance T;
  std::string Err;
  EXPECT_FALSE(parseTolerance("abs:-1", T, Err));
  EXPECT_EQ(Err, "--tolerance 'abs:-1': the bound must be a finite number >= 0");
  EXPECT_FALSE(parseTolerance("ulp:2", T, Err));
  EXPECT_EQ(Err, "--tolerance 'ulp:2': expected exact, abs:X or rel:X (optionally ,f32 or ,f64)");
  EXPECT_FALSE(parseTolerance("abs:1,f16", T, Err));
  EXPECT_FALSE(parseTolerance("rel:", T, Err));
  EXPECT_FALSE(parseTolerance("rel:nan", T, Err));
}

TEST(FirstMismatch, ExactNamesTheWord) {
  auto E = floats({1, 2, 3, 4}), G = floats({1, 2, 3.5f, 4});
  EXPECT_FALSE(firstMismatch(E.data(), E.data(), E.size(), Tolerance()));
  auto D = firstMismatch(E.data(), G.data(), E.size(), Tolerance());
  ASSERT_TRUE(D);
  EXPECT_EQ(*D, "byte 8 (element 2): expected 40400000 (3), got 40600000 (3.5)");
  // -0 and +0 differ bitwise.
  auto Z = floats({0.f}), NZ = floats({-0.f});
  EXPECT_TRUE(firstMismatch(Z.data(), NZ.data(), 4, Tolerance()));
}

TEST(FirstMismatch, AbsAndRelBounds) {
  auto E = floats({1, 100, 0}), G = floats({1.0005f, 100.05f, 0});
  auto D = firstMismatch(E.data(), G.data(), E.size(), tol("abs:1e-3"));
  ASSERT_TRUE(D); // 100 vs 100.05 is 0.05 apart
  EXPECT_NE(D->find("element 1"), std::string::npos) << *D;
  EXPECT_FALSE(firstMismatch(E.data(), G.data(), E.size(), tol("rel:1e-3")));
  // rel has no absolute floor: 0 against 1e-30 fails every rel < 1.
  auto Z = floats({0}), T = floats({1e-30f});
  EXPECT_TRUE(firstMismatch(Z.data(), T.data(), 4, tol("rel:0.5")));
}

TEST(FirstMismatch, NaNAndInfinityRules) {
  float NaN = std::numeric_limits<float>::quiet_NaN(), Inf = std::numeric_limits<float>::infinity();
  auto A = floats({NaN, Inf}), B = floats({-NaN, Inf}), C = floats({1, Inf});
  EXPECT_FALSE(firstMismatch(A.data(), B.data(), A.size(), tol("abs:0")));
  EXPECT_TRUE(firstMismatch(A.data(), C.data(), A.size(), tol("abs:1e30")));
  EXPECT_TRUE(firstMismatch(C.data(), A.data(), A.size(), tol("rel:1")));
  // An infinity matches only the same infinity, under rel too (|inf - 1| <= x * inf would hold), as
  // kloopVerify's tolerances have it: an overflowing candidate is a mismatch.
  auto One = floats({1}), PosInf = floats({Inf}), NegInf = floats({-Inf});
  for (const char *T : {"rel:1e-5", "rel:1", "abs:1e30"}) {
    EXPECT_TRUE(firstMismatch(One.data(), PosInf.data(), 4, tol(T))) << T;
    EXPECT_TRUE(firstMismatch(PosInf.data(), One.data(), 4, tol(T))) << T;
    EXPECT_TRUE(firstMismatch(PosInf.data(), NegInf.data(), 4, tol(T))) << T;
  }
  auto OneD = doubles({1}), InfD = doubles({std::numeric_limits<double>::infinity()});
  EXPECT_TRUE(firstMismatch(OneD.data(), InfD.data(), 8, tol("rel:1e-5,f64")));
}

TEST(FirstMismatch, TrailingBytesAreComparedExactly) {
  std::vector<uint8_t> E = floats({1}), G = floats({1});
  E.push_back(7);
  G.push_back(8);
  auto D = firstMismatch(E.data(), G.data(), E.size(), tol("abs:1"));
  ASSERT_TRUE(D);
  EXPECT_EQ(*D, "byte 4: expected 07, got 08");
}

TEST(FirstMismatch, F64Elements) {
  double E[2] = {1.0, 2.0}, G[2] = {1.0, 2.0 + 1e-12};
  auto *PE = reinterpret_cast<const uint8_t *>(E), *PG = reinterpret_cast<const uint8_t *>(G);
  EXPECT_FALSE(firstMismatch(PE, PG, 16, tol("abs:1e-9,f64")));
  EXPECT_TRUE(firstMismatch(PE, PG, 16, Tolerance()));
}

TEST(GranuleRanges, WidenMergeAndSort) {
  const uint64_t G = 0x200000; // 2 MiB
  auto R = granuleRanges({{0x7f0000400100, 0x1000}, {0x7f0000000000, 0x100}, {0x7f00001ff000, 0x2000},
                          {0x7f0010000000, 0}, {0x7f0010000100, 0x10}},
                         G);
  ASSERT_EQ(R.size(), 2u);
  // [0x7f0000000000, 0x7f0000400000) from the first two (the second crosses into the second granule),
  // and [0x7f0000400000, 0x7f0000600000) touches it: merged into one range.
  EXPECT_EQ(R[0].Start, 0x7f0000000000u);
  EXPECT_EQ(R[0].Size, 0x600000u);
  EXPECT_EQ(R[1].Start, 0x7f0010000000u); // the empty allocation adds nothing
  EXPECT_EQ(R[1].Size, G);
}

TEST(Uncovered, SlackAroundAndBetweenAllocations) {
  // One 0x1000-byte mapped range holding [0x100, 0x200) and [0x180, 0x300) (overlapping) and [0x800, 0x1000).
  auto U = uncovered({{0x0, 0x1000}, {0x4000, 0x1000}}, {{0x800, 0x800}, {0x180, 0x180}, {0x100, 0x100}});
  ASSERT_EQ(U.size(), 3u);
  EXPECT_EQ(U[0].Start, 0x0u);
  EXPECT_EQ(U[0].Size, 0x100u);
  EXPECT_EQ(U[1].Start, 0x300u);
  EXPECT_EQ(U[1].Size, 0x500u);
  EXPECT_EQ(U[2].Start, 0x4000u); // a mapped range without allocations is all slack
  EXPECT_EQ(U[2].Size, 0x1000u);
  EXPECT_TRUE(uncovered({{0x0, 0x1000}}, {{0x0, 0x1000}}).empty());
}

TEST(Misc, AllBytesAndMedian) {
  EXPECT_TRUE(allBytesAre({0xFF, 0xFF}, 0xFF));
  EXPECT_FALSE(allBytesAre({0xFF, 0x7F}, 0xFF));
  EXPECT_FALSE(allBytesAre({}, 0xFF));
  EXPECT_EQ(median({5, 1, 3}), 3u);
  EXPECT_EQ(median({4, 1, 3, 2}), 2u);
  EXPECT_EQ(median({}), 0u);
}

} // namespace

TEST(Misc, SteadyDirtyBytes) {
  const uint64_t MiB = 1 << 20, L2 = 50 * MiB;
  // saxpy n1M: x and y (4 MiB each), y written; the footprint fits in L2, so all of y is dirty.
  EXPECT_EQ(steadyDirtyBytes(4 * MiB, 8 * MiB, L2), 4 * MiB);
  // layernorm r16384c1024: 64 MiB in, 64 MiB out; L2 keeps the last 50 MiB, half of them written.
  EXPECT_EQ(steadyDirtyBytes(64 * MiB, 128 * MiB, L2), 25 * MiB);
  // saxpy n16M: 128 MiB touched, 64 MiB of it written: a third of L2.
  EXPECT_EQ(steadyDirtyBytes(64 * MiB, 128 * MiB + 64 * MiB, 48 * MiB), 16 * MiB);
  // Nothing written, nothing touched, and a written count above the footprint (clamped).
  EXPECT_EQ(steadyDirtyBytes(0, 8 * MiB, L2), 0u);
  EXPECT_EQ(steadyDirtyBytes(4 * MiB, 0, L2), 0u);
  EXPECT_EQ(steadyDirtyBytes(9 * MiB, 8 * MiB, L2), 8 * MiB);
  // A footprint far larger than L2 (no overflow in the product).
  EXPECT_EQ(steadyDirtyBytes(uint64_t(1) << 40, uint64_t(1) << 41, L2), L2 / 2);
  // Rotating buffer sets: L2's written share, also when one launch's footprint fits in L2.
  EXPECT_EQ(rotateDirtyBytes(4 * MiB, 12 * MiB, 60 * MiB), 20 * MiB);
  EXPECT_EQ(rotateDirtyBytes(64 * MiB, 192 * MiB, 60 * MiB), steadyDirtyBytes(64 * MiB, 192 * MiB, 60 * MiB));
  EXPECT_EQ(rotateDirtyBytes(9 * MiB, 8 * MiB, L2), L2);
  EXPECT_EQ(rotateDirtyBytes(0, 8 * MiB, L2), 0u);
  EXPECT_EQ(rotateDirtyBytes(4 * MiB, 0, L2), 0u);
}

TEST(Misc, RotationSets) {
  const uint64_t MiB = 1 << 20, L2 = 60 * MiB;
  // saxpy n1M (x, y, out: 12 MiB): the harness rotates 11 sets, so 10 others run between two uses.
  EXPECT_EQ(rotationSets(12 * MiB, L2, 64), 10u);
  // A launch larger than twice L2 still follows one launch on other buffers.
  EXPECT_EQ(rotationSets(192 * MiB, L2, 64), 1u);
  EXPECT_EQ(rotationSets(100 * MiB, L2, 64), 1u);
  // A tiny launch: capped.
  EXPECT_EQ(rotationSets(4096, L2, 64), 64u);
  EXPECT_EQ(rotationSets(0, L2, 64), 0u);
}

TEST(Misc, PlacementsBefore) {
  using V = std::vector<uint32_t>;
  // One placement (the captured addresses) and 3 rotation sets: the copies in order, as before placements.
  EXPECT_EQ(placementsBefore(0, 3, 4), (V{1, 2, 3}));
  // Timed on a copy: the placements before it, cyclically, the last launched right before it.
  EXPECT_EQ(placementsBefore(2, 3, 4), (V{3, 0, 1}));
  EXPECT_EQ(placementsBefore(3, 1, 8), (V{2}));
  EXPECT_EQ(placementsBefore(0, 1, 8), (V{7}));
  // More placements than rotation needs: only the Others before it; none without rotation.
  EXPECT_EQ(placementsBefore(5, 2, 8), (V{3, 4}));
  EXPECT_EQ(placementsBefore(5, 0, 8), V{});
  // Others beyond the copies: each placement once, the timed one never.
  EXPECT_EQ(placementsBefore(1, 9, 3), (V{2, 0}));
  EXPECT_EQ(placementsBefore(0, 4, 1), V{});
}

TEST(Misc, TrainPlacements) {
  using V = std::vector<uint32_t>;
  // One other set, as a workload too large for L2 rotates: the whole train runs there.
  EXPECT_EQ(trainPlacements(V{1}, 3), (V{1, 1, 1}));
  // Three other sets before a timed launch at 2: the train ends with the rotation 3, 0, 1 and walks it
  // back before that; the timed placement 2 never appears.
  EXPECT_EQ(trainPlacements(V{3, 0, 1}, 7), (V{1, 3, 0, 1, 3, 0, 1}));
  // Shorter than the rotation: the rotation whole.
  EXPECT_EQ(trainPlacements(V{3, 0, 1}, 2), (V{3, 0, 1}));
  EXPECT_EQ(trainPlacements(V{1}, 0), (V{1}));
  // No other set: nothing to launch on.
  EXPECT_EQ(trainPlacements(V{}, 5), V{});
}

TEST(Misc, FirstStoredPointer) {
  std::vector<AddressRange> Allocs = {{0x7f0000000000ull, 4096}, {0x7f0000200000ull, 256}};
  std::vector<uint64_t> Words = {0, 42, 0x3f8000003f800000ull, 0x7f0000200000ull + 255, 0x7f0000000010ull};
  const uint8_t *Bytes = reinterpret_cast<const uint8_t *>(Words.data());
  // The first word inside an allocation, an interior pointer to the last byte of the second.
  EXPECT_EQ(firstStoredPointer(Bytes, Words.size() * 8, Allocs), std::optional<uint64_t>(24));
  // One past the end is not inside; floats and small integers are not addresses.
  Words[3] = 0x7f0000200000ull + 256;
  EXPECT_EQ(firstStoredPointer(Bytes, Words.size() * 8, Allocs), std::optional<uint64_t>(32));
  Words[4] = 7;
  EXPECT_EQ(firstStoredPointer(Bytes, Words.size() * 8, Allocs), std::nullopt);
  // A trailing partial word is not read.
  Words[4] = 0x7f0000000010ull;
  EXPECT_EQ(firstStoredPointer(Bytes, Words.size() * 8 - 1, Allocs), std::nullopt);
}
