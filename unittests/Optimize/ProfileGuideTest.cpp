//===- ProfileGuideTest.cpp - the builtin search driven by the counters ---===//
#include "kloop/Propose/ProfileGuide.h"
#include "gtest/gtest.h"

#include "../InventoryFixture.h"

using json = nlohmann::json;
using namespace kloop;
using namespace kloop::builtin;
using llvm::Expected;

namespace {

/// Kernel `k` (mangled _Z1kPKfPf) with a block-size macro B (256) and a read-only pointer.
json inventory() {
  return json::parse(R"({
    "constants": [{"id": "macro:B", "value": 256, "editable": true,
                   "uses": [{"context": "block_size", "owner": "a.cu:launch/launch#1"}]}],
    "launch_sites": [{"id": "a.cu:launch/launch#1", "kernel": "k"}],
    "kernels": [{"id": "k", "editable": true, "symbols": [{"mangled": "_Z1kPKfPf"}],
      "params": [{"id": "k/param:x", "pointer": true, "written": false, "restrict": false, "const_pointee": true}]}]
  })");
}

/// inventory(), and three rules that fire on it: pad-shared-tiles (its shared tile), vectorize-global-access (its loop) and
/// warp-shuffle-reductions (its tree).
TunableSpace space() {
  json Inv = inventory();
  RuleCandidatesFn Rules = [](const inv::Inventory &) {
    return json::parse(R"([
      {"rule": "pad-shared-tiles", "site": "k/shared:t", "why": "columns",
       "edits": [{"kind": "replace_stmt", "id": "k", "stmt": 1, "code": "__shared__ float t[32][33];"}]},
      {"rule": "vectorize-global-access", "site": "k/loop#1", "why": "unit stride",
       "edits": [{"kind": "replace_loop", "id": "k/loop#1", "code": "for (;;) {}"}]},
      {"rule": "warp-shuffle-reductions", "site": "k/tree:t#1", "why": "tree",
       "edits": [{"kind": "replace_stmt", "id": "k", "stmt": 2, "code": "x = 0;"}]}])");
  };
  return enumerateSpace(cantFail(test::readInventory(Inv)), nullptr, Rules);
}

/// A profile of `k`: 1024 blocks of 256 threads, 90% achieved occupancy, no conflicts, coalesced.
measure::KernelProfile profile() {
  measure::KernelProfile P;
  P.Kernel = "_Z1kPKfPf";
  P.Name = "k(const float *, float *)";
  P.Shape = "n1M";
  P.Launch.Grid = {1024, 1, 1};
  P.Launch.Block = {256, 1, 1};
  P.AchievedOccupancyPct = 90;
  P.SmemBankConflictsLoad = 0;
  P.SmemBankConflictsStore = 0;
  P.GlobalLoadSectorsPerRequest = 4;
  P.GlobalStoreSectorsPerRequest = 4;
  return P;
}

json counters(const std::vector<measure::KernelProfile> &Ps) {
  json Out = {{"profiles", json::array()}, {"problems", json::array()}};
  for (const measure::KernelProfile &P : Ps)
    Out["profiles"].push_back(measure::toJSON(P));
  return Out;
}

ProfileGuide guide(const TunableSpace &S, const std::vector<measure::KernelProfile> &Ps) {
  return cantFail(profileGuide(S, counters(Ps), "test"));
}

std::vector<std::string> sequence(const TunableSpace &S, const ProfileGuide *G) {
  std::vector<std::string> Out;
  std::vector<Attempt> H;
  while (std::optional<Candidate> C = nextCandidate(S, H, {}, {}, G)) {
    Out.push_back(C->DimKey + "=" + std::to_string(C->Value));
    H.push_back({C->A, false, false});
    if (Out.size() > 50)
      break;
  }
  return Out;
}

