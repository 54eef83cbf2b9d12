//===- BuiltinProposerTest.cpp - builtin search on synthetic inventories --===//
#include "kloop/Support/Ptxas.h"
#include "kloop/Optimize/Stages.h"
#include "kloop/Propose/BuiltinProposer.h"
#include "gtest/gtest.h"

#include "../InventoryFixture.h"

using json = nlohmann::json;
using namespace kloop;
using namespace kloop::builtin;
using llvm::Expected;

namespace {

/// One kernel `k` with a block-size macro B (256) also used by its launch
/// bounds, a tile macro T (16), a loop with `#pragma unroll 2` and trip count 8,
/// a read-only pointer `x` without const/restrict.
json inventory() {
  return json::parse(R"({
    "constants": [
      {"id": "macro:B", "value": 256, "editable": true,
       "uses": [{"context": "block_size", "owner": "a.cu:launch/launch#1"},
                {"context": "launch_bounds", "owner": "k"}]},
      {"id": "macro:T", "value": 16, "editable": true, "uses": [{"context": "array_size", "owner": "k"}]},
      {"id": "macro:MAXB", "value": 65535, "editable": true, "uses": [{"context": "loop_bound", "owner": "k"}]}
    ],
    "launch_sites": [{"id": "a.cu:launch/launch#1", "kernel": "k"}],
    "kernels": [{"id": "k", "editable": true, "mangled": ["_Z1kPKfPf"],
      "launch_bounds": {"id": "k/launch_bounds", "max_threads": {"expr": "B", "value": 256}, "min_blocks": null},
      "loops": [{"id": "k/loop#1", "editable": true, "unroll": {"count": 2}, "trip_count": 8}],
      "params": [{"id": "k/param:x", "pointer": true, "written": false, "restrict": false, "const_pointee": false},
                 {"id": "k/param:y", "pointer": true, "written": true, "restrict": false, "const_pointee": false}]}]
  })");
}

/// enumerateSpace of test inventory \p Inv (completed and read by test::readInventory).
Expected<TunableSpace> enumerate(const json &Inv, const WorkloadScope *W = nullptr,
                                 const RuleCandidatesFn &Rules = nullptr) {
  Expected<inv::Inventory> I = test::readInventory(Inv);
  if (!I)
    return I.takeError();
  return enumerateSpace(*I, W, Rules);
}

const Dimension *find(const TunableSpace &S, const std::string &Key) {
  for (const Dimension &D : S.Dims)
    if (D.key() == Key)
      return &D;
  return nullptr;
}

TEST(BuiltinSpace, EnumeratesEveryKind) {
  Expected<TunableSpace> S = enumerate(inventory());
  ASSERT_TRUE(!!S) << toString(S.takeError());
  const Dimension *B = find(*S, "block_size:macro:B");
  ASSERT_NE(B, nullptr);
  EXPECT_EQ(B->Values, (std::vector<int64_t>{64, 128, 256, 512, 1024}));
  EXPECT_EQ(B->Kernel, "k");
  const Dimension *T = find(*S, "tile:macro:T");
  ASSERT_NE(T, nullptr);
  EXPECT_EQ(T->Values, (std::vector<int64_t>{8, 16, 32}));
  EXPECT_EQ(find(*S, "tile:macro:MAXB"), nullptr); // 65535 is no tile size
  ASSERT_FALSE(S->Notes.empty());
  const Dimension *U = find(*S, "unroll:k/loop#1");
  ASSERT_NE(U, nullptr);
  EXPECT_EQ(U->Values, (std::vector<int64_t>{1, 2, 4, 8}));
  const Dimension *M = find(*S, "min_blocks:k");
  ASSERT_NE(M, nullptr);
  EXPECT_EQ(M->MaxThreadsFrom, "block_size:macro:B");
  const Dimension *Q = find(*S, "qualifiers:k");
  ASSERT_NE(Q, nullptr);
  ASSERT_EQ(Q->ParamEdits.size(), 2u); // const and restrict on x; nothing on the written y
  EXPECT_EQ(Q->ParamEdits[0].first, "k/param:x");
}

bool hasNote(const TunableSpace &S, const std::string &Text) {
  for (const std::string &N : S.Notes)
    if (N.find(Text) != std::string::npos)
      return true;
  return false;
}

