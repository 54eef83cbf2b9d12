//===- LLMProposerTest.cpp - The LLM proposer against a real HTTP server --===//
///
/// Starts test/Propose/fake_llm_server.py on 127.0.0.1 (a free port) and runs
/// every recorded reply and fault against both API flavours.
///
//===----------------------------------------------------------------------===//
#include "kloop/Propose/LLMProposer.h"

#include "gtest/gtest.h"
#include <curl/curl.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace kloop;
using namespace llvm;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

const char Key[] = "sk-kloop-test-SECRET-0123456789";

std::string srcRoot() {
  if (const char *E = std::getenv("KLOOP_SRC_ROOT"))
    return E;
  return KLOOP_TEST_SRC_ROOT;
}

size_t appendTo(char *D, size_t S, size_t N, void *U) {
  static_cast<std::string *>(U)->append(D, S * N);
  return S * N;
}

/// A plain GET or POST to the fake server's control endpoints.
std::string control(int Port, const std::string &Path, const std::string *Body) {
  CURL *C = curl_easy_init();
  std::string Out;
  std::string URL = "http://127.0.0.1:" + std::to_string(Port) + Path;
  curl_easy_setopt(C, CURLOPT_URL, URL.c_str());
  curl_easy_setopt(C, CURLOPT_WRITEFUNCTION, appendTo);
  curl_easy_setopt(C, CURLOPT_WRITEDATA, &Out);
  curl_easy_setopt(C, CURLOPT_NOPROXY, "*");
  if (Body)
    curl_easy_setopt(C, CURLOPT_POSTFIELDS, Body->c_str());
  CURLcode RC = curl_easy_perform(C);
  curl_easy_cleanup(C);
  EXPECT_EQ(RC, CURLE_OK) << curl_easy_strerror(RC);
  return Out;
}

class FakeServer {
public:
  bool start() {
    std::string Script = srcRoot() + "/test/Propose/fake_llm_server.py";
    std::string Replies = srcRoot() + "/test/Propose/Inputs/llm_replies.json";
    int P[2];
    if (pipe(P) != 0)
      return false;
    Pid = fork();
    if (Pid == 0) {
      dup2(P[1], 1);
      close(P[0]);
      close(P[1]);
      execlp("python3", "python3", Script.c_str(), "--script", Replies.c_str(), nullptr);
      _exit(127);
    }
    close(P[1]);
    std::string Line;
    pollfd F{P[0], POLLIN, 0};
    char Ch;
    while (Line.find('\n') == std::string::npos && poll(&F, 1, 10000) > 0 &&
           read(P[0], &Ch, 1) == 1)
      Line += Ch;
    close(P[0]);
    if (sscanf(Line.c_str(), "PORT %d", &Port) != 1)
      return false;
    return true;
  }
  void stop() {
    if (Pid > 0) {
      kill(Pid, SIGTERM);
      waitpid(Pid, nullptr, 0);
    }
    Pid = -1;
  }
  /// Replaces the server's queue (names of recorded replies) and its statistics.
  void script(const std::vector<std::string> &Queue) {
    std::string Body = json{{"queue", Queue}}.dump();
    control(Port, "/__script", &Body);
  }
  json stats() { return json::parse(control(Port, "/stats", nullptr)); }
  std::string base() const { return "http://127.0.0.1:" + std::to_string(Port); }
  int Port = 0;
  pid_t Pid = -1;
};

FakeServer *Server = nullptr;

class LLMProposerTest : public ::testing::TestWithParam<LLMApi> {
protected:
  static void SetUpTestSuite() {
    // A proxy from the environment must not intercept 127.0.0.1.
    for (const char *V : {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY",
                          "all_proxy", "ALL_PROXY"})
      ::unsetenv(V);
    Server = new FakeServer;
    ASSERT_TRUE(Server->start()) << "could not start fake_llm_server.py";
  }
  static void TearDownTestSuite() {
    Server->stop();
    delete Server;
    Server = nullptr;
  }

