//===- OptimizeTest.cpp - the state machine with fake stages --------------===//
#include "kloop/Optimize/Optimize.h"
#include "kloop/Propose/BuiltinProposer.h"
#include "kloop/Propose/Context.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/ADT/StringExtras.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>

#include "../InventoryFixture.h"

using json = nlohmann::json;
using namespace kloop;
using namespace kloop::optimize;
using llvm::Expected;
using llvm::StringRef;

namespace {

/// Stages where the block size 512 is the only win.
struct FakeStages : Stages {
  bool Gpu = true;
  /// Whether compare() reports foreign_discarded (a kloop that checks foreign GPU load).
  bool ReportForeign = true;
  unsigned Builds = 0, Compares = 0;
  std::map<std::string, int64_t> Block; // source dir -> block size
  Expected<inv::Inventory> extract() override {
    return test::readInventory(json::parse(R"({"constants":[{"id":"macro:B","value":256,"editable":true,
      "uses":[{"context":"block_size","owner":"s"}]}],"launch_sites":[{"id":"s","kernel":"k"}],
      "kernels":[{"id":"k","editable":true,"mangled":["_Z1k"]}]})"));
  }
  Expected<std::string> copySources(StringRef From, StringRef Dir) override {
    Block[Dir.str()] = Block.count(From.str()) ? Block[From.str()] : 256;
    return Dir.str();
  }
  /// Outcomes apply() returns instead of applying, in turn (then it applies).
  std::vector<ApplyOutcome> Scripted;
  Expected<ApplyOutcome> apply(StringRef File, StringRef Dir, StringRef) override {
    if (!Scripted.empty()) {
      ApplyOutcome A = Scripted.front();
      Scripted.erase(Scripted.begin());
      return A;
    }
    auto B = llvm::MemoryBuffer::getFile(File);
    if (!B)
      return llvm::createStringError(B.getError(), "no proposal file");
    json P = json::parse((*B)->getBuffer().str());
    Block[Dir.str()] = P["edits"][0]["value"].get<int64_t>();
    ApplyOutcome A;
    A.Applied = true;
    return A;
  }
  Expected<BuildOutcome> build(StringRef, StringRef) override {
    ++Builds;
    BuildOutcome B;
    B.Succeeded = true;
    B.Ptxas = json{{"kernels", json::array()}};
    return B;
  }
  bool haveGpu(std::string &Why) override {
    Why = "fake";
    return Gpu;
  }
  Expected<CompareOutcome> compare(StringRef Base, StringRef Cand, StringRef, bool) override {
    ++Compares;
    CompareOutcome C;
    C.Accepted = Block[Cand.str()] == 512 && Block[Base.str()] != 512;
    C.Outcome = C.Accepted ? "accepted" : "rejected";
    C.Explanation = C.Accepted ? "faster" : "not faster";
    C.Evidence = json::array({{{"kernel", "k"}, {"shape", "s"}, {"base_median_ns", 100.0},
                               {"cand_median_ns", C.Accepted ? 80.0 : 100.0}, {"ci_low", 1.2},
                               {"ci_high", 1.3}, {"base_p99_ns", 110.0}, {"cand_p99_ns", 90.0},
                               {"pct_roofline", 50.0}}});
    // What kloop-compare/1 reports of the samples it discarded (docs/measure.md).
    C.Detail = {{"throttled_discarded", 2}};
    if (ReportForeign)
      C.Detail["foreign_discarded"] = 5;
    return C;
  }
  /// The A/A interval the canary reports.
  double CanaryLow = 0.99, CanaryHigh = 1.01;
  unsigned Canaries = 0;
  Expected<CompareOutcome> canary(StringRef, StringRef) override {
    ++Canaries;
    CompareOutcome C;
    C.Outcome = "rejected";
    C.Explanation = "A/A";
    C.Evidence = json::array({{{"kernel", "k"}, {"shape", "s"}, {"base_n", 30}, {"cand_n", 30},
                               {"speedup", (CanaryLow + CanaryHigh) / 2}, {"ci_low", CanaryLow},
                               {"ci_high", CanaryHigh}}});
    C.Settings = json{{"thresholds", {{"min_gain", 0.05}}}};
    return C;
  }
  Expected<std::string> diff(StringRef, StringRef) override {
    return std::string("diff --git a/k.cu b/k.cu\n--- a/k.cu\n+++ b/k.cu\n@@ -1 +1 @@\n-#define B 256\n+#define B 512\n");
  }
};

