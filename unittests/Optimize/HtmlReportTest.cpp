//===- HtmlReportTest.cpp - kloop report --html's page --------------------===//
//
// The page from journals written by hand: text from the journal is escaped wherever it lands (the
// static HTML and the chart data), a journal without samples or profile says so, and the counters steps'
// profiles are shown, one row per kernel and shape. test/Report/html.test opens a real page in Chromium.
//
//===----------------------------------------------------------------------===//
#include "kloop/Optimize/HtmlReport.h"
#include "kloop/Measure/KernelProfile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "gtest/gtest.h"

using namespace kloop;
using json = nlohmann::json;

namespace {

const char *Hostile = "</script><script>alert(1)</script>";

struct HtmlReportTest : ::testing::Test {
  llvm::SmallString<128> Dir;
  std::unique_ptr<Journal> J;
  int64_t Run = 0;
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("html", Dir));
    J = llvm::cantFail(Journal::open((Dir + "/run.db").str(), Journal::OpenMode::Create));
    Run = llvm::cantFail(J->createRun("hash", "0.1.0"));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(Dir); }
  void step(StepState S, const char *Key, const json &Payload) {
    int64_t Id = llvm::cantFail(J->beginStep(Run, 0, S, Key));
    ASSERT_FALSE(bool(J->finishStep(Id, Payload)));
  }
  /// A final step that accepted cand-1, with a hostile kernel name in its evidence.
  void finalStep() {
    json Ev = {{{"kernel", Hostile}, {"shape", "n1K"}, {"bytes", 4096}, {"flops", 1024}, {"base_median_ns", 2000.0},
                {"cand_median_ns", 1000.0}, {"speedup", 2.0}, {"ci_low", 1.9}, {"ci_high", 2.1}}};
    step(StepState::Done, "final",
         {{"stop_reason", "budget"}, {"best", "cand-1"}, {"diff", std::string("+") + Hostile + "\n"},
          {"evidence", Ev}, {"ceilings", nullptr}});
  }
  std::string page() { return llvm::cantFail(optimize::renderHtmlReport(*J, Run, "var Chart = 1;")); }
};

TEST(HtmlEscape, EscapesTheFiveCharacters) {
  EXPECT_EQ(optimize::htmlEscape("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(optimize::htmlEscape("plain"), "plain");
}

TEST_F(HtmlReportTest, TextFromTheJournalNeverBecomesMarkup) {
  finalStep();
  std::string P = page();
  // The only script elements are the data, the library and the page's own script.
  size_t Scripts = 0;
  for (size_t At = P.find("<script"); At != std::string::npos; At = P.find("<script", At + 1))
    ++Scripts;
  EXPECT_EQ(Scripts, 3u);
  EXPECT_EQ(P.find("alert(1)</script>"), std::string::npos);
  EXPECT_NE(P.find("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  // In the chart data (the roofline's point labels) '<' is \u003c.
  EXPECT_NE(P.find("\\u003c/script>\\u003cscript>alert(1)\\u003c/script>"), std::string::npos);
}

TEST_F(HtmlReportTest, SaysWhatIsMissing) {
  finalStep();
  std::string P = page();
  EXPECT_NE(P.find("No samples journaled for this pair"), std::string::npos);
  EXPECT_NE(P.find("No device ceilings were known to the run"), std::string::npos);
  EXPECT_NE(P.find("The journal holds no hardware-counter profile of this run (no counters step"), std::string::npos);
  EXPECT_NE(P.find("No candidate was proposed."), std::string::npos);
  EXPECT_NE(P.find("\"distributions\":[]"), std::string::npos);
}

TEST_F(HtmlReportTest, AnUnfinishedRunSaysSo) {
  std::string P = page();
  EXPECT_NE(P.find("The run has not finished"), std::string::npos);
  EXPECT_NE(P.find("\"roofline\":null"), std::string::npos);
}

TEST_F(HtmlReportTest, ShowsTheCountersStepsProfiles) {
  finalStep();
  measure::KernelProfile KP;
  KP.Kernel = "_Z1kPf";
  KP.Name = Hostile;
  KP.Shape = "n1K";
  KP.DramReadBytes = 8192;
  KP.L2HitPct = 12.5;
  step(StepState::Measure, "counters-baseline",
       {{"profiles", json::array({measure::toJSON(KP)})}, {"problems", json::array({"n4K: <no range>"})}});
  std::string P = page();
  EXPECT_EQ(P.find("The journal holds no hardware-counter profile"), std::string::npos);
  EXPECT_NE(P.find("<td>baseline</td><td>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</td><td>n1K</td><td>" +
                   optimize::htmlEscape(measure::summarizeKernelProfile(KP)) + "</td>"),
            std::string::npos);
  EXPECT_NE(P.find("missing: n4K: &lt;no range&gt;"), std::string::npos);
}

TEST_F(HtmlReportTest, AnUnreadableProfileIsNamedNotDropped) {
  finalStep();
  step(StepState::Measure, "counters-cand-2", {{"profiles", json::array({json{{"kernel", 3}}})}});
  std::string P = page();
  EXPECT_NE(P.find("<td>cand-2</td><td></td><td></td><td>unreadable: "), std::string::npos);
}

TEST(LoadChartLibrary, NamesTheFileLookedFor) {
  llvm::SmallString<128> D;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("assets", D));
  ::setenv("KLOOP_REPORT_ASSETS_DIR", D.c_str(), 1);
  llvm::Expected<std::string> L = optimize::loadChartLibrary("kloop");
  ASSERT_FALSE(bool(L));
  std::string E = llvm::toString(L.takeError());
  EXPECT_NE(E.find(std::string(D) + "/chart.umd.min.js"), std::string::npos) << E;
  EXPECT_NE(E.find("or set KLOOP_REPORT_ASSETS_DIR"), std::string::npos) << E;
  ::unsetenv("KLOOP_REPORT_ASSETS_DIR");
  llvm::sys::fs::remove_directories(D);
}

} // namespace
