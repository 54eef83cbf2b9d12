//===- FuzzConfigCorpusTest.cpp - Replays the .kloop.yaml fuzzer's corpus -===//
//
// tools/kloop-fuzz/FuzzConfig.cpp is compiled into this binary with the project's
// compiler (no libFuzzer), so its properties (see that file) are checked on every
// input of tools/kloop-fuzz/corpus-config/ on every CI run; a violated property
// aborts the test binary. The file names also state what parseConfig must answer:
// valid-* parse, invalid-* are refused.
//
//===----------------------------------------------------------------------===//
#include "../FuzzCorpus.h"
#include "kloop/Measure/Config.h"

TEST(FuzzConfigCorpus, EverySeedPassesTheFuzzTargetAndParsesAsItsNameSays) {
  unsigned Valid = 0, Invalid = 0;
  kloop::test::replayCorpus("corpus-config", [&](const std::string &Name, llvm::StringRef Text) {
    llvm::Expected<kloop::measure::WorkloadConfig> C = kloop::measure::parseConfig(Text, Name);
    bool ShouldParse = llvm::StringRef(Name).starts_with("valid-");
    ++(ShouldParse ? Valid : Invalid);
    EXPECT_EQ(bool(C), ShouldParse) << Name << ": " << (C ? "accepted" : llvm::toString(C.takeError()));
    if (!C)
      llvm::consumeError(C.takeError());
  });
  EXPECT_GE(Valid, 4u);
  EXPECT_GE(Invalid, 10u);
}
