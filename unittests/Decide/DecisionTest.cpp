//===- DecisionTest.cpp - Tests of the acceptance rule --------------------===//
#include "kloop/Decide/Decision.h"
#include "TestSamples.h"
#include "gtest/gtest.h"

using namespace kloop::decide;
using namespace kloop::decide::test;

namespace {

bool contains(const std::string &Hay, const std::string &Needle) {
  return Hay.find(Needle) != std::string::npos;
}

ShapeVerdict mustDecide(const ShapeEvidence &E,
                        const DecisionThresholds &T = DecisionThresholds()) {
  auto V = decide(E, T);
  EXPECT_TRUE(static_cast<bool>(V));
  if (!V) {
    llvm::consumeError(V.takeError());
    return ShapeVerdict();
  }
  return *V;
}

TEST(Decision, ClearWinIsAccepted) {
  std::mt19937_64 Rng(11);
  auto E = passingEvidence(lognormal(Rng, 30, 1500, 0.03),
                           lognormal(Rng, 30, 1000, 0.03));
  ShapeVerdict V = mustDecide(E);
  EXPECT_EQ(V.Outcome, Verdict::Accepted) << V.Explanation;
  ASSERT_TRUE(V.Speedup.has_value());
  EXPECT_NEAR(V.Speedup->Estimate, 1.5, 0.05);
  EXPECT_GT(V.Speedup->Lower, 1.02);
  EXPECT_TRUE(V.SpeedupOk && V.TailOk && V.OutputsOk && V.DeterminismOk);
  EXPECT_TRUE(V.Reasons.empty());
  EXPECT_TRUE(contains(V.Explanation, "accepted: kernel saxpy shape n16M"))
      << V.Explanation;
  EXPECT_EQ(V.SeedsChecked, 2u);
  EXPECT_EQ(V.HeldOutSeedsChecked, 1u);
}

// A/A: both sides from the same distribution. The candidate must not be
// accepted in (at least) 95 of 100 seeded trials; with the 2% minimum gain
// we expect none.
TEST(Decision, AATestIsNotAccepted) {
  int Accepted = 0;
  for (uint64_t Trial = 0; Trial < 100; ++Trial) {
    std::mt19937_64 Rng(100 + Trial);
    auto E = passingEvidence(lognormal(Rng, 30, 1000, 0.05),
                             lognormal(Rng, 30, 1000, 0.05));
    DecisionThresholds T;
    T.Bootstrap.Seed = Trial;
    if (mustDecide(E, T).Outcome == Verdict::Accepted)
      ++Accepted;
  }
  EXPECT_LE(Accepted, 5);
  EXPECT_EQ(Accepted, 0);
}

// Even without the minimum gain (MinGain = 0) the one-sided error of the 95%
// interval's lower bound is nominally 2.5%: allow at most 8 of 100.
TEST(Decision, AATestWithoutMinGainRarelyAccepts) {
  int Accepted = 0;
  for (uint64_t Trial = 0; Trial < 100; ++Trial) {
    std::mt19937_64 Rng(700 + Trial);
    auto E = passingEvidence(lognormal(Rng, 40, 1000, 0.05),
                             lognormal(Rng, 40, 1000, 0.05));
    DecisionThresholds T;
    T.MinGain = 0;
    T.Bootstrap.Seed = Trial;
    if (mustDecide(E, T).Outcome == Verdict::Accepted)
      ++Accepted;
  }
  EXPECT_LE(Accepted, 8);
}

TEST(Decision, SmallWinBelowMinGainIsRejected) {
  std::mt19937_64 Rng(12);
  // 1% faster with tight noise: real, but below the 2% bar.
  auto E = passingEvidence(lognormal(Rng, 200, 1010, 0.002),
                           lognormal(Rng, 200, 1000, 0.002));
  ShapeVerdict V = mustDecide(E);
  EXPECT_EQ(V.Outcome, Verdict::Rejected);
  EXPECT_FALSE(V.SpeedupOk);
  EXPECT_TRUE(V.TailOk);
  EXPECT_TRUE(contains(V.Explanation, "lower bound does not exceed 1.020x"))
      << V.Explanation;
}

TEST(Decision, MedianWinWithHeavyTailIsRefused) {
  std::mt19937_64 Rng(13);
  auto Base = lognormal(Rng, 200, 1000, 0.01);
  auto Cand = lognormal(Rng, 200, 700, 0.01);
  // 5% of the candidate's launches take 3x the baseline.
  for (size_t I = 0; I < Cand.size(); I += 20)
    Cand[I].DurationNs = 3000;
  ShapeVerdict V = mustDecide(passingEvidence(Base, Cand));
  EXPECT_EQ(V.Outcome, Verdict::Rejected);
  EXPECT_TRUE(V.SpeedupOk) << "the median did win";
  EXPECT_FALSE(V.TailOk);
  ASSERT_TRUE(V.P99Change.has_value());
  EXPECT_GT(*V.P99Change, 1.0);
  EXPECT_TRUE(contains(V.Explanation, "p99 regressed")) << V.Explanation;
}

TEST(Decision, TailExplanationNamesShapeAndPercentages) {
  // Baseline p99 = 1000 exactly; candidate p99 = 1123 (type 7 on n = 100:
  // x[98] + 0.01 (x[99] - x[98]) with both 1123).
  std::vector<Sample> Base(100, Sample{1000, false});
  std::vector<Sample> Cand(100, Sample{800, false});
  Cand[98].DurationNs = Cand[99].DurationNs = 1123;
  ShapeVerdict V = mustDecide(passingEvidence(Base, Cand, "n1M"));
  EXPECT_EQ(V.Outcome, Verdict::Rejected);
  EXPECT_TRUE(
      contains(V.Explanation, "shape n1M p99 regressed 12.3% > 5% tolerance"))
      << V.Explanation;
  EXPECT_TRUE(contains(V.Explanation, "rejected: kernel saxpy shape n1M"));
}

TEST(Decision, TailWithinToleranceIsAccepted) {
  std::vector<Sample> Base(100, Sample{1000, false});
  std::vector<Sample> Cand(100, Sample{800, false});
  Cand[98].DurationNs = Cand[99].DurationNs = 1040; // +4% <= 5%
  ShapeVerdict V = mustDecide(passingEvidence(Base, Cand));
  EXPECT_EQ(V.Outcome, Verdict::Accepted) << V.Explanation;
  EXPECT_NEAR(*V.P99Change, 0.04, 1e-12);
}

TEST(Decision, ThrottledSamplesAreDiscardedAndCounted) {
  std::mt19937_64 Rng(14);
  auto Base = lognormal(Rng, 30, 1500, 0.02);
  auto Cand = lognormal(Rng, 30, 1000, 0.02);
  // Throttled launches are slow; if they were kept the candidate's p99 would
  // regress and its median would move.
  for (int I = 0; I < 6; ++I)
    Cand.push_back({9000, true});
  Base.push_back({9500, true});
  ShapeVerdict V = mustDecide(passingEvidence(Base, Cand));
  EXPECT_EQ(V.Outcome, Verdict::Accepted) << V.Explanation;
  EXPECT_EQ(V.BaselineDiscarded, 1u);
  EXPECT_EQ(V.CandidateDiscarded, 6u);
  EXPECT_EQ(V.Candidate->N, 30u);
  EXPECT_LT(V.Candidate->Max, 2000);
  EXPECT_TRUE(contains(V.Explanation,
                       "throttled samples discarded: baseline 1, candidate 6"))
      << V.Explanation;
}

TEST(Decision, InsufficientSamples) {
  std::mt19937_64 Rng(15);
  auto E = passingEvidence(lognormal(Rng, 9, 1500, 0.02),
                           lognormal(Rng, 30, 1000, 0.02));
  ShapeVerdict V = mustDecide(E);
  EXPECT_EQ(V.Outcome, Verdict::InsufficientSamples);
  EXPECT_FALSE(V.Speedup.has_value());
  EXPECT_TRUE(V.Baseline.has_value());
  EXPECT_TRUE(contains(V.Explanation, "too few samples: baseline 9 of 9 kept, "
                                      "candidate 30 of 30 kept"))
      << V.Explanation;
  EXPECT_TRUE(contains(V.Explanation, "need >= 10 per side"));
}

TEST(Decision, ThrottlingCanMakeSamplesInsufficient) {
  std::mt19937_64 Rng(16);
  auto Cand = lognormal(Rng, 12, 1000, 0.02);
  for (int I = 0; I < 4; ++I)
    Cand[I].Throttled = true;
  ShapeVerdict V =
      mustDecide(passingEvidence(lognormal(Rng, 30, 1500, 0.02), Cand));
  EXPECT_EQ(V.Outcome, Verdict::InsufficientSamples);
  EXPECT_EQ(V.CandidateDiscarded, 4u);
  EXPECT_EQ(V.Candidate->N, 8u);
}

TEST(Decision, ForeignSamplesAreDiscardedAndCountedApartFromThrottled) {
  std::mt19937_64 Rng(19);
  auto Base = lognormal(Rng, 30, 1500, 0.02);
  auto Cand = lognormal(Rng, 30, 1000, 0.02);
  // Launches that shared the GPU with another process are slow; kept, they
  // would make the candidate's p99 regress.
  for (int I = 0; I < 5; ++I)
    Cand.push_back({9000, false, true});
  Cand.push_back({9100, true, false});
  Base.push_back({9500, false, true});
  ShapeVerdict V = mustDecide(passingEvidence(Base, Cand));
  EXPECT_EQ(V.Outcome, Verdict::Accepted) << V.Explanation;
  EXPECT_EQ(V.BaselineForeign, 1u);
  EXPECT_EQ(V.CandidateForeign, 5u);
  EXPECT_EQ(V.BaselineDiscarded, 0u);
  EXPECT_EQ(V.CandidateDiscarded, 1u);
  EXPECT_EQ(V.Candidate->N, 30u);
  EXPECT_LT(V.Candidate->Max, 2000);
  EXPECT_TRUE(contains(V.Explanation,
                       "foreign-load samples discarded: baseline 1, candidate 5"))
      << V.Explanation;
}

TEST(Decision, ForeignLoadMakesSamplesInsufficientAndSaysSo) {
  // 27 of the baseline's 30 launches ran while another process used the GPU.
  std::mt19937_64 Rng(20);
  auto Base = lognormal(Rng, 30, 1500, 0.02);
  for (int I = 3; I < 30; ++I)
    Base[I].Foreign = true;
  auto Cand = lognormal(Rng, 30, 1000, 0.02);
  Cand[0].Throttled = true;
  Cand[1].Foreign = true;
  ShapeVerdict V = mustDecide(passingEvidence(Base, Cand));
  EXPECT_EQ(V.Outcome, Verdict::InsufficientSamples) << V.Explanation;
  EXPECT_FALSE(V.Speedup.has_value());
  EXPECT_EQ(V.BaselineForeign, 27u);
  EXPECT_EQ(V.Baseline->N, 3u);
  ASSERT_FALSE(V.Reasons.empty());
  EXPECT_EQ(V.Reasons[0],
            "too few samples: baseline 3 of 30 kept (27 discarded: 27 foreign "
            "GPU load, 0 throttled), candidate 28 of 30 kept (2 discarded: 1 "
            "foreign GPU load, 1 throttled); need >= 10 per side");
  EXPECT_TRUE(contains(V.Explanation, "insufficient samples: kernel saxpy shape "
                                      "n16M: too few samples: baseline 3 of 30"))
      << V.Explanation;
}

TEST(Decision, OutputMismatchRejectsEvenWithTooFewSamples) {
  std::mt19937_64 Rng(17);
  auto E = passingEvidence(lognormal(Rng, 3, 1500, 0.02),
                           lognormal(Rng, 3, 1000, 0.02));
  E.Seeds[1] = {3, true, false, "arg 1 launch 0: 7 of 1024 elements differ"};
  ShapeVerdict V = mustDecide(E);
  EXPECT_EQ(V.Outcome, Verdict::Rejected);
  EXPECT_FALSE(V.OutputsOk);
  EXPECT_TRUE(contains(V.Explanation, "outputs differ on seed 3 (held out): "
                                      "arg 1 launch 0: 7 of 1024"))
      << V.Explanation;
}

TEST(Decision, HeldOutSeedIsRequired) {
  std::mt19937_64 Rng(18);
  auto E = passingEvidence(lognormal(Rng, 30, 1500, 0.02),
                           lognormal(Rng, 30, 1000, 0.02));
  E.Seeds = {{0, false, true, ""}, {1, false, true, ""}};
  ShapeVerdict V = mustDecide(E);
  EXPECT_EQ(V.Outcome, Verdict::Rejected);
  EXPECT_TRUE(contains(V.Explanation, "no held-out seed was verified"));
  DecisionThresholds T;
  T.RequireHeldOutSeed = false;
  EXPECT_EQ(mustDecide(E, T).Outcome, Verdict::Accepted);
  E.Seeds.clear();
  ShapeVerdict W = mustDecide(E, T);
  EXPECT_EQ(W.Outcome, Verdict::Rejected);
  EXPECT_TRUE(contains(W.Explanation, "outputs were not verified"));
}

TEST(Decision, DeterminismMustNotGetWorse) {
  std::mt19937_64 Rng(19);
  auto E = passingEvidence(lognormal(Rng, 30, 1500, 0.02),
                           lognormal(Rng, 30, 1000, 0.02));
  E.Determinism = {{"saxpy arg 1", true, false}};
  ShapeVerdict V = mustDecide(E);
  EXPECT_EQ(V.Outcome, Verdict::Rejected);
  EXPECT_FALSE(V.DeterminismOk);
  EXPECT_TRUE(contains(V.Explanation, "output saxpy arg 1 was bitwise "
                                      "deterministic in the baseline but not"));
  // A baseline that was not deterministic (atomics) does not bind the
  // candidate.
  E.Determinism = {{"hist arg 0", false, false}};
  EXPECT_EQ(mustDecide(E).Outcome, Verdict::Accepted);
  E.Determinism.clear();
  ShapeVerdict W = mustDecide(E);
  EXPECT_EQ(W.Outcome, Verdict::Rejected);
  EXPECT_TRUE(contains(W.Explanation, "no determinism check"));
}

TEST(Decision, InvalidInputIsAnError) {
  auto E = passingEvidence({{100, false}, {-1, false}}, {{100, false}});
  auto V = decide(E);
  ASSERT_FALSE(static_cast<bool>(V));
  std::string Msg = llvm::toString(V.takeError());
  EXPECT_TRUE(contains(Msg, "kernel saxpy shape n16M: baseline sample #1"))
      << Msg;
  DecisionThresholds T;
  T.MinGain = -0.1;
  auto W = decide(passingEvidence({{1, false}}, {{1, false}}), T);
  ASSERT_FALSE(static_cast<bool>(W));
  EXPECT_TRUE(contains(llvm::toString(W.takeError()), "min gain"));
  auto X = decideAll({});
  ASSERT_FALSE(static_cast<bool>(X));
  EXPECT_TRUE(contains(llvm::toString(X.takeError()), "no evidence"));
}

TEST(Decision, OneRegressingShapeRefusesTheCandidateDespiteGeomean) {
  std::mt19937_64 Rng(20);
  std::vector<ShapeEvidence> Ev;
  Ev.push_back(passingEvidence(lognormal(Rng, 30, 2000, 0.02),
                               lognormal(Rng, 30, 1000, 0.02), "n16M"));
  Ev.push_back(passingEvidence(lognormal(Rng, 30, 1000, 0.02),
                               lognormal(Rng, 30, 1100, 0.02), "n1M"));
  Ev.back().HeldOutShape = true;
  auto C = decideAll(Ev);
  ASSERT_TRUE(static_cast<bool>(C)) << llvm::toString(C.takeError());
  ASSERT_TRUE(C->GeomeanSpeedup.has_value());
  EXPECT_GT(*C->GeomeanSpeedup, 1.2) << "the geomean wins";
  EXPECT_EQ(C->Outcome, Verdict::Rejected);
  ASSERT_EQ(C->Shapes.size(), 2u);
  EXPECT_EQ(C->Shapes[0].Outcome, Verdict::Accepted);
  EXPECT_EQ(C->Shapes[1].Outcome, Verdict::Rejected);
  EXPECT_TRUE(contains(C->Explanation, "1 of 2 kernel/shape pairs refused"))
      << C->Explanation;
  EXPECT_TRUE(contains(C->Explanation, "shape n1M (held out)"));
  EXPECT_TRUE(contains(C->Explanation, "informational only"));
}

TEST(Decision, CombinedAcceptedAndInsufficient) {
  std::mt19937_64 Rng(21);
  std::vector<ShapeEvidence> Ev;
  Ev.push_back(passingEvidence(lognormal(Rng, 30, 2000, 0.02),
                               lognormal(Rng, 30, 1000, 0.02), "a"));
  Ev.push_back(passingEvidence(lognormal(Rng, 30, 1500, 0.02),
                               lognormal(Rng, 30, 1000, 0.02), "b"));
  auto C = decideAll(Ev);
  ASSERT_TRUE(static_cast<bool>(C));
  EXPECT_EQ(C->Outcome, Verdict::Accepted) << C->Explanation;
  EXPECT_NEAR(*C->GeomeanSpeedup, std::sqrt(2.0 * 1.5), 0.05);
  EXPECT_TRUE(contains(C->Explanation, "accepted: all 2"));

  Ev.push_back(passingEvidence(lognormal(Rng, 5, 1500, 0.02),
                               lognormal(Rng, 30, 1000, 0.02), "c"));
  auto D = decideAll(Ev);
  ASSERT_TRUE(static_cast<bool>(D));
  EXPECT_EQ(D->Outcome, Verdict::InsufficientSamples) << D->Explanation;
  EXPECT_TRUE(contains(D->Explanation, "shape c"));
}

} // namespace
