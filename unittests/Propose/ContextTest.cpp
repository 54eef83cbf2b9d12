//===- ContextTest.cpp - optimize's context -> the LLM's placeholders -----===//
#include "kloop/Propose/Context.h"
#include "kloop/Measure/KernelProfile.h"

#include "gtest/gtest.h"

#include "../InventoryFixture.h"

using namespace kloop;
using json = nlohmann::json;

namespace {

/// An entity with an ID located at \p Line of \p File.
json at(const std::string &ID, const std::string &File, unsigned Line) {
  return {{"id", ID}, {"location", {{"file", File}, {"begin", {{"line", Line}, {"column", 1}}}}}};
}

json inventory() {
  json K = at("scale", "src/k.cu", 2);
  K["loops"] = json::array({at("scale/loop#1", "src/k.cu", 3)});
  return {{"kernels", json::array({K})},
          {"launch_sites", json::array({at("k.cu:main/launch#1", "src/k.cu", 7)})},
          {"constants", json::array({at("macro:BLOCK", "src/k.cu", 1), json{{"id", "macro:NOWHERE"}}})},
          {"device_functions", json::array()}};
}

const std::vector<SourceText> Files = {
    {"k.cu", "#define BLOCK 128\n__global__ void scale(float *x) {\n  for (int i = 0; i < 4; ++i)\n"
             "    x[i] *= 2;\n}\n\nint main() { scale<<<1, BLOCK>>>(nullptr); }"}};

TEST(ContextTest, AnnotatesEachEntityOnTheLineItBegins) {
  std::string A = annotateSources(Files, test::completeInventory(inventory()));
  EXPECT_EQ(A, "// file: k.cu\n"
               "#define BLOCK 128  // [kloop id: macro:BLOCK]\n"
               "__global__ void scale(float *x) {  // [kloop id: scale]\n"
               "  for (int i = 0; i < 4; ++i)  // [kloop id: scale/loop#1]\n"
               "    x[i] *= 2;\n"
               "}\n"
               "\n"
               "int main() { scale<<<1, BLOCK>>>(nullptr); }  // [kloop id: k.cu:main/launch#1]\n");
}

TEST(ContextTest, EntitiesOfOtherFilesAreLeftOut) {
  json Inv = {{"kernels", json::array({at("other", "lib/other.cu", 1)})},
              {"constants", json::array({at("macro:X", "lib/x.h", 1)})}};
  std::string A = annotateSources({{"k.cu", "line one\nline two"}}, test::completeInventory(Inv));
  EXPECT_EQ(A, "// file: k.cu\nline one\nline two\n");
}

TEST(ContextTest, ProfileSaysWhenNothingWasMeasured) {
  EXPECT_NE(renderProfile(json::object()).find("not measured yet"), std::string::npos);
  EXPECT_NE(renderProfile(json{{"profile", json::array()}}).find("not measured yet"), std::string::npos);
  json Row = {{"kernel", "scale"}, {"shape", "n1M"}, {"cand_median_ns", 1200.5}};
  std::string P = renderProfile(json{{"profile", json::array({Row})}});
  // The timing evidence, then the hardware counters after a blank line.
  size_t Cut = P.find("\n\nHardware counters: none taken (no GPU in this run)");
  ASSERT_NE(Cut, std::string::npos) << P;
  EXPECT_EQ(json::parse(P.substr(0, Cut)), json::array({Row}));
}

TEST(ContextTest, CountersAreOneLinePerProfileThenTheProblems) {
  measure::KernelProfile KP;
  KP.Kernel = "_Z5scalePf";
  KP.Name = "scale(float*)";
  KP.Shape = "n1M";
  KP.Launch.Grid = {4096, 1, 1};
  KP.Launch.Block = {256, 1, 1};
  KP.Launch.Registers = 16;
  KP.DramReadBytes = 4194304;
  KP.TopStalls = {{"long_scoreboard", 70.0}};
  json Ctx = {{"counters",
               {{"profiles", json::array({measure::toJSON(KP)})},
                {"problems", json::array({"shape n4M: cuptiRangeProfilerEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"})}}}};
  std::string C = renderCounters(Ctx);
  EXPECT_NE(C.find("\n- scale(float*) [shape n1M], grid 4096x1x1 block 256x1x1, 16 registers: occupancy ? achieved / ? "
                   "theoretical; DRAM 4.19 MB read, ? written;"),
            std::string::npos)
      << C;
  EXPECT_NE(C.find("stalls long_scoreboard 70.0%"), std::string::npos) << C;
  EXPECT_NE(C.find("\n- missing: shape n4M: cuptiRangeProfilerEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"),
            std::string::npos)
      << C;
  EXPECT_NE(renderProfile(Ctx).find(C), std::string::npos);
  EXPECT_EQ(renderCounters(json{{"counters", nullptr}}), "Hardware counters: none taken (no GPU in this run)");
  json Empty = {{"counters", {{"profiles", json::array()}, {"problems", json::array()}}}};
  EXPECT_NE(renderCounters(Empty).find("(no target kernel was profiled)"), std::string::npos);
}

TEST(ContextTest, PlaceholdersOfTheTemplate) {
  json Ctx = {{"inventory", inv::toJSON(test::completeInventory(inventory()))},
              {"history", json::array({json{{"round", 1}, {"outcome", "refused"}}})},
              {"ptxas_baseline", {{"kernels", json::array()}}},
              {"round", 2}};
  json L = llvm::cantFail(llmPlaceholders(Ctx, Files));
  EXPECT_EQ(L["kernel_name"], "scale");
  EXPECT_EQ(L["kernel_source"], annotateSources(Files, test::completeInventory(inventory())));
  EXPECT_EQ(json::parse(L["ptxas_report"].get<std::string>()), Ctx["ptxas_baseline"]);
  EXPECT_EQ(json::parse(L["history"].get<std::string>()), Ctx["history"]);
  EXPECT_EQ(L["profile"], renderProfile(Ctx));
  std::vector<std::string> Keys;
  for (const auto &[K, V] : L.items())
    Keys.push_back(K);
  EXPECT_EQ(Keys, (std::vector<std::string>{"history", "kernel_name", "kernel_source", "profile", "ptxas_report"}));
}

TEST(ContextTest, KernelNamesAreJoined) {
  json Inv = {{"kernels", json::array({json{{"id", "a"}}, json{{"id", "ns::b<256>"}}})}};
  json Ctx = {{"inventory", inv::toJSON(test::completeInventory(Inv))}};
  EXPECT_EQ(llvm::cantFail(llmPlaceholders(Ctx, {}))["kernel_name"], "a, ns::b<256>");
}

TEST(ContextTest, AnInventoryThatDoesNotReadIsAnError) {
  json Ctx = {{"inventory", {{"kernels", json::array({json{{"id", "a"}}})}}}};
  llvm::Expected<json> L = llmPlaceholders(Ctx, {});
  ASSERT_FALSE(bool(L));
  EXPECT_NE(llvm::toString(L.takeError()).find("context: inventory: schema"), std::string::npos);
}

} // namespace
