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
#include "kloop/Propose/LLMProposer.h"
#include "gtest/gtest.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size);

namespace {
std::string corpusDir() {
  const char *Root = std::getenv("KLOOP_SRC_ROOT");
  return std::string(Root ? Root : KLOOP_TEST_SRC_ROOT) + "/tools/kloop-fuzz/corpus-llm-reply";
}
} // namespace

TEST(FuzzLLMReplyCorpus, EverySeedPassesTheFuzzTargetAndParsesAsItsNameSays) {
  std::error_code EC;
  unsigned Ok = 0, Bad = 0;
  for (llvm::sys::fs::directory_iterator It(corpusDir(), EC), End; It != End && !EC; It.increment(EC)) {
    std::string Name = llvm::sys::path::filename(It->path()).str();
    auto Buf = llvm::MemoryBuffer::getFile(It->path(), /*IsText=*/false, /*RequiresNullTerminator=*/false);
    ASSERT_TRUE(bool(Buf)) << It->path();
    llvm::StringRef Text = (*Buf)->getBuffer();
    ASSERT_FALSE(Text.empty()) << Name;
    EXPECT_EQ(LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(Text.data()), Text.size()), 0) << Name;
    kloop::LLMApi Api = Text[0] & 1 ? kloop::LLMApi::Anthropic : kloop::LLMApi::OpenAI;
    llvm::Expected<kloop::LLMReplyBody> R = kloop::parseLLMReplyBody(Api, 200, Text.drop_front(), "sk-x-12345678");
    if (llvm::StringRef(Name).starts_with("ok-")) {
      ++Ok;
      EXPECT_TRUE(bool(R)) << Name << ": " << (R ? "" : llvm::toString(R.takeError()));
    } else {
      ++Bad;
      EXPECT_FALSE(bool(R)) << Name << " was read";
    }
    if (!R)
      llvm::consumeError(R.takeError());
  }
  ASSERT_FALSE(EC) << corpusDir() << ": " << EC.message();
  EXPECT_GE(Ok, 6u);
  EXPECT_GE(Bad, 5u);
}