  LLMConfig config() const {
    LLMConfig C;
    C.Api = GetParam();
    C.BaseURL = Server->base();
    C.Model = "test-model";
    C.APIKey = Key;
    C.Temperature = 0.2;
    C.Seed = 7;
    C.ConnectTimeout = std::chrono::milliseconds(2000);
    C.TotalTimeout = std::chrono::milliseconds(4000);
    C.MaxAttempts = 3;
    C.BackoffInitial = std::chrono::milliseconds(20);
    C.BackoffMax = std::chrono::milliseconds(2500);
    return C;
  }
  std::unique_ptr<LLMProposer> make(const LLMConfig &C, const std::string &Template = "optimize-kernel.v1.md") {
    Expected<PromptTemplate> T =
        PromptTemplate::load(srcRoot() + "/prompts/" + Template);
    EXPECT_TRUE(bool(T)) << toString(T.takeError());
    Expected<json> S = loadProposalSchema(srcRoot() + "/prompts/proposal.schema.json");
    EXPECT_TRUE(bool(S)) << toString(S.takeError());
    Expected<std::unique_ptr<LLMProposer>> P = LLMProposer::create(C, *T, *S);
    EXPECT_TRUE(bool(P)) << toString(P.takeError());
    return P ? std::move(*P) : nullptr;
  }
  static json context() {
    return {{"kernel_name", "reduce<256>"},
            {"kernel_source",
             "__global__ void reduce(const float *in, float *out, int n) {\n"
             "  // kloop: reduce<256>/loop#1\n  for (int i = 0; i < n; ++i) {}\n}"},
            {"ptxas_report", json{{"registers", 32}, {"spill_stores", 0}}},
            {"profile", json{{"n=1048576", {{"median_ns", 10400}, {"pct_roofline", 41.5}}}}},
            {"history", json::array({{{"proposal", 1}, {"refused", "unknown ID"}}})}};
  }
  /// Runs one proposal against a scripted queue; returns the result.
  Expected<ProposalReply> run(const std::vector<std::string> &Queue, const LLMConfig &C) {
    Server->script(Queue);
    std::unique_ptr<LLMProposer> P = make(C);
    if (!P)
      return createStringError("no proposer");
    return P->propose(context());
  }
  /// The error text of a failed run (test failure if it succeeded); checks the key is absent.
  std::string failure(Expected<ProposalReply> R) {
    if (R) {
      ADD_FAILURE() << "expected an error, got " << R->RawText;
      return "";
    }
    std::string Msg = toString(R.takeError());
    EXPECT_EQ(Msg.find(Key), std::string::npos) << "the API key leaked: " << Msg;
    return Msg;
  }
};

bool isOpenAI(LLMApi A) { return A == LLMApi::OpenAI; }

