//===- kloop/Propose/LLMProposer.h - Proposals from an LLM over HTTP ------===//
///
/// \file
/// Asks a language model for a proposal over HTTP (libcurl), through either
///  - an OpenAI-compatible Chat Completions API (OpenAI, vLLM, llama.cpp
///    server, Ollama): POST {base}/v1/chat/completions, or {base}/chat/completions
///    when the base URL already ends in /v1; `Authorization: Bearer KEY`;
///  - the Anthropic Messages API: POST {base}/v1/messages (same /v1 rule);
///    headers `x-api-key: KEY` and `anthropic-version`.
///
/// Structured output (LLMConfig::Structured): with JsonSchema the answer schema
/// is sent as OpenAI `response_format: {type: json_schema}` or as an Anthropic
/// tool `submit_proposal` whose `input_schema` is the schema (tool_choice
/// forces it); JsonObject sends `response_format: {type: json_object}`
/// (Anthropic: as None); None relies on the prompt's instructions alone. Use
/// JsonObject or None for servers that reject json_schema.
///
/// Retries (docs/proposers.md): HTTP 429 and 5xx, and transport failures
/// other than the total timeout (connection refused/reset, truncated body),
/// are retried up to MaxAttempts requests in all. The wait before retry n
/// (n = 1, 2, ...) is the server's Retry-After (delta-seconds or HTTP-date)
/// when present, else min(BackoffMax, BackoffInitial * 2^(n-1)) scaled by a
/// uniform random factor in [0.5, 1] ("equal jitter"). A Retry-After longer
/// than BackoffMax is not shortened: the proposer gives up at once with an
/// error saying so. A request that exceeds TotalTimeout is not retried (the
/// server may still be generating, and billing, the first answer).
///
/// The API key is sent only in the auth header. It is never logged, never in
/// Provenance, and removed (redactSecret) from every error message, from server
/// replies quoted in errors, from the model ID the server reports and from the
/// reply text (which is journaled). The body of a 401 or 403 reply is never
/// quoted at all (issue 12, item 2: servers echo the key upper-cased,
/// JSON-escaped or truncated).
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_PROPOSE_LLMPROPOSER_H
#define KLOOP_PROPOSE_LLMPROPOSER_H

#include "kloop/Propose/Prompt.h"
#include "kloop/Propose/Proposer.h"

#include <chrono>
#include <memory>
#include <optional>
#include <random>

