//===- FuzzConfigCorpusTest.cpp - Replays the .kloop.yaml fuzzer's corpus -===//
//
// tools/kloop-fuzz/FuzzConfig.cpp is compiled into this binary with the project's
// compiler (no libFuzzer), so its properties (see that file) are checked on every
// input of tools/kloop-fuzz/corpus-config/ on every CI run; a violated property
// aborts the test binary. The file names also state what parseConfig must answer:
// valid-* parse, invalid-* are refused.
//
//===----------------------------------------------------------------------===//
#include "kloop/Measure/Config.h"
#include "gtest/gtest.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size);

namespace {
std::string corpusDir() {
  const char *Root = std::getenv("KLOOP_SRC_ROOT");
  return std::string(Root ? Root : KLOOP_TEST_SRC_ROOT) + "/tools/kloop-fuzz/corpus-config";
}
} // namespace

TEST(FuzzConfigCorpus, EverySeedPassesTheFuzzTargetAndParsesAsItsNameSays) {
  std::error_code EC;
  unsigned Valid = 0, Invalid = 0;
  for (llvm::sys::fs::directory_iterator It(corpusDir(), EC), End; It != End && !EC; It.increment(EC)) {
    std::string Name = llvm::sys::path::filename(It->path()).str();
    auto Buf = llvm::MemoryBuffer::getFile(It->path(), /*IsText=*/false, /*RequiresNullTerminator=*/false);
    ASSERT_TRUE(bool(Buf)) << It->path();
    llvm::StringRef Text = (*Buf)->getBuffer();
    EXPECT_EQ(LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(Text.data()), Text.size()), 0) << Name;
    llvm::Expected<kloop::measure::WorkloadConfig> C = kloop::measure::parseConfig(Text, Name);
    if (llvm::StringRef(Name).starts_with("valid-")) {
      ++Valid;
      EXPECT_TRUE(bool(C)) << Name << ": " << (C ? "" : llvm::toString(C.takeError()));
    } else {
      ++Invalid;
      EXPECT_FALSE(bool(C)) << Name << " was accepted";
    }
    if (!C)
      llvm::consumeError(C.takeError());
  }
  ASSERT_FALSE(EC) << corpusDir() << ": " << EC.message();
  EXPECT_GE(Valid, 4u);
  EXPECT_GE(Invalid, 10u);
}
