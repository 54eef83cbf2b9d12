#include "kloop/Edit/Apply.h"
#include "kloop/Edit/Proposal.h"
#include "gtest/gtest.h"

using namespace kloop;

static std::string err(llvm::Expected<Proposal> P) {
  if (P)
    return "";
  return llvm::toString(P.takeError());
}

TEST(Proposal, RoundTripsEveryKind) {
  const char *Text = R"({"version":1,"rationale":"r","provenance":{"m":"x"},"edits":[
    {"kind":"set_constant","id":"macro:B","value":128},
    {"kind":"set_unroll","id":"k/loop#1","count":null},
    {"kind":"set_launch_bounds","id":"k","max_threads":256,"min_blocks":2},
    {"kind":"set_launch_config","id":"f.cu:main/launch#1","block":"256","allow_odd_block":"why"},
    {"kind":"add_restrict","id":"k/param:p"},{"kind":"add_const","id":"k/param:p"},
    {"kind":"replace_body","id":"k","code":"{}"},{"kind":"replace_loop","id":"k/loop#1","code":"for(;;);"},
    {"kind":"replace_stmt","id":"k/loop#1","stmt":3,"code":"x = 1;"},
    {"kind":"insert_device_function","before":"k","code":"__device__ int f();"},
    {"kind":"add_kernel_variant","of":"k","name":"k2","code":"__global__ void k2(){}","retarget":["f.cu:main/launch#1"]}]})";
  auto P = parseProposalText(Text);
  ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
  ASSERT_EQ(P->Edits.size(), 11u);
  EXPECT_EQ(P->Edits[0].Value, "128");
  EXPECT_FALSE(P->Edits[1].Count.has_value());
  EXPECT_EQ(*P->Edits[2].MinBlocks, 2);
  EXPECT_EQ(P->Edits[8].StmtIndex, 3);
  EXPECT_EQ(P->Edits[8].label(), "replace_stmt k/loop#1 stmt 3");
  EXPECT_EQ(P->Edits[10].Retarget.size(), 1u);
  auto Again = parseProposal(proposalToJson(*P));
  ASSERT_TRUE(bool(Again)) << llvm::toString(Again.takeError());
  EXPECT_EQ(proposalToJson(*Again), proposalToJson(*P));
}

TEST(Proposal, RejectsSchemaViolationsNamingEditAndField) {
  EXPECT_NE(err(parseProposalText("{", "p.json")).find("p.json: not JSON"), std::string::npos);
  EXPECT_NE(err(parseProposalText(R"({"version":2,"rationale":"","edits":[]})")).find("'version' must be 1"),
            std::string::npos);
  EXPECT_NE(err(parseProposalText(R"({"rationale":"","edits":[]})")).find("at least one edit"), std::string::npos);
  EXPECT_NE(err(parseProposalText(R"({"rationale":"","edits":[{"kind":"add_const"}]})"))
                .find("edit #1 (add_const): missing field 'id'"),
            std::string::npos);
  EXPECT_NE(err(parseProposalText(R"({"rationale":"","edits":[{"kind":"set_unroll","id":"a","count":2.5}]})"))
                .find("edit #1 (set_unroll): field 'count' 2.5 is not an integer (expected: an integer in [1, 2147483647])"),
            std::string::npos);
  EXPECT_NE(err(parseProposalText(R"({"rationale":"","edits":[{"kind":"set_launch_bounds","id":"a","max_threads":2048}]})"))
                .find("edit #1 (set_launch_bounds): field 'max_threads' 2048 is out of range [1, 1024]"),
            std::string::npos);
  EXPECT_NE(err(parseProposalText(R"({"rationale":"","edits":[{"kind":"set_launch_config","id":"a"}]})"))
                .find("needs at least one of"),
            std::string::npos);
  EXPECT_NE(err(parseProposalText(R"({"rationale":"","edits":[{"kind":"replace_stmt","id":"k","stmt":"2","code":";"}]})"))
                .find("edit #1 (replace_stmt): field 'stmt' must be an integer in [1, 1048576], got \"2\""),
            std::string::npos);
  EXPECT_NE(err(parseProposalText(R"({"rationale":"","edits":[],"x":1})")).find("unknown top-level field 'x'"),
            std::string::npos);
}

