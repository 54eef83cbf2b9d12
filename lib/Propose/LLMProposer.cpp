//===- LLMProposer.cpp - Proposals from an LLM over HTTP ------------------===//
#include "kloop/Propose/LLMProposer.h"
#include "kloop/Support/JSON.h"
#include "Http.h"
#include "kloop/Edit/Proposal.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <curl/curl.h>

#include <cmath>
#include <cstdlib>
#include <ctime>
#include <thread>

using namespace llvm;
using json = nlohmann::json;
using std::chrono::milliseconds;

namespace kloop {

StringRef llmApiName(LLMApi A) { return A == LLMApi::OpenAI ? "openai" : "anthropic"; }

Expected<LLMApi> parseLLMApi(StringRef S) {
  if (S.equals_insensitive("openai"))
    return LLMApi::OpenAI;
  if (S.equals_insensitive("anthropic"))
    return LLMApi::Anthropic;
  return createStringError("unknown LLM API '" + S + "' (expected openai or anthropic)");
}

Expected<StructuredOutput> parseStructuredOutput(StringRef S) {
  if (S == "json_schema")
    return StructuredOutput::JsonSchema;
  if (S == "json_object")
    return StructuredOutput::JsonObject;
  if (S == "none")
    return StructuredOutput::None;
  return createStringError("unknown structured-output mode '" + S +
                           "' (expected json_schema, json_object or none)");
}

static std::optional<std::string> env(const char *Name) {
  const char *V = std::getenv(Name);
  if (!V || !*V)
    return std::nullopt;
  return std::string(V);
}

Expected<LLMConfig> applyLLMEnvironment(LLMConfig C, bool ApiFromConfig) {
  if (C.BaseURL.empty())
    C.BaseURL = env("KLOOP_LLM_BASE_URL").value_or("");
  if (C.Model.empty())
    C.Model = env("KLOOP_LLM_MODEL").value_or("");
  if (C.APIKey.empty())
    C.APIKey = env("KLOOP_LLM_API_KEY").value_or("");
  if (std::optional<std::string> A = env("KLOOP_LLM_API")) {
    Expected<LLMApi> Api = parseLLMApi(*A);
    if (!Api)
      return createStringError("KLOOP_LLM_API: " + toString(Api.takeError()));
    if (!ApiFromConfig)
      C.Api = *Api;
  }
  return C;
}

std::optional<milliseconds> parseRetryAfter(StringRef Value, int64_t NowUnix) {
  Value = Value.trim();
  if (Value.empty())
    return std::nullopt;
  if (llvm::all_of(Value, isDigit)) {
    uint64_t Seconds;
    if (Value.getAsInteger(10, Seconds) || Seconds > 10u * 365 * 24 * 3600)
      return std::nullopt;
    return milliseconds(Seconds * 1000);
  }
  time_t Now = static_cast<time_t>(NowUnix);
  time_t When = curl_getdate(Value.str().c_str(), &Now);
  if (When == static_cast<time_t>(-1))
    return std::nullopt;
  return milliseconds(When > Now ? static_cast<int64_t>(When - Now) * 1000 : 0);
}

std::string llmEndpointURL(const LLMConfig &C) {
  StringRef B = C.BaseURL;
  while (B.ends_with("/"))
    B = B.drop_back();
  std::string URL = B.str();
  if (!B.ends_with("/v1"))
    URL += "/v1";
  return URL + (C.Api == LLMApi::OpenAI ? "/chat/completions" : "/messages");
}

LLMProposer::LLMProposer(LLMConfig C, PromptTemplate T, json S)
    : Config(std::move(C)), Template(std::move(T)), Schema(std::move(S)),
      Rng(std::random_device{}()) {}

Expected<std::unique_ptr<LLMProposer>> LLMProposer::create(LLMConfig C, PromptTemplate T,
                                                           json Schema) {
  StringRef URL = C.BaseURL;
  if (!URL.starts_with("http://") && !URL.starts_with("https://"))
    return createStringError("LLM proposer: base URL '" + URL +
                             "' must start with http:// or https:// (set it in the "
                             "config or KLOOP_LLM_BASE_URL)");
  if (C.Model.empty())
    return createStringError("LLM proposer: no model given (set it in the config or "
                             "KLOOP_LLM_MODEL)");
  if (C.MaxAttempts < 1)
    return createStringError("LLM proposer: max attempts must be at least 1");
  if (C.ConnectTimeout.count() <= 0 || C.TotalTimeout.count() <= 0)
    return createStringError("LLM proposer: timeouts must be positive");
  if (C.BackoffInitial.count() < 0 || C.BackoffMax.count() < 0)
    return createStringError("LLM proposer: back-off times must not be negative");
  if (C.MaxTokens < 1)
    return createStringError("LLM proposer: max tokens must be at least 1");
  if (C.OpenAIMaxTokensField != "max_tokens" &&
      C.OpenAIMaxTokensField != "max_completion_tokens")
    return createStringError("LLM proposer: the max-tokens field must be max_tokens or "
                             "max_completion_tokens, not '" + C.OpenAIMaxTokensField + "'");
  if (!Schema.is_object())
    return createStringError("LLM proposer: the answer schema must be a JSON object");
  return std::unique_ptr<LLMProposer>(
      new LLMProposer(std::move(C), std::move(T), std::move(Schema)));
}

StringRef LLMProposer::kind() const {
  return Config.Api == LLMApi::OpenAI ? "llm-openai" : "llm-anthropic";
}

static const char ToolName[] = "submit_proposal";

json LLMProposer::batchSchema(unsigned N) const {
  json Array = {{"type", "array"}, {"minItems", 1}, {"maxItems", N}, {"items", Schema}};
  return {{"type", "object"},
          {"additionalProperties", false},
          {"required", json::array({"proposals"})},
          {"properties", {{"proposals", Array}}}};
}

std::string LLMProposer::batchInstruction(unsigned N) {
  return "Instead of one change, propose up to " + std::to_string(N) +
         " different changes, the most promising first. Each is applied and measured on its own against the "
         "current best version, so none may depend on another. Answer with one JSON object, {\"proposals\": "
         "[...]}, each entry one proposal as described above.";
}

json LLMProposer::requestBody(const RenderedPrompt &P, unsigned N) const {
  const json &Answer = N > 1 ? batchSchema(N) : Schema;
  json B = {{"model", Config.Model}};
  B[Config.Api == LLMApi::OpenAI ? Config.OpenAIMaxTokensField : std::string("max_tokens")] =
      Config.MaxTokens;
  if (Config.Temperature)
    B["temperature"] = *Config.Temperature;
  if (Config.Api == LLMApi::OpenAI) {
    json Msgs = json::array();
    if (!P.System.empty())
      Msgs.push_back({{"role", "system"}, {"content", P.System}});
    Msgs.push_back({{"role", "user"}, {"content", P.User}});
    B["messages"] = std::move(Msgs);
    if (Config.Seed)
      B["seed"] = *Config.Seed;
    if (Config.Structured == StructuredOutput::JsonSchema)
      B["response_format"] = {{"type", "json_schema"},
                              {"json_schema",
                               {{"name", "kloop_proposal"},
                                {"strict", Config.StrictSchema},
                                {"schema", Answer}}}};
    else if (Config.Structured == StructuredOutput::JsonObject)
      B["response_format"] = {{"type", "json_object"}};
    return B;
  }
  if (!P.System.empty())
    B["system"] = P.System;
  B["messages"] = json::array({{{"role", "user"}, {"content", P.User}}});
  if (Config.Structured == StructuredOutput::JsonSchema) {
    B["tools"] = json::array({{{"name", ToolName},
                               {"description", N > 1 ? "Submit up to " + std::to_string(N) +
                                                           " kloop proposals, each typed edits anchored to "
                                                           "inventory IDs with a rationale."
                                                     : std::string("Submit one kloop proposal: typed edits "
                                                                   "anchored to inventory IDs, and a rationale.")},
                               {"input_schema", Answer}}});
    B["tool_choice"] = {{"type", "tool"}, {"name", ToolName}};
  }
  return B;
}

namespace {
/// One character of a text as a decoder sees it, and the bytes [Begin, End) it was written with.
struct DecodedChar {
  char C;
  size_t Begin, End;
};
} // namespace

/// Whether \p S holds \p N hex digits at \p At; their value in \p V.
static bool hexAt(StringRef S, size_t At, size_t N, unsigned &V) {
  if (At + N > S.size())
    return false;
  StringRef H = S.substr(At, N);
  return llvm::all_of(H, isHexDigit) && !H.getAsInteger(16, V);
}

/// \p S decoded: JSON \uXXXX escapes (also behind the doubled backslashes of a text
/// escaped again), \" and \/, and URL %XX escapes, each one character; a code point
/// above ASCII becomes NUL, which no key holds.
static std::vector<DecodedChar> decodeEscapes(StringRef S) {
  std::vector<DecodedChar> Out;
  for (size_t I = 0; I < S.size();) {
    size_t J = I;
    while (J < S.size() && S[J] == '\\')
      ++J;
    unsigned V = 0;
    if (J > I && J < S.size() && S[J] == 'u' && hexAt(S, J + 1, 4, V)) {
      Out.push_back({V < 128 ? static_cast<char>(V) : '\0', I, J + 5});
      I = J + 5;
    } else if (J > I && J < S.size() && (S[J] == '"' || S[J] == '/')) {
      Out.push_back({S[J], I, J + 1});
      I = J + 1;
    } else if (J > I) {
      for (; I < J; ++I)
        Out.push_back({'\\', I, I + 1});
    } else if (S[I] == '%' && hexAt(S, I + 1, 2, V)) {
      Out.push_back({V < 128 ? static_cast<char>(V) : '\0', I, I + 3});
      I += 3;
    } else {
      Out.push_back({S[I], I, I + 1});
      ++I;
    }
  }
  return Out;
}

std::string redactSecret(StringRef Text, StringRef Secret) {
  if (Secret.empty())
    return Text.str();
  const size_t Min = std::min<size_t>(Secret.size(), 8);
  std::vector<DecodedChar> D = decodeEscapes(Text);
  std::string Out;
  size_t Copied = 0;
  for (size_t I = 0; I < D.size();) {
    size_t L = 0;
    while (L < Secret.size() && I + L < D.size() && toLower(D[I + L].C) == toLower(Secret[L]))
      ++L;
    if (L < Min) {
      ++I;
      continue;
    }
    Out += Text.slice(Copied, D[I].Begin);
    Out += "[redacted]";
    Copied = D[I + L - 1].End;
    I += L;
  }
  Out += Text.substr(Copied);
  return Out;
}

/// The first \p N bytes of \p S, escaped and quoted, for error messages.
static std::string quoteHead(StringRef S, size_t N = 200) {
  std::string Out;
  raw_string_ostream OS(Out);
  OS << '"';
  OS.write_escaped(S.take_front(N));
  OS << '"';
  if (S.size() > N)
    OS << " (" << S.size() << " bytes in all)";
  return Out;
}

static std::optional<int64_t> intField(const json &Obj, const char *Key) {
  if (Obj.is_object() && Obj.contains(Key) && Obj[Key].is_number_integer())
    return Obj[Key].get<int64_t>();
  return std::nullopt;
}

Expected<LLMReplyBody> parseLLMReplyBody(LLMApi Api, long Status, StringRef Raw, StringRef Secret) {
  auto Quote = [&](StringRef S) { return quoteHead(redactSecret(S, Secret)); };
  LLMReplyBody R;
  json Body = json::parse(Raw, nullptr, /*allow_exceptions=*/false);
  if (Body.is_discarded() || !Body.is_object())
    return createStringError("HTTP " + Twine(Status) + " reply body is not a JSON object: " + Quote(Raw));
  if (Body.contains("model") && Body["model"].is_string())
    R.Model = redactSecret(Body["model"].get<std::string>(), Secret);
  const json &Usage = Body.contains("usage") ? Body["usage"] : json();
  if (Api == LLMApi::OpenAI) {
    R.TokensIn = intField(Usage, "prompt_tokens");
    R.TokensOut = intField(Usage, "completion_tokens");
    const json *Msg = nullptr;
    if (Body.contains("choices") && Body["choices"].is_array() && !Body["choices"].empty() &&
        Body["choices"][0].is_object() && Body["choices"][0].contains("message"))
      Msg = &Body["choices"][0]["message"];
    if (!Msg || !Msg->is_object())
      return createStringError("reply has no choices[0].message: " + Quote(Raw));
    if (Msg->contains("refusal") && (*Msg)["refusal"].is_string())
      return createStringError("the model refused: " + Quote((*Msg)["refusal"].get<std::string>()));
    if (!Msg->contains("content") || !(*Msg)["content"].is_string())
      return createStringError("reply has no text in choices[0].message.content: " + Quote(Raw));
    R.Text = (*Msg)["content"].get<std::string>();
    const json &Choice = Body["choices"][0];
    if (Choice.contains("finish_reason") && Choice["finish_reason"] == "length")
      R.CutOff = "finish_reason=length";
  } else {
    R.TokensIn = intField(Usage, "input_tokens");
    R.TokensOut = intField(Usage, "output_tokens");
    if (!Body.contains("content") || !Body["content"].is_array())
      return createStringError("reply has no content[] array: " + Quote(Raw));
    bool Tool = false;
    for (size_t I = 0; I < Body["content"].size(); ++I) {
      const json &Block = Body["content"][I];
      if (Block.is_object() && Block.value("type", "") == "tool_use" &&
          Block.contains("input")) {
        R.Text = dumpJSON(Block["input"]);
        Tool = true;
        // The proposal is an object inside the HTTP body, which json::parse read
        // above keeping only the last of a repeated key: read the body again to
        // refuse a key repeated in the proposal, as for a proposal sent as text.
        std::string Input = "/content/" + std::to_string(I) + "/input";
        for (const StrictJson::DuplicatedKey &D : parseStrictJson(Raw).Duplicates)
          if (D.Object == Input || StringRef(D.Object).starts_with(Input + "/")) {
            StrictJson::DuplicatedKey InProposal{D.Key, D.Object.substr(Input.size())};
            R.DuplicateInTool = InProposal.message() + " (tool_use input at " + Input + ")";
            break;
          }
        break;
      }
    }
    if (!Tool)
      for (const json &Block : Body["content"])
        if (Block.is_object() && Block.value("type", "") == "text" &&
            Block.contains("text") && Block["text"].is_string())
          R.Text += Block["text"].get<std::string>();
    if (Body.contains("stop_reason") && Body["stop_reason"] == "max_tokens")
      R.CutOff = "stop_reason=max_tokens";
  }
  if (Usage.is_object() && Usage.contains("cost") && Usage["cost"].is_number())
    R.CostUSD = Usage["cost"].get<double>();
  return R;
}

Expected<ProposalReply> LLMProposer::propose(const json &Context) { return request(Context, 1); }

std::string LLMProposer::source() const { return redactSecret("LLM at " + llmEndpointURL(Config), Config.APIKey); }

Expected<std::vector<ProposalReply>> LLMProposer::proposeBatch(const json &Context, unsigned N) {
  if (N <= 1)
    return Proposer::proposeBatch(Context, N);
  Expected<ProposalReply> R = request(Context, N);
  if (!R)
    return R.takeError();
  Expected<std::vector<json>> Ps = splitBatch(R->Proposal, N, source(), R->RawText, R->Prov);
  if (!Ps)
    return Ps.takeError();
  return batchReplies(std::move(*Ps), std::move(R->RawText), R->Prov);
}

Expected<ProposalReply> LLMProposer::request(const json &Context, unsigned N) {
  auto Start = std::chrono::steady_clock::now();
  auto ElapsedMs = [&] {
    return std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - Start)
        .count();
  };
  const std::string &Key = Config.APIKey;
  Provenance Prov;
  Prov.ProposerKind = kind().str();
  Prov.Model = Config.Model;
  Prov.PromptVersion = N > 1 ? promptContentVersion(Template.text() + "\n" + batchInstruction(N)) : Template.version();
  Prov.Temperature = Config.Temperature;
  if (Config.Api == LLMApi::OpenAI)
    Prov.Seed = Config.Seed;
  std::string URL = llmEndpointURL(Config);
  std::string Source = source();
  auto Fail = [&](const Twine &Msg) -> Error {
    return createStringError(redactSecret(Source + ": " + Msg.str(), Key));
  };
  // Redacted before the cut at 200 bytes, so that the cut cannot leave a prefix of the key.
  auto Quote = [&](StringRef S) { return quoteHead(redactSecret(S, Key)); };