/// inventory() plus a kernel `other` with its own tile macro O and loop, a device function `h` that `k`
/// calls (its loop bound is macro H), and file locations: everything in a.cu, the workload's source.
json twoKernels() {
  json Inv = inventory();
  Inv["root"] = "/w";
  json Loc = {{"file", "a.cu"}};
  for (json &C : Inv["constants"])
    C["location"] = Loc;
  Inv["kernels"][0]["location"] = Loc;
  Inv["kernels"][0]["calls"] = {"device:h"};
  Inv["kernels"].push_back({{"id", "other"}, {"qualified_name", "other"}, {"editable", true}, {"location", Loc},
                            {"loops", {{{"id", "other/loop#1"}, {"editable", true}, {"unroll", nullptr}, {"trip_count", 4}}}}});
  Inv["constants"].push_back({{"id", "macro:O"}, {"value", 16}, {"editable", true}, {"location", Loc},
                              {"uses", {{{"context", "array_size"}, {"owner", "other"}}}}});
  Inv["constants"].push_back({{"id", "macro:H"}, {"value", 4}, {"editable", true}, {"location", Loc},
                              {"uses", {{{"context", "loop_bound"}, {"owner", "device:h"}}}}});
  Inv["device_functions"] = {{{"id", "device:h"}, {"calls", json::array()}}};
  return Inv;
}

// Issue 15: only the workload's targets and what they call are tuned; the rest is noted.
TEST(BuiltinSpace, WorkloadScopeKeepsTargetsAndCallees) {
  WorkloadScope W{{"k"}, "/w", {"a.cu"}, {}};
  Expected<TunableSpace> S = enumerate(twoKernels(), &W);
  ASSERT_TRUE(!!S) << toString(S.takeError());
  EXPECT_NE(find(*S, "tile:macro:T"), nullptr);
  EXPECT_NE(find(*S, "tile:macro:H"), nullptr); // used by device:h, which the target calls
  EXPECT_EQ(find(*S, "tile:macro:O"), nullptr);
  EXPECT_EQ(find(*S, "unroll:other/loop#1"), nullptr);
  EXPECT_TRUE(hasNote(*S, "other: kernel left out: is not a target of the workload (targets:)"));
  EXPECT_TRUE(hasNote(*S, "macro:O: left out: is used only by other"));
  // Without a workload every kernel is tuned (the behaviour for callers other than kloop optimize).
  Expected<TunableSpace> All = enumerate(twoKernels());
  ASSERT_TRUE(!!All) << toString(All.takeError());
  EXPECT_NE(find(*All, "tile:macro:O"), nullptr);
}

TEST(BuiltinSpace, ProtectedAndForeignFilesAreNeverTuned) {
  json Inv = twoKernels();
  Inv["constants"][1]["location"]["file"] = "tile.h";          // macro:T
  Inv["constants"][0]["location"]["file"] = "/elsewhere/b.h";  // macro:B
  WorkloadScope W{{"k"}, "/w", {"a.cu"}, {"tile.h"}};
  Expected<TunableSpace> S = enumerate(Inv, &W);
  ASSERT_TRUE(!!S) << toString(S.takeError());
  EXPECT_EQ(find(*S, "tile:macro:T"), nullptr);
  EXPECT_EQ(find(*S, "block_size:macro:B"), nullptr);
  EXPECT_TRUE(hasNote(*S, "macro:T: left out: is in tile.h, which the workload protects (protected:)"));
  EXPECT_TRUE(hasNote(*S, "macro:B: left out: is in /elsewhere/b.h, which is not one of the workload's sources"));
}

TEST(BuiltinSpace, HardwareFactsAreNeverTuned) {
  json Inv = inventory();
  Inv["constants"][1]["hardware_fact"] = {{"reason", "used as the width argument of __shfl_down_sync at a.cu:3"},
                                          {"uses", json::array()}};
  Expected<TunableSpace> S = enumerate(Inv);
  ASSERT_TRUE(!!S) << toString(S.takeError());
  EXPECT_EQ(find(*S, "tile:macro:T"), nullptr);
  EXPECT_TRUE(hasNote(*S, "macro:T: left out: is a hardware fact, never tuned: used as the width argument"));
}

