//===- ContextTest.cpp - optimize's context -> the LLM's placeholders -----===//
#include "kloop/Propose/Context.h"

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
  EXPECT_EQ(json::parse(P), json::array({Row}));
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