  json Ctx = Context;
  if (Template.hasPlaceholder("answer_schema")) {
    if (Ctx.is_object() && Ctx.contains("answer_schema"))
      return Fail("the context must not set 'answer_schema'; the proposer fills it");
    if (Ctx.is_object())
      Ctx["answer_schema"] = dumpJSON(N > 1 ? batchSchema(N) : Schema, 2);
  }
  Expected<RenderedPrompt> Prompt = Template.render(Ctx);
  if (!Prompt)
    return Prompt.takeError();
  if (N > 1)
    Prompt->User += "\n\n" + batchInstruction(N);

  http::Request Req;
  Req.URL = URL;
  Req.Body = dumpJSON(requestBody(*Prompt, N));
  Req.ConnectTimeoutMs = static_cast<long>(Config.ConnectTimeout.count());
  Req.TotalTimeoutMs = static_cast<long>(Config.TotalTimeout.count());
  Req.Headers = {"Content-Type: application/json", "Accept: application/json",
                 "Expect:"};
  if (Config.Api == LLMApi::OpenAI) {
    if (!Key.empty())
      Req.Headers.push_back("Authorization: Bearer " + Key);
  } else {
    if (!Key.empty())
      Req.Headers.push_back("x-api-key: " + Key);
    Req.Headers.push_back("anthropic-version: " + Config.AnthropicVersion);
  }

