//===- kloop/Propose/Proposer.h - Where proposals come from ---------------===//
///
/// \file
/// A Proposer turns a prompt context (JSON: annotated kernel source, ptxas
/// report, measured profile, history of earlier attempts) into one proposal:
/// a JSON object `{"edits": [...], "rationale": "...", ...}` in the edit
/// language. Proposers only obtain and parse the reply; validating it against
/// the edit schema is the caller's job (kloopEdit), so that a reply that
/// violates the schema can be journaled and its refusal reason fed back.
///
/// Implementations: LLMProposer (LLMProposer.h, HTTP), CommandProposer
/// (CommandProposer.h, any executable). See docs/proposers.md.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_PROPOSE_PROPOSER_H
#define KLOOP_PROPOSE_PROPOSER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kloop {

/// Where a proposal came from and what it cost. Never holds an API key.
struct Provenance {
  /// "llm-openai", "llm-anthropic", "command" or "builtin".
  std::string ProposerKind;
  /// Model ID as the server reported it (else as configured); for a command,
  /// the model it reported in its reply's "provenance" object, else "".
  std::string Model;
  /// Content hash of the prompt template (promptContentVersion, 12 hex
  /// digits); "" when no template was used (command proposer).
  std::string PromptVersion;
  /// Sampling seed sent to the model, if one was sent.
  std::optional<int64_t> Seed;
  /// Sampling temperature sent to the model, if one was sent.
  std::optional<double> Temperature;
  /// Prompt tokens as reported by the usage fields of the reply that was
  /// used (failed attempts report none); none if the API did not report them.
  std::optional<int64_t> TokensIn;
  /// Completion tokens, as TokensIn.
  std::optional<int64_t> TokensOut;
  /// Cost in USD: the API's own figure when it reports one (usage.cost),
  /// else tokens times the configured prices; none when neither is known.
  std::optional<double> CostUSD;
  /// Wall time of propose(), retries and back-off waits included, in ms.
  int64_t WallMs = 0;
  /// HTTP requests sent (LLM) or 1 (command).
  int64_t Attempts = 0;
};

/// Provenance as JSON with snake_case keys (proposer, model, prompt_version,
/// seed, temperature, tokens_in, tokens_out, cost_usd, wall_ms, attempts);
/// absent optionals are JSON null.
nlohmann::json toJSON(const Provenance &P);

/// A proposer's answer, parsed but not validated.
struct ProposalReply {
  /// The reply text exactly as received (for the LLM: the message content, or
  /// the tool input serialized; for a command: its stdout).
  std::string RawText;
  /// RawText parsed: always a JSON object. Not checked against the edit schema.
  nlohmann::json Proposal;
  /// Provenance of this reply.
  Provenance Prov;
};

/// The error returned when a proposer got a reply but it is not a JSON
/// object. It carries the raw text and the provenance (tokens were spent), so
/// the caller can journal the reply; its message quotes the first 200
/// characters. Use llvm::handleErrors to get at it.
class ReplyNotJSONError : public llvm::ErrorInfo<ReplyNotJSONError> {
public:
  static char ID;
  ReplyNotJSONError(std::string Source, std::string Reason, std::string RawText,
                    Provenance Prov)
      : Source(std::move(Source)), Reason(std::move(Reason)),
        RawText(std::move(RawText)), Prov(std::move(Prov)) {}
  /// "<Source>: reply is not a JSON object (<Reason>): \"<first 200 chars>\"", or with Batch
  /// "reply is not a proposal batch".
  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }
  /// Who replied, e.g. "LLM at http://host/v1/chat/completions" or "command './agent.sh'".
  std::string Source;
  /// What is wrong: the JSON parser's message, or "a JSON array, not an object".
  std::string Reason;
  /// The full reply text.
  std::string RawText;
  /// Provenance of the failed reply.
  Provenance Prov;
  /// The reply is a JSON object, but not the batch of proposals that was asked for
  /// (splitBatch); Reason says why.
  bool Batch = false;
};

/// The error returned when a proposer ran but gave no reply to parse: a command
/// that exited non-zero, was killed by a signal, timed out or wrote more than its
/// output limit (issue 12, item 7). The optimize loop journals it as a failed
/// proposal with this reason and goes on with the next round, as for a reply
/// that is not JSON; every other proposer error ends the run.
class ProposerFailedError : public llvm::ErrorInfo<ProposerFailedError> {
public:
  static char ID;
  ProposerFailedError(std::string Source, std::string Reason, std::string Output, Provenance Prov)
      : Source(std::move(Source)), Reason(std::move(Reason)), Output(std::move(Output)),
        Prov(std::move(Prov)) {}
  /// "<Source>: <Reason>".
  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }
  /// Who failed, e.g. "command './agent.sh'".
  std::string Source;
  /// Why, e.g. "exited with status 3; stderr: \"...\"" or "timed out after 600000 ms and was killed".
  std::string Reason;
  /// What it wrote to stdout before it failed (journaled as the raw reply).
  std::string Output;
  /// Provenance of the attempt (kind, wall time).
  Provenance Prov;
};