// Structural rules: a site where one fires is an off/on dimension walked first; one where it does not,
// a note with the reason.
TEST(BuiltinSpace, StructuralRulesAreDimensionsTriedFirst) {
  RuleCandidatesFn Rules = [](const inv::Inventory &) {
    return json::parse(R"([
      {"rule": "pad-shared-tiles", "site": "k/shared:t", "why": "reads by columns",
       "edits": [{"kind": "replace_stmt", "id": "k", "stmt": 1, "code": "__shared__ float t[32][32 + 1];"}]},
      {"rule": "pad-shared-tiles", "site": "k/shared:u", "why": "no access reads a column", "edits": []}])");
  };
  Expected<TunableSpace> S = enumerate(inventory(), nullptr, Rules);
  ASSERT_TRUE(!!S) << toString(S.takeError());
  const Dimension *R = find(*S, "rule:pad-shared-tiles@k/shared:t");
  ASSERT_NE(R, nullptr);
  EXPECT_EQ(R->Values, (std::vector<int64_t>{0, 1}));
  EXPECT_TRUE(hasNote(*S, "k/shared:u: rule pad-shared-tiles does not fire: no access reads a column"));
  std::optional<Candidate> C = nextCandidate(*S, {}, {}, SearchOptions{});
  ASSERT_TRUE(C.has_value());
  EXPECT_EQ(C->DimKey, "rule:pad-shared-tiles@k/shared:t");
  json E = editsFor(*S, C->A);
  ASSERT_EQ(E.size(), 1u);
  EXPECT_EQ(E[0]["kind"], "replace_stmt");
}

// Two rules that rewrite one loop (coarsen-grid-stride-2 and -8), or a kernel's body and a loop in it
// (tile-shared-memory), are alternatives: once one has won, the other is tried in its place, never on
// top of it (the search used to propose coarsen-2 and coarsen-8 together, which kloop apply refuses).
// A rule on another statement of the kernel (pad-shared-tiles, replace_stmt) still combines.
TEST(BuiltinSearch, RulesOnOneLoopOrKernelAreAlternatives) {
  RuleCandidatesFn Rules = [](const inv::Inventory &) {
    return json::parse(R"([
      {"rule": "coarsen-grid-stride-2", "site": "k/loop#1", "why": "2 per step",
       "edits": [{"kind": "replace_loop", "id": "k/loop#1", "code": "for (;;) {}"},
                 {"kind": "set_launch_config", "id": "a.cu:launch/launch#1", "grid": "g2"}]},
      {"rule": "coarsen-grid-stride-8", "site": "k/loop#1", "why": "8 per step",
       "edits": [{"kind": "replace_loop", "id": "k/loop#1", "code": "for (;;) {}"},
                 {"kind": "set_launch_config", "id": "a.cu:launch/launch#1", "grid": "g8"}]},
      {"rule": "tile-shared-memory", "site": "k/loop#1", "why": "tiles",
       "edits": [{"kind": "replace_body", "id": "k", "code": "{}"}]},
      {"rule": "pad-shared-tiles", "site": "k/shared:t", "why": "columns",
       "edits": [{"kind": "replace_stmt", "id": "k", "stmt": 1, "code": "__shared__ float t[32][33];"}]}])");
  };
  TunableSpace S = cantFail(enumerate(inventory(), nullptr, Rules));
  const Dimension *C2 = find(S, "rule:coarsen-grid-stride-2@k/loop#1");
  const Dimension *C8 = find(S, "rule:coarsen-grid-stride-8@k/loop#1");
  const Dimension *Tile = find(S, "rule:tile-shared-memory@k/loop#1");
  const Dimension *Pad = find(S, "rule:pad-shared-tiles@k/shared:t");
  ASSERT_TRUE(C2 && C8 && Tile && Pad);
  EXPECT_TRUE(rewritesOverlap(*C2, *C8));
  EXPECT_TRUE(rewritesOverlap(*Tile, *C2));
  EXPECT_FALSE(rewritesOverlap(*Pad, *C2));
  EXPECT_TRUE(rewritesOverlap(*Pad, *Tile));
  // Every rule wins when tried: no candidate may turn on two overlapping rules.
  std::vector<Attempt> H;
  unsigned Both = 0, Replacing = 0, N = 0;
  while (std::optional<Candidate> C = nextCandidate(S, H, {}, {})) {
    auto On = [&](const Dimension *D) { return C->A.count(D->key()) && C->A.at(D->key()) == 1; };
    Both += (On(C2) && On(C8)) || (On(Tile) && (On(C2) || On(C8) || On(Pad)));
    Replacing += C->Why.find(" (in place of ") != std::string::npos;
    H.push_back({C->A, true, false});
    ASSERT_LT(++N, 100u);
  }
  EXPECT_EQ(Both, 0u);
  EXPECT_GT(Replacing, 0u);
  EXPECT_GT(N, 4u);
}

