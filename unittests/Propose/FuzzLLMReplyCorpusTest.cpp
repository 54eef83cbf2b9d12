//===- FuzzLLMReplyCorpusTest.cpp - Replays the LLM reply fuzzer's corpus -===//
//
// tools/kloop-fuzz/FuzzLLMReply.cpp is compiled into this binary with the project's
// compiler (no libFuzzer), so its properties (see that file) are checked on every
// input of tools/kloop-fuzz/corpus-llm-reply/ on every CI run; a violated property
// aborts the test binary. The first byte of a seed picks the API (odd: Anthropic);
// the file names state what parseLLMReplyBody must answer: ok-* are read, bad-* are
// errors.
//
//===----------------------------------------------------------------------===//
#include "../FuzzCorpus.h"
#include "kloop/Propose/LLMProposer.h"

TEST(FuzzLLMReplyCorpus, EverySeedPassesTheFuzzTargetAndParsesAsItsNameSays) {
  unsigned Ok = 0, Bad = 0;
  kloop::test::replayCorpus("corpus-llm-reply", [&](const std::string &Name, llvm::StringRef Text) {
    ASSERT_FALSE(Text.empty()) << Name;
    kloop::LLMApi Api = Text[0] & 1 ? kloop::LLMApi::Anthropic : kloop::LLMApi::OpenAI;
    llvm::Expected<kloop::LLMReplyBody> R = kloop::parseLLMReplyBody(Api, 200, Text.drop_front(), "sk-x-12345678");
    bool ShouldRead = llvm::StringRef(Name).starts_with("ok-");
    ++(ShouldRead ? Ok : Bad);
    EXPECT_EQ(bool(R), ShouldRead) << Name << ": " << (R ? "read" : llvm::toString(R.takeError()));
    if (!R)
      llvm::consumeError(R.takeError());
  });
  EXPECT_GE(Ok, 6u);
  EXPECT_GE(Bad, 5u);
}
