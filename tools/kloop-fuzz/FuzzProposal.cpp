//===- FuzzProposal.cpp - libFuzzer target for the proposal parser --------===//
///
/// \file
/// LLVMFuzzerTestOneInput feeds arbitrary bytes to kloop::parseProposalText
/// (include/kloop/Edit/Proposal.h), the first thing every proposal (an LLM's
/// reply included) goes through. Besides "no crash, no sanitizer report", it
/// checks three properties and aborts (a crash to libFuzzer) when one fails:
///   1. a refusal is a non-empty message that starts with the source name;
///   2. an accepted proposal has at least one edit, each with a non-empty ID;
///   3. an accepted proposal round-trips: proposalToJson, dumped to text and
///      parsed again, gives a proposal whose JSON form is the same.
///
/// Built two ways: with clang 22 and -fsanitize=fuzzer,address as the
/// kloop-fuzz-proposal target (tools/kloop-fuzz/CMakeLists.txt), and with the
/// project's compiler into EditTests, which replays the seed corpus
/// (unittests/Edit/FuzzCorpusTest.cpp) so this code is exercised on every CI run.
///
//===----------------------------------------------------------------------===//
#include "kloop/Edit/Proposal.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {
[[noreturn]] void violated(const char *What, const std::string &Detail) {
  std::fprintf(stderr, "kloop-fuzz-proposal: property violated: %s: %s\n", What, Detail.c_str());
  std::abort();
}
} // namespace

/// libFuzzer's entry point. \p Data / \p Size: the input bytes (any content,
/// not NUL-terminated). Returns 0 always; a failed property aborts.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  llvm::StringRef Text(reinterpret_cast<const char *>(Data), Size);
  llvm::Expected<kloop::Proposal> P = kloop::parseProposalText(Text, "fuzz");
  if (!P) {
    std::string Msg = llvm::toString(P.takeError());
    if (!llvm::StringRef(Msg).starts_with("fuzz: ") || Msg.size() <= 6)
      violated("a refusal names its source and a reason", Msg);
    return 0;
  }
  if (P->Edits.empty())
    violated("an accepted proposal has edits", Text.str());
  for (const kloop::Edit &E : P->Edits)
    if (E.ID.empty())
      violated("every accepted edit has an ID", E.label());
  nlohmann::json J = kloop::proposalToJson(*P);
  std::string Dumped = J.dump();
  llvm::Expected<kloop::Proposal> Again = kloop::parseProposalText(Dumped, "round-trip");
  if (!Again)
    violated("proposalToJson's output parses again", llvm::toString(Again.takeError()) + " for " + Dumped);
  if (kloop::proposalToJson(*Again) != J)
    violated("the round trip keeps the proposal", Dumped + " vs " + kloop::proposalToJson(*Again).dump());
  return 0;
}