// Regression (kloop-fuzz-proposal): a number too large for a double made the
// re-parse for the error message throw json out_of_range.406, which was not caught
// and terminated kloop. It must be an ordinary "not JSON" refusal.
TEST(Proposal, NumberOverflowIsNotJsonNotACrash) {
  std::string E = err(parseProposalText(R"({"version":1e999,"rationale":"x","edits":[]})", "big.json"));
  EXPECT_NE(E.find("big.json: not JSON: "), std::string::npos) << E;
  EXPECT_NE(E.find("number overflow"), std::string::npos) << E;
}

TEST(StrictJson, KeepsWhatJsonParseLoses) {
  const char *Text = R"({"a":[1,{"b":2,"b":3,"c":{"d":0,"d":1}}],"a":2.50,"e":1e3,"f/g~h":[-0.0,99999999999999999999999]})";
  StrictJson S = parseStrictJson(Text);
  ASSERT_FALSE(S.SyntaxError.has_value()) << *S.SyntaxError;
  // The DOM is json::parse's, the last of a repeated key included.
  EXPECT_EQ(S.Value, nlohmann::json::parse(Text));
  ASSERT_EQ(S.Duplicates.size(), 3u);
  EXPECT_EQ(S.Duplicates[0].Key, "b");
  EXPECT_EQ(S.Duplicates[0].Object, "/a/1");
  EXPECT_EQ(S.Duplicates[0].message(), "duplicated key 'b' in the object at '/a/1'");
  EXPECT_EQ(S.Duplicates[1].Object, "/a/1/c");
  EXPECT_EQ(S.Duplicates[1].message(), "duplicated key 'd' in the object at '/a/1/c'");
  EXPECT_EQ(S.Duplicates[2].message(), "duplicated key 'a' in the top-level object");
  // Doubles keep their spelling (JSON pointers escape '/' and '~').
  std::map<std::string, std::string> Want = {
      {"/a", "2.50"}, {"/e", "1e3"}, {"/f~1g~0h/0", "-0.0"}, {"/f~1g~0h/1", "99999999999999999999999"}};
  EXPECT_EQ(S.FloatSpellings, Want);
  EXPECT_EQ((StrictJson::DuplicatedKey{"value", "/edits/11"}.message()), "duplicated key 'value' in edit #12");
  EXPECT_EQ((StrictJson::DuplicatedKey{"x", "/edits/0/y"}.message()), "duplicated key 'x' in the object at '/edits/0/y'");
}

TEST(StrictJson, SyntaxErrorsAreReportedNotThrown) {
  for (const char *Text : {"", "{", "{\"a\":1}x", "[1e999]", "{\"a\" 1}", "\xff"}) {
    StrictJson S = parseStrictJson(Text);
    ASSERT_TRUE(S.SyntaxError.has_value()) << Text;
    EXPECT_EQ(S.SyntaxError->rfind("[json.exception.", 0), 0u) << *S.SyntaxError;
    EXPECT_TRUE(S.Value.is_null()) << Text;
  }
  EXPECT_NE(parseStrictJson("[1e999]").SyntaxError->find("number overflow parsing '1e999'"), std::string::npos);
  // Nesting is read without recursion up to MaxDepth levels, and refused past it, naming where.
  auto Nested = [](size_t N) { return std::string(N, '[') + std::string(N, ']'); };
  StrictJson D = parseStrictJson(Nested(StrictJson::MaxDepth));
  EXPECT_FALSE(D.SyntaxError.has_value());
  EXPECT_TRUE(D.Value.is_array());
  StrictJson Deeper = parseStrictJson(Nested(StrictJson::MaxDepth + 1));
  ASSERT_TRUE(Deeper.SyntaxError.has_value());
  EXPECT_EQ(*Deeper.SyntaxError, "arrays and objects nested deeper than 256 levels (at '/0/0/0/0/0/0/0/0/...')");
  EXPECT_TRUE(Deeper.Value.is_null());
}