struct OptimizeTest : ::testing::Test {
  llvm::SmallString<128> Dir;
  void SetUp() override { ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("opt", Dir)); }
  void TearDown() override { llvm::sys::fs::remove_directories(Dir); }
  std::unique_ptr<Journal> journal() {
    return cantFail(Journal::open((Dir + "/run.db").str(), Journal::OpenMode::OpenOrCreate));
  }
  /// A run of the builtin proposer on \p S with \p Jobs preparing threads, journaled in \p J.
  Expected<OptimizeResult> runPrepared(Journal &J, Stages &S, unsigned Jobs) {
    builtin::BuiltinProposer P;
    OptimizeOptions O = opts();
    O.PrepareJobs = Jobs;
    return runOptimize(J, S, P, O);
  }
  OptimizeOptions opts() {
    OptimizeOptions O;
    O.OutDir = (Dir + "/out").str();
    O.BaselineDir = "/base";
    O.AbsoluteProposals = true;
    return O;
  }
};

TEST_F(OptimizeTest, AcceptsTheWinAndWritesThePatch) {
  auto J = journal();
  FakeStages S;
  builtin::BuiltinProposer P;
  Expected<OptimizeResult> R = runOptimize(*J, S, P, opts());
  ASSERT_TRUE(!!R) << toString(R.takeError());
  ASSERT_TRUE(R->Best);
  EXPECT_EQ(*R->Best, 1u); // 512 is the first candidate
  EXPECT_NE(R->StopReason.find("search exhausted"), std::string::npos) << R->StopReason;
  EXPECT_FALSE(R->Diff.empty());
  // One final check with held-out inputs on top of one compare per built candidate.
  EXPECT_EQ(S.Compares, S.Builds - 1 + 1);
  Expected<std::string> Patch = renderPatch(*J, R->Run);
  ASSERT_TRUE(!!Patch);
  EXPECT_NE(Patch->find("Subject: [PATCH] kloop: block size macro:B 256 -> 512"), std::string::npos) << *Patch;
  EXPECT_NE(Patch->find("| k | s | 100 | 80 | [1.200, 1.300] | 110 | 90 | 50.0 |"), std::string::npos) << *Patch;
  EXPECT_NE(Patch->find("+#define B 512"), std::string::npos);
  Expected<std::string> Rep = renderReport(*J, R->Run);
  ASSERT_TRUE(!!Rep);
  EXPECT_NE(Rep->find("| accepted | 1 |"), std::string::npos) << *Rep;
  EXPECT_NE(Rep->find("s 1.250x"), std::string::npos) << *Rep;
}

/// FakeStages whose counters() gives every source directory one profile, named after its block size, and
/// one problem; Fail makes it fail instead.
struct CountingStages : FakeStages {
  bool Fail = false;
  std::vector<std::string> Counted;
  Expected<CountersOutcome> counters(StringRef Dir, StringRef) override {
    Counted.push_back(Dir.str());
    if (Fail)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "cuptiRangeProfilerEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES");
    measure::KernelProfile P;
    P.Kernel = "_Z1k";
    P.Name = "k(block " + std::to_string(Block[Dir.str()]) + ")";
    P.Shape = "s";
    P.Launch.Block = {uint64_t(Block[Dir.str()]), 1, 1};
    P.Launch.Grid = {64, 1, 1};
    P.DramReadBytes = 4096;
    P.AchievedOccupancyPct = 50;
    CountersOutcome C;
    C.Profiles = {P};
    C.Problems = {"no counters for j() (launch 3) (shape s): cuptiRangeProfilerStop: CUPTI_ERROR_UNKNOWN"};
    C.MetricsWallS = 3;
    C.PlainWallS = 1;
    C.Chip = "GH100";
    C.Passes = 6;
    return C;
  }
};

/// The payload of run \p Run's finished measure step \p Key.
Expected<json> runStepPayload(Journal &J, int64_t Run, StepState, StringRef Key) {
  Expected<std::vector<StepRecord>> Steps = J.listSteps(Run);
  if (!Steps)
    return Steps.takeError();
  for (const StepRecord &St : *Steps)
    if (St.State == StepState::Measure && St.Key == Key && St.Status == StepStatus::Finished)
      return St.Payload;
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "no finished step " + Key.str());
}