TEST_P(LLMProposerTest, GoodReplyWithProvenanceAndTheRightRequest) {
  LLMConfig C = config();
  C.USDPerMTokIn = 2.0;
  C.USDPerMTokOut = 8.0;
  Expected<ProposalReply> R = run({"good"}, C);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->Proposal["edits"][0]["kind"], "set_unroll");
  EXPECT_EQ(R->Proposal["edits"][0]["factor"], 4);
  const Provenance &P = R->Prov;
  EXPECT_EQ(P.ProposerKind, isOpenAI(GetParam()) ? "llm-openai" : "llm-anthropic");
  EXPECT_EQ(P.Model, "fake-model-2025"); // as the server reports it
  EXPECT_EQ(P.PromptVersion.size(), 12u);
  EXPECT_EQ(P.TokensIn, std::optional<int64_t>(1234));
  EXPECT_EQ(P.TokensOut, std::optional<int64_t>(56));
  ASSERT_TRUE(P.CostUSD.has_value());
  EXPECT_NEAR(*P.CostUSD, (1234 * 2.0 + 56 * 8.0) / 1e6, 1e-12);
  EXPECT_EQ(P.Temperature, std::optional<double>(0.2));
  EXPECT_EQ(P.Seed, isOpenAI(GetParam()) ? std::optional<int64_t>(7) : std::nullopt);
  EXPECT_EQ(P.Attempts, 1);
  EXPECT_GE(P.WallMs, 0);
  EXPECT_EQ(toJSON(P).dump().find(Key), std::string::npos);

  json S = Server->stats();
  ASSERT_EQ(S["requests"], 1);
  const json &Req = S["log"][0];
  const json &H = Req["headers"];
  const json &B = Req["body"];
  EXPECT_EQ(B["model"], "test-model");
  EXPECT_EQ(B["temperature"], 0.2);
  EXPECT_EQ(B.dump().find(Key), std::string::npos);
  if (isOpenAI(GetParam())) {
    EXPECT_EQ(Req["path"], "/v1/chat/completions");
    EXPECT_EQ(H["authorization"], std::string("Bearer ") + Key);
    EXPECT_EQ(B["seed"], 7);
    EXPECT_EQ(B["max_tokens"], 8192);
    EXPECT_EQ(B["response_format"]["type"], "json_schema");
    EXPECT_EQ(B["response_format"]["json_schema"]["schema"]["required"],
              json::array({"edits", "rationale"}));
    ASSERT_EQ(B["messages"].size(), 2u);
    EXPECT_EQ(B["messages"][0]["role"], "system");
    std::string User = B["messages"][1]["content"];
    EXPECT_NE(User.find("// kloop: reduce<256>/loop#1"), std::string::npos);
    EXPECT_NE(User.find("\"spill_stores\": 0"), std::string::npos);
    EXPECT_EQ(User.find("{{"), std::string::npos);
  } else {
    EXPECT_EQ(Req["path"], "/v1/messages");
    EXPECT_EQ(H["x-api-key"], Key);
    EXPECT_EQ(H["anthropic-version"], "2023-06-01");
    EXPECT_FALSE(H.contains("authorization"));
    EXPECT_FALSE(B.contains("seed"));
    EXPECT_EQ(B["max_tokens"], 8192);
    EXPECT_EQ(B["tools"][0]["name"], "submit_proposal");
    EXPECT_EQ(B["tools"][0]["input_schema"]["type"], "object");
    EXPECT_EQ(B["tool_choice"]["type"], "tool");
    EXPECT_TRUE(B["system"].is_string());
    std::string User = B["messages"][0]["content"];
    EXPECT_NE(User.find("// kloop: reduce<256>/loop#1"), std::string::npos);
  }
}

TEST_P(LLMProposerTest, FencedReplyIsAcceptedAndUsageCostIsUsed) {
  Expected<ProposalReply> R = run({"good_fenced"}, config());
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->Proposal["edits"][0]["target"], "reduce<256>/loop#1");
  EXPECT_NE(R->RawText.find("```json"), std::string::npos); // raw text kept as received
  EXPECT_FALSE(R->Prov.CostUSD.has_value()); // no prices, no usage.cost: unknown

  Expected<ProposalReply> C = run({"good_with_cost"}, config());
  ASSERT_TRUE(bool(C)) << toString(C.takeError());
  EXPECT_EQ(C->Prov.CostUSD, std::optional<double>(0.0125));
}

TEST_P(LLMProposerTest, NonJSONReplyIsATypedErrorQuotingTheText) {
  Expected<ProposalReply> R = run({"non_json"}, config());
  ASSERT_FALSE(bool(R));
  bool Typed = false;
  handleAllErrors(R.takeError(), [&](const ReplyNotJSONError &E) {
    Typed = true;
    std::string Msg = E.message();
    EXPECT_NE(Msg.find("LLM at " + Server->base()), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("reply is not a JSON object"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("\"Sure! I would unroll the loop by 4"), std::string::npos) << Msg;
    EXPECT_EQ(E.Prov.TokensIn, std::optional<int64_t>(11)); // tokens were spent
    EXPECT_EQ(E.RawText.rfind("Sure!", 0), 0u);
  });
  EXPECT_TRUE(Typed);

  std::string Arr = failure(run({"json_array"}, config()));
  EXPECT_NE(Arr.find("a JSON array, not an object"), std::string::npos) << Arr;
  std::string Prose = failure(run({"prose_around_fence"}, config()));
  EXPECT_NE(Prose.find("reply is not a JSON object"), std::string::npos) << Prose;
  std::string Cut = failure(run({"cut_off"}, config()));
  EXPECT_NE(Cut.find("cut off"), std::string::npos) << Cut;
}

TEST_P(LLMProposerTest, SchemaViolatingAndUncompilableProposalsPassThroughUnvalidated) {
  // Validation is kloopEdit's job: the proposer returns the object as sent.
  Expected<ProposalReply> R = run({"schema_violating"}, config());
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->Proposal["edits"][0]["kind"], "set_block_size");
  EXPECT_FALSE(R->Proposal["edits"][0].contains("target"));

  Expected<ProposalReply> C = run({"compile_error"}, config());
  ASSERT_TRUE(bool(C)) << toString(C.takeError());
  std::string Code = C->Proposal["edits"][0]["code"];
  EXPECT_NE(Code.find("__shfl_down_sync(0xffffffff, sum o)"), std::string::npos);
  EXPECT_NE(Code.find("warpReduceSum(sum);"), std::string::npos);
}

