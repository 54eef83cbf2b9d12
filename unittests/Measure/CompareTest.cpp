//===- CompareTest.cpp - Timing-first screening of a search step ----------===//
#include "kloop/Measure/Compare.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

using namespace kloop;
using namespace kloop::measure;
using namespace llvm;

namespace {

/// N durations around \p Center ns (a deterministic spread of +-2%).
std::vector<decide::Sample> around(double Center, size_t N = 40) {
  std::vector<decide::Sample> S;
  for (size_t I = 0; I < N; ++I)
    S.push_back({Center * (0.98 + 0.04 * double((I * 7) % N) / double(N)), false});
  return S;
}

decide::ShapeEvidence evidence(const char *Shape, std::vector<decide::Sample> Base,
                               std::vector<decide::Sample> Cand) {
  decide::ShapeEvidence E;
  E.Kernel = "saxpy";
  E.Shape = Shape;
  E.Baseline = std::move(Base);
  E.Candidate = std::move(Cand);
  return E;
}

bool contains(const std::string &S, StringRef Part) { return StringRef(S).contains(Part); }

TEST(TimingScreen, SlowerCandidateIsRejectedOnSpeed) {
  auto S = screenOnTiming({evidence("n1K", around(1000), around(1100))}, decide::DecisionThresholds());
  ASSERT_TRUE(bool(S)) << toString(S.takeError());
  EXPECT_TRUE(S->Rejects);
  ASSERT_EQ(S->Rejections.size(), 1u);
  EXPECT_TRUE(contains(S->Rejections[0], "kernel saxpy shape n1K: speed-up 0.9")) << S->Rejections[0];
  EXPECT_TRUE(contains(S->Rejections[0], "lower bound does not exceed 1.020x")) << S->Rejections[0];
  // Only the timing reasons: the output rules were not judged.
  EXPECT_FALSE(contains(S->Rejections[0], "output")) << S->Rejections[0];
  ASSERT_EQ(S->Verdict.Shapes.size(), 1u);
  ASSERT_TRUE(S->Verdict.Shapes[0].Speedup.has_value());
  EXPECT_LT(S->Verdict.Shapes[0].Speedup->Estimate, 1.0);
}

TEST(TimingScreen, FasterCandidateIsNotRejected) {
  auto S = screenOnTiming({evidence("n1K", around(1000), around(500))}, decide::DecisionThresholds());
  ASSERT_TRUE(bool(S)) << toString(S.takeError());
  EXPECT_FALSE(S->Rejects);
  EXPECT_TRUE(S->Rejections.empty());
  // The verdict on timing alone is never an acceptance: nothing was verified.
  EXPECT_NE(S->Verdict.Outcome, decide::Verdict::Accepted);
  EXPECT_TRUE(S->Verdict.Shapes[0].SpeedupOk);
  EXPECT_TRUE(S->Verdict.Shapes[0].TailOk);
}

TEST(TimingScreen, OneRegressingShapeRejectsAndIsNamed) {
  auto S = screenOnTiming({evidence("n1K", around(1000), around(500)), evidence("n1M", around(1000), around(1000))},
                          decide::DecisionThresholds());
  ASSERT_TRUE(bool(S)) << toString(S.takeError());
  EXPECT_TRUE(S->Rejects);
  ASSERT_EQ(S->Rejections.size(), 1u);
  EXPECT_TRUE(contains(S->Rejections[0], "kernel saxpy shape n1M: ")) << S->Rejections[0];
}

TEST(TimingScreen, TailRegressionRejectsDespiteAMedianWin) {
  auto Cand = around(700, 200);
  for (size_t I = 0; I < Cand.size(); I += 20)
    Cand[I].DurationNs = 3000; // 5% of the launches take 3x the baseline
  auto S = screenOnTiming({evidence("n1K", around(1000, 200), Cand)}, decide::DecisionThresholds());
  ASSERT_TRUE(bool(S)) << toString(S.takeError());
  EXPECT_TRUE(S->Rejects);
  ASSERT_EQ(S->Rejections.size(), 1u);
  EXPECT_TRUE(contains(S->Rejections[0], "p99 regressed")) << S->Rejections[0];
  EXPECT_FALSE(contains(S->Rejections[0], "lower bound")) << S->Rejections[0];
}

TEST(TimingScreen, TooFewSamplesDoNotReject) {
  // Insufficient samples is "measure more", not a rejection: verification must still run.
  auto S = screenOnTiming({evidence("n1K", around(1000, 5), around(2000, 5))}, decide::DecisionThresholds());
  ASSERT_TRUE(bool(S)) << toString(S.takeError());
  EXPECT_FALSE(S->Rejects);
}

TEST(TimingScreen, IgnoresOutputChecksInItsInput) {
  // A faster candidate with a failed output check is not rejected by the screen: the outputs are
  // judged by the full decision after the verification runs.
  decide::ShapeEvidence E = evidence("n1K", around(1000), around(500));
  E.Seeds.push_back({0, false, false, "arg 3 differs"});
  auto S = screenOnTiming({E}, decide::DecisionThresholds());
  ASSERT_TRUE(bool(S)) << toString(S.takeError());
  EXPECT_FALSE(S->Rejects);
  EXPECT_EQ(S->Verdict.Shapes[0].SeedsChecked, 0u);
}

TEST(TimingScreen, ErrorsAreDecidesErrors) {
  auto Empty = screenOnTiming({}, decide::DecisionThresholds());
  ASSERT_FALSE(bool(Empty));
  EXPECT_TRUE(contains(toString(Empty.takeError()), "no evidence"));
  decide::DecisionThresholds Bad;
  Bad.MinGain = -1;
  auto B = screenOnTiming({evidence("n1K", around(1000), around(500))}, Bad);
  ASSERT_FALSE(bool(B));
  EXPECT_TRUE(contains(toString(B.takeError()), "min gain"));
}

TEST(TimingFirst, RefusedForAFinalAcceptance) {
  SmallString<128> Dir;
  ASSERT_FALSE(sys::fs::createUniqueDirectory("kloop-timing-first", Dir));
  auto C = parseConfig("name: w\nbuild: {command: make}\nrun: {command: ./x}\ntargets: [saxpy]\n"
                       "seeds: 2\nheld_out_seeds: 1\nshapes:\n  - {name: n1K, args: {n: \"1024\"}}\n"
                       "outputs:\n  - {kernel: saxpy, arg: 3, dtype: f32, tolerance: {kind: exact}}\n",
                       (Dir + "/.kloop.yaml").str());
  ASSERT_TRUE(bool(C)) << toString(C.takeError());
  CompareOptions O;
  O.BaselineDir = O.CandidateDir = std::string(Dir);
  O.WorkDir = (Dir + "/work").str();
  O.CuptiLib = "/nonexistent/libkloop-cupti.so";
  O.TimingFirst = true;
  O.IncludeHeldOut = true;
  auto R = compareWorkloads(*C, O);
  ASSERT_FALSE(bool(R));
  std::string Msg = toString(R.takeError());
  EXPECT_TRUE(contains(Msg, "timing first")) << Msg;
  EXPECT_TRUE(contains(Msg, "final acceptance")) << Msg;
  // Nothing was built or run.
  EXPECT_FALSE(sys::fs::exists(O.WorkDir));
  sys::fs::remove_directories(Dir);
}

TEST(TimingFirst, JSONSaysWhetherVerificationWasSkipped) {
  CompareResult R;
  nlohmann::json J = toJSON(R);
  EXPECT_EQ(J["timing_first"], false);
  EXPECT_EQ(J["verification_skipped"], false);
  EXPECT_TRUE(J["verification_skipped_reason"].is_null());
  R.TimingFirst = R.VerificationSkipped = true;
  R.VerificationSkippedReason = "the timing rejects the candidate";
  J = toJSON(R);
  EXPECT_EQ(J["timing_first"], true);
  EXPECT_EQ(J["verification_skipped"], true);
  EXPECT_EQ(J["verification_skipped_reason"], "the timing rejects the candidate");
}

} // namespace