/// The builtin proposer, keeping every context it is given.
struct RecordingProposer : Proposer {
  builtin::BuiltinProposer Inner;
  std::vector<json> Contexts;
  Expected<ProposalReply> propose(const json &Context) override {
    Contexts.push_back(Context);
    return Inner.propose(Context);
  }
  StringRef kind() const override { return Inner.kind(); }
};

TEST_F(OptimizeTest, CountersOfTheBaselineAndEachIncumbentAreJournaledShownAndReported) {
  auto J = journal();
  CountingStages S;
  RecordingProposer P;
  Expected<OptimizeResult> R = runOptimize(*J, S, P, opts());
  ASSERT_TRUE(!!R) << toString(R.takeError());
  ASSERT_TRUE(R->Best);
  ASSERT_EQ(*R->Best, 1u);
  // The baseline, then candidate 1 once it won; no other candidate.
  ASSERT_EQ(S.Counted.size(), 2u);
  EXPECT_TRUE(StringRef(S.Counted[0]).ends_with("/candidates/baseline")) << S.Counted[0];
  EXPECT_TRUE(StringRef(S.Counted[1]).ends_with("/candidates/cand-1")) << S.Counted[1];
  Expected<json> Base = runStepPayload(*J, R->Run, StepState::Measure, "counters-baseline");
  ASSERT_TRUE(!!Base) << toString(Base.takeError());
  EXPECT_EQ((*Base)["profiles"][0]["name"], "k(block 256)");
  EXPECT_EQ((*Base)["cost"]["ratio"], 3.0);
  EXPECT_EQ((*Base)["chip"], "GH100");
  Expected<json> Cand = runStepPayload(*J, R->Run, StepState::Measure, "counters-cand-1");
  ASSERT_TRUE(!!Cand) << toString(Cand.takeError());
  EXPECT_EQ((*Cand)["profiles"][0]["name"], "k(block 512)");
  // Round 1's proposer saw the baseline's counters, round 2's those of the new incumbent.
  ASSERT_GE(P.Contexts.size(), 2u);
  EXPECT_EQ(P.Contexts[0]["counters"]["profiles"][0]["name"], "k(block 256)");
  EXPECT_EQ(P.Contexts[1]["counters"]["profiles"][0]["name"], "k(block 512)");
  EXPECT_NE(renderCounters(P.Contexts[1]).find("- k(block 512) [shape s], grid 64x1x1 block 512x1x1, 0 registers: "
                                                "occupancy 50.0% achieved / ? theoretical"),
            std::string::npos)
      << renderCounters(P.Contexts[1]);
  Expected<std::string> Rep = renderReport(*J, R->Run);
  ASSERT_TRUE(!!Rep);
  EXPECT_NE(Rep->find("## Hardware counters"), std::string::npos) << *Rep;
  EXPECT_NE(Rep->find("### cand-1\n\ncost: metrics runs 3.00 s against 1.00 s for plain runs of the same shapes "
                      "(ratio 3.0); 6 replay pass(es) per profiled launch on GH100"),
            std::string::npos)
      << *Rep;
  EXPECT_NE(Rep->find("- `k(block 512)` [s]: occupancy 50.0% achieved"), std::string::npos) << *Rep;
  EXPECT_NE(Rep->find("- missing: no counters for j() (launch 3)"), std::string::npos) << *Rep;
}

TEST_F(OptimizeTest, CountersThatFailAreJournaledAndTheRunGoesOn) {
  auto J = journal();
  CountingStages S;
  S.Fail = true;
  builtin::BuiltinProposer P;
  Expected<OptimizeResult> R = runOptimize(*J, S, P, opts());
  ASSERT_TRUE(!!R) << toString(R.takeError());
  ASSERT_TRUE(R->Best);
  Expected<json> Base = runStepPayload(*J, R->Run, StepState::Measure, "counters-baseline");
  ASSERT_TRUE(!!Base) << toString(Base.takeError());
  EXPECT_TRUE((*Base)["profiles"].empty());
  EXPECT_EQ((*Base)["problems"][0], "the counters could not be taken: cuptiRangeProfilerEnable: "
                                    "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES");
}

