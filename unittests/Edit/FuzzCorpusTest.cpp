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
#include "../FuzzCorpus.h"
#include "kloop/Edit/Proposal.h"

TEST(FuzzCorpus, EverySeedPassesTheFuzzTargetAndParsesAsItsNameSays) {
  unsigned Valid = 0, Invalid = 0;
  kloop::test::replayCorpus("corpus", [&](const std::string &Name, llvm::StringRef Text) {
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
  });
  // The corpus holds every kind in valid seeds and several kinds of refusal.
  EXPECT_GE(Valid, 5u);
  EXPECT_GE(Invalid, 10u);
}
