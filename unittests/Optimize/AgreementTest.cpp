//===- AgreementTest.cpp - Replay's speed-up against the workload's -------===//
#include "kloop/Optimize/Agreement.h"

#include "gtest/gtest.h"

using namespace kloop::optimize;
using json = nlohmann::json;

namespace {

json row(const std::string &Kernel, const std::string &Shape, json Speedup, json Low, json High) {
  return {{"kernel", Kernel}, {"shape", Shape}, {"speedup", Speedup}, {"ci_low", Low}, {"ci_high", High}};
}

TEST(AgreementTest, MatchesByTargetSubstringAndShape) {
  // Replay names the demangled kernel; the workload names a `targets` entry.
  json Replay = json::array({row("void layernorm_rows<128>", "r4096", 1.10, 1.09, 1.11),
                             row("void layernorm_rows<128>", "r16384", 1.20, 1.19, 1.21)});
  json Workload = json::array({row("layernorm_rows", "r16384", 1.18, 1.17, 1.19),
                               row("layernorm_rows", "r4096", 1.10, 1.09, 1.11)});
  std::vector<AgreementRow> Rows = matchAgreement(Replay, Workload, {"layernorm_rows"});
  ASSERT_EQ(Rows.size(), 2u);
  EXPECT_EQ(Rows[0].Shape, "r4096");
  EXPECT_EQ(Rows[0].WorkloadKernel, "layernorm_rows");
  EXPECT_DOUBLE_EQ(Rows[0].Workload, 1.10);
  EXPECT_NEAR(Rows[0].DifferencePct, 0.0, 1e-9);
  EXPECT_EQ(Rows[0].Verdict, AgreementVerdict::Within);
  EXPECT_DOUBLE_EQ(Rows[1].Workload, 1.18);
  EXPECT_NEAR(Rows[1].DifferencePct, (1.20 / 1.18 - 1) * 100, 1e-9);
}

TEST(AgreementTest, LaunchSuffixDroppedAndTargetsInOrder) {
  // The workload keys a kernel by the first target its name contains (measure::targetKey), so replay's
  // rows are matched the same way: reduce_sum_kernel_x is reduce_sum's, not sum_kernel_x's (also a
  // substring, and longer).
  json Replay = json::array({row("void reduce_sum_kernel_x<4>", "m1#0", 2.0, 1.99, 2.01),
                             row("void reduce_sum_kernel_x<4>", "m1#3", 2.0, 1.99, 2.01),
                             row("void block_sum_kernel_x", "m1", 1.0, 0.99, 1.01)});
  json Workload = json::array({row("sum_kernel_x", "m1", 1.0, 0.99, 1.01), row("reduce_sum", "m1", 2.0, 1.99, 2.01)});
  std::vector<AgreementRow> Rows = matchAgreement(Replay, Workload, {"reduce_sum", "sum_kernel_x"});
  ASSERT_EQ(Rows.size(), 3u);
  for (int I : {0, 1}) {
    EXPECT_EQ(Rows[I].WorkloadKernel, "reduce_sum");
    EXPECT_NEAR(Rows[I].DifferencePct, 0.0, 1e-9);
  }
  EXPECT_EQ(Rows[1].Shape, "m1#3");
  EXPECT_EQ(Rows[2].WorkloadKernel, "sum_kernel_x");
  EXPECT_NEAR(Rows[2].DifferencePct, 0.0, 1e-9);
}

TEST(AgreementTest, UnmatchedAndUntimedRowsAreLeftOut) {
  json Replay = json::array({row("void saxpy", "n1M", nullptr, nullptr, nullptr), row("void saxpy", "n2M", 1.1, 1, 1.2),
                             row("void other", "n1M", 1.1, 1, 1.2)});
  json Workload = json::array({row("saxpy", "n1M", 1.1, 1, 1.2), row("saxpy", "n2M", nullptr, nullptr, nullptr)});
  EXPECT_TRUE(matchAgreement(Replay, Workload, {"saxpy"}).empty());
  EXPECT_TRUE(matchAgreement(json::object(), Workload, {"saxpy"}).empty());
  // No target names the kernel: nothing to pair it with.
  EXPECT_TRUE(matchAgreement(json::array({row("void saxpy", "n1M", 1.1, 1, 1.2)}), Workload, {"axpby"}).empty());
}

TEST(AgreementTest, IntervalAndVerdict) {
  // Half-widths on the log scale: log(1.01/0.99)/2 each, in quadrature.
  json W = json::array({row("k", "s", 1.0, 0.99, 1.01)});
  std::vector<AgreementRow> R = matchAgreement(json::array({row("k", "s", 1.0, 0.99, 1.01)}), W, {"k"});
  ASSERT_EQ(R.size(), 1u);
  ASSERT_TRUE(R[0].IntervalPct);
  double H = std::hypot(std::log(1.01 / 0.99) / 2, std::log(1.01 / 0.99) / 2);
  EXPECT_NEAR(R[0].IntervalPct->first, std::expm1(-H) * 100, 1e-9);
  EXPECT_NEAR(R[0].IntervalPct->second, std::expm1(H) * 100, 1e-9);
  EXPECT_EQ(R[0].Verdict, AgreementVerdict::Within);
  // 5% apart with narrow intervals: beyond; 1.5% apart with wide ones: undecided; no interval on one side.
  EXPECT_EQ(matchAgreement(json::array({row("k", "s", 1.05, 1.049, 1.051)}), W, {"k"})[0].Verdict, AgreementVerdict::Beyond);
  EXPECT_EQ(matchAgreement(json::array({row("k", "s", 0.95, 0.949, 0.951)}), W, {"k"})[0].Verdict, AgreementVerdict::Beyond);
  EXPECT_EQ(matchAgreement(json::array({row("k", "s", 1.015, 0.98, 1.05)}), W, {"k"})[0].Verdict,
            AgreementVerdict::Undecided);
  AgreementRow N = matchAgreement(json::array({row("k", "s", 1.0, nullptr, 1.01)}), W, {"k"})[0];
  EXPECT_FALSE(N.IntervalPct);
  EXPECT_EQ(N.Verdict, AgreementVerdict::NoInterval);
}

TEST(AgreementTest, JSONAndLines) {
  json W = json::array({row("k", "s", 1.0, 0.999, 1.001), row("k", "t", 1.0, 0.999, 1.001)});
  std::vector<AgreementRow> Rows =
      matchAgreement(json::array({row("void k", "s", 1.01, 1.005, 1.015), row("void k", "t", 0.9, 0.89, 0.91)}), W,
                     {"k"});
  json J = agreementJSON(Rows);
  EXPECT_EQ(J["threshold_pct"], 2.0);
  ASSERT_EQ(J["rows"].size(), 2u);
  EXPECT_NEAR(J["largest_difference_pct"].get<double>(), 10.0, 1e-9);
  EXPECT_EQ(J["verdicts"]["within"], 1);
  EXPECT_EQ(J["verdicts"]["beyond"], 1);
  EXPECT_EQ(J["rows"][1]["verdict"], "beyond");
  EXPECT_TRUE(agreementJSON({})["largest_difference_pct"].is_null());
  std::vector<std::string> L = agreementLines(Rows);
  ASSERT_EQ(L.size(), 2u);
  EXPECT_EQ(L[1].substr(0, 58), "agreement: void k/t replay 0.9000x, workload 1.0000x, -10.");
  EXPECT_NE(L[1].find(": beyond"), std::string::npos);
}

} // namespace