TEST_F(OptimizeTest, CountersAreNotRetakenOnResumeNorWithoutAGpu) {
  auto J = journal();
  CountingStages S;
  builtin::BuiltinProposer P;
  Expected<OptimizeResult> R = runOptimize(*J, S, P, opts());
  ASSERT_TRUE(!!R) << toString(R.takeError());
  size_t Taken = S.Counted.size();
  OptimizeOptions O = opts();
  O.Resume = true;
  builtin::BuiltinProposer P2;
  ASSERT_TRUE(!!runOptimize(*J, S, P2, O));
  EXPECT_EQ(S.Counted.size(), Taken);
  auto J2 = cantFail(Journal::open((Dir + "/nogpu.db").str(), Journal::OpenMode::OpenOrCreate));
  CountingStages NoGpu;
  NoGpu.Gpu = false;
  builtin::BuiltinProposer P3;
  ASSERT_TRUE(!!runOptimize(*J2, NoGpu, P3, opts()));
  EXPECT_TRUE(NoGpu.Counted.empty());
}

TEST_F(OptimizeTest, ReportCountsDiscardedSamplesPerCause) {
  // Each candidate's compare (a verify step) discarded 2 throttled and 5 foreign-load samples; the
  // final check with held-out inputs is not a verify step.
  auto J = journal();
  FakeStages S;
  builtin::BuiltinProposer P;
  Expected<OptimizeResult> R = runOptimize(*J, S, P, opts());
  ASSERT_TRUE(!!R) << toString(R.takeError());
  unsigned Verified = S.Compares - 1;
  ASSERT_GE(Verified, 1u);
  Expected<std::string> Rep = renderReport(*J, R->Run);
  ASSERT_TRUE(!!Rep);
  EXPECT_NE(Rep->find("| timing samples discarded | " + std::to_string(2 * Verified) + " throttled, " +
                      std::to_string(5 * Verified) + " foreign GPU load |"),
            std::string::npos)
      << *Rep;

  // A journal of a kloop that did not record foreign load says so rather than 0.
  auto JO = cantFail(Journal::open((Dir + "/old.db").str(), Journal::OpenMode::Create));
  FakeStages SO;
  SO.ReportForeign = false;
  OptimizeOptions O = opts();
  O.OutDir = (Dir + "/out-old").str();
  Expected<OptimizeResult> RO = runOptimize(*JO, SO, P, O);
  ASSERT_TRUE(!!RO) << toString(RO.takeError());
  Expected<std::string> RepO = renderReport(*JO, RO->Run);
  ASSERT_TRUE(!!RepO);
  EXPECT_NE(RepO->find("| timing samples discarded | " + std::to_string(2 * (SO.Compares - 1)) +
                       " throttled, foreign GPU load not recorded |"),
            std::string::npos)
      << *RepO;
}

TEST_F(OptimizeTest, NoGpuAcceptsNothing) {
  auto J = journal();
  FakeStages S;
  S.Gpu = false;
  builtin::BuiltinProposer P;
  Expected<OptimizeResult> R = runOptimize(*J, S, P, opts());
  ASSERT_TRUE(!!R) << toString(R.takeError());
  EXPECT_FALSE(R->Best);
  EXPECT_TRUE(R->GpuSkipped);
  EXPECT_EQ(S.Compares, 0u);
  EXPECT_EQ(R->Candidates, 2u); // 512 and 128, then the walk ends
  EXPECT_EQ(cantFail(renderPatch(*J, R->Run)), "");
}

TEST_F(OptimizeTest, PlateauStops) {
  auto J = journal();
  FakeStages S;
  S.Gpu = false;
  builtin::BuiltinProposer P;
  OptimizeOptions O = opts();
  O.Plateau = 1;
  Expected<OptimizeResult> R = runOptimize(*J, S, P, O);
  ASSERT_TRUE(!!R);
  EXPECT_EQ(R->StopReason, "plateau: no accepted win in 1 rounds");
}