TEST_P(LLMProposerTest, SlowReplyTimesOutWithoutRetrying) {
  LLMConfig C = config();
  C.TotalTimeout = std::chrono::milliseconds(800);
  auto T0 = Clock::now();
  std::string Msg = failure(run({"slow", "good"}, C));
  double Secs = std::chrono::duration<double>(Clock::now() - T0).count();
  EXPECT_NE(Msg.find("total timeout of 800 ms"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("not retried"), std::string::npos) << Msg;
  EXPECT_LT(Secs, 2.5);
  EXPECT_EQ(Server->stats()["requests"], 1);
}

TEST_P(LLMProposerTest, RateLimitHonoursRetryAfterSeconds) {
  auto T0 = Clock::now();
  Expected<ProposalReply> R = run({"rate_limited", "good"}, config());
  double Secs = std::chrono::duration<double>(Clock::now() - T0).count();
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->Prov.Attempts, 2);
  EXPECT_GE(Secs, 1.0);
  json S = Server->stats();
  ASSERT_EQ(S["requests"], 2);
  double Gap = S["log"][1]["t"].get<double>() - S["log"][0]["t"].get<double>();
  EXPECT_GE(Gap, 1.0) << "retried before Retry-After";
  EXPECT_GE(R->Prov.WallMs, 1000);
}

TEST_P(LLMProposerTest, RateLimitHonoursRetryAfterHttpDate) {
  Expected<ProposalReply> R = run({"rate_limited_date", "good"}, config());
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  json S = Server->stats();
  ASSERT_EQ(S["requests"], 2);
  double Gap = S["log"][1]["t"].get<double>() - S["log"][0]["t"].get<double>();
  // The date is 2 s ahead with 1 s resolution: at least 1 s must pass.
  EXPECT_GE(Gap, 1.0);
}

TEST_P(LLMProposerTest, RetryAfterBeyondTheCapGivesUpAtOnce) {
  auto T0 = Clock::now();
  std::string Msg = failure(run({"rate_limited_long", "good"}, config()));
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - T0).count(), 1.0);
  EXPECT_NE(Msg.find("HTTP 429"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("retry after 3600000 ms, more than the cap of 2500 ms"),
            std::string::npos)
      << Msg;
  EXPECT_EQ(Server->stats()["requests"], 1);
}

TEST_P(LLMProposerTest, ServerErrorsAreRetriedWithBackoff) {
  Expected<ProposalReply> R = run({"server_error", "overloaded", "good"}, config());
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->Prov.Attempts, 3);
  EXPECT_EQ(Server->stats()["requests"], 3);

  LLMConfig C = config();
  C.MaxAttempts = 2;
  std::string Msg = failure(run({"server_error", "server_error", "good"}, C));
  EXPECT_NE(Msg.find("HTTP 500"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("gave up after 2 attempts"), std::string::npos) << Msg;
  json S = Server->stats();
  ASSERT_EQ(S["requests"], 2);
  // Back-off before retry 1 is BackoffInitial (20 ms) times a jitter in [0.5, 1].
  EXPECT_GE(S["log"][1]["t"].get<double>() - S["log"][0]["t"].get<double>(), 0.010);
}

TEST_P(LLMProposerTest, ClientErrorsAreNotRetriedAndTheKeyIsRedacted) {
  std::string Msg = failure(run({"bad_key", "good"}, config()));
  EXPECT_NE(Msg.find("HTTP 401: the server refused the credentials"), std::string::npos) << Msg;
  // The server echoed the key, but a 401 body is never quoted (issue 12, item 2).
  EXPECT_EQ(Msg.find("Incorrect API key"), std::string::npos) << Msg;
  EXPECT_EQ(Server->stats()["requests"], 1);

  LLMConfig C = config();
  C.MaxAttempts = 1;
  std::string M500 = failure(run({"bad_key_500"}, C));
  EXPECT_NE(M500.find("HTTP 500"), std::string::npos) << M500;
  EXPECT_NE(M500.find("gave up after 1 attempt)"), std::string::npos) << M500;
}