// A rule that rewrites a loop (replace_loop of it, replace_body of its kernel) leaves that loop's unroll
// as written: on the H200, matmul's second candidate combined tile-shared-memory-rb4 (replace_body) with
// unroll 8 of the naive loop, and kloop apply refused the overlapping edits.
TEST(BuiltinSearch, RulesThatRewriteALoopLeaveItsUnrollAsWritten) {
  RuleCandidatesFn Rules = [](const inv::Inventory &) {
    return json::parse(R"([
      {"rule": "coarsen-grid-stride-2", "site": "k/loop#1", "why": "2 per step",
       "edits": [{"kind": "replace_loop", "id": "k/loop#1", "code": "for (;;) {}"}]},
      {"rule": "tile-shared-memory-rb4", "site": "k/loop#1", "why": "tiles",
       "edits": [{"kind": "replace_body", "id": "k", "code": "{}"}]},
      {"rule": "pad-shared-tiles", "site": "k/shared:t", "why": "columns",
       "edits": [{"kind": "replace_stmt", "id": "k", "stmt": 1, "code": "__shared__ float t[32][33];"}]}])");
  };
  TunableSpace S = cantFail(enumerate(inventory(), nullptr, Rules));
  const Dimension *Unroll = find(S, "unroll:k/loop#1");
  const Dimension *Coarsen = find(S, "rule:coarsen-grid-stride-2@k/loop#1");
  const Dimension *Tile = find(S, "rule:tile-shared-memory-rb4@k/loop#1");
  const Dimension *Pad = find(S, "rule:pad-shared-tiles@k/shared:t");
  ASSERT_TRUE(Unroll && Coarsen && Tile && Pad);
  EXPECT_TRUE(rewritesLoop(*Coarsen, *Unroll));
  EXPECT_TRUE(rewritesLoop(*Tile, *Unroll));
  EXPECT_FALSE(rewritesLoop(*Pad, *Unroll));
  EXPECT_FALSE(rewritesLoop(*Tile, *Pad)); // only unroll dimensions
  // Three walks: every candidate wins (from the baseline, and after an unroll won first), and every
  // rule loses. Count the candidates that set the loop's unroll beside a rule that rewrites it.
  enum Walk { AllWin, UnrollWonFirst, RulesLose };
  for (Walk W : {AllWin, UnrollWonFirst, RulesLose}) {
    std::vector<Attempt> H;
    if (W == UnrollWonFirst) // turning a rule on must set the unroll back
      H.push_back({Assignment{{Unroll->key(), Unroll->Values.back()}}, true, false});
    unsigned Overlapping = 0, UnrollAlone = 0, RulesOn = 0, N = 0;
    while (std::optional<Candidate> C = nextCandidate(S, H, {}, {})) {
      auto On = [&](const Dimension *D) { return C->A.count(D->key()) && C->A.at(D->key()) == 1; };
      bool UnrollSet = C->A.count(Unroll->key()) != 0, Rewritten = On(Coarsen) || On(Tile);
      Overlapping += UnrollSet && Rewritten;
      UnrollAlone += UnrollSet && !Rewritten;
      RulesOn += Rewritten;
      H.push_back({C->A, !(W == RulesLose && Rewritten), false});
      ASSERT_LT(++N, 100u);
    }
    EXPECT_EQ(Overlapping, 0u) << "walk " << W;
    EXPECT_GT(RulesOn, 0u) << "walk " << W;
    if (W == RulesLose)
      EXPECT_GT(UnrollAlone, 0u) << "the unroll is still tuned where no rule rewrites its loop";
  }
}

