//===- DecisionJSONTest.cpp - Tests of verdict JSON -----------------------===//
#include "kloop/Decide/DecisionJSON.h"
#include "TestSamples.h"
#include "gtest/gtest.h"

using namespace kloop::decide;
using namespace kloop::decide::test;
using nlohmann::json;

namespace {

CombinedVerdict sampleVerdict() {
  std::mt19937_64 Rng(30);
  std::vector<ShapeEvidence> Ev;
  Ev.push_back(passingEvidence(lognormal(Rng, 30, 1500, 0.02),
                               lognormal(Rng, 30, 1000, 0.02), "n16M"));
  Ev.push_back(passingEvidence(lognormal(Rng, 4, 1500, 0.02),
                               lognormal(Rng, 30, 1000, 0.02), "n1M"));
  Ev[0].Candidate.push_back({5000, true});
  Ev[0].Candidate.push_back({6000, false, true});
  Ev[0].Candidate.push_back({6100, false, true});
  Ev[0].Baseline.push_back({7000, false, true});
  auto C = decideAll(Ev);
  EXPECT_TRUE(static_cast<bool>(C));
  return *C;
}

TEST(DecisionJSON, RoundTrip) {
  CombinedVerdict C = sampleVerdict();
  json J = toJSON(C);
  EXPECT_EQ(J["schema"], "kloop-verdict/1");
  EXPECT_EQ(J["verdict"], "insufficient samples");
  EXPECT_TRUE(J["shapes"][1]["speedup"].is_null());
  // Through text, as the journal stores it.
  json Back = json::parse(J.dump());
  auto R = combinedVerdictFromJSON(Back);
  ASSERT_TRUE(static_cast<bool>(R)) << llvm::toString(R.takeError());
  EXPECT_EQ(R->Outcome, C.Outcome);
  EXPECT_EQ(R->Explanation, C.Explanation);
  EXPECT_EQ(R->GeomeanSpeedup, C.GeomeanSpeedup);
  ASSERT_EQ(R->Shapes.size(), 2u);
  const ShapeVerdict &A = R->Shapes[0], &B = C.Shapes[0];
  EXPECT_EQ(A.Outcome, Verdict::Accepted);
  EXPECT_EQ(A.Kernel, B.Kernel);
  EXPECT_EQ(A.CandidateDiscarded, 1u);
  EXPECT_EQ(A.CandidateForeign, 2u);
  EXPECT_EQ(A.BaselineForeign, 1u);
  EXPECT_EQ(J["shapes"][0]["candidate_foreign"], 2);
  ASSERT_TRUE(A.Speedup && B.Speedup);
  EXPECT_EQ(A.Speedup->Lower, B.Speedup->Lower);
  EXPECT_EQ(A.Speedup->Seed, B.Speedup->Seed);
  EXPECT_EQ(A.Candidate->P99, B.Candidate->P99);
  EXPECT_EQ(A.Candidate->CV, B.Candidate->CV);
  EXPECT_EQ(*A.P99Change, *B.P99Change);
  EXPECT_EQ(A.Thresholds.MinGain, 0.02);
  EXPECT_EQ(A.Thresholds.Bootstrap.Seed, B.Thresholds.Bootstrap.Seed);
  EXPECT_FALSE(R->Shapes[1].Speedup.has_value());
  EXPECT_EQ(R->Shapes[1].Reasons, C.Shapes[1].Reasons);
  // Serialising again gives the same document.
  EXPECT_EQ(toJSON(*R), J);
}

TEST(DecisionJSON, MalformedFieldsAreNamed) {
  json J = toJSON(sampleVerdict());
  json Bad = J;
  Bad["shapes"][0]["speedup"]["lower"] = "high";
  auto R = combinedVerdictFromJSON(Bad);
  ASSERT_FALSE(static_cast<bool>(R));
  EXPECT_NE(llvm::toString(R.takeError())
                .find("shapes[0].speedup.lower: expected a number"),
            std::string::npos);

  Bad = J;
  Bad["shapes"][1].erase("thresholds");
  R = combinedVerdictFromJSON(Bad);
  ASSERT_FALSE(static_cast<bool>(R));
  EXPECT_NE(llvm::toString(R.takeError()).find("shapes[1].thresholds: missing"),
            std::string::npos);

  Bad = J;
  Bad["verdict"] = "maybe";
  R = combinedVerdictFromJSON(Bad);
  ASSERT_FALSE(static_cast<bool>(R));
  EXPECT_NE(llvm::toString(R.takeError()).find("unknown verdict 'maybe'"),
            std::string::npos);

  Bad = J;
  Bad["schema"] = "kloop-verdict/0";
  R = combinedVerdictFromJSON(Bad);
  ASSERT_FALSE(static_cast<bool>(R));
  EXPECT_NE(llvm::toString(R.takeError()).find("schema"), std::string::npos);

  auto S = combinedVerdictFromJSON(json::array());
  ASSERT_FALSE(static_cast<bool>(S));
  EXPECT_NE(llvm::toString(S.takeError()).find("expected an object"),
            std::string::npos);
}

TEST(DecisionJSON, VerdictWithoutForeignCountsReadsAsNoneDiscarded) {
  // A verdict written before the foreign-load counts existed (journals of
  // older runs) still reads; a mistyped count is an error naming it.
  json J = toJSON(sampleVerdict());
  json Old = J;
  for (json &S : Old["shapes"]) {
    S.erase("baseline_foreign");
    S.erase("candidate_foreign");
  }
  auto R = combinedVerdictFromJSON(Old);
  ASSERT_TRUE(static_cast<bool>(R)) << llvm::toString(R.takeError());
  EXPECT_EQ(R->Shapes[0].CandidateForeign, 0u);
  EXPECT_EQ(R->Shapes[0].BaselineForeign, 0u);
  EXPECT_EQ(R->Shapes[0].CandidateDiscarded, 1u);

  json Bad = J;
  Bad["shapes"][0]["candidate_foreign"] = -2;
  R = combinedVerdictFromJSON(Bad);
  ASSERT_FALSE(static_cast<bool>(R));
  EXPECT_NE(llvm::toString(R.takeError())
                .find("shapes[0].candidate_foreign: expected a non-negative "
                      "integer"),
            std::string::npos);
}

TEST(DecisionJSON, SpeedupGroupsRoundTripAndReadAsZeroWhenAbsent) {
  // Launches of three timing rounds: the interval says it drew from 3 groups.
  std::mt19937_64 Rng(31);
  std::vector<Sample> B = lognormal(Rng, 30, 1500, 0.02), C = lognormal(Rng, 30, 1000, 0.02);
  for (size_t I = 0; I < B.size(); ++I)
    B[I].Group = C[I].Group = static_cast<uint32_t>(I % 3);
  auto V = decideAll({passingEvidence(B, C)});
  ASSERT_TRUE(static_cast<bool>(V));
  json J = toJSON(*V);
  EXPECT_EQ(J["shapes"][0]["speedup"]["groups"], 3);
  auto R = combinedVerdictFromJSON(J);
  ASSERT_TRUE(static_cast<bool>(R)) << llvm::toString(R.takeError());
  EXPECT_EQ(R->Shapes[0].Speedup->Groups, 3u);
  json Old = J;
  Old["shapes"][0]["speedup"].erase("groups");
  R = combinedVerdictFromJSON(Old);
  ASSERT_TRUE(static_cast<bool>(R)) << llvm::toString(R.takeError());
  EXPECT_EQ(R->Shapes[0].Speedup->Groups, 0u);
  json Bad = J;
  Bad["shapes"][0]["speedup"]["groups"] = "three";
  R = combinedVerdictFromJSON(Bad);
  ASSERT_FALSE(static_cast<bool>(R));
  EXPECT_NE(llvm::toString(R.takeError()).find("shapes[0].speedup.groups"), std::string::npos);
}

} // namespace