TEST_P(LLMProposerTest, TruncatedBodyAndResetAreTransportErrorsThatAreRetried) {
  LLMConfig C = config();
  C.MaxAttempts = 2;
  std::string Msg = failure(run({"truncated", "truncated"}, C));
  EXPECT_NE(Msg.find("transport error: transfer closed with"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("gave up after 2 attempts"), std::string::npos) << Msg;
  EXPECT_EQ(Server->stats()["requests"], 2);

  Expected<ProposalReply> R = run({"truncated", "good"}, C);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->Prov.Attempts, 2);

  C.MaxAttempts = 1;
  std::string Reset = failure(run({"reset"}, C));
  EXPECT_NE(Reset.find("transport error: "), std::string::npos) << Reset;
  EXPECT_TRUE(Reset.find("reset") != std::string::npos ||
              Reset.find("Empty reply") != std::string::npos)
      << Reset;
}

TEST_P(LLMProposerTest, ADuplicatedKeyInTheReplyIsARefusalNamingIt) {
  // The reply as text: OpenAI's message content, or Anthropic's text block (no tool offered).
  // json::parse kept only the last "edits"; the reply must be refused instead, as a
  // ReplyNotJSONError, which the optimize loop journals as a refusal with this reason.
  LLMConfig C = config();
  C.Structured = StructuredOutput::JsonObject;
  Expected<ProposalReply> R = run({"duplicated_key"}, C);
  ASSERT_FALSE(bool(R)) << R->RawText;
  bool Typed = false;
  handleAllErrors(R.takeError(), [&](const ReplyNotJSONError &E) {
    Typed = true;
    EXPECT_EQ(E.Reason, "duplicated key 'edits' in the top-level object");
    EXPECT_EQ(E.Source.rfind("LLM at " + Server->base() + "/", 0), 0u) << E.Source;
    EXPECT_NE(E.RawText.find("\"count\": 8"), std::string::npos) << E.RawText;
    EXPECT_EQ(E.Prov.TokensIn, std::optional<int64_t>(11)); // tokens were spent
  });
  EXPECT_TRUE(Typed);
  if (isOpenAI(GetParam()))
    return;
  // Anthropic's tool_use input is an object inside the HTTP body: a key repeated there is
  // refused too, and the raw text is the body as received.
  R = run({"duplicated_key_tool_use"}, config());
  ASSERT_FALSE(bool(R)) << R->RawText;
  Typed = false;
  handleAllErrors(R.takeError(), [&](const ReplyNotJSONError &E) {
    Typed = true;
    EXPECT_EQ(E.Reason, "duplicated key 'count' in edit #1 (tool_use input at /content/0/input)");
    EXPECT_NE(E.RawText.find("\"count\": 4, \"count\": 8"), std::string::npos) << E.RawText;
    EXPECT_EQ(E.Prov.TokensOut, std::optional<int64_t>(7));
  });
  EXPECT_TRUE(Typed);
}

TEST_P(LLMProposerTest, ANonJSONHttpBodyIsAnError) {
  std::string Msg = failure(run({"not_json_body"}, config()));
  EXPECT_NE(Msg.find("reply body is not a JSON object: \"<html><body>502 Bad Gateway"),
            std::string::npos)
      << Msg;
}

TEST_P(LLMProposerTest, StructuredOutputCanBeTurnedDown) {
  LLMConfig C = config();
  C.Structured = StructuredOutput::JsonObject;
  ASSERT_TRUE(bool(run({"good"}, C)));
  json B = Server->stats()["log"][0]["body"];
  if (isOpenAI(GetParam())) {
    EXPECT_EQ(B["response_format"], json({{"type", "json_object"}}));
  } else {
    EXPECT_FALSE(B.contains("tools"));
  }
  C.Structured = StructuredOutput::None;
  C.OpenAIMaxTokensField = "max_completion_tokens";
  Expected<ProposalReply> R = run({"good"}, C);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->Proposal["edits"][0]["factor"], 4);
  B = Server->stats()["log"][0]["body"];
  EXPECT_FALSE(B.contains("response_format"));
  EXPECT_FALSE(B.contains("tools"));
  // The OpenAI field name is configurable; Anthropic's is fixed.
  EXPECT_EQ(B.contains("max_completion_tokens"), isOpenAI(GetParam()));
  EXPECT_EQ(B.contains("max_tokens"), !isOpenAI(GetParam()));
}