// A block-size macro that is one factor of a 2-D block (dim3(BX, 8), 256
// threads as evaluated): values that would put more than 1024 threads in the
// block are left out of the space, with a note (they used to be proposed,
// built and run, and fail at launch).
// A rule that wins on some shapes and not on all (a partial win) is tried again together with each
// rule that lost alone: on the H200, softmax's warp-shuffle tail won on r16384c1024 only and its
// vectorized rows on r2048c4096 only, and one rule at a time never tried the two together.
TEST(BuiltinSearch, PartialWinsAreTriedWithRulesThatLostAlone) {
  RuleCandidatesFn Rules = [](const inv::Inventory &) {
    return json::parse(R"([
      {"rule": "vectorize-global-access", "site": "k/loop#1", "why": "16-byte rows",
       "edits": [{"kind": "replace_loop", "id": "k/loop#1", "code": "for (;;) {}"}]},
      {"rule": "warp-shuffle-reductions", "site": "k/tree", "why": "shuffles",
       "edits": [{"kind": "replace_stmt", "id": "k", "stmt": 3, "code": "{}"}]},
      {"rule": "tile-shared-memory", "site": "k/loop#1", "why": "tiles",
       "edits": [{"kind": "replace_body", "id": "k", "code": "{}"}]}])");
  };
  TunableSpace S = cantFail(enumerate(inventory(), nullptr, Rules));
  const Dimension *Vec = find(S, "rule:vectorize-global-access@k/loop#1");
  const Dimension *Warp = find(S, "rule:warp-shuffle-reductions@k/tree");
  const Dimension *Tile = find(S, "rule:tile-shared-memory@k/loop#1");
  ASSERT_TRUE(Vec && Warp && Tile);
  json Mixed = json::parse(R"([{"shape": "r16384c1024", "ci_low": 1.096}, {"shape": "r2048c4096", "ci_low": 1.006}])");
  json Lost = json::parse(R"([{"shape": "r16384c1024", "ci_low": 0.94}])");
  EXPECT_TRUE(partialWin(Mixed));
  EXPECT_FALSE(partialWin(Lost));
  EXPECT_FALSE(partialWin(json::parse(R"([{"shape": "a", "ci_low": 1.02}, {"shape": "b", "ci_low": null}])")));
  auto On = [](const Candidate &C, const Dimension *D) { return C.A.count(D->key()) && C.A.at(D->key()) == 1; };
  // The rules lose alone, warp-shuffle partially: the next candidate is warp-shuffle with vectorize (tried
  // alone before it); tile rewrites the whole kernel, so it never joins.
  std::vector<Attempt> H = {{Assignment{{Vec->key(), 1}}, false, false, false},
                            {Assignment{{Tile->key(), 1}}, false, false, false},
                            {Assignment{{Warp->key(), 1}}, false, false, true}};
  std::optional<Candidate> C = nextCandidate(S, H, {}, {});
  ASSERT_TRUE(C);
  EXPECT_TRUE(On(*C, Vec) && On(*C, Warp) && !On(*C, Tile));
  EXPECT_NE(C->Why.find("together with warp-shuffle-reductions@k/tree, which won on some shapes and not on all"), std::string::npos) << C->Why;
  // Once the pair lost, the walk goes on as before: no pair again, and no composite with tile.
  H.push_back({C->A, false, false, false});
  unsigned Pairs = 0, N = 0;
  while (std::optional<Candidate> Next = nextCandidate(S, H, {}, {})) {
    Pairs += On(*Next, Warp) && (On(*Next, Vec) || On(*Next, Tile));
    H.push_back({Next->A, false, false, false});
    ASSERT_LT(++N, 100u);
  }
  EXPECT_EQ(Pairs, 0u);
  // Without a partial win there is no composite: the first candidate after three lost rules sets no rule.
  std::vector<Attempt> AllLost = {H[0], H[1], {Assignment{{Warp->key(), 1}}, false, false, false}};
  std::optional<Candidate> Plain = nextCandidate(S, AllLost, {}, {});
  ASSERT_TRUE(Plain);
  EXPECT_FALSE(On(*Plain, Vec) || On(*Plain, Warp) || On(*Plain, Tile));
}