/// Parses a proposer's reply text into a JSON object. Accepts the text as is
/// (surrounding whitespace ignored) or wrapped in one Markdown code fence
/// (```json ... ``` or ``` ... ```) spanning the whole text; nothing more
/// lenient (no prose around the JSON, no trailing commas, no comments, no key
/// repeated in an object). Reads with kloop::parseStrictJson (kloop/Edit/Proposal.h),
/// as kloop apply does. Returns ReplyNotJSONError (with \p Source and \p Prov)
/// otherwise; its Reason is the parser's message, "a JSON array, not an object",
/// or "duplicated key 'edits' in the top-level object" (or "in edit #N", "in the
/// object at '/provenance'"), which the optimize loop journals as the refusal.
llvm::Expected<nlohmann::json> parseReplyText(llvm::StringRef Text,
                                                 llvm::StringRef Source,
                                                 const Provenance &Prov);

/// Fills \p Prov from the "provenance" object a proposer reported in
/// \p Reply, if any (docs/proposers.md, "Command proposer"): "model",
/// "seed", "temperature", and the counts "tokens_in", "tokens_out" and
/// "cost_usd" when they are numbers of the right kind and not negative;
/// anything else is left as it was.
void readSelfReported(const nlohmann::json &Reply, Provenance &Prov);

/// The proposals in \p Reply, a parsed reply to a request for at most \p N
/// (docs/proposers.md, "Batches"): the objects of its "proposals" array, or
/// \p Reply itself when it has no "proposals" key (one proposal). A
/// ReplyNotJSONError with Batch set (naming \p Source, with \p RawText and
/// \p Prov) when "proposals" is not an array of 1 to \p N JSON objects, or
/// when the reply also has "edits" of its own.
llvm::Expected<std::vector<nlohmann::json>> splitBatch(const nlohmann::json &Reply, unsigned N,
                                                       llvm::StringRef Source, llvm::StringRef RawText,
                                                       const Provenance &Prov);

/// \p Proposals (splitBatch's) as the replies of one request answered by \p RawText with
/// provenance \p Prov: the first reply carries the request's raw text, tokens, cost, wall time and
/// attempts; the others the model, prompt version, seed and temperature, their own proposal as raw
/// text, and no cost (tokens 0 where the request's were known), so that a run's sums count the
/// request once.
std::vector<ProposalReply> batchReplies(std::vector<nlohmann::json> Proposals, std::string RawText,
                                        const Provenance &Prov);

/// The interface every proposer implements.
class Proposer {
public:
  virtual ~Proposer();
  /// Asks for one proposal given \p Context (a JSON object; each proposer
  /// documents the keys it reads). Errors name the proposer and the reason:
  /// transport failures, HTTP errors, timeouts, a non-zero exit, a reply that
  /// is not JSON (ReplyNotJSONError).
  virtual llvm::Expected<ProposalReply> propose(const nlohmann::json &Context) = 0;
  /// Asks for up to \p N (at least 1) proposals in one request given
  /// \p Context, to be tried in order (`kloop optimize --batch`;
  /// docs/proposers.md, "Batches"): one reply or more, at most \p N, as
  /// batchReplies gives them. Errors: those of propose(); a reply that is not
  /// a batch of at most \p N proposals is a ReplyNotJSONError with Batch set.
  /// The default asks propose() once: a proposer without batches.
  virtual llvm::Expected<std::vector<ProposalReply>> proposeBatch(const nlohmann::json &Context, unsigned N);
  /// \p R as a batch of one (or its error).
  static llvm::Expected<std::vector<ProposalReply>> one(llvm::Expected<ProposalReply> R);
  /// Provenance::ProposerKind of this proposer's replies.
  virtual llvm::StringRef kind() const = 0;
  /// True when propose() is a pure function of its context: the same context
  /// always gives the same proposal, and a call costs nothing (no tokens, no
  /// side effects). kloop optimize may then ask it about histories that have
  /// not happened yet, to prepare candidates ahead (docs/optimize.md,
  /// "Preparing ahead"). Default false.
  virtual bool deterministic() const { return false; }
};

} // namespace kloop

#endif