namespace {

// The build stamp of kloop optimize's build step: reused only for the very source directory it names.
TEST(BuildStamp, MarksABuildOfOneSourceDirectory) {
  SmallString<128> Dir;
  ASSERT_FALSE(sys::fs::createUniqueDirectory("kloop-stamp", Dir));
  EXPECT_FALSE(isBuildFinished(Dir, "/src/cand-1")); // no stamp yet
  ASSERT_FALSE(errorToBool(markBuildFinished(Dir, "/src/cand-1")));
  EXPECT_TRUE(isBuildFinished(Dir, "/src/cand-1"));
  EXPECT_FALSE(isBuildFinished(Dir, "/src/cand-2"));
  EXPECT_FALSE(isBuildFinished(Dir, "/src/cand-1/"));
  SmallString<128> Stamp(Dir);
  sys::path::append(Stamp, ".kloop-build-ok");
  sys::fs::remove(Stamp);
  sys::fs::remove(Dir);
}

TEST(BuildStamp, UnwritableDirectoryIsAnError) {
  Error E = markBuildFinished("/nonexistent-kloop-dir/build", "/src");
  ASSERT_TRUE(bool(E));
  EXPECT_NE(toString(std::move(E)).find("/nonexistent-kloop-dir/build/.kloop-build-ok"), std::string::npos);
}

} // namespace