// A batch request: the answer schema is a "proposals" array of at most N proposals, in the request and
// in the prompt, the user message ends with the batch instruction, and the prompt version names both.
TEST_P(LLMProposerTest, ABatchRequestAsksForUpToNProposalsAndSplitsTheReply) {
  Server->script({"batch_of_two"});
  std::unique_ptr<LLMProposer> P = make(config(), "optimize-kernel.v2.md"); // v2 shows the answer schema
  ASSERT_TRUE(P);
  Expected<std::vector<ProposalReply>> R = P->proposeBatch(context(), 3);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  ASSERT_EQ(R->size(), 2u);
  EXPECT_EQ((*R)[0].Proposal["edits"][0]["factor"], 4);
  EXPECT_EQ((*R)[1].Proposal["edits"][0]["factor"], 8);
  EXPECT_EQ((*R)[0].Prov.TokensIn, std::optional<int64_t>(2000));
  EXPECT_EQ((*R)[1].Prov.TokensIn, std::optional<int64_t>(0));
  EXPECT_EQ((*R)[1].Prov.Model, "fake-model-2025");
  Expected<PromptTemplate> T = PromptTemplate::load(srcRoot() + "/prompts/optimize-kernel.v2.md");
  ASSERT_TRUE(bool(T)) << toString(T.takeError());
  EXPECT_EQ((*R)[0].Prov.PromptVersion, promptContentVersion(T->text() + "\n" + LLMProposer::batchInstruction(3)));
  EXPECT_NE((*R)[0].Prov.PromptVersion, T->version());
  EXPECT_EQ((*R)[1].Prov.PromptVersion, (*R)[0].Prov.PromptVersion);

  json S = Server->stats();
  ASSERT_EQ(S["requests"], 1);
  const json &B = S["log"][0]["body"];
  const json &Answer = isOpenAI(GetParam()) ? B["response_format"]["json_schema"]["schema"] : B["tools"][0]["input_schema"];
  EXPECT_EQ(Answer["required"], json::array({"proposals"}));
  EXPECT_EQ(Answer["properties"]["proposals"]["maxItems"], 3);
  EXPECT_EQ(Answer["properties"]["proposals"]["items"]["required"], json::array({"edits", "rationale"}));
  std::string User = B["messages"][isOpenAI(GetParam()) ? 1 : 0]["content"];
  EXPECT_TRUE(StringRef(User).ends_with(LLMProposer::batchInstruction(3))) << User;
  std::string System = isOpenAI(GetParam()) ? B["messages"][0]["content"] : B["system"];
  EXPECT_NE(System.find("\"maxItems\": 3"), std::string::npos) << "the prompt's schema is the batch's";

  // More proposals than asked for: refused, naming the count.
  Server->script({"batch_of_three"});
  Expected<std::vector<ProposalReply>> Over = P->proposeBatch(context(), 2);
  ASSERT_FALSE(bool(Over));
  std::string Msg = toString(Over.takeError());
  EXPECT_NE(Msg.find("reply is not a proposal batch ('proposals' holds 3 proposals; at most 2 were asked for)"),
            std::string::npos)
      << Msg;
  EXPECT_EQ(Msg.find(Key), std::string::npos);

  // A batch of one is propose(): the plain schema and prompt.
  Server->script({"good"});
  Expected<std::vector<ProposalReply>> One = P->proposeBatch(context(), 1);
  ASSERT_TRUE(bool(One)) << toString(One.takeError());
  EXPECT_EQ((*One)[0].Prov.PromptVersion, T->version());
  json S1 = Server->stats();
  const json &B1 = S1["log"][0]["body"];
  const json &Plain = isOpenAI(GetParam()) ? B1["response_format"]["json_schema"]["schema"] : B1["tools"][0]["input_schema"];
  EXPECT_EQ(Plain["required"], json::array({"edits", "rationale"}));
  std::string User1 = B1["messages"][isOpenAI(GetParam()) ? 1 : 0]["content"];
  EXPECT_EQ(User1.find(LLMProposer::batchInstruction(1).substr(0, 20)), std::string::npos);
}