TEST(BuiltinSpace, BlockFactorValuesStayWithin1024Threads) {
  json Inv = inventory();
  Inv["constants"][0]["value"] = 32;
  Inv["launch_sites"][0]["block"] = {{"expr", "block"}, {"value", {32, 8, 1}}};
  Expected<TunableSpace> S = enumerate(Inv);
  ASSERT_TRUE(!!S) << toString(S.takeError());
  const Dimension *B = find(*S, "block_size:macro:B");
  ASSERT_NE(B, nullptr);
  EXPECT_EQ(B->Values, (std::vector<int64_t>{32, 64, 128}));
  bool Noted = false;
  for (const std::string &N : S->Notes)
    Noted |= N.find("macro:B: block size values above 128 left out") != std::string::npos;
  EXPECT_TRUE(Noted);
  // A 1-D block (256 x 1 x 1) keeps the whole range.
  Inv["constants"][0]["value"] = 256;
  Inv["launch_sites"][0]["block"] = {{"expr", "B"}, {"value", {256, 1, 1}}};
  Expected<TunableSpace> S1 = enumerate(Inv);
  ASSERT_TRUE(!!S1);
  EXPECT_EQ(find(*S1, "block_size:macro:B")->Values, (std::vector<int64_t>{64, 128, 256, 512, 1024}));
}

// A kernel with compile errors (status "error", from a translation unit kloop
// extract parsed with errors) is not tuned, nor is any constant it or its
// launch sites use, even when an older inventory still says "editable".
TEST(BuiltinSpace, KernelWithCompileErrorsIsNotTuned) {
  json Inv = inventory();
  Inv["kernels"][0]["status"] = "error";
  TunableSpace S = cantFail(enumerate(Inv));
  EXPECT_TRUE(S.Dims.empty());
  bool Noted = false;
  for (const std::string &N : S.Notes)
    Noted |= N == "macro:B: used by k, which has compile errors; left alone";
  EXPECT_TRUE(Noted);
  // A broken launch site keeps its block size untuned; the kernel's own regions still are tuned.
  Inv["kernels"][0]["status"] = "ok";
  Inv["launch_sites"][0]["status"] = "error";
  Inv["constants"][0]["uses"].erase(1); // B used only by the launch site
  TunableSpace S1 = cantFail(enumerate(Inv));
  EXPECT_EQ(find(S1, "block_size:macro:B"), nullptr);
  EXPECT_NE(find(S1, "unroll:k/loop#1"), nullptr);
}

TEST(BuiltinSpace, RejectsNonInventory) {
  BuiltinProposer P;
  Expected<ProposalReply> R = P.propose(json{{"inventory", {{"foo", 1}}}});
  ASSERT_FALSE(!!R);
  std::string Why = toString(R.takeError());
  EXPECT_NE(Why.find("builtin proposer: context: inventory: schema"), std::string::npos) << Why;
}

TEST(BuiltinSpace, EditsFollowTheEditLanguage) {
  TunableSpace S = cantFail(enumerate(inventory()));
  json E = editsFor(S, {{"block_size:macro:B", 512}, {"min_blocks:k", 2}});
  ASSERT_EQ(E.size(), 2u);
  EXPECT_EQ(E[0], (json{{"kind", "set_constant"}, {"id", "macro:B"}, {"value", 512}}));
  // max_threads follows the block size of the same assignment.
  EXPECT_EQ(E[1], (json{{"kind", "set_launch_bounds"}, {"id", "k"}, {"max_threads", 512}, {"min_blocks", 2}}));
  EXPECT_TRUE(editsFor(S, {}).empty());
}

TEST(BuiltinSearch, BlockSizeFirstThenFollowsWins) {
  TunableSpace S = cantFail(enumerate(inventory()));
  std::vector<Attempt> H;
  std::optional<Candidate> C = nextCandidate(S, H, {}, {});
  ASSERT_TRUE(C);
  EXPECT_EQ(C->DimKey, "block_size:macro:B");
  EXPECT_EQ(C->Value, 512); // up first
  // 512 wins: continue upward.
  H.push_back({C->A, true, false});
  C = nextCandidate(S, H, {}, {});
  ASSERT_TRUE(C);
  EXPECT_EQ(C->Value, 1024);
  // 1024 loses: the block-size dimension is done (won upward: no downward walk); tile next, from B=512.
  H.push_back({C->A, false, false});
  C = nextCandidate(S, H, {}, {});
  ASSERT_TRUE(C);
  EXPECT_EQ(C->DimKey, "tile:macro:T");
  EXPECT_EQ(C->A.at("block_size:macro:B"), 512);
  EXPECT_EQ(C->Value, 32);
}

