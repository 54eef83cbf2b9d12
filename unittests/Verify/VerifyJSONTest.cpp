//===- VerifyJSONTest.cpp - Tests of verification results as JSON ---------===//
#include "kloop/Verify/VerifyJSON.h"
#include "TestProfiles.h"
#include "gtest/gtest.h"

using namespace kloop::verify;
using namespace kloop::verify::test;

namespace {

TEST(VerifyJSON, CompareReportCarriesLaunchesAndFindings) {
  TempDir D;
  ProfileBuilder B(D, "base"), C(D, "cand");
  std::vector<float> V = {1, 2, 3, 4};
  B.capture("_Z1kPf", "k(float*)", 0, 0, bytesOf(V));
  B.capture("_Z1kPf", "k(float*)", 1, 0, bytesOf(V));
  std::vector<uint8_t> Half = bytesOf(V);
  std::fill(Half.begin() + 8, Half.end(), 0xFF);
  C.capture("_Z1kPf", "k(float*)", 0, 0, Half);
  auto R = compareProfiles(B.read(), C.read(),
                           {{"k", 0, DType::F32, {ToleranceKind::Rel, 1e-5}}});
  ASSERT_TRUE(static_cast<bool>(R)) << llvm::toString(R.takeError());
  nlohmann::json J = toJSON(*R);
  EXPECT_EQ(J["passed"], false);
  EXPECT_EQ(J["matched"], 0);
  EXPECT_EQ(J["mismatched"], 2);
  ASSERT_EQ(J["launches"].size(), 2u);
  EXPECT_EQ(J["launches"][0]["method"], "dumps");
  EXPECT_EQ(J["launches"][0]["poison"], 2);
  EXPECT_EQ(J["launches"][0]["elements"], 4);
  EXPECT_EQ(J["launches"][1]["method"], "missing");
  EXPECT_FALSE(J["launches"][1].contains("elements"));
  std::vector<std::string> Kinds;
  for (const auto &F : J["findings"])
    Kinds.push_back(F["kind"]);
  EXPECT_NE(std::find(Kinds.begin(), Kinds.end(), "unwritten-output"),
            Kinds.end());
  EXPECT_NE(std::find(Kinds.begin(), Kinds.end(), "missing-capture"),
            Kinds.end());
  EXPECT_NE(std::find(Kinds.begin(), Kinds.end(), "launch-count-changed"),
            Kinds.end());
  EXPECT_EQ(J["explanation"], R->Explanation);
}

TEST(VerifyJSON, DeterminismAndProtected) {
  DeterminismComparison D{"k arg 0", true, false, true, "msg"};
  nlohmann::json J = toJSON(D);
  EXPECT_EQ(J["regressed"], true);
  EXPECT_EQ(J["output"], "k arg 0");
  ProtectedChange P{"harness.h", "aa", "", "deleted"};
  EXPECT_EQ(toJSON(P)["after"], "");
  EXPECT_EQ(toJSON(P)["path"], "harness.h");
}

} // namespace