// Break test (helper-58): 150,000 nested arrays in `provenance` made kloop apply crash (exit 139) after
// the parse; the text is refused as not JSON instead.
TEST(Proposal, DeepNestingIsRefusedNotACrash) {
  const size_t N = 150000;
  std::string Text = R"({"version":1,"rationale":"x","provenance":{"a":)" + std::string(N, '[') + std::string(N, ']') +
                     R"(},"edits":[{"kind":"set_constant","id":"macro:BLOCK","value":128}]})";
  std::string E = err(parseProposalText(Text, "deep.json"));
  EXPECT_EQ(E, "deep.json: not JSON: arrays and objects nested deeper than 256 levels (at "
               "'/provenance/a/0/0/0/0/0/0/...')");
}

TEST(Proposal, DuplicatedKeysAreRefusedNamingKeyAndObject) {
  EXPECT_EQ(err(parseProposalText(
                R"({"rationale":"x","edits":[{"kind":"add_const","id":"k/param:a"}],"edits":[{"kind":"add_const","id":"k/param:b"}]})",
                "p.json")),
            "p.json: duplicated key 'edits' in the top-level object");
  EXPECT_EQ(err(parseProposalText(
                R"({"rationale":"x","edits":[{"kind":"add_const","id":"k/param:a"},{"kind":"set_constant","id":"macro:B","value":128,"value":"nope"}]})")),
            "proposal: duplicated key 'value' in edit #2");
  EXPECT_EQ(err(parseProposalText(R"({"rationale":"x","rationale":"y","edits":[{"kind":"add_const","id":"k/param:a"}]})")),
            "proposal: duplicated key 'rationale' in the top-level object");
  EXPECT_EQ(err(parseProposalText(
                R"({"rationale":"x","provenance":{"m":{"n":1,"n":1}},"edits":[{"kind":"add_const","id":"k/param:a"}]})")),
            "proposal: duplicated key 'n' in the object at '/provenance/m'");
}