  http::Response Resp;
  for (unsigned Attempt = 1;; ++Attempt) {
    Prov.Attempts = Attempt;
    std::variant<http::Response, http::TransportFailure> R = http::post(Req);
    std::optional<milliseconds> Wait;
    std::string Problem;
    if (auto *F = std::get_if<http::TransportFailure>(&R)) {
      if (F->TimedOut)
        return Fail("no complete reply within the total timeout of " +
                    Twine(Config.TotalTimeout.count()) + " ms (" + F->Reason +
                    "); not retried, attempt " + Twine(Attempt));
      Problem = "transport error: " + F->Reason;
    } else {
      Resp = std::move(std::get<http::Response>(R));
      if (Resp.Status >= 200 && Resp.Status < 300)
        break;
      // A 401/403 body is about the credentials and may echo them in any form: never quoted.
      Problem = "HTTP " + std::to_string(Resp.Status) +
                (Resp.Status == 401 || Resp.Status == 403
                     ? ": the server refused the credentials (its reply is not shown: it may "
                       "echo the API key)"
                     : ": " + Quote(Resp.Body));
      if (Resp.Status != 429 && Resp.Status < 500)
        return Fail(Problem);
      if (Resp.RetryAfter) {
        std::optional<milliseconds> RA =
            // system_clock, not std::time(): glibc's time() reads the coarse clock, which can
            // lag the server's precise clock by a tick and turn "2 s ahead" into 3 s.
            parseRetryAfter(*Resp.RetryAfter,
                            std::chrono::duration_cast<std::chrono::seconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count());
        if (RA && *RA > Config.BackoffMax)
          return Fail(Problem + "; the server asks to retry after " +
                      Twine(RA->count()) + " ms, more than the cap of " +
                      Twine(Config.BackoffMax.count()) + " ms: giving up after attempt " +
                      Twine(Attempt));
        Wait = RA;
      }
    }
    if (Attempt >= Config.MaxAttempts)
      return Fail(Problem + " (gave up after " + Twine(Attempt) + " attempt" +
                  (Attempt == 1 ? "" : "s") + ")");
    if (!Wait) {
      double Base = std::min<double>(static_cast<double>(Config.BackoffMax.count()),
                                     Config.BackoffInitial.count() *
                                         std::ldexp(1.0, static_cast<int>(Attempt) - 1));
      std::uniform_real_distribution<double> Jitter(0.5, 1.0);
      Wait = milliseconds(std::llround(Base * Jitter(Rng)));
    }
    std::this_thread::sleep_for(*Wait);
  }

