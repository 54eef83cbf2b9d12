//===- Proposer.cpp - Proposal replies: provenance and parsing ------------===//
#include "kloop/Propose/Proposer.h"

#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using json = nlohmann::json;

namespace kloop {

char ReplyNotJSONError::ID = 0;

Proposer::~Proposer() = default;

template <typename T> static json opt(const std::optional<T> &V) {
  return V ? json(*V) : json(nullptr);
}

json toJSON(const Provenance &P) {
  return {{"proposer", P.ProposerKind},   {"model", P.Model},
          {"prompt_version", P.PromptVersion}, {"seed", opt(P.Seed)},
          {"temperature", opt(P.Temperature)}, {"tokens_in", opt(P.TokensIn)},
          {"tokens_out", opt(P.TokensOut)}, {"cost_usd", opt(P.CostUSD)},
          {"wall_ms", P.WallMs},            {"attempts", P.Attempts}};
}

void ReplyNotJSONError::log(raw_ostream &OS) const {
  OS << Source << ": reply is not a JSON object (" << Reason << "): \"";
  OS.write_escaped(StringRef(RawText).take_front(200));
  OS << "\"";
  if (RawText.size() > 200)
    OS << " (" << RawText.size() << " bytes in all)";
}

/// If \p T (trimmed) is exactly one fenced block, its inside; else \p T.
static StringRef stripFence(StringRef T) {
  if (!T.starts_with("```") || !T.ends_with("```") || T.size() < 6)
    return T;
  StringRef Inner = T.drop_front(3).drop_back(3);
  // The info string: "json" or nothing, then a newline.
  size_t NL = Inner.find('\n');
  if (NL == StringRef::npos)
    return T;
  StringRef Info = Inner.take_front(NL).trim();
  if (!Info.empty() && !Info.equals_insensitive("json"))
    return T;
  Inner = Inner.drop_front(NL + 1);
  if (Inner.contains("```")) // more than one block, or prose between blocks
    return T;
  return Inner;
}

Expected<json> parseProposalText(StringRef Text, StringRef Source, const Provenance &Prov) {
  StringRef Body = stripFence(Text.trim()).trim();
  json J = json::parse(Body.begin(), Body.end(), nullptr, /*allow_exceptions=*/false);
  std::string Reason;
  if (J.is_discarded()) {
    // Re-parse with exceptions only to get the parser's message (position).
    try {
      json Unused = json::parse(Body.begin(), Body.end());
      (void)Unused;
      Reason = "invalid JSON";
    } catch (const json::parse_error &E) {
      Reason = E.what();
    }
  } else if (!J.is_object()) {
    Reason = std::string("a JSON ") + J.type_name() + ", not an object";
  } else {
    return J;
  }
  return make_error<ReplyNotJSONError>(Source.str(), Reason, Text.str(), Prov);
}

} // namespace kloop