// The H200 figures of test/Profile/gpu-metrics.test: the conflicting transpose is limited by bank
// conflicts, the padded one is not; saxpy's 84.9% long_scoreboard is global memory.
TEST(ProfileFindings, ThresholdsSeparateTheMeasuredKernels) {
  measure::KernelProfile Conflicting = profile();
  Conflicting.Launch.Grid = {64, 64, 1};
  Conflicting.Launch.Block = {32, 32, 1};
  Conflicting.SmemBankConflictsLoad = 4079257;
  std::vector<Finding> F = findingsOf({Conflicting});
  ASSERT_EQ(F.size(), 1u);
  EXPECT_EQ(F[0].What, Limiter::BankConflicts);
  EXPECT_NE(F[0].Evidence.find("0.97 bank conflicts per thread"), std::string::npos) << F[0].Evidence;
  Conflicting.SmemBankConflictsLoad = 4534;
  EXPECT_TRUE(findingsOf({Conflicting}).empty());

  measure::KernelProfile Saxpy = profile();
  Saxpy.TopStalls = {{"long_scoreboard", 84.9}, {"lg_throttle", 7.7}};
  F = findingsOf({Saxpy});
  ASSERT_EQ(F.size(), 1u); // lg_throttle is below the 10% share
  EXPECT_EQ(F[0].What, Limiter::GlobalMemory);
  EXPECT_DOUBLE_EQ(F[0].Weight, 0.849);
}

// Each limiter once, with its strongest evidence over the shapes, strongest first.
TEST(ProfileFindings, StrongestEvidenceOverShapesFirst) {
  measure::KernelProfile A = profile(), B = profile();
  A.TopStalls = {{"barrier", 30}, {"long_scoreboard", 20}};
  B.Shape = "n16M";
  B.TopStalls = {{"long_scoreboard", 60}, {"barrier", 25}};
  B.AchievedOccupancyPct = 20;
  std::vector<Finding> F = findingsOf({A, B});
  ASSERT_EQ(F.size(), 3u);
  EXPECT_EQ(F[0].What, Limiter::Occupancy); // 1 - 0.2
  EXPECT_EQ(F[1].What, Limiter::GlobalMemory);
  EXPECT_NE(F[1].Evidence.find("shape n16M"), std::string::npos);
  EXPECT_EQ(F[2].What, Limiter::SharedMemory);
  EXPECT_DOUBLE_EQ(F[2].Weight, 0.30);
}

TEST(ProfileGuide, OrdersByTheLimiterAndLeavesOutWhatAddressesNone) {
  TunableSpace S = space();
  // Without counters: the kind order (rules first), every dimension walked.
  std::vector<std::string> Plain = sequence(S, nullptr);
  EXPECT_EQ(Plain.size(), 6u); // three rules, block size up and down, qualifiers

  measure::KernelProfile Conflicts = profile();
  Conflicts.SmemBankConflictsLoad = 262144; // one per thread
  ProfileGuide G = guide(S, {Conflicts});
  std::vector<std::string> Seq = sequence(S, &G);
  ASSERT_FALSE(Seq.empty());
  EXPECT_EQ(Seq[0], "rule:pad-shared-tiles@k/shared:t=1");
  // Only what addresses bank conflicts (padding); vectorize, the shuffle, block size and qualifiers are left out.
  EXPECT_EQ(Seq.size(), 1u);
  EXPECT_EQ(leftOutByProfile(S, G).size(), 4u);

  measure::KernelProfile Memory = profile();
  Memory.TopStalls = {{"long_scoreboard", 80}, {"barrier", 15}};
  G = guide(S, {Memory});
  Seq = sequence(S, &G);
  // global memory first (vectorize, then qualifiers' read-only path), then shared memory (padding, the
  // shuffle, block size), each group in the kind order.
  ASSERT_GE(Seq.size(), 2u);
  EXPECT_EQ(Seq[0], "rule:vectorize-global-access@k/loop#1=1");
  std::vector<std::string> Memory2(Seq.begin(), Seq.begin() + 2);
  EXPECT_EQ(Memory2[1], "qualifiers:k=1");
  EXPECT_EQ(Seq.size(), 6u);
}

