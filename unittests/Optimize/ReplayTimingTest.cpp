//===- ReplayTimingTest.cpp - Search steps timed by replay ----------------===//
#include "kloop/Optimize/ReplayTiming.h"
#include "gtest/gtest.h"

using namespace kloop;
using namespace kloop::optimize;
using json = nlohmann::json;

namespace {

/// An inventory with BLOCK used by a launch site's block size and SCALE used nowhere tunable.
inv::Inventory inventory() {
  inv::Inventory I;
  inv::LaunchSite L;
  L.ID = "launch:launch#1";
  I.LaunchSites.push_back(L);
  inv::Constant Block, Scale;
  Block.ID = "macro:BLOCK";
  Block.Uses.push_back({"macro:BLOCK", "block_size", "launch:launch#1", std::nullopt, std::nullopt, std::nullopt});
  Scale.ID = "macro:SCALE";
  I.Constants = {Block, Scale};
  return I;
}

json proposal(const std::string &Kind, const std::string &ID) {
  return json{{"version", 1}, {"edits", json::array({json{{"kind", Kind}, {"id", ID}}})}};
}

TEST(ReplayTiming, DeviceOnlyEditsReplay) {
  for (const char *K : {"set_unroll", "set_launch_bounds", "add_restrict", "replace_body", "replace_loop",
                        "replace_stmt", "insert_device_function"})
    EXPECT_EQ(launchConfigChange(proposal(K, "saxpy"), inventory()), "") << K;
  EXPECT_EQ(launchConfigChange(proposal("set_constant", "macro:SCALE"), inventory()), "");
  // A constant the inventory does not list has no tunable use, so none in a launch configuration.
  EXPECT_EQ(launchConfigChange(proposal("set_constant", "macro:UNLISTED"), inventory()), "");
}

TEST(ReplayTiming, HostLaunchChangesFallBack) {
  EXPECT_EQ(launchConfigChange(proposal("set_constant", "macro:BLOCK"), inventory()),
            "set_constant macro:BLOCK: the launch configuration of launch:launch#1 (block_size) is computed by host "
            "code from it, and replay launches the captured one");
  EXPECT_EQ(launchConfigChange(proposal("set_launch_config", "launch:launch#1"), inventory()),
            "set_launch_config launch:launch#1: the candidate changes a launch configuration in host code");
  EXPECT_NE(launchConfigChange(proposal("add_kernel_variant", "saxpy"), inventory()), "");
  EXPECT_NE(launchConfigChange(proposal("add_const", "saxpy/param:x"), inventory()), "");
  EXPECT_EQ(launchConfigChange(proposal("frobnicate", "saxpy"), inventory()),
            "edit kind 'frobnicate' is not known to leave the launches as they were captured");
  EXPECT_NE(launchConfigChange(json::object(), inventory()), "");
  // One host edit among device edits is enough.
  json P = proposal("set_unroll", "saxpy/loop#1");
  P["edits"].push_back(json{{"kind", "set_constant"}, {"id", "macro:BLOCK"}});
  EXPECT_NE(launchConfigChange(P, inventory()), "");
}

measure::WorkloadConfig config(const std::string &Run, measure::SearchTiming T) {
  measure::WorkloadConfig C;
  C.Path = "/w/.kloop.yaml";
  C.Run.Command = Run;
  C.Search.Timing = T;
  return C;
}

TEST(ReplayTiming, SeedAndItersOptionalOnlyWhenReplaying) {
  using measure::SearchTiming;
  EXPECT_EQ(runCommandTimingProblem(config("./app", SearchTiming::Auto)), "");
  EXPECT_EQ(runCommandTimingProblem(config("./app", SearchTiming::Replay)), "");
  EXPECT_EQ(runCommandTimingProblem(config("./app --seed {seed} --iters {iters}", SearchTiming::Workload)), "");
  EXPECT_EQ(runCommandTimingProblem(config("./app --seed {seed}", SearchTiming::Workload)),
            "/w/.kloop.yaml: run.command uses no {iters}, which search.timing: workload needs (each search step "
            "runs the program per seed and times {iters} launches); use search.timing: replay or auto, where the "
            "program runs as it is");
  EXPECT_NE(runCommandTimingProblem(config("./app", SearchTiming::Workload)).find("uses no {seed} and no {iters}"),
            std::string::npos);
}

TEST(ReplayTiming, Tolerance) {
  measure::WorkloadConfig C;
  EXPECT_EQ(*replayTolerance(C), "exact");
  measure::OutputSpec O;
  O.Kernel = "saxpy";
  O.DType = "f32";
  O.Tol = {verify::ToleranceKind::Rel, 1e-5};
  C.Outputs.push_back(O);
  EXPECT_EQ(*replayTolerance(C), "rel:1e-05,f32");
  C.Outputs.push_back(O);
  C.Outputs.back().Tol.Value = 1e-3;
  EXPECT_FALSE(bool(llvm::expectedToOptional(replayTolerance(C))));
  C.Outputs.pop_back();
  C.Outputs.back().Tol = {verify::ToleranceKind::Ulp, 2};
  llvm::Expected<std::string> U = replayTolerance(C);
  ASSERT_FALSE(bool(U));
  EXPECT_NE(llvm::toString(U.takeError()).find("ulp"), std::string::npos);
}

/// A worker result of one launch: base and cand durations, ns.
capture::ReplayResult result(uint64_t Base, uint64_t Cand, unsigned N = 20) {
  capture::ReplayResult R;
  R.Device = "Fake GPU";
  capture::ReplayLaunch L;
  L.Kernel = "_Z5saxpyifPKfPf";
  L.Name = "saxpy(int, float, float const*, float*)";
  L.Candidate.emplace();
  for (unsigned I = 0; I < N; ++I) {
    L.Baseline.TimesNs.push_back(Base + I);
    L.Candidate->TimesNs.push_back(Cand + I);
  }
  L.Baseline.Match = L.Candidate->Match = true;
  R.Launches.push_back(L);
  R.BaselineMatch = true;
  R.CandidateMatch = true;
  R.Json = "{}";
  return R;
}

TEST(ReplayTiming, JudgeByDecideRule) {
  llvm::Expected<ReplayCompareOutcome> Fast = judgeReplay(result(2000, 1000), "n1K");
  ASSERT_TRUE(bool(Fast));
  ASSERT_TRUE(Fast->Compare);
  EXPECT_EQ(Fast->Compare->Outcome, "accepted");
  ASSERT_EQ(Fast->Compare->Evidence.size(), 1u);
  EXPECT_EQ(Fast->Compare->Evidence[0]["kernel"], "saxpy");
  EXPECT_EQ(Fast->Compare->Evidence[0]["shape"], "n1K");
  EXPECT_EQ(Fast->Compare->Evidence[0]["base_n"], 20);
  EXPECT_EQ(Fast->Compare->Detail["timing"], "replay");
  llvm::Expected<ReplayCompareOutcome> Slow = judgeReplay(result(1000, 2000), "n1K");
  ASSERT_TRUE(bool(Slow) && Slow->Compare);
  EXPECT_EQ(Slow->Compare->Outcome, "rejected");
  // Too few samples for decide: not accepted.
  llvm::Expected<ReplayCompareOutcome> Few = judgeReplay(result(2000, 1000, 3), "n1K");
  ASSERT_TRUE(bool(Few) && Few->Compare);
  EXPECT_FALSE(Few->Compare->Accepted);
}

/// \p R with each side's launch i timed at placement i mod \p Placements, the candidate \p CandStepPct
/// percent slower at each placement than at the one before (the baseline the same everywhere).
capture::ReplayResult placed(capture::ReplayResult R, unsigned Placements, double CandStepPct) {
  capture::ReplayLaunch &L = R.Launches[0];
  for (size_t I = 0; I < L.Baseline.TimesNs.size(); ++I) {
    L.Baseline.Placements.push_back(I % Placements);
    L.Candidate->Placements.push_back(I % Placements);
    L.Candidate->TimesNs[I] = uint64_t(double(L.Candidate->TimesNs[I]) * (1 + CandStepPct / 100 * (I % Placements)));
  }
  R.Placements = Placements;
  return R;
}

TEST(ReplayTiming, PlacementsAreTheBootstrapsGroups) {
  // One placement: launches drawn independently (groups 0), as before placements.
  llvm::Expected<ReplayCompareOutcome> One = judgeReplay(placed(result(2000, 1900, 40), 1, 0), "n1K");
  ASSERT_TRUE(bool(One) && One->Compare);
  EXPECT_EQ(One->Compare->Evidence[0]["groups"], 0);
  // Four placements whose speed-ups differ (the candidate 2% slower at each next one): four groups, and
  // the interval holds the spread between them, which launches drawn across placements would not.
  llvm::Expected<ReplayCompareOutcome> Four = judgeReplay(placed(result(2000, 1900, 40), 4, 2), "n1K");
  ASSERT_TRUE(bool(Four) && Four->Compare);
  EXPECT_EQ(Four->Compare->Evidence[0]["groups"], 4);
  capture::ReplayResult Pooled = placed(result(2000, 1900, 40), 4, 2);
  for (capture::ReplayLaunch &L : Pooled.Launches)
    L.Baseline.Placements.clear(), L.Candidate->Placements.clear();
  llvm::Expected<ReplayCompareOutcome> Flat = judgeReplay(Pooled, "n1K");
  ASSERT_TRUE(bool(Flat) && Flat->Compare);
  auto Width = [](const ReplayCompareOutcome &O) {
    return O.Compare->Evidence[0]["ci_high"].get<double>() - O.Compare->Evidence[0]["ci_low"].get<double>();
  };
  EXPECT_GT(Width(*Four), 1.5 * Width(*Flat));
}

TEST(ReplayTiming, JudgeCrashMismatchAndFallbacks) {
  capture::ReplayResult Crash = result(2000, 1000);
  Crash.ExitCode = 1;
  Crash.Failed = "candidate";
  Crash.CandidateMatch = false;
  Crash.Error = "candidate: the kernel faulted: CUDA_ERROR_ILLEGAL_ADDRESS";
  llvm::Expected<ReplayCompareOutcome> C = judgeReplay(Crash, "n1K");
  ASSERT_TRUE(bool(C) && C->Compare);
  EXPECT_EQ(C->Compare->Outcome, "crashed");
  EXPECT_EQ(C->Compare->Explanation,
            "refused: the candidate crashed under replay: candidate: the kernel faulted: CUDA_ERROR_ILLEGAL_ADDRESS");
  Crash.TimedOut = true;
  EXPECT_NE(judgeReplay(Crash, "n1K")->Compare->Explanation.find("hung under replay"), std::string::npos);

  capture::ReplayResult Wrong = result(2000, 1000);
  Wrong.ExitCode = 1;
  Wrong.CandidateMatch = false;
  Wrong.Launches[0].Candidate->Match = false;
  Wrong.Launches[0].Candidate->Mismatch = "iteration 0: output allocation 1 byte 4";
  llvm::Expected<ReplayCompareOutcome> W = judgeReplay(Wrong, "n1K");
  ASSERT_TRUE(bool(W) && W->Compare);
  EXPECT_EQ(W->Compare->Outcome, "failed_verification");
  EXPECT_NE(W->Compare->Explanation.find("launch 0 (saxpy): iteration 0"), std::string::npos);
  // Launched with a configuration kloop evaluated, the same mismatch leaves the verdict to the workload.
  llvm::Expected<ReplayCompareOutcome> WR = judgeReplay(Wrong, "n1K", nullptr, /*Reconfigured=*/true);
  ASSERT_TRUE(bool(WR) && !WR->Compare);
  EXPECT_EQ(WR->Fallback, "launch 0 (saxpy): iteration 0: output allocation 1 byte 4, under the launch configuration "
                          "kloop evaluated for the candidate: the workload's runs decide");

  capture::ReplayResult Usage = result(2000, 1000);
  Usage.ExitCode = 2;
  Usage.CandidateMatch.reset();
  Usage.Error = "cand.cubin: no kernel _Z5saxpyifPKfPf";
  llvm::Expected<ReplayCompareOutcome> U = judgeReplay(Usage, "n1K");
  ASSERT_TRUE(bool(U));
  EXPECT_FALSE(U->Compare);
  EXPECT_EQ(U->Fallback, "the replay worker: cand.cubin: no kernel _Z5saxpyifPKfPf");

  capture::ReplayResult Base = result(2000, 1000);
  Base.ExitCode = 3;
  Base.BaselineMatch = false;
  Base.Failed = "";
  Base.Error = "the capture is not replayable as it is";
  llvm::Expected<ReplayCompareOutcome> B = judgeReplay(Base, "n1K");
  ASSERT_TRUE(bool(B));
  EXPECT_EQ(B->Fallback, "the incumbent does not reproduce the capture under replay: the capture is not replayable "
                         "as it is");

  capture::ReplayResult Zero = result(0, 1000);
  llvm::Expected<ReplayCompareOutcome> Z = judgeReplay(Zero, "n1K");
  ASSERT_TRUE(bool(Z));
  EXPECT_NE(Z->Fallback.find("0 ns"), std::string::npos);
}

/// A capture of one saxpy launch: params (n, a, x, out) at offsets 0, 4, 8, 16; x points into allocation 0
/// (unwritten), out into allocation 1 (written); allocation 2 (written) is reached by no parameter slot.
capture::Manifest saxpyCapture() {
  capture::Launch L;
  L.Kernel = "_Z5saxpyifPKfPf";
  L.Name = "saxpy(int, float, float const*, float*)";
  L.Params = {{0, 4}, {4, 4}, {8, 8}, {16, 8}};
  L.Pointers = {{8, 0x1000, 0}, {16, 0x2000, 1}, {24, 0x3000, 2}};
  L.Allocations.resize(3);
  for (capture::Allocation &A : L.Allocations)
    A.Before = A.After = "same";
  L.Allocations[1].After = L.Allocations[2].After = "changed";
  capture::Manifest M;
  M.Launches.push_back(L);
  return M;
}

TEST(ReplayTiming, DeclaredOutputsFromTheCapture) {
  measure::OutputSpec Out;
  Out.Kernel = "saxpy";
  Out.Arg = 3;
  CapturedOutputs C = capturedOutputs(saxpyCapture(), {Out});
  EXPECT_EQ(C.Written[0], (std::set<uint64_t>{1, 2}));
  EXPECT_EQ(C.Declared[0], (std::set<uint64_t>{1}));
  Out.Kernel = "other_kernel";
  EXPECT_TRUE(capturedOutputs(saxpyCapture(), {Out}).Declared.empty());
}

TEST(ReplayTiming, ScratchMismatchFallsBackToTheWorkload) {
  measure::OutputSpec Out;
  Out.Kernel = "saxpy";
  Out.Arg = 3;
  CapturedOutputs C = capturedOutputs(saxpyCapture(), {Out});
  auto Wrong = [](std::optional<uint64_t> Allocation) {
    capture::ReplayResult R = result(2000, 1000);
    R.ExitCode = 1;
    R.CandidateMatch = false;
    R.Launches[0].Candidate->Match = false;
    R.Launches[0].Candidate->Mismatch = "iteration 0: output allocation 2 byte 0";
    R.Launches[0].Candidate->MismatchAllocation = Allocation;
    return R;
  };
  // Allocation 2: written by the baseline, no declared output points into it.
  llvm::Expected<ReplayCompareOutcome> Scratch = judgeReplay(Wrong(2), "n1K", &C);
  ASSERT_TRUE(bool(Scratch));
  EXPECT_FALSE(Scratch->Compare);
  EXPECT_NE(Scratch->Fallback.find("the candidate wrote allocation 2 differently from the baseline, and no declared "
                                   "output points into it"),
            std::string::npos);
  // The declared output, an allocation the baseline left unchanged, a write outside every allocation, or
  // no outputs given: refused as before.
  for (std::optional<uint64_t> A : {std::optional<uint64_t>(1), std::optional<uint64_t>(0), std::optional<uint64_t>()}) {
    llvm::Expected<ReplayCompareOutcome> R = judgeReplay(Wrong(A), "n1K", &C);
    ASSERT_TRUE(bool(R) && R->Compare);
    EXPECT_EQ(R->Compare->Outcome, "failed_verification");
  }
  llvm::Expected<ReplayCompareOutcome> NoOutputs = judgeReplay(Wrong(2), "n1K");
  ASSERT_TRUE(bool(NoOutputs) && NoOutputs->Compare);
  EXPECT_EQ(NoOutputs->Compare->Outcome, "failed_verification");
}

} // namespace