TEST_P(LLMProposerTest, RefusedConnectionIsRetriedThenReported) {
  LLMConfig C = config();
  C.BaseURL = "http://127.0.0.1:1/v1"; // port 1: nothing listens there
  C.MaxAttempts = 2;
  std::unique_ptr<LLMProposer> P = make(C);
  ASSERT_TRUE(P);
  std::string Msg = failure(P->propose(context()));
  EXPECT_NE(Msg.find("LLM at http://127.0.0.1:1/v1/"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("transport error"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("gave up after 2 attempts"), std::string::npos) << Msg;
}

TEST_P(LLMProposerTest, ContextMustMatchTheTemplate) {
  std::unique_ptr<LLMProposer> P = make(config());
  ASSERT_TRUE(P);
  json Ctx = context();
  Ctx["kernel_sauce"] = Ctx["kernel_source"];
  Ctx.erase("kernel_source");
  Server->script({"good"});
  std::string Msg = failure(P->propose(Ctx));
  EXPECT_NE(Msg.find("missing value for placeholder 'kernel_source'"), std::string::npos)
      << Msg;
  EXPECT_EQ(Server->stats()["requests"], 0); // nothing was sent
}

INSTANTIATE_TEST_SUITE_P(BothAPIs, LLMProposerTest,
                         ::testing::Values(LLMApi::OpenAI, LLMApi::Anthropic),
                         [](const ::testing::TestParamInfo<LLMApi> &I) {
                           return llmApiName(I.param).str();
                         });

// ---- configuration, without a server ------------------------------------------------------

TEST(LLMConfigTest, EndpointURLs) {
  LLMConfig C;
  C.BaseURL = "http://h:8000";
  EXPECT_EQ(llmEndpointURL(C), "http://h:8000/v1/chat/completions");
  C.BaseURL = "https://api.openai.com/v1/";
  EXPECT_EQ(llmEndpointURL(C), "https://api.openai.com/v1/chat/completions");
  C.Api = LLMApi::Anthropic;
  C.BaseURL = "https://api.anthropic.com";
  EXPECT_EQ(llmEndpointURL(C), "https://api.anthropic.com/v1/messages");
}

TEST(LLMConfigTest, RetryAfterParsing) {
  using std::chrono::milliseconds;
  EXPECT_EQ(parseRetryAfter("5", 0), milliseconds(5000));
  EXPECT_EQ(parseRetryAfter(" 0 ", 0), milliseconds(0));
  // Wed, 21 Oct 2015 07:28:00 GMT = 1445412480.
  EXPECT_EQ(parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", 1445412470), milliseconds(10000));
  EXPECT_EQ(parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", 1445412490), milliseconds(0));
  EXPECT_FALSE(parseRetryAfter("soon", 0).has_value());
  EXPECT_FALSE(parseRetryAfter("", 0).has_value());
  EXPECT_FALSE(parseRetryAfter("-3", 0).has_value());
}

TEST(LLMConfigTest, EnvironmentFillsOnlyWhatIsEmpty) {
  ::setenv("KLOOP_LLM_BASE_URL", "http://env:1", 1);
  ::setenv("KLOOP_LLM_MODEL", "env-model", 1);
  ::setenv("KLOOP_LLM_API_KEY", "env-key", 1);
  ::setenv("KLOOP_LLM_API", "anthropic", 1);
  LLMConfig C;
  C.Model = "config-model";
  Expected<LLMConfig> E = applyLLMEnvironment(C);
  ASSERT_TRUE(bool(E)) << toString(E.takeError());
  EXPECT_EQ(E->BaseURL, "http://env:1");
  EXPECT_EQ(E->Model, "config-model");
  EXPECT_EQ(E->APIKey, "env-key");
  EXPECT_EQ(E->Api, LLMApi::Anthropic);
  Expected<LLMConfig> Kept = applyLLMEnvironment(C, /*ApiFromConfig=*/true);
  ASSERT_TRUE(bool(Kept));
  EXPECT_EQ(Kept->Api, LLMApi::OpenAI);
  ::setenv("KLOOP_LLM_API", "gemini", 1);
  Expected<LLMConfig> Bad = applyLLMEnvironment(C);
  ASSERT_FALSE(bool(Bad));
  EXPECT_NE(toString(Bad.takeError()).find("KLOOP_LLM_API: unknown LLM API 'gemini'"),
            std::string::npos);
  for (const char *V : {"KLOOP_LLM_BASE_URL", "KLOOP_LLM_MODEL", "KLOOP_LLM_API_KEY",
                        "KLOOP_LLM_API"})
    ::unsetenv(V);
  Expected<StructuredOutput> SO = parseStructuredOutput("xml");
  ASSERT_FALSE(bool(SO));
  EXPECT_NE(toString(SO.takeError()).find("unknown structured-output mode 'xml'"),
            std::string::npos);
  Expected<StructuredOutput> JO = parseStructuredOutput("json_object");
  ASSERT_TRUE(bool(JO));
  EXPECT_EQ(*JO, StructuredOutput::JsonObject);
}

TEST(LLMConfigTest, CreateChecksTheConfig) {
  Expected<PromptTemplate> T = PromptTemplate::parse("{{x}}", "t");
  ASSERT_TRUE(bool(T));
  LLMConfig C;
  C.BaseURL = "127.0.0.1:8000";
  C.Model = "m";
  Expected<std::unique_ptr<LLMProposer>> P = LLMProposer::create(C, *T, json::object());
  ASSERT_FALSE(bool(P));
  EXPECT_NE(toString(P.takeError()).find("must start with http:// or https://"),
            std::string::npos);
  C.BaseURL = "http://127.0.0.1:8000";
  C.Model = "";
  P = LLMProposer::create(C, *T, json::object());
  ASSERT_FALSE(bool(P));
  EXPECT_NE(toString(P.takeError()).find("no model given"), std::string::npos);
  C.Model = "m";
  P = LLMProposer::create(C, *T, json::array());
  ASSERT_FALSE(bool(P));
  EXPECT_NE(toString(P.takeError()).find("schema must be a JSON object"), std::string::npos);
  C.MaxAttempts = 0;
  P = LLMProposer::create(C, *T, json::object());
  ASSERT_FALSE(bool(P));
  EXPECT_NE(toString(P.takeError()).find("max attempts"), std::string::npos);
}

} // namespace

// Issue 12, item 2: the key in every form a server was seen to echo it.
TEST(RedactSecretTest, TheKeyAndItsPrefixesInAnyCaseAndEscapeAreRedacted) {
  const std::string K = "sk-Abc123-defghijkLMNOP";
  EXPECT_EQ(redactSecret("key " + K + " end", K), "key [redacted] end");
  EXPECT_EQ(redactSecret("SK-ABC123-DEFGHIJKLMNOP!", K), "[redacted]!");
  EXPECT_EQ(redactSecret("sk\\u002dAbc123\\u002DdefghijkLMNOP", K), "[redacted]");
  EXPECT_EQ(redactSecret("\\\\u002d: sk\\\\u002dAbc123-defghijkLMNOP", K), "\\\\u002d: [redacted]");
  EXPECT_EQ(redactSecret("sk%2DAbc123%2ddefghijkLMNOP", K), "[redacted]");
  EXPECT_EQ(redactSecret("cut: sk-Abc123-defghijkLMN.", K), "cut: [redacted].");
  // Every prefix of 8 or more characters, the longest match at each place; 7 stay.
  EXPECT_EQ(redactSecret("sk-Abc12x", K), "[redacted]x");
  EXPECT_EQ(redactSecret("sk-Abc1x", K), "sk-Abc1x");
  EXPECT_EQ(redactSecret(K + K.substr(0, 10) + "|" + K, K), "[redacted][redacted]|[redacted]");
  // Text around escapes that are not the key is left as it was.
  EXPECT_EQ(redactSecret("a\\\"b \\u00e9 100%", K), "a\\\"b \\u00e9 100%");
  // A key shorter than 8 characters is redacted whole only; an empty key changes nothing.
  EXPECT_EQ(redactSecret("abcABCab", "abc"), "[redacted][redacted]ab");
  EXPECT_EQ(redactSecret("text", ""), "text");
}