TEST_F(OptimizeTest, ResumeRedoesNothing) {
  FakeStages S;
  builtin::BuiltinProposer P;
  {
    auto J = journal();
    ASSERT_TRUE(!!runOptimize(*J, S, P, opts()));
  }
  unsigned Builds = S.Builds, Compares = S.Compares;
  auto J = journal();
  OptimizeOptions O = opts();
  O.Resume = true;
  Expected<OptimizeResult> R = runOptimize(*J, S, P, O);
  ASSERT_TRUE(!!R) << toString(R.takeError());
  EXPECT_EQ(S.Builds, Builds);
  EXPECT_EQ(S.Compares, Compares);
  ASSERT_TRUE(R->Best);
}

// The drift canary runs once before the final check; its figures go in the journal, the report and the
// patch, and an A/A interval beyond the minimum gain (here 5%, from the comparison's settings) marks the
// verdicts unreliable.
TEST_F(OptimizeTest, DriftCanaryMarksVerdictsUnreliable) {
  auto J = journal();
  FakeStages S;
  S.CanaryLow = 0.90;
  S.CanaryHigh = 0.94;
  builtin::BuiltinProposer P;
  Expected<OptimizeResult> R = runOptimize(*J, S, P, opts());
  ASSERT_TRUE(!!R) << toString(R.takeError());
  EXPECT_EQ(S.Canaries, 1u);
  EXPECT_EQ(R->Unreliable,
            "verdicts unreliable: the baseline measured against itself drifted by -8.0% (CI [0.900, 0.940]) on shape s");
  Expected<std::optional<StepRecord>> Step = J->findFinishedStep(R->Run, 0, StepState::Measure, "canary");
  ASSERT_TRUE(Step && *Step);
  EXPECT_EQ((*Step)->Payload["verdict"], "unreliable");
  EXPECT_EQ((*Step)->Payload["kernels"][0]["samples_base"], 30);
  std::string Patch = cantFail(renderPatch(*J, R->Run));
  EXPECT_NE(Patch.find("WARNING: " + R->Unreliable + "."), std::string::npos) << Patch;
  std::string Rep = cantFail(renderReport(*J, R->Run));
  EXPECT_NE(Rep.find("**WARNING: " + R->Unreliable + ".**"), std::string::npos) << Rep;
  EXPECT_NE(Rep.find("| drift canary | drift canary: the baseline against itself on shape s; kernel k: 30 samples per "
                     "side, median speed-up 0.920x, 95% CI [0.900, 0.940]; unreliable (drift rule: CI beyond [0.952, "
                     "1.050]);"),
            std::string::npos)
      << Rep;
}

TEST_F(OptimizeTest, DriftCanaryWithinTheGainIsReliableAndCanBeSkipped) {
  {
    auto J = journal();
    FakeStages S;
    builtin::BuiltinProposer P;
    Expected<OptimizeResult> R = runOptimize(*J, S, P, opts());
    ASSERT_TRUE(!!R) << toString(R.takeError());
    EXPECT_EQ(R->Unreliable, "");
    std::string Patch = cantFail(renderPatch(*J, R->Run));
    EXPECT_EQ(Patch.find("unreliable"), std::string::npos) << Patch;
    EXPECT_NE(Patch.find("median speed-up 1.000x, 95% CI [0.990, 1.010]; reliable"), std::string::npos) << Patch;
  }
  llvm::sys::fs::remove((Dir + "/run.db").str());
  auto J = journal();
  FakeStages S;
  builtin::BuiltinProposer P;
  OptimizeOptions O = opts();
  O.Canary = false;
  Expected<OptimizeResult> R = runOptimize(*J, S, P, O);
  ASSERT_TRUE(!!R) << toString(R.takeError());
  EXPECT_EQ(S.Canaries, 0u);
  EXPECT_NE(cantFail(renderReport(*J, R->Run)).find("| drift canary | drift canary: skipped (--no-canary) |"),
            std::string::npos);
}

// The rule: lower bound above 1 + min gain, or upper bound below 1 / (1 + min gain).
TEST(DriftCanaryRule, BoundsMirrorTheAcceptanceBar) {
  EXPECT_TRUE(canaryDrifted(1.021, 1.05, 0.02));
  EXPECT_FALSE(canaryDrifted(1.02, 1.05, 0.02));
  EXPECT_TRUE(canaryDrifted(0.95, 0.9803, 0.02));  // 1 / 1.02 = 0.98039...
  EXPECT_FALSE(canaryDrifted(0.95, 0.9804, 0.02));
  EXPECT_FALSE(canaryDrifted(0.97, 1.03, 0.02));
}

