//===- HistoryCommandTest.cpp - `kloop history` on a journal made here ----===//
///
/// Builds a journal through the API, then runs the kloop executable (from
/// KLOOP_TOOLS_DIR, set by lit, else this build's bin/) and checks its table
/// and JSON output. Skipped when the executable has not been built.
///
//===----------------------------------------------------------------------===//
#include "kloop/Journal/Journal.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <cstdlib>
#include <sys/wait.h>

using namespace kloop;
using namespace llvm;
using json = nlohmann::json;

namespace {

std::string kloopExe() {
  const char *Dir = std::getenv("KLOOP_TOOLS_DIR");
  return std::string(Dir ? Dir : KLOOP_TEST_TOOLS_DIR) + "/kloop";
}

/// Runs \p Cmd with a shell; returns its exit status and stdout+stderr.
std::pair<int, std::string> sh(const std::string &Cmd) {
  std::string Out;
  FILE *P = popen((Cmd + " 2>&1").c_str(), "r");
  if (!P)
    return {-1, ""};
  char Buf[4096];
  size_t N;
  while ((N = fread(Buf, 1, sizeof(Buf), P)) > 0)
    Out.append(Buf, N);
  int Status = pclose(P);
  return {WIFEXITED(Status) ? WEXITSTATUS(Status) : -1, Out};
}

class HistoryCommandTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (!sys::fs::can_execute(kloopExe()))
      GTEST_SKIP() << kloopExe() << " is not built";
    ASSERT_FALSE(sys::fs::createUniqueDirectory("kloop-history-test", Dir));
    Path = (Dir + "/run.kloop.db").str();
    auto J = Journal::open(Path, Journal::OpenMode::Create);
    ASSERT_TRUE(bool(J)) << toString(J.takeError());
    Journal &Jn = **J;
    int64_t Run = cantFail(Jn.createRun("cfg123", "0.1.0"));
    ASSERT_FALSE(bool(Jn.beginRound(Run, 1)));
    NewProposal A;
    A.ProposerKind = "llm-openai";
    A.Model = "gpt-test";
    A.TokensIn = 1200;
    A.TokensOut = 300;
    A.CostUSD = 0.004;
    A.RawReply = "{}";
    A.Parsed = json::object();
    int64_t P1 = cantFail(Jn.recordProposal(Run, 1, A));
    cantFail(Jn.recordEdit(P1, 0, "reduce<256>/loop#1", "set_unroll",
                           json{{"factor", 4}}, true));
    cantFail(Jn.recordVerdict(P1, "accepted", json{{"ratio", 0.82}},
                              "median 0.82x, 95% CI [0.80, 0.84]"));
    NewProposal B;
    B.ProposerKind = "builtin";
    B.RawReply = "{}";
    int64_t P2 = cantFail(Jn.recordProposal(Run, 1, B));
    cantFail(Jn.recordEdit(P2, 0, "reduce<256>", "add_restrict", json::object(), false));
    cantFail(Jn.recordRefusal(P2, 0, "launch main/launch#1 passes 'buf' twice"));
    ASSERT_FALSE(bool(Jn.setRunState(Run, "stopped", std::string("plateau: 3 rounds"), true)));
  }
  void TearDown() override {
    if (!Dir.empty())
      sys::fs::remove_directories(Dir);
  }
  SmallString<128> Dir;
  std::string Path;
};

TEST_F(HistoryCommandTest, PrintsATable) {
  auto [RC, Out] = sh(kloopExe() + " history --journal " + Path);
  ASSERT_EQ(RC, 0) << Out;
  EXPECT_NE(Out.find("run 1 of " + Path + ": stopped (plateau: 3 rounds)"), std::string::npos)
      << Out;
  EXPECT_NE(Out.find("1 round, 2 proposals"), std::string::npos) << Out;
  EXPECT_NE(Out.find("llm-openai"), std::string::npos) << Out;
  EXPECT_NE(Out.find("1200/300"), std::string::npos) << Out;
  EXPECT_NE(Out.find("$0.0040"), std::string::npos) << Out;
  EXPECT_NE(Out.find("accepted"), std::string::npos) << Out;
  EXPECT_NE(Out.find("median 0.82x, 95% CI [0.80, 0.84]"), std::string::npos) << Out;
  EXPECT_NE(Out.find("edit 0: launch main/launch#1 passes 'buf' twice"), std::string::npos)
      << Out;
  EXPECT_NE(Out.find("outcomes: accepted 1; refused 1;"), std::string::npos) << Out;
}

TEST_F(HistoryCommandTest, PrintsJSON) {
  auto [RC, Out] = sh(kloopExe() + " history --json --journal " + Path);
  ASSERT_EQ(RC, 0) << Out;
  json J = json::parse(Out, nullptr, false);
  ASSERT_FALSE(J.is_discarded()) << Out;
  EXPECT_EQ(J["run"]["stop_reason"], "plateau: 3 rounds");
  ASSERT_EQ(J["proposals"].size(), 2u);
  EXPECT_EQ(J["proposals"][0]["outcome"], "accepted");
  EXPECT_EQ(J["proposals"][0]["provenance"]["tokens_in"], 1200);
  EXPECT_EQ(J["proposals"][1]["outcome"], "refused");
  EXPECT_EQ(J["proposals"][1]["refusals"][0]["edit_ordinal"], 0);
  EXPECT_EQ(J["rounds"].size(), 2u);
}

TEST_F(HistoryCommandTest, RefusesANonJournalAndAMissingRun) {
  std::string Text = (Dir + "/notes.txt").str();
  ASSERT_EQ(sh("echo hello > " + Text).first, 0);
  auto [RC, Out] = sh(kloopExe() + " history --journal " + Text);
  EXPECT_EQ(RC, 1);
  EXPECT_NE(Out.find("journal '" + Text + "': not a kloop journal"), std::string::npos) << Out;
  auto [RC2, Out2] = sh(kloopExe() + " history --run 7 --journal " + Path);
  EXPECT_EQ(RC2, 1);
  EXPECT_NE(Out2.find("no run 7"), std::string::npos) << Out2;
}

} // namespace