TEST(BuiltinSearch, LossUpwardTriesDownward) {
  TunableSpace S = cantFail(enumerate(inventory()));
  std::vector<Attempt> H;
  std::optional<Candidate> C = nextCandidate(S, H, {}, {});
  H.push_back({C->A, false, false});
  C = nextCandidate(S, H, {}, {});
  ASSERT_TRUE(C);
  EXPECT_EQ(C->DimKey, "block_size:macro:B");
  EXPECT_EQ(C->Value, 128);
}

TEST(BuiltinSearch, EndsWhenNothingWins) {
  TunableSpace S = cantFail(enumerate(inventory()));
  std::vector<Attempt> H;
  unsigned N = 0;
  while (std::optional<Candidate> C = nextCandidate(S, H, {}, {})) {
    H.push_back({C->A, false, false});
    ASSERT_LT(++N, 100u);
  }
  // One step each way per dimension; min_blocks (as written is its lowest value) and qualifiers
  // only go up: 2+2+2+1+1 = 8 candidates, not the 5*3*4*3*2 = 360 of the grid.
  EXPECT_EQ(N, 8u);
}

TEST(BuiltinSearch, PtxasPrunes) {
  TunableSpace S = cantFail(enumerate(inventory()));
  // 128 registers: a 1024-thread block needs 131072 registers and cannot launch,
  // so after 512 wins the walk stops; the kernel spills: no unroll increase;
  // 1 block of 512 threads at 128 regs per SM: min_blocks 2 is not a no-op, but 1 is.
  std::map<std::string, KernelResources> R = {{"k", {128, 16, 0}}};
  std::vector<Attempt> H;
  std::optional<Candidate> C = nextCandidate(S, H, R, {});
  ASSERT_TRUE(C);
  EXPECT_EQ(C->Value, 512);
  H.push_back({C->A, true, false});
  C = nextCandidate(S, H, R, {});
  ASSERT_TRUE(C);
  EXPECT_EQ(C->DimKey, "tile:macro:T"); // 1024 pruned
  EXPECT_EQ(estimateBlocksPerSM(1024, 128, 0), 0u);
  EXPECT_EQ(estimateBlocksPerSM(256, 32, 0), 8u);
  EXPECT_EQ(estimateBlocksPerSM(128, 16, 0), 16u);
  EXPECT_EQ(estimateBlocksPerSM(64, 16, 0), 32u);
  EXPECT_EQ(estimateBlocksPerSM(256, 32, 100 * 1024), 2u);
  while ((C = nextCandidate(S, H, R, {})))
    {
      EXPECT_FALSE(C->DimKey == "unroll:k/loop#1" && C->Value > 2) << "spilling kernel got a larger unroll";
      H.push_back({C->A, false, false});
    }
}

TEST(BuiltinSearch, DeterministicGivenSeed) {
  json Inv = inventory();
  Inv["constants"].push_back({{"id", "macro:B2"}, {"value", 128}, {"editable", true},
                              {"uses", {{{"context", "block_size"}, {"owner", "a.cu:launch/launch#1"}}}}});
  TunableSpace S = cantFail(enumerate(Inv));
  auto seq = [&](uint64_t Seed) {
    std::vector<std::string> Out;
    std::vector<Attempt> H;
    SearchOptions O;
    O.Seed = Seed;
    while (std::optional<Candidate> C = nextCandidate(S, H, {}, O)) {
      Out.push_back(C->DimKey + "=" + std::to_string(C->Value));
      H.push_back({C->A, false, false});
    }
    return Out;
  };
  EXPECT_EQ(seq(1), seq(1));
  bool Differs = false;
  for (uint64_t Seed = 2; Seed < 10 && !Differs; ++Seed)
    Differs = seq(Seed) != seq(1);
  EXPECT_TRUE(Differs) << "the seed never changes the order of two block-size dimensions";
}