TEST_F(OptimizeTest, ResumeWithoutRunIsAnError) {
  auto J = journal();
  FakeStages S;
  builtin::BuiltinProposer P;
  OptimizeOptions O = opts();
  O.Resume = true;
  Expected<OptimizeResult> R = runOptimize(*J, S, P, O);
  ASSERT_FALSE(!!R);
  EXPECT_NE(toString(R.takeError()).find("no run to resume"), std::string::npos);
}

} // namespace

namespace {

/// A refusal of edit \p Index (-1: the whole proposal).
Refusal refusal(int Index, std::string Label, std::string Reason) {
  Refusal R;
  R.EditIndex = Index;
  R.EditLabel = std::move(Label);
  R.Reason = std::move(Reason);
  return R;
}

TEST_F(OptimizeTest, RefusalsAreJournaledWithTheirEditIndex) {
  auto J = journal();
  FakeStages S;
  S.Gpu = false;
  ApplyOutcome Refused;
  Refused.Refusals = {refusal(0, "set_constant macro:B", "too big"), refusal(-1, "", "conflict")};
  S.Scripted = {Refused};
  builtin::BuiltinProposer P;
  Expected<OptimizeResult> R = runOptimize(*J, S, P, opts());
  ASSERT_TRUE(!!R) << toString(R.takeError());
  std::vector<ProposalSummary> Ps = cantFail(J->listProposals(R->Run));
  ASSERT_FALSE(Ps.empty());
  ASSERT_EQ(Ps[0].Refusals.size(), 2u);
  EXPECT_EQ(Ps[0].Refusals[0].EditOrdinal, std::optional<int64_t>(0));
  EXPECT_EQ(Ps[0].Refusals[0].Reason, "too big");
  EXPECT_EQ(Ps[0].Refusals[1].EditOrdinal, std::nullopt);
  EXPECT_EQ(Ps[0].Refusals[1].Reason, "conflict");
  // The step's payload holds the typed refusals and their text.
  std::vector<StepRecord> Steps = cantFail(J->listSteps(R->Run));
  auto Ap = llvm::find_if(Steps, [](const StepRecord &St) { return St.State == StepState::Apply; });
  ASSERT_NE(Ap, Steps.end());
  EXPECT_EQ(Ap->Payload["refusal"], "edit #1 (set_constant macro:B): too big; proposal: conflict");
  EXPECT_EQ(Ap->Payload["refusals"][0]["edit_index"], 0);
  EXPECT_TRUE(Ap->Payload["refusals"][1]["edit_index"].is_null());
}

TEST_F(OptimizeTest, AFailedApplyIsAVerdictAndTheLoopGoesOn) {
  auto J = journal();
  FakeStages S;
  S.Gpu = false;
  ApplyOutcome Failed;
  Failed.Failure = "apply: clang crashed while parsing /w/k.cu (host side)";
  S.Scripted = {Failed};
  builtin::BuiltinProposer P;
  Expected<OptimizeResult> R = runOptimize(*J, S, P, opts());
  ASSERT_TRUE(!!R) << toString(R.takeError());
  EXPECT_GE(R->Candidates, 2u); // round 2 still ran
  std::vector<ProposalSummary> Ps = cantFail(J->listProposals(R->Run));
  ASSERT_GE(Ps.size(), 2u);
  EXPECT_TRUE(Ps[0].Refusals.empty());
  ASSERT_TRUE(Ps[0].Verdict);
  EXPECT_EQ(Ps[0].Verdict->Outcome, "apply_failed");
  EXPECT_EQ(Ps[0].Verdict->Explanation, *Failed.Failure);
  ASSERT_TRUE(Ps[1].Verdict);
  EXPECT_EQ(Ps[1].Verdict->Outcome, "unmeasured");
}

TEST(ApplyOutcomeJSON, RoundTrips) {
  ApplyOutcome A;
  A.Refusals = {refusal(2, "set_unroll k/loop#1", "why"), refusal(-1, "", "whole")};
  Expected<ApplyOutcome> B = applyOutcomeFromJSON(toJSON(A), "test");
  ASSERT_TRUE(!!B) << toString(B.takeError());
  EXPECT_FALSE(B->Applied);
  ASSERT_EQ(B->Refusals.size(), 2u);
  EXPECT_EQ(B->Refusals[0].EditIndex, 2);
  EXPECT_EQ(B->Refusals[0].EditLabel, "set_unroll k/loop#1");
  EXPECT_EQ(B->Refusals[1].EditIndex, -1);
  EXPECT_EQ(B->refusalText(), A.refusalText());
  ApplyOutcome F;
  F.Failure = "apply: crashed";
  EXPECT_EQ(applyOutcomeFromJSON(toJSON(F), "test")->Failure, F.Failure);
}

TEST(ApplyOutcomeJSON, RefusesWhatIsNotAnOutcome) {
  auto why = [](const char *Text) {
    Expected<ApplyOutcome> A = applyOutcomeFromJSON(json::parse(Text), "cmd");
    return A ? std::string("accepted") : toString(A.takeError());
  };
  EXPECT_EQ(why("[]"), "cmd: not an apply outcome: expected an object, found array");
  EXPECT_EQ(why(R"({"applied": 1})"), "cmd: not an apply outcome: \"applied\" must be a boolean");
  EXPECT_EQ(why(R"({"applied": true, "extra": 1})"), "cmd: not an apply outcome: unknown key 'extra'");
  EXPECT_EQ(why(R"({"applied": false})"),
            "cmd: not an apply outcome: an outcome that is not applied needs refusals or a failure");
  EXPECT_EQ(why(R"({"applied": true, "failure": "x"})"),
            "cmd: not an apply outcome: an applied outcome has neither refusals nor a failure");
  EXPECT_EQ(why(R"({"applied": false, "refusals": [{"edit_index": -1, "reason": "r"}]})"),
            "cmd: not an apply outcome: refusals[0].edit_index must be a non-negative integer or null");
  EXPECT_EQ(why(R"({"applied": false, "refusals": [{"edit_index": 0}]})"),
            "cmd: not an apply outcome: refusals[0] needs a string \"reason\" (and \"edit\", when given, must be "
            "a string)");
  EXPECT_EQ(why(R"({"applied": false, "refusals": [{"reason": "r", "why": 1}]})"),
            "cmd: not an apply outcome: refusals[0] has an unknown key 'why'");
}

} // namespace

