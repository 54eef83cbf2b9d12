//===- PromptTest.cpp - Prompt templates, versions and reply parsing ------===//
#include "kloop/Edit/Proposal.h"
#include "kloop/Propose/Prompt.h"
#include "kloop/Propose/Proposer.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"
#include <cstdlib>
#include <functional>
#include <map>

using namespace kloop;
using namespace llvm;
using json = nlohmann::json;

namespace {

std::string srcRoot() {
  if (const char *E = std::getenv("KLOOP_SRC_ROOT"))
    return E;
  return KLOOP_TEST_SRC_ROOT;
}

std::string errorText(Error E) { return toString(std::move(E)); }

template <typename T> std::string errorOf(Expected<T> V) {
  if (V)
    return "<no error>";
  return toString(V.takeError());
}

TEST(PromptVersion, IsTheFirst12HexDigitsOfSHA256) {
  // SHA-256("abc") = ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
  EXPECT_EQ(promptContentVersion("abc"), "ba7816bf8f01");
  EXPECT_EQ(promptContentVersion(""), "e3b0c44298fc");
  EXPECT_NE(promptContentVersion("Hello {{x}}"), promptContentVersion("Hello {{x}} "));
}

TEST(PromptTemplate, ListsPlaceholdersAndRejectsMalformedOnes) {
  Expected<PromptTemplate> T = PromptTemplate::parse("a {{x}} b {{y_2}} c {{x}}", "t.md");
  ASSERT_TRUE(bool(T)) << errorText(T.takeError());
  EXPECT_EQ(T->placeholders(), (std::vector<std::string>{"x", "y_2"}));
  EXPECT_EQ(T->version(), promptContentVersion("a {{x}} b {{y_2}} c {{x}}"));
  EXPECT_TRUE(T->hasPlaceholder("y_2"));
  EXPECT_FALSE(T->hasPlaceholder("z"));

  std::string E = errorOf(PromptTemplate::parse("line one\nsee {{ x }}", "bad.md"));
  EXPECT_NE(E.find("'bad.md'"), std::string::npos) << E;
  EXPECT_NE(E.find("malformed placeholder at line 2"), std::string::npos) << E;
  EXPECT_NE(errorOf(PromptTemplate::parse("{{}}", "e.md")).find("malformed"),
            std::string::npos);
  EXPECT_NE(errorOf(PromptTemplate::parse("{{1x}}", "e.md")).find("malformed"),
            std::string::npos);
  EXPECT_NE(errorOf(PromptTemplate::parse("{{x", "e.md")).find("malformed"),
            std::string::npos);
  EXPECT_NE(errorOf(PromptTemplate::parse("<!-- kloop:user -->\nu\n<!-- kloop:system -->\ns",
                                          "m.md"))
                .find("before the system marker"),
            std::string::npos);
  EXPECT_NE(errorOf(PromptTemplate::parse("<!-- kloop:system -->\ns", "m.md"))
                .find("needs a user section"),
            std::string::npos);
}

TEST(PromptTemplate, RendersOnePassAndFailsOnMissingOrUnknownValues) {
  Expected<PromptTemplate> T = PromptTemplate::parse(
      "note for maintainers\n<!-- kloop:system -->\nYou are {{role}}.\n"
      "<!-- kloop:user -->\nCode:\n{{code}}\nData: {{data}}\n",
      "t.md");
  ASSERT_TRUE(bool(T)) << errorText(T.takeError());
  Expected<RenderedPrompt> R =
      T->render(std::map<std::string, std::string>{{"role", "an engineer"},
                                                    {"code", "int a[] = {{1}};"},
                                                    {"data", "x"}});
  ASSERT_TRUE(bool(R)) << errorText(R.takeError());
  EXPECT_EQ(R->System, "You are an engineer.");
  EXPECT_EQ(R->User, "Code:\nint a[] = {{1}};\nData: x"); // {{1}} not re-expanded
  EXPECT_EQ(R->Version, T->version());

  std::string Missing = errorOf(T->render(std::map<std::string, std::string>{
      {"role", "r"}, {"code", "c"}}));
  EXPECT_NE(Missing.find("'t.md': missing value for placeholder 'data'"), std::string::npos)
      << Missing;
  std::string Unknown = errorOf(T->render(std::map<std::string, std::string>{
      {"role", "r"}, {"code", "c"}, {"data", "d"}, {"dta", "typo"}}));
  EXPECT_NE(Unknown.find("unknown placeholder 'dta'"), std::string::npos) << Unknown;

  // JSON context: strings verbatim, everything else as indented JSON.
  Expected<RenderedPrompt> J =
      T->render(json{{"role", "r"}, {"code", "c"}, {"data", json{{"median_ns", 1200}}}});
  ASSERT_TRUE(bool(J)) << errorText(J.takeError());
  EXPECT_NE(J->User.find("Data: {\n  \"median_ns\": 1200\n}"), std::string::npos) << J->User;
  EXPECT_NE(errorOf(T->render(json::array())).find("must be a JSON object"),
            std::string::npos);

  // Without markers the whole text is the user message.
  Expected<PromptTemplate> Plain = PromptTemplate::parse("just {{x}}", "p.md");
  ASSERT_TRUE(bool(Plain));
  Expected<RenderedPrompt> P = Plain->render(json{{"x", "this"}});
  ASSERT_TRUE(bool(P));
  EXPECT_EQ(P->System, "");
  EXPECT_EQ(P->User, "just this");
}

TEST(PromptFiles, TheShippedTemplateAndSchemaLoad) {
  std::string Dir = srcRoot() + "/prompts";
  Expected<PromptTemplate> T = PromptTemplate::load(Dir + "/optimize-kernel.v1.md");
  ASSERT_TRUE(bool(T)) << errorText(T.takeError());
  std::vector<std::string> Names = T->placeholders();
  std::sort(Names.begin(), Names.end());
  EXPECT_EQ(Names, (std::vector<std::string>{"answer_schema", "history", "kernel_name",
                                             "kernel_source", "profile", "ptxas_report"}));
  auto Buf = MemoryBuffer::getFile(Dir + "/optimize-kernel.v1.md");
  ASSERT_TRUE(bool(Buf));
  EXPECT_EQ(T->version(), promptContentVersion((*Buf)->getBuffer()));
  EXPECT_EQ(T->version().size(), 12u);

  Expected<RenderedPrompt> R = T->render(json{{"answer_schema", "{}"},
                                              {"kernel_name", "reduce"},
                                              {"kernel_source", "__global__ void reduce() {}"},
                                              {"ptxas_report", json{{"registers", 32}}},
                                              {"profile", json{{"median_ns", 1000}}},
                                              {"history", json::array()}});
  ASSERT_TRUE(bool(R)) << errorText(R.takeError());
  EXPECT_NE(R->System.find("ONE JSON object"), std::string::npos);
  EXPECT_EQ(R->System.find("Maintainers' note"), std::string::npos);
  EXPECT_EQ(R->User.find("Maintainers' note"), std::string::npos);
  EXPECT_NE(R->User.find("__global__ void reduce() {}"), std::string::npos);
  EXPECT_EQ(R->User.find("{{"), std::string::npos);

  Expected<json> S = loadProposalSchema(Dir + "/proposal.schema.json");
  ASSERT_TRUE(bool(S)) << errorText(S.takeError());
  EXPECT_EQ((*S)["type"], "object");
  EXPECT_EQ((*S)["required"], json::array({"edits", "rationale"}));

  std::string NotJSON = errorOf(loadProposalSchema(Dir + "/optimize-kernel.v1.md"));
  EXPECT_NE(NotJSON.find("optimize-kernel.v1.md': not valid JSON"), std::string::npos)
      << NotJSON;
  std::string Missing = errorOf(PromptTemplate::load(Dir + "/nope.v9.md"));
  EXPECT_NE(Missing.find("nope.v9.md': cannot read"), std::string::npos) << Missing;
}

TEST(PromptFiles, FindPromptsDirHonoursTheEnvironment) {
  SmallString<128> Dir;
  ASSERT_FALSE(sys::fs::createUniqueDirectory("kloop-prompts", Dir));
  ::setenv("KLOOP_PROMPTS_DIR", Dir.c_str(), 1);
  Expected<std::string> D = findPromptsDir();
  ASSERT_TRUE(bool(D)) << errorText(D.takeError());
  EXPECT_EQ(*D, std::string(Dir));
  ::setenv("KLOOP_PROMPTS_DIR", (std::string(Dir) + "/missing").c_str(), 1);
  EXPECT_NE(errorOf(findPromptsDir()).find("is not a directory"), std::string::npos);
  ::unsetenv("KLOOP_PROMPTS_DIR");
  sys::fs::remove_directories(Dir);
}

// ---- parseReplyText -----------------------------------------------------------------

Provenance someProvenance() {
  Provenance P;
  P.ProposerKind = "command";
  P.TokensIn = 3;
  return P;
}

TEST(ParseReplyText, AcceptsPlainAndOneFencedObject) {
  for (const char *Text : {"{\"edits\": []}", "  \n{\"edits\": []}\n\n",
                           "```json\n{\"edits\": []}\n```", "```\n{\"edits\": []}\n```\n",
                           "```JSON\n{\"edits\": []}```"}) {
    Expected<json> J = parseReplyText(Text, "test", someProvenance());
    ASSERT_TRUE(bool(J)) << Text << ": " << errorText(J.takeError());
    EXPECT_TRUE((*J)["edits"].is_array()) << Text;
  }
}

TEST(ParseReplyText, RejectsAnythingMoreLenient) {
  struct Case {
    const char *Text, *Why;
  } Cases[] = {
      {"Here it is: {\"edits\": []}", "parse error"},
      {"Here:\n```json\n{\"edits\": []}\n```", "parse error"},
      {"```python\n{\"edits\": []}\n```", "parse error"},
      {"```json\n{}\n```\n```json\n{}\n```", "parse error"},
      {"{\"edits\": [],}", "parse error"},
      {"[1, 2]", "a JSON array, not an object"},
      {"\"text\"", "a JSON string, not an object"},
      {"", "parse error"},
  };
  for (const Case &C : Cases) {
    Expected<json> J = parseReplyText(C.Text, "LLM at http://x", someProvenance());
    ASSERT_FALSE(bool(J)) << C.Text;
    bool Typed = false;
    handleAllErrors(J.takeError(), [&](const ReplyNotJSONError &E) {
      Typed = true;
      EXPECT_EQ(E.RawText, C.Text);
      EXPECT_EQ(E.Prov.TokensIn, std::optional<int64_t>(3));
      std::string Msg = E.message();
      EXPECT_EQ(Msg.rfind("LLM at http://x: reply is not a JSON object (", 0), 0u) << Msg;
      EXPECT_NE(Msg.find(C.Why), std::string::npos) << Msg;
    });
    EXPECT_TRUE(Typed) << C.Text;
  }
}

TEST(ParseReplyText, RefusesADuplicatedKeyNamingItAndWhere) {
  // json::parse keeps the last of a repeated key; the proposal would silently be
  // another one than the proposer's text shows.
  struct Case {
    const char *Text, *Why;
  } Cases[] = {
      {R"({"rationale":"x","edits":[{"kind":"add_const","id":"k/param:a"}],"edits":[]})",
       "duplicated key 'edits' in the top-level object"},
      {"```json\n{\"edits\":[{\"kind\":\"set_constant\",\"id\":\"macro:B\",\"value\":128,"
       "\"value\":\"nope\"}]}\n```",
       "duplicated key 'value' in edit #1"},
      {R"({"edits":[{"kind":"add_const","id":"k/param:a"},{"kind":"add_const","id":"k/param:b","id":"k/param:c"}]})",
       "duplicated key 'id' in edit #2"},
      {R"({"provenance":{"model":"a","model":"b"},"edits":[]})",
       "duplicated key 'model' in the object at '/provenance'"},
      {R"({"edits":[],"a/b~c":{"x":[{"k":1,"k":2}]}})",
       "duplicated key 'k' in the object at '/a~1b~0c/x/0'"},
  };
  for (const Case &C : Cases) {
    Expected<json> J = parseReplyText(C.Text, "command './agent.sh'", someProvenance());
    ASSERT_FALSE(bool(J)) << C.Text;
    bool Typed = false;
    handleAllErrors(J.takeError(), [&](const ReplyNotJSONError &E) {
      Typed = true;
      EXPECT_EQ(E.Reason, C.Why);
      EXPECT_EQ(E.RawText, C.Text);
      EXPECT_EQ(E.Prov.TokensIn, std::optional<int64_t>(3));
      EXPECT_EQ(E.message().rfind("command './agent.sh': reply is not a JSON object (" + std::string(C.Why) + ")", 0),
                0u)
          << E.message();
    });
    EXPECT_TRUE(Typed) << C.Text;
  }
  // The same key in different objects is no duplicate.
  Expected<json> J = parseReplyText(R"({"rationale":"x","provenance":{"rationale":"y"},"edits":[]})", "t",
                                       someProvenance());
  ASSERT_TRUE(bool(J)) << errorText(J.takeError());
  EXPECT_EQ((*J)["provenance"]["rationale"], "y");
}

// Regression: a number too large for a double made the exception-based re-parse for the
// error message throw json::out_of_range (not a parse_error, the only one caught), which
// terminated kloop optimize on such a reply.
TEST(ParseReplyText, ANumberTooLargeForADoubleIsNotJSONNotACrash) {
  Expected<json> J = parseReplyText(R"({"version":1e999,"edits":[]})", "LLM at http://x", someProvenance());
  ASSERT_FALSE(bool(J));
  bool Typed = false;
  handleAllErrors(J.takeError(), [&](const ReplyNotJSONError &E) {
    Typed = true;
    EXPECT_EQ(E.Reason, "[json.exception.out_of_range.406] number overflow parsing '1e999'");
  });
  EXPECT_TRUE(Typed);
}

TEST(ParseReplyText, QuotesOnlyTheFirst200Characters) {
  std::string Long = "not json " + std::string(500, 'z') + "TAIL";
  Expected<json> J = parseReplyText(Long, "src", Provenance());
  ASSERT_FALSE(bool(J));
  std::string Msg = toString(J.takeError());
  EXPECT_NE(Msg.find("\"not json zzz"), std::string::npos) << Msg;
  EXPECT_EQ(Msg.find("TAIL"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("(513 bytes in all)"), std::string::npos) << Msg;
}

TEST(ProvenanceJSON, HasSnakeCaseKeysAndNulls) {
  Provenance P;
  P.ProposerKind = "llm-openai";
  P.Model = "m";
  P.PromptVersion = "0123456789ab";
  P.Seed = 7;
  P.WallMs = 12;
  P.Attempts = 2;
  json J = toJSON(P);
  EXPECT_EQ(J["proposer"], "llm-openai");
  EXPECT_EQ(J["prompt_version"], "0123456789ab");
  EXPECT_EQ(J["seed"], 7);
  EXPECT_TRUE(J["temperature"].is_null());
  EXPECT_TRUE(J["cost_usd"].is_null());
  EXPECT_EQ(J["attempts"], 2);
  EXPECT_EQ(J.size(), 10u);
}

} // namespace

// The template kloop optimize sends (v2) describes every edit kind of the answer schema with
// exactly the schema's field names, so the prose never contradicts the schema it embeds.
TEST(PromptFiles, CurrentTemplateNamesTheSchemasFields) {
  std::string Dir = srcRoot() + "/prompts";
  auto Buf = MemoryBuffer::getFile(Dir + "/optimize-kernel.v2.md");
  ASSERT_TRUE(bool(Buf));
  std::string Text = (*Buf)->getBuffer().str();
  Expected<json> Schema = loadProposalSchema(Dir + "/proposal.schema.json");
  ASSERT_TRUE(bool(Schema)) << errorText(Schema.takeError());
  const json &Kinds = (*Schema)["properties"]["edits"]["items"]["oneOf"];
  ASSERT_GE(Kinds.size(), 10u);
  for (const json &K : Kinds) {
    std::string Kind = K["properties"]["kind"]["const"];
    size_t At = Text.find("  " + Kind + " {");
    ASSERT_NE(At, std::string::npos) << Kind << " is not described in the template";
    std::string Fields = Text.substr(At, Text.find('}', At) - At);
    for (const auto &[Name, Prop] : K["properties"].items()) {
      if (Name == "kind")
        continue;
      EXPECT_NE(Fields.find(Name), std::string::npos)
          << "the template's line for " << Kind << " does not name the schema field '" << Name << "'";
    }
  }
  // v1's names, which the schema refuses, are gone.
  for (const char *Old : {"target,", "factor}", "shared_mem?", "justification?"})
    EXPECT_EQ(Text.find(Old), std::string::npos) << Old;
}

namespace {
// The limits the schema shows the model are the ones kloop apply enforces (kloop/Edit/Proposal.h): a
// schema that allowed more would invite proposals that are then refused, one that allowed less would
// hide legal ones.
TEST(ProposalSchema, IntegerLimitsMatchWhatApplyEnforces) {
  Expected<json> S = loadProposalSchema(srcRoot() + "/prompts/proposal.schema.json");
  ASSERT_TRUE(static_cast<bool>(S)) << toString(S.takeError());
  std::map<std::string, std::pair<long long, long long>> Want = {
      {"grid", {1, kloop::MaxGridDim[0]}},
      {"block", {1, 1024}},
      {"shared_memory", {0, kloop::MaxDynamicSharedMemory}},
      {"max_threads", {1, 1024}}};
  std::map<std::string, int> Seen;
  std::function<void(const json &)> Walk = [&](const json &O) {
    if (O.is_object()) {
      if (O.contains("properties") && O["properties"].is_object())
        for (const auto &[K, V] : O["properties"].items())
          if (auto It = Want.find(K); It != Want.end()) {
            ++Seen[K];
            EXPECT_EQ(V.value("minimum", -1LL), It->second.first) << K;
            EXPECT_EQ(V.value("maximum", -1LL), It->second.second) << K;
          }
      for (const auto &[K, V] : O.items())
        Walk(V);
    } else if (O.is_array()) {
      for (const json &V : O)
        Walk(V);
    }
  };
  Walk(*S);
  for (const auto &[K, R] : Want)
    EXPECT_GE(Seen[K], 1) << "the schema has no property '" << K << "'";
}
} // namespace