namespace {

using inv::Formula;
using llvm::Expected;
const inv::IntType I32{32, true}, U32{32, false}, U64{64, false};

Formula k(inv::IntType T, int64_t V) { return Formula::constant(T, uint64_t(V)); }
Formula var(inv::IntType T, const std::string &N) {
  Formula F;
  F.K = Formula::Op::Var;
  F.Type = T;
  F.Var = N;
  return F;
}
Formula op(Formula::Op K, inv::IntType T, std::vector<Formula> Args) {
  Formula F;
  F.K = K;
  F.Type = T;
  F.Args = std::move(Args);
  return F;
}

/// saxpy<<<(n + B - 1) / B, B>>>(n, x): the formula with block size \p B.
inv::LaunchFormula saxpyLaunch(int64_t B) {
  using Op = Formula::Op;
  inv::LaunchFormula L;
  Formula Blocks = op(Op::Div, I32, {op(Op::Sub, I32, {op(Op::Add, I32, {var(I32, "n"), k(I32, B)}), k(I32, 1)}), k(I32, B)});
  L.Grid = {op(Op::Cast, U32, {Blocks}), k(U32, 1), k(U32, 1)};
  L.Block = {k(U32, B), k(U32, 1), k(U32, 1)};
  L.SharedMemory = k(U64, 0);
  L.Args = {{var(I32, "n"), "n"}, {std::nullopt, "x"}};
  L.Callee = "saxpy";
  return L;
}

/// An inventory of kernel saxpy (symbol _Z5saxpyiPf) launched at s.cu:launch/launch#1 with block size 128.
inv::Inventory saxpyInventory() {
  inv::Inventory I;
  inv::Kernel K;
  K.ID = "saxpy";
  inv::Symbol S;
  S.Mangled = S.ClangMangled = "_Z5saxpyiPf";
  S.NvccKnown = true;
  S.Linkage = "external";
  S.MatchKey = "saxpy(int, float*)";
  K.Symbols.push_back(S);
  K.LaunchSites = {"s.cu:launch/launch#1"};
  I.Kernels.push_back(K);
  inv::LaunchSite L;
  L.ID = "s.cu:launch/launch#1";
  L.Kernel = "saxpy";
  L.ConfigFormula = saxpyLaunch(128);
  I.LaunchSites.push_back(L);
  return I;
}

/// A capture of one saxpy launch with n = \p N (block 128), and its parameter buffer.
std::pair<capture::Manifest, std::vector<std::vector<uint8_t>>> saxpyCapture(int32_t N) {
  capture::Manifest M;
  capture::Launch L;
  L.Kernel = "_Z5saxpyiPf";
  L.Name = "saxpy(int, float*)";
  L.Grid[0] = uint32_t((N + 127) / 128);
  L.Block[0] = 128;
  L.Params = {{0, 4}, {8, 8}};
  M.Launches.push_back(L);
  std::vector<uint8_t> Buf(16, 0);
  for (int B = 0; B < 4; ++B)
    Buf[B] = uint8_t(uint32_t(N) >> (8 * B));
  return {M, {Buf}};
}

std::string configsError(const SiteFormulas &Incumbent, const SiteFormulas &Candidate, int32_t N = 1000) {
  auto [M, P] = saxpyCapture(N);
  Expected<ReplayConfigs> C = replayConfigs(M, P, saxpyInventory(), Incumbent, Candidate);
  return C ? std::string("no error") : llvm::toString(C.takeError());
}

TEST(ReplayConfigs, UnchangedLaunchesReplayAsCaptured) {
  auto [M, P] = saxpyCapture(1000);
  Expected<ReplayConfigs> C = replayConfigs(M, P, saxpyInventory(), {}, {});
  ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
  EXPECT_TRUE(C->empty());
  // The same formula written again is no change either.
  C = replayConfigs(M, P, saxpyInventory(), {}, {{"s.cu:launch/launch#1", saxpyLaunch(128)}});
  ASSERT_TRUE(bool(C));
  EXPECT_TRUE(C->empty());
}

TEST(ReplayConfigs, ANewBlockSizeIsEvaluatedOnTheCapturedArguments) {
  auto [M, P] = saxpyCapture(1000);
  Expected<ReplayConfigs> C = replayConfigs(M, P, saxpyInventory(), {}, {{"s.cu:launch/launch#1", saxpyLaunch(256)}});
  ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
  EXPECT_TRUE(C->Baseline.empty());
  ASSERT_EQ(C->Candidate.size(), 1u);
  inv::LaunchConfig Want;
  Want.Grid = {4, 1, 1}; // (1000 + 255) / 256
  Want.Block = {256, 1, 1};
  EXPECT_EQ(C->Candidate.at(0).Config, Want);
  EXPECT_EQ(C->Candidate.at(0).Kernel, "");
  // An incumbent that won with block size 64 is replayed with its own configuration, the candidate with 256.
  C = replayConfigs(M, P, saxpyInventory(), {{"s.cu:launch/launch#1", saxpyLaunch(64)}},
                    {{"s.cu:launch/launch#1", saxpyLaunch(256)}});
  ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
  ASSERT_EQ(C->Baseline.size(), 1u);
  EXPECT_EQ(C->Baseline.at(0).Config.Grid[0], 16u); // (1000 + 63) / 64
  EXPECT_EQ(C->Baseline.at(0).Config.Block[0], 64u);
  EXPECT_EQ(C->Candidate.at(0).Config, Want);
  // The request carries them.
  EXPECT_EQ(capture::toJSON(*C).dump(),
            R"([{"block":[64,1,1],"grid":[16,1,1],"launch":0,"shared_memory":0,"side":"baseline"},)"
            R"({"block":[256,1,1],"grid":[4,1,1],"launch":0,"shared_memory":0,"side":"candidate"}])");
}

TEST(ReplayConfigs, AnotherInstantiationIsLaunchedByItsSymbol) {
  // reduce<128><<<..., 128>>> becomes reduce<256><<<..., 256>>>: a set_constant of a template argument.
  inv::Inventory Inv = saxpyInventory();
  Inv.LaunchSites[0].ConfigFormula->Callee = "saxpy<128>";
  Inv.LaunchSites[0].ConfigFormula->Symbol = "_Z5saxpyiPf";
  inv::LaunchFormula Now = saxpyLaunch(256);
  Now.Callee = "saxpy<256>";
  Now.Symbol = "_Z5saxpyILi256EEviPf";
  auto [M, P] = saxpyCapture(1000);
  Expected<ReplayConfigs> C = replayConfigs(M, P, Inv, {}, {{"s.cu:launch/launch#1", Now}});
  ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
  ASSERT_EQ(C->Candidate.size(), 1u);
  EXPECT_EQ(C->Candidate.at(0).Kernel, "_Z5saxpyILi256EEviPf");
  EXPECT_EQ(C->Candidate.at(0).Config.Block[0], 256u);
  EXPECT_EQ(capture::toJSON(*C)[0]["kernel"], "_Z5saxpyILi256EEviPf");
}

TEST(ReplayConfigs, WhatCannotBeEvaluatedFallsBack) {
  const std::string Site = "s.cu:launch/launch#1";
  // The candidate's configuration is not a formula.
  inv::LaunchFormula Unknown = saxpyLaunch(256);
  Unknown.Unknown = "ceil(n / 256.0): a conversion from double (kloop evaluates integer formulas only)";
  EXPECT_EQ(configsError({}, {{Site, Unknown}}),
            "launch 0 (saxpy), launch site s.cu:launch/launch#1 in the candidate: ceil(n / 256.0): a conversion "
            "from double (kloop evaluates integer formulas only)");
  // It uses a variable the launch does not give away.
  inv::LaunchFormula Free = saxpyLaunch(256);
  Free.Block[0] = var(U32, "threads");
  Free.Grid[1] = var(U32, "rows");
  EXPECT_EQ(configsError({}, {{Site, Free}}),
            "launch 0 (saxpy), launch site s.cu:launch/launch#1 in the candidate: rows is not passed to the "
            "kernel, so its value is unknown");
  // It launches another instantiation.
  inv::LaunchFormula Other = saxpyLaunch(256);
  Other.Callee = "saxpy<256>";
  EXPECT_EQ(configsError({}, {{Site, Other}}),
            "launch 0 (saxpy), launch site s.cu:launch/launch#1 in the candidate: it launches saxpy<256>, not "
            "saxpy as captured, and kloop does not know its symbol");
  // It passes a constant where the capture holds another value.
  inv::LaunchFormula Arg = saxpyLaunch(256);
  Arg.Args[0] = {k(I32, 4096), "N"};
  EXPECT_EQ(configsError({}, {{Site, Arg}}),
            "launch 0 (saxpy), launch site s.cu:launch/launch#1 in the candidate: argument 0 (N) is 4096, and "
            "the capture passed 1000");
  // It changes a pointer argument.
  inv::LaunchFormula Ptr = saxpyLaunch(256);
  Ptr.Args[1].Text = "x + 1";
  EXPECT_EQ(configsError({}, {{Site, Ptr}}),
            "launch 0 (saxpy), launch site s.cu:launch/launch#1 in the candidate: argument 1 (x + 1) changes (it "
            "was x), to a value kloop cannot evaluate");
}

TEST(ReplayConfigs, TheCaptureMustBeTracedToASite) {
  const std::string Site = "s.cu:launch/launch#1";
  // The inventory's formula does not give the captured configuration (the capture has block 128, grid 8 for
  // n = 1000, but the formula says grid 1000/128 rounded up = 8: make the capture disagree instead).
  auto [M, P] = saxpyCapture(1000);
  M.Launches[0].Block[0] = 64;
  Expected<ReplayConfigs> C = replayConfigs(M, P, saxpyInventory(), {}, {{Site, saxpyLaunch(256)}});
  ASSERT_FALSE(bool(C));
  EXPECT_EQ(llvm::toString(C.takeError()),
            "launch 0 (saxpy): no launch site of its kernel yields its captured configuration (grid (8, 1, 1), block "
            "(64, 1, 1), 0 bytes of dynamic shared memory) from what the launch passes, and the candidate changes a "
            "launch site of that kernel");
  // A changed site whose kernel's symbols name no captured launch, though its name does.
  auto [M2, P2] = saxpyCapture(1000);
  M2.Launches[0].Kernel = "_Z5saxpyiPf_other_spelling";
  C = replayConfigs(M2, P2, saxpyInventory(), {}, {{Site, saxpyLaunch(256)}});
  ASSERT_FALSE(bool(C));
  EXPECT_EQ(llvm::toString(C.takeError()),
            "launch site s.cu:launch/launch#1 changes, and kloop cannot tell which captured launches of saxpy it "
            "makes (the kernel's symbols name none of them)");
}

} // namespace