namespace {
/// FakeStages that may prepare candidates on other threads (Stages::concurrentPrepare): every method
/// holds one lock. The first search compare waits (up to WaitS) for the build of the next candidate to
/// begin, and records whether it did: the next candidate was being prepared while this one was timed.
struct PreparingStages : FakeStages {
  std::mutex M;
  std::condition_variable BuildBegan;
  bool SawNextBuild = false;
  std::chrono::milliseconds Wait{20000};
  bool concurrentPrepare() const override { return true; }
  Expected<std::string> copySources(StringRef From, StringRef Dir) override {
    std::lock_guard<std::mutex> L(M);
    return FakeStages::copySources(From, Dir);
  }
  Expected<ApplyOutcome> apply(StringRef File, StringRef Dir, StringRef From) override {
    std::lock_guard<std::mutex> L(M);
    return FakeStages::apply(File, Dir, From);
  }
  Expected<BuildOutcome> build(StringRef Src, StringRef Dir) override {
    std::lock_guard<std::mutex> L(M);
    BuildBegan.notify_all();
    return FakeStages::build(Src, Dir);
  }
  Expected<CompareOutcome> compare(StringRef Base, StringRef Cand, StringRef Work, bool Final) override {
    std::unique_lock<std::mutex> L(M);
    if (Compares == 0 && !Final) // builds so far: the baseline and this candidate
      SawNextBuild = BuildBegan.wait_for(L, Wait, [&] { return Builds >= 3; });
    return FakeStages::compare(Base, Cand, Work, Final);
  }
};

/// Each round's proposal and outcome, in order, from the journal's propose and decide steps.
std::vector<std::string> roundsOf(Journal &J, int64_t Run) {
  std::vector<std::string> Out;
  for (const StepRecord &St : cantFail(J.listSteps(Run)))
    if (St.State == StepState::Propose || St.State == StepState::Decide)
      Out.push_back(std::to_string(St.Round) + " " + stepStateName(St.State).str() + " " +
                    St.Payload.value(St.State == StepState::Propose ? "proposal" : "outcome", json()).dump());
  return Out;
}

/// Rounds whose apply step took a candidate prepared ahead.
std::vector<int64_t> preparedRounds(Journal &J, int64_t Run) {
  std::vector<int64_t> Out;
  for (const StepRecord &St : cantFail(J.listSteps(Run)))
    if (St.State == StepState::Apply && St.Payload.contains("prepared_ahead_s"))
      Out.push_back(St.Round);
  return Out;
}

/// The rounds of a run on \p S with the builtin proposer, one candidate at a time (journal and outputs
/// in \p Dir/alone*); none when it fails.
std::vector<std::string> roundsAlone(Stages &S, StringRef Dir) {
  auto J = cantFail(Journal::open((Dir + "/alone.db").str(), Journal::OpenMode::OpenOrCreate));
  builtin::BuiltinProposer P;
  OptimizeOptions O;
  O.OutDir = (Dir + "/alone").str();
  O.BaselineDir = "/base";
  O.AbsoluteProposals = true;
  Expected<OptimizeResult> R = runOptimize(*J, S, P, O);
  if (!R) {
    ADD_FAILURE() << toString(R.takeError());
    return {};
  }
  EXPECT_TRUE(preparedRounds(*J, R->Run).empty());
  return roundsOf(*J, R->Run);
}
} // namespace