namespace kloop {

/// Which wire protocol the server speaks.
enum class LLMApi { OpenAI, Anthropic };

/// How the answer's JSON shape is requested (see the file comment).
enum class StructuredOutput { JsonSchema, JsonObject, None };

/// "openai" / "anthropic".
llvm::StringRef llmApiName(LLMApi A);
/// Parses "openai" or "anthropic" (case-insensitive); error naming \p S otherwise.
llvm::Expected<LLMApi> parseLLMApi(llvm::StringRef S);
/// Parses "json_schema", "json_object" or "none"; error naming \p S otherwise.
llvm::Expected<StructuredOutput> parseStructuredOutput(llvm::StringRef S);

/// Everything an LLMProposer needs besides the prompt template and schema.
struct LLMConfig {
  LLMApi Api = LLMApi::OpenAI;
  /// http(s)://host[:port][/path]; "/v1" at the end is optional.
  std::string BaseURL;
  /// Model ID sent in the request.
  std::string Model;
  /// Secret; empty = send no auth header (local servers).
  std::string APIKey;
  StructuredOutput Structured = StructuredOutput::JsonSchema;
  /// OpenAI json_schema "strict" flag (needs a schema OpenAI's strict mode accepts).
  bool StrictSchema = false;
  /// Sampling temperature; not sent when unset.
  std::optional<double> Temperature;
  /// Sampling seed (OpenAI-compatible only; Anthropic has none); not sent when unset.
  std::optional<int64_t> Seed;
  /// Upper bound on completion tokens.
  int64_t MaxTokens = 8192;
  /// Name of that field in OpenAI-compatible requests: "max_tokens" (vLLM,
  /// llama.cpp, Ollama, older OpenAI models) or "max_completion_tokens" (what
  /// OpenAI's reasoning models require). Anthropic always uses "max_tokens".
  std::string OpenAIMaxTokensField = "max_tokens";
  /// Limit on establishing the TCP/TLS connection.
  std::chrono::milliseconds ConnectTimeout{10000};
  /// Limit on one whole request, connection to last byte.
  std::chrono::milliseconds TotalTimeout{300000};
  /// Requests in all, first included (>= 1).
  unsigned MaxAttempts = 4;
  /// First back-off wait (before jitter).
  std::chrono::milliseconds BackoffInitial{1000};
  /// Cap on any wait, Retry-After included (see the file comment).
  std::chrono::milliseconds BackoffMax{60000};
  /// `anthropic-version` header value.
  std::string AnthropicVersion = "2023-06-01";
  /// Prices in USD per million tokens, to compute the cost when the API does
  /// not report one; cost stays unknown when unset.
  std::optional<double> USDPerMTokIn, USDPerMTokOut;
};

/// Fills the fields of \p C that are still empty from the environment:
/// BaseURL from KLOOP_LLM_BASE_URL, Model from KLOOP_LLM_MODEL, APIKey from
/// KLOOP_LLM_API_KEY; KLOOP_LLM_API (openai|anthropic) sets Api when
/// \p ApiFromConfig is false. Values already in \p C win. Error if
/// KLOOP_LLM_API holds another value.
llvm::Expected<LLMConfig> applyLLMEnvironment(LLMConfig C, bool ApiFromConfig = false);

/// Parses an HTTP Retry-After value: delta-seconds ("120") or an HTTP-date
/// ("Wed, 21 Oct 2015 07:28:00 GMT", via curl_getdate) relative to \p NowUnix
/// (seconds since the epoch). A date in the past is 0. std::nullopt if unparseable.
std::optional<std::chrono::milliseconds> parseRetryAfter(llvm::StringRef Value,
                                                         int64_t NowUnix);

/// \p Text with the secret \p Secret replaced by "[redacted]" wherever it, or any
/// prefix of it of 8 or more characters (the whole secret when it is shorter), is
/// written: compared case-insensitively, after decoding JSON \uXXXX escapes (also
/// when escaped again, "\\u002d"), \" and \/, and URL %XX escapes. The longest
/// match at each place is replaced, with the escapes it was written with. An empty
/// \p Secret changes nothing. Used on every text of LLMProposer that can carry a
/// server's words (issue 12, item 2).
std::string redactSecret(llvm::StringRef Text, llvm::StringRef Secret);

/// What a successful (2xx) reply body of a chat API holds.
struct LLMReplyBody {
  /// The proposal text: OpenAI choices[0].message.content; Anthropic the first
  /// tool_use block's input (serialized), else the text blocks joined.
  std::string Text;
  /// "finish_reason=length" / "stop_reason=max_tokens" when the model was cut
  /// off at the token limit, else "".
  std::string CutOff;
  /// When a tool_use input repeats a key: the refusal naming it, else "".
  std::string DuplicateInTool;
  /// The model ID the body reports (redacted), "" when none.
  std::string Model;
  /// Token counts and cost (USD) as the body's usage object reports them.
  std::optional<int64_t> TokensIn, TokensOut;
  std::optional<double> CostUSD;
};

/// Reads the body \p Raw of an HTTP \p Status reply of API \p Api. Errors (their
/// messages quote at most 200 bytes of the body, redacted of \p Secret by
/// redactSecret): the body is not a JSON object; OpenAI: no choices[0].message,
/// a refusal, no string content; Anthropic: no content[] array. Never throws,
/// whatever the bytes (fuzzed: tools/kloop-fuzz/FuzzLLMReply.cpp).
llvm::Expected<LLMReplyBody> parseLLMReplyBody(LLMApi Api, long Status, llvm::StringRef Raw,
                                               llvm::StringRef Secret);

/// The URL a request goes to: see the file comment for the /v1 rule.
std::string llmEndpointURL(const LLMConfig &C);

/// The proposer. Context keys are the template's placeholders (render()
/// rejects missing and unknown ones), except `answer_schema`, which the
/// proposer fills with the schema when the template uses it.
class LLMProposer : public Proposer {
public:
  /// Checks \p C (base URL http:// or https://, model set, MaxAttempts >= 1,
  /// positive timeouts) and that \p Schema is an object; errors name the field.
  static llvm::Expected<std::unique_ptr<LLMProposer>>
  create(LLMConfig C, PromptTemplate Template, nlohmann::json Schema);

  llvm::Expected<ProposalReply> propose(const nlohmann::json &Context) override;
  /// With \p N > 1, one request for up to \p N proposals (docs/proposers.md,
  /// "Batches"): the answer schema is batchSchema(N) (in the request's
  /// structured output and in the template's `answer_schema`), the user
  /// message ends with batchInstruction(N), and the provenance's prompt
  /// version is promptContentVersion of the template's text followed by that
  /// instruction. Errors: those of propose(), and a reply that is not a batch
  /// of at most \p N proposals (splitBatch).
  llvm::Expected<std::vector<ProposalReply>> proposeBatch(const nlohmann::json &Context, unsigned N) override;
  /// "llm-openai" or "llm-anthropic".
  llvm::StringRef kind() const override;

  /// The HTTP request body propose() (\p N = 1) or proposeBatch(..., \p N)
  /// would send for \p Prompt (for tests and `--dry-run`); holds no key (keys
  /// travel in headers).
  nlohmann::json requestBody(const RenderedPrompt &Prompt, unsigned N = 1) const;
  /// The answer schema of a request for up to \p N > 1 proposals: an object
  /// whose only member "proposals" is an array of 1 to \p N answers of the
  /// proposer's schema.
  nlohmann::json batchSchema(unsigned N) const;
  /// The paragraph appended to the user message of a request for up to \p N
  /// proposals.
  static std::string batchInstruction(unsigned N);

private:
  LLMProposer(LLMConfig C, PromptTemplate T, nlohmann::json S);
  /// "LLM at <endpoint URL>", the key redacted: who replied, in errors.
  std::string source() const;
  /// One request for \p N proposals (propose: 1); its reply parsed, not split.
  llvm::Expected<ProposalReply> request(const nlohmann::json &Context, unsigned N);
  LLMConfig Config;
  PromptTemplate Template;
  nlohmann::json Schema;
  std::mt19937_64 Rng;
};

} // namespace kloop

#endif