// A profile of another kernel (or none) leaves `k` unguided; a profile that shows nothing the rules
// address leaves every dimension of `k` out.
TEST(ProfileGuide, OnlyProfiledKernelsAreGuided) {
  TunableSpace S = space();
  measure::KernelProfile Other = profile();
  Other.Kernel = "_Z5otherPf";
  Other.SmemBankConflictsLoad = 1e6;
  ProfileGuide G = guide(S, {Other});
  EXPECT_TRUE(G.ByKernel.empty());
  EXPECT_EQ(sequence(S, &G), sequence(S, nullptr));

  G = guide(S, {profile()}); // healthy: 90% occupancy, coalesced, no stalls named
  ASSERT_EQ(G.ByKernel.count("k"), 1u);
  EXPECT_TRUE(sequence(S, &G).empty());
  std::vector<std::string> D = describeGuide(G);
  ASSERT_EQ(D.size(), 1u);
  EXPECT_EQ(D[0], "k: no limiter the rules address");
}

TEST(ProfileGuide, BadProfileIsAnErrorNamingTheSource) {
  TunableSpace S = space();
  json C = {{"profiles", {{{"kernel", "_Z1kPKfPf"}}}}};
  Expected<ProfileGuide> G = profileGuide(S, C, "ctx: counters");
  ASSERT_FALSE(!!G);
  EXPECT_NE(toString(G.takeError()).find("ctx: counters"), std::string::npos);
  EXPECT_TRUE(cantFail(profileGuide(S, json(nullptr), "x")).ByKernel.empty());
}

// The proposer: the counters order the walk, the rationale and provenance carry the findings, and the
// end names the profile as the reason.
TEST(ProfileGuide, ProposerStopsWhenTheProfileShowsNothingLeft) {
  json Inv = inventory();
  measure::KernelProfile Low = profile();
  Low.AchievedOccupancyPct = 25;
  BuiltinProposer P;
  json Ctx = {{"inventory", inv::toJSON(test::completeInventory(Inv))},
              {"history", json::array()},
              {"counters", counters({Low})}};
  std::vector<std::string> Dims;
  for (int I = 0; I < 10; ++I) {
    Expected<ProposalReply> R = P.propose(Ctx);
    if (!R) {
      std::string Why = toString(R.takeError());
      EXPECT_NE(Why.find("the profile shows nothing left that a rule addresses"), std::string::npos) << Why;
      EXPECT_NE(Why.find("k: occupancy (achieved occupancy 25.0%"), std::string::npos) << Why;
      EXPECT_NE(Why.find("qualifiers:k"), std::string::npos) << Why;
      break;
    }
    Dims.push_back(R->Proposal["provenance"]["dimension"].get<std::string>());
    EXPECT_NE(R->Proposal["rationale"].get<std::string>().find("the profile: k: occupancy"), std::string::npos);
    EXPECT_EQ(R->Proposal["provenance"]["left_out_by_profile"], json::array({"qualifiers:k"}));
    Ctx["history"].push_back({{"proposal", R->Proposal}, {"accepted", false}, {"outcome", "rejected"}});
  }
  // Occupancy: block size up and down, never the qualifiers.
  EXPECT_EQ(Dims, (std::vector<std::string>{"block_size:macro:B", "block_size:macro:B"}));
}

// After a win the walk starts from the new incumbent and follows its counters: the parameters are
// tuned on top of a structural win, and a rule that lost on the baseline is tried again there.
TEST(ProfileGuide, WalkFollowsTheIncumbentsCounters) {
  TunableSpace S = space();
  measure::KernelProfile Memory = profile();
  Memory.TopStalls = {{"long_scoreboard", 80}};
  ProfileGuide G = guide(S, {Memory});
  std::vector<Attempt> H;
  std::optional<Candidate> C = nextCandidate(S, H, {}, {}, &G);
  ASSERT_TRUE(C);
  EXPECT_EQ(C->DimKey, "rule:vectorize-global-access@k/loop#1");
  H.push_back({C->A, true, false}); // vectorize wins; its counters now show low occupancy
  measure::KernelProfile Occ = profile();
  Occ.AchievedOccupancyPct = 30;
  G = guide(S, {Occ});
  C = nextCandidate(S, H, {}, {}, &G);
  ASSERT_TRUE(C);
  EXPECT_EQ(C->DimKey, "block_size:macro:B");
  EXPECT_EQ(C->A.at("rule:vectorize-global-access@k/loop#1"), 1); // on top of the win
}

} // namespace
