//===- FuzzCorpusTest.cpp - Replays the proposal fuzzer's seed corpus -----===//
//
// tools/kloop-fuzz/FuzzProposal.cpp is compiled into this binary with the
// project's compiler (no libFuzzer), so its properties (see that file) are
// checked on every input of tools/kloop-fuzz/corpus/ on every CI run; a
// violated property aborts the test binary. The file names also state what
// parseProposalText must answer: valid-* parse, invalid-* and regress-* (inputs
// that once crashed the parser) are refused.
//
//===----------------------------------------------------------------------===//
#include "kloop/Edit/Proposal.h"
#include "gtest/gtest.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size);

namespace {
std::string corpusDir() {
  const char *Root = std::getenv("KLOOP_SRC_ROOT");
  return std::string(Root ? Root : KLOOP_TEST_SRC_ROOT) + "/tools/kloop-fuzz/corpus";
}
} // namespace

TEST(FuzzCorpus, EverySeedPassesTheFuzzTargetAndParsesAsItsNameSays) {
  std::error_code EC;
  unsigned Valid = 0, Invalid = 0;
  for (llvm::sys::fs::directory_iterator It(corpusDir(), EC), End; It != End && !EC; It.increment(EC)) {
    std::string Name = llvm::sys::path::filename(It->path()).str();
    auto Buf = llvm::MemoryBuffer::getFile(It->path(), /*IsText=*/false, /*RequiresNullTerminator=*/false);
    ASSERT_TRUE(bool(Buf)) << It->path();
    llvm::StringRef Text = (*Buf)->getBuffer();
    EXPECT_EQ(LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(Text.data()), Text.size()), 0) << Name;
    llvm::Expected<kloop::Proposal> P = kloop::parseProposalText(Text, Name);
    if (llvm::StringRef(Name).starts_with("valid-")) {
      ++Valid;
      EXPECT_TRUE(bool(P)) << Name << ": " << (P ? "" : llvm::toString(P.takeError()));
    } else {
      ++Invalid;
      ASSERT_FALSE(bool(P)) << Name << " was accepted";
      std::string Msg = llvm::toString(P.takeError());
      EXPECT_EQ(Msg.rfind(Name + ": ", 0), 0u) << Msg;
    }
    if (!P)
      llvm::consumeError(P.takeError());
  }
  ASSERT_FALSE(EC) << corpusDir() << ": " << EC.message();
  // The corpus holds every kind in valid seeds and several kinds of refusal.
  EXPECT_GE(Valid, 5u);
  EXPECT_GE(Invalid, 10u);
}