// Prepared ahead, a run journals the same proposals and verdicts as one candidate at a time; the second
// candidate (128, proposed after 512 is rejected) is prepared while the first is timed, and taken.
TEST_F(OptimizeTest, PreparedAheadTheRunIsTheSameAndTheNextCandidateIsBuiltWhileOneIsTimed) {
  struct RejectAll : PreparingStages {
    Expected<CompareOutcome> compare(StringRef Base, StringRef Cand, StringRef Work, bool Final) override {
      Expected<CompareOutcome> C = PreparingStages::compare(Base, Cand, Work, Final);
      if (C) {
        C->Accepted = false;
        C->Outcome = "rejected";
      }
      return C;
    }
  };
  RejectAll One;
  One.Wait = std::chrono::milliseconds(500); // nothing is prepared: do not wait long for it
  std::vector<std::string> Alone = roundsAlone(One, Dir);
  EXPECT_FALSE(One.SawNextBuild);
  auto J = journal();
  RejectAll S;
  Expected<OptimizeResult> R = runPrepared(*J, S, 2);
  ASSERT_TRUE(!!R) << toString(R.takeError());
  std::vector<std::string> Ahead = roundsOf(*J, R->Run);
  EXPECT_EQ(Ahead, Alone);
  ASSERT_GE(Ahead.size(), 4u) << "two rounds expected";
  EXPECT_TRUE(S.SawNextBuild) << "the second candidate was not built while the first was timed";
  EXPECT_EQ(preparedRounds(*J, R->Run), std::vector<int64_t>{2});
}

// A win makes every candidate prepared as if it were rejected useless: they are dropped, their files
// removed, and the next round is prepared in line; the run is the same as one candidate at a time.
TEST_F(OptimizeTest, PreparedAheadCandidatesAreDroppedAfterAWin) {
  FakeStages One;
  std::vector<std::string> Alone = roundsAlone(One, Dir);
  auto J = journal();
  PreparingStages S;
  Expected<OptimizeResult> R = runPrepared(*J, S, 3);
  ASSERT_TRUE(!!R) << toString(R.takeError());
  EXPECT_EQ(roundsOf(*J, R->Run), Alone);
  ASSERT_TRUE(R->Best);
  EXPECT_EQ(*R->Best, 1u);
  EXPECT_TRUE(S.SawNextBuild);
  // Round 2 (1024, from the new incumbent 512) was not what was prepared (128, as if 512 lost).
  std::vector<int64_t> Taken = preparedRounds(*J, R->Run);
  EXPECT_TRUE(std::find(Taken.begin(), Taken.end(), 2) == Taken.end());
  // Nothing is left of a candidate the journal does not know.
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator I(opts().OutDir + "/candidates", EC), E; I != E && !EC; I.increment(EC)) {
    StringRef Name = llvm::sys::path::filename(I->path());
    unsigned N = 0;
    if (Name.consume_front("cand-") && !Name.take_while(llvm::isDigit).getAsInteger(10, N))
      EXPECT_LE(N, R->Candidates) << I->path();
  }
}
