//===- Proposer.cpp - Proposal replies: provenance and parsing ------------===//
#include "kloop/Propose/Proposer.h"
#include "kloop/Edit/Proposal.h"

#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using json = nlohmann::json;

namespace kloop {

char ReplyNotJSONError::ID = 0;
char ProposerFailedError::ID = 0;

void ProposerFailedError::log(raw_ostream &OS) const { OS << Source << ": " << Reason; }

Proposer::~Proposer() = default;

Expected<std::vector<ProposalReply>> Proposer::one(Expected<ProposalReply> R) {
  if (!R)
    return R.takeError();
  return std::vector<ProposalReply>{std::move(*R)};
}

Expected<std::vector<ProposalReply>> Proposer::proposeBatch(const json &Context, unsigned) {
  return one(propose(Context));
}

void readSelfReported(const json &Reply, Provenance &Prov) {
  if (!Reply.contains("provenance") || !Reply["provenance"].is_object())
    return;
  const json &P = Reply["provenance"];
  auto Count = [&](const char *Key, std::optional<int64_t> &To) {
    if (P.contains(Key) && P[Key].is_number_integer() && P[Key].get<int64_t>() >= 0)
      To = P[Key].get<int64_t>();
  };
  if (P.contains("model") && P["model"].is_string())
    Prov.Model = P["model"].get<std::string>();
  if (P.contains("seed") && P["seed"].is_number_integer())
    Prov.Seed = P["seed"].get<int64_t>();
  if (P.contains("temperature") && P["temperature"].is_number())
    Prov.Temperature = P["temperature"].get<double>();
  Count("tokens_in", Prov.TokensIn);
  Count("tokens_out", Prov.TokensOut);
  if (P.contains("cost_usd") && P["cost_usd"].is_number() && P["cost_usd"].get<double>() >= 0)
    Prov.CostUSD = P["cost_usd"].get<double>();
}

Expected<std::vector<json>> splitBatch(const json &Reply, unsigned N, StringRef Source, StringRef RawText,
                                       const Provenance &Prov) {
  if (!Reply.contains("proposals"))
    return std::vector<json>{Reply};
  auto Fail = [&](const std::string &Why) {
    auto E = std::make_unique<ReplyNotJSONError>(Source.str(), Why, RawText.str(), Prov);
    E->Batch = true;
    return Error(std::move(E));
  };
  if (Reply.contains("edits"))
    return Fail("a reply with 'proposals' is a batch, and must not also have 'edits' of its own");
  const json &Ps = Reply["proposals"];
  if (!Ps.is_array() || Ps.empty())
    return Fail("'proposals' must be a non-empty array of proposal objects");
  if (Ps.size() > N)
    return Fail("'proposals' holds " + std::to_string(Ps.size()) + " proposals; at most " + std::to_string(N) +
                " were asked for");
  std::vector<json> Out;
  for (size_t I = 0; I < Ps.size(); ++I) {
    if (!Ps[I].is_object())
      return Fail("'proposals' entry " + std::to_string(I) + " is not a JSON object");
    Out.push_back(Ps[I]);
  }
  return Out;
}

std::vector<ProposalReply> batchReplies(std::vector<json> Proposals, std::string RawText, const Provenance &Prov) {
  std::vector<ProposalReply> Out;
  for (json &P : Proposals) {
    ProposalReply R;
    R.Prov = Prov;
    if (Out.empty()) {
      R.RawText = std::move(RawText);
    } else {
      R.RawText = P.dump();
      auto None = [](std::optional<int64_t> &T) { T = T ? std::optional<int64_t>(0) : std::nullopt; };
      None(R.Prov.TokensIn);
      None(R.Prov.TokensOut);
      R.Prov.CostUSD = Prov.CostUSD ? std::optional<double>(0) : std::nullopt;
      R.Prov.WallMs = 0;
      R.Prov.Attempts = 0;
    }
    R.Proposal = std::move(P);
    Out.push_back(std::move(R));
  }
  return Out;
}

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
  OS << Source << (Batch ? ": reply is not a proposal batch (" : ": reply is not a JSON object (") << Reason << "): \"";
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

Expected<json> parseReplyText(StringRef Text, StringRef Source, const Provenance &Prov) {
  StringRef Body = stripFence(Text.trim()).trim();
  // The same reader as kloop apply's (kloop/Edit/Proposal.h): it reports every parser
  // error without throwing (a number too large for a double, "1e999", made the
  // exception-based re-parse here throw out_of_range.406, which was not caught) and
  // the keys that an object repeats, which json::parse would silently resolve to the
  // last occurrence.
  StrictJson S = parseStrictJson(Body);
  std::string Reason;
  if (S.SyntaxError)
    Reason = *S.SyntaxError;
  else if (!S.Duplicates.empty())
    Reason = S.Duplicates.front().message();
  else if (!S.Value.is_object())
    Reason = std::string("a JSON ") + S.Value.type_name() + ", not an object";
  else
    return std::move(S.Value);
  return make_error<ReplyNotJSONError>(Source.str(), Reason, Text.str(), Prov);
}

} // namespace kloop