TEST(Proposal, IntegerFieldsAreCheckedAsWritten) {
  auto one = [](const std::string &Edit) {
    return err(parseProposalText(R"({"rationale":"x","edits":[)" + Edit + "]}"));
  };
  EXPECT_EQ(one(R"({"kind":"set_constant","id":"saxpy/const:stride","value":18446744073709551615})"),
            "proposal: edit #1 (set_constant): field 'value' 18446744073709551615 is out of range (at most "
            "9223372036854775807; write a wider constant as an expression string, e.g. \"18446744073709551615ull\")");
  EXPECT_EQ(one(R"({"kind":"set_constant","id":"c","value":99999999999999999999999})")
                .find("proposal: edit #1 (set_constant): field 'value' 99999999999999999999999 is out of range (at most "
                      "9223372036854775807;"),
            0u);
  EXPECT_EQ(one(R"({"kind":"set_constant","id":"c","value":-99999999999999999999999})")
                .find("proposal: edit #1 (set_constant): field 'value' -99999999999999999999999 is out of range (at "
                      "least -9223372036854775808;"),
            0u);
  EXPECT_EQ(one(R"({"kind":"set_constant","id":"c","value":1e3})"),
            "proposal: edit #1 (set_constant): field 'value' 1e3 is not an integer (expected: an integer, or a C++ "
            "expression string)");
  EXPECT_EQ(one(R"({"kind":"set_launch_config","id":"f.cu:main/launch#1","grid":18446744073709551615})"),
            "proposal: edit #1 (set_launch_config): field 'grid' 18446744073709551615 is out of range [1, 2147483647] "
            "(an integer grid is its x dimension: CUDA's maximum grid size is 2147483647 x 65535 x 65535 blocks)");
  EXPECT_EQ(one(R"({"kind":"set_launch_config","id":"f.cu:main/launch#1","grid":1,"shared_memory":-1})"),
            "proposal: edit #1 (set_launch_config): field 'shared_memory' -1 is out of range [0, 232448] (bytes of "
            "dynamic shared memory; 232448 = 227 KiB is the most one block may use on sm_90 (H100/H200), with opt-in)");
  EXPECT_EQ(one(R"({"kind":"set_launch_config","id":"f.cu:main/launch#1","block":1025})"),
            "proposal: edit #1 (set_launch_config): field 'block' 1025 is out of range [1, 1024] (threads in a block)");
  EXPECT_EQ(one(R"({"kind":"set_unroll","id":"k/loop#1","count":-1})"),
            "proposal: edit #1 (set_unroll): field 'count' -1 is out of range [1, 2147483647] (null removes the pragma)");
  EXPECT_EQ(one(R"({"kind":"set_unroll","id":"k/loop#1","count":"4"})"),
            "proposal: edit #1 (set_unroll): field 'count' must be an integer in [1, 2147483647] or null (remove the "
            "pragma), got \"4\"");
  EXPECT_EQ(one(R"({"kind":"replace_stmt","id":"k","stmt":18446744073709551615,"code":";"})"),
            "proposal: edit #1 (replace_stmt): field 'stmt' 18446744073709551615 is out of range [1, 1048576]");
  EXPECT_EQ(one(R"({"kind":"set_launch_bounds","id":"k","max_threads":256,"min_blocks":0})"),
            "proposal: edit #1 (set_launch_bounds): field 'min_blocks' 0 is out of range [1, 1048576]");

  // The bounds are accepted, and kept exactly.
  auto P = parseProposalText(R"({"rationale":"x","edits":[
    {"kind":"set_constant","id":"a","value":9223372036854775807},
    {"kind":"set_constant","id":"b","value":-9223372036854775808},
    {"kind":"set_launch_config","id":"f.cu:main/launch#1","grid":2147483647,"block":1024,"shared_memory":0},
    {"kind":"set_unroll","id":"k/loop#1","count":2147483647}]})");
  ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
  EXPECT_EQ(P->Edits[0].Value, "9223372036854775807");
  EXPECT_EQ(P->Edits[1].Value, "-9223372036854775808");
  EXPECT_EQ(*P->Edits[2].Grid, "2147483647");
  EXPECT_EQ(*P->Edits[2].Block, "1024");
  EXPECT_EQ(*P->Edits[2].SharedMemory, "0");
  EXPECT_EQ(*P->Edits[3].Count, 2147483647);

  // Without the text, a double cannot say how it was written: "not an integer", shown as
  // nlohmann prints it.
  nlohmann::json J = {{"rationale", "x"},
                      {"edits", {{{"kind", "set_constant"}, {"id", "c"}, {"value", 1e3}}}}};
  EXPECT_EQ(err(parseProposal(J)),
            "edit #1 (set_constant): field 'value' 1000.0 is not an integer (expected: an integer, or a C++ expression "
            "string)");
  J["edits"][0]["value"] = 18446744073709551615ull;
  EXPECT_EQ(err(parseProposal(J)).find("edit #1 (set_constant): field 'value' 18446744073709551615 is out of range"),
            0u);
}

TEST(Output, DiffHasGitHeaderAndHunk) {
  Proposal P;
  P.Rationale = "because";
  Edit E;
  E.Kind = EditKind::SetConstant;
  E.ID = "macro:B";
  P.Edits.push_back(E);
  FileChange C{"/x/a.cu", "a.cu", "1\n2\n3\n4\n5\n6\n7\n8\n", "1\n2\n3\n4\nfive\n6\n7\n8\n"};
  std::string D = renderDiff({C}, P, "p.json");
  EXPECT_NE(D.find("kloop proposal: p.json (1 edit)\nrationale: because\n"), std::string::npos) << D;
  EXPECT_NE(D.find("diff --git a/a.cu b/a.cu\n--- a/a.cu\n+++ b/a.cu\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n"),
            std::string::npos)
      << D;
  std::string Y = exportFixesYaml({C}, "/x/a.cu");
  EXPECT_NE(Y.find("ReplacementText: five"), std::string::npos) << Y;
}
