//===- FuzzCorpus.h - Walks a fuzz target's seed corpus in a unit test ----===//
//
// The unit tests that replay the libFuzzer seed corpora of tools/kloop-fuzz/
// (EditTests, MeasureTests, ProposeTests) share this walk: every file of
// tools/kloop-fuzz/<Folder>, with its name and bytes. The source root is
// KLOOP_SRC_ROOT (set by lit), else KLOOP_TEST_SRC_ROOT (the build's).
//
//===----------------------------------------------------------------------===//
#ifndef KLOOP_UNITTESTS_FUZZCORPUS_H
#define KLOOP_UNITTESTS_FUZZCORPUS_H

#include "gtest/gtest.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size);

namespace kloop {
namespace test {

/// Runs every seed of tools/kloop-fuzz/\p Folder through the fuzz target linked into
/// this test (LLVMFuzzerTestOneInput: a violated property aborts), then calls \p Check
/// with the seed's file name and bytes. Fails the test if the folder cannot be read.
inline void replayCorpus(const std::string &Folder,
                         llvm::function_ref<void(const std::string &, llvm::StringRef)> Check) {
  const char *Root = std::getenv("KLOOP_SRC_ROOT");
  std::string Dir = std::string(Root ? Root : KLOOP_TEST_SRC_ROOT) + "/tools/kloop-fuzz/" + Folder;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC; It.increment(EC)) {
    std::string Name = llvm::sys::path::filename(It->path()).str();
    auto Buf = llvm::MemoryBuffer::getFile(It->path(), /*IsText=*/false, /*RequiresNullTerminator=*/false);
    ASSERT_TRUE(bool(Buf)) << It->path();
    llvm::StringRef Text = (*Buf)->getBuffer();
    EXPECT_EQ(LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(Text.data()), Text.size()), 0) << Name;
    Check(Name, Text);
  }
  ASSERT_FALSE(EC) << Dir << ": " << EC.message();
}

} // namespace test
} // namespace kloop

#endif
