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
                .find("field 'count' must be a positive integer"),
            std::string::npos);
  EXPECT_NE(err(parseProposalText(R"({"rationale":"","edits":[{"kind":"set_launch_bounds","id":"a","max_threads":2048}]})"))
                .find("'max_threads' must be an integer in [1, 1024]"),
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