TEST(BuiltinProposerTest, ProposalCarriesAssignmentAndReplaysHistory) {
  BuiltinProposer P;
  json Ctx = {{"inventory", inv::toJSON(test::completeInventory(inventory()))}, {"history", json::array()}};
  Expected<ProposalReply> R = P.propose(Ctx);
  ASSERT_TRUE(!!R) << toString(R.takeError());
  EXPECT_EQ(R->Proposal["version"], 1);
  EXPECT_EQ(R->Proposal["edits"][0]["value"], 512);
  EXPECT_EQ(R->Proposal["provenance"]["assignment"]["block_size:macro:B"], 512);
  Ctx["history"].push_back({{"proposal", R->Proposal}, {"accepted", false}});
  Expected<ProposalReply> R2 = P.propose(Ctx);
  ASSERT_TRUE(!!R2);
  EXPECT_EQ(R2->Proposal["edits"][0]["value"], 128);
  EXPECT_EQ(R2->Prov.ProposerKind, "builtin");
}

TEST(BuiltinProposerTest, NoTunablesIsExhausted) {
  BuiltinProposer P;
  Expected<ProposalReply> R = P.propose(json{{"inventory", inv::toJSON(test::completeInventory(json::object()))}});
  ASSERT_FALSE(!!R);
  bool Exhausted = false;
  handleAllErrors(R.takeError(), [&](const SearchExhaustedError &) { Exhausted = true; },
                  [](const llvm::ErrorInfoBase &) {});
  EXPECT_TRUE(Exhausted);
}

// The search reads each kernel's resources from the ptxas report by mangled name.
TEST(Ptxas, ResourcesByKernelFromTheReport) {
  const char *Text = "ptxas info    : Compiling entry function '_Z1kPf' for 'sm_90'\n"
                     "ptxas info    : Function properties for _Z1kPf\n"
                     "    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n"
                     "ptxas info    : Used 40 registers, used 1 barriers, 256 bytes smem, 380 bytes cmem[0]\n";
  TunableSpace S = cantFail(enumerate(json::parse(R"({"kernels":[{"id":"k","symbols":[{"mangled":"_Z1kPf"}]}]})")));
  auto Res = resourcesByKernel(S, kloop::toJSON(kloop::parsePtxasVerbose(Text)));
  ASSERT_EQ(Res.count("k"), 1u);
  EXPECT_EQ(Res["k"].Registers, 40u);
  EXPECT_EQ(Res["k"].SpillBytes, 16u);
  EXPECT_EQ(Res["k"].SmemBytes, 256u);
  EXPECT_TRUE(resourcesByKernel(S, json::parse(R"({"kernels":7})")).empty());
}

// A kernel in an anonymous namespace: ptxas reports nvcc's symbol, whose
// module id depends on where the build ran; the inventory's match key still
// names it (symbolNamesKernel). Another kernel's symbol does not.
TEST(Ptxas, ResourcesMatchInternalKernelsBuiltElsewhere) {
  json Inv = json::parse(R"J({"kernels":[{"id":"akern","symbols":[{
      "mangled":"_ZN36_GLOBAL__N__a2f7c6a0_4_a_cu_acc5a52f5akernEPf",
      "clang_mangled":"_ZN12_GLOBAL__N_15akernEPf","nvcc_known":true,"linkage":"internal",
      "match_key":"(anonymous namespace)::akern(float*)"}]}]})J");
  TunableSpace S = cantFail(enumerate(Inv));
  json Ptxas = json::parse(R"({"kernels":[
      {"name":"_ZN36_GLOBAL__N__469ec884_4_a_cu_acc5a52f5akernEPf","registers":30},
      {"name":"_ZN36_GLOBAL__N__469ec884_4_a_cu_acc5a52f5bkernEPf","registers":99}]})");
  auto Res = resourcesByKernel(S, Ptxas);
  ASSERT_EQ(Res.count("akern"), 1u);
  EXPECT_EQ(Res["akern"].Registers, 30u);
}

TEST(Ptxas, UnreadableSymbolIsAnError) {
  Expected<TunableSpace> S = enumerate(json::parse(R"({"kernels":[{"id":"k","symbols":[{"mangled":1}]}]})"));
  ASSERT_FALSE(!!S);
  std::string Why = toString(S.takeError());
  EXPECT_NE(Why.find("kernels[0].symbols[0].mangled"), std::string::npos) << Why;
}

} // namespace