  Expected<LLMReplyBody> RB = parseLLMReplyBody(Config.Api, Resp.Status, Resp.Body, Key);
  if (!RB)
    return Fail(toString(RB.takeError()));
  if (!RB->Model.empty())
    Prov.Model = RB->Model;
  Prov.TokensIn = RB->TokensIn;
  Prov.TokensOut = RB->TokensOut;
  Prov.CostUSD = RB->CostUSD;
  if (!Prov.CostUSD && Config.USDPerMTokIn && Config.USDPerMTokOut && Prov.TokensIn && Prov.TokensOut)
    Prov.CostUSD = (*Prov.TokensIn * *Config.USDPerMTokIn +
                    *Prov.TokensOut * *Config.USDPerMTokOut) /
                   1e6;
  std::string Text = std::move(RB->Text), CutOff = std::move(RB->CutOff),
              DuplicateInTool = std::move(RB->DuplicateInTool);
  Prov.WallMs = ElapsedMs();

  // The proposal is journaled and shown: a key echoed in it goes no further than here.
  Text = redactSecret(Text, Key);
  Expected<json> Parsed =
      DuplicateInTool.empty()
          ? parseReplyText(Text, Source, Prov)
          // The raw text is the body as received: Text no longer holds the repeated key.
          : Expected<json>(make_error<ReplyNotJSONError>(Source, redactSecret(DuplicateInTool, Key),
                                                         redactSecret(Resp.Body, Key), Prov));
  if (!Parsed)
    return handleErrors(Parsed.takeError(), [&](std::unique_ptr<ReplyNotJSONError> E) {
      if (!CutOff.empty())
        E->Reason += "; the reply was cut off (" + CutOff + ")";
      E->Reason = redactSecret(E->Reason, Key);
      E->RawText = redactSecret(E->RawText, Key);
      return Error(std::move(E));
    });
  ProposalReply Reply;
  Reply.RawText = std::move(Text);
  Reply.Proposal = std::move(*Parsed);
  Reply.Prov = std::move(Prov);
  return Reply;
}

} // namespace kloop
