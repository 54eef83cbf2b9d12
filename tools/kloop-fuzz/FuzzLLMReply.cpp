//===- FuzzLLMReply.cpp - libFuzzer target for LLM reply parsing ----------===//
///
/// \file
/// LLVMFuzzerTestOneInput feeds arbitrary bytes, as the body of an HTTP 200
/// reply, to kloop::parseLLMReplyBody for both APIs (the first byte picks
/// OpenAI or Anthropic), then the proposal text it finds to
/// kloop::parseReplyText, as LLMProposer::propose does (issue 12, item 11).
/// It also checks kloop::redactSecret on the input. Besides "no crash, no
/// sanitizer report", it aborts (a crash to libFuzzer) when one fails:
///   1. an error message does not hold the secret (any case);
///   2. redactSecret's output holds no 8-character prefix of the secret in any
///      case, and input without such a prefix comes back unchanged;
///   3. a refusal of the proposal text starts with the source name.
///
/// Built two ways, as FuzzProposal.cpp: with clang 22 and -fsanitize=fuzzer,address
/// as kloop-fuzz-llm-reply (tools/kloop-fuzz/CMakeLists.txt), and with the
/// project's compiler into ProposeTests, which replays tools/kloop-fuzz/corpus-llm-reply
/// on every CI run (unittests/Propose/FuzzLLMReplyCorpusTest.cpp).
///
//===----------------------------------------------------------------------===//
#include "kloop/Propose/LLMProposer.h"

#include "llvm/ADT/StringExtras.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {
const char Secret[] = "sk-Fuzz-0123456789abcdef";

[[noreturn]] void violated(const char *What, const std::string &Detail) {
  std::fprintf(stderr, "kloop-fuzz-llm-reply: property violated: %s: %s\n", What, Detail.c_str());
  std::abort();
}

/// Whether \p S holds the first 8 characters of the secret, in any case, as written.
bool holdsPrefix(llvm::StringRef S) { return llvm::StringRef(S).contains_insensitive(llvm::StringRef(Secret, 8)); }
} // namespace

/// libFuzzer's entry point. \p Data / \p Size: the input bytes (any content,
/// not NUL-terminated). Returns 0 always; a failed property aborts.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  if (Size == 0)
    return 0;
  kloop::LLMApi Api = Data[0] & 1 ? kloop::LLMApi::Anthropic : kloop::LLMApi::OpenAI;
  llvm::StringRef Body(reinterpret_cast<const char *>(Data) + 1, Size - 1);

  std::string Redacted = kloop::redactSecret(Body, Secret);
  if (holdsPrefix(Redacted))
    violated("redactSecret leaves no prefix of the secret", Redacted);
  if (!holdsPrefix(Body) && !Body.contains('\\') && !Body.contains('%') && Redacted != Body)
    violated("text without the secret is left as it was", Body.str());

  llvm::Expected<kloop::LLMReplyBody> R = kloop::parseLLMReplyBody(Api, 200, Body, Secret);
  if (!R) {
    std::string Msg = llvm::toString(R.takeError());
    if (Msg.empty() || holdsPrefix(Msg))
      violated("an error says why and does not quote the secret", Msg);
    return 0;
  }
  kloop::Provenance Prov;
  llvm::Expected<nlohmann::json> P =
      kloop::parseReplyText(kloop::redactSecret(R->Text, Secret), "fuzz", Prov);
  if (!P) {
    std::string Msg = llvm::toString(P.takeError());
    if (!llvm::StringRef(Msg).starts_with("fuzz: "))
      violated("a refusal names its source", Msg);
    return 0;
  }
  if (!P->is_object())
    violated("an accepted proposal text is a JSON object", P->dump());
  return 0;
}
