//===- NvccFlagTableTest.cpp - every flag of `nvcc --help` is classified ---===//
//
// Runs the installed nvcc (CUDA_HOME, else /usr/local/cuda) with --help and checks that every
// long and short spelling it lists has a row in kloop's flag table with the same value arity,
// so that the table follows CUDA when a new release adds flags. Skipped without nvcc.
//
//===----------------------------------------------------------------------===//
#include "kloop/Frontend/NvccArgs.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "gtest/gtest.h"

#include <set>

using namespace kloop;

namespace {

/// `nvcc --help` of the installed CUDA, or "" when there is no nvcc.
std::string nvccHelp() {
  std::string Root = llvm::sys::Process::GetEnv("CUDA_HOME").value_or("/usr/local/cuda");
  llvm::SmallString<256> Nvcc(Root);
  llvm::sys::path::append(Nvcc, "bin", "nvcc");
  if (!llvm::sys::fs::can_execute(Nvcc))
    return "";
  llvm::SmallString<128> Out;
  if (llvm::sys::fs::createTemporaryFile("nvcc-help", "txt", Out))
    return "";
  std::optional<llvm::StringRef> Redirects[] = {std::nullopt, llvm::StringRef(Out),
                                                std::nullopt};
  int RC = llvm::sys::ExecuteAndWait(Nvcc, {Nvcc, "--help"}, std::nullopt, Redirects);
  auto Buf = llvm::MemoryBuffer::getFile(Out);
  llvm::sys::fs::remove(Out);
  return RC == 0 && Buf ? (*Buf)->getBuffer().str() : "";
}

/// One option line of nvcc --help: "--long <value>  (-short)".
struct HelpFlag {
  std::string Long, Short;
  bool TakesValue = false;
};

std::vector<HelpFlag> parseHelp(llvm::StringRef Help) {
  std::vector<HelpFlag> Flags;
  llvm::SmallVector<llvm::StringRef, 0> Lines;
  Help.split(Lines, '\n');
  for (llvm::StringRef Line : Lines) {
    if (!Line.starts_with("--"))
      continue;
    llvm::SmallVector<llvm::StringRef, 4> Words;
    llvm::SplitString(Line, Words);
    HelpFlag F;
    F.Long = Words[0].str();
    for (llvm::StringRef W : llvm::ArrayRef(Words).drop_front()) {
      if (W.starts_with("(-") || W.starts_with("--"))
        F.Short = W.trim("()").str();
      else if (W.starts_with("<") || W.starts_with("{") || W.starts_with("[") ||
               W.contains(",..."))
        F.TakesValue = true;
    }
    Flags.push_back(F);
  }
  return Flags;
}

TEST(NvccFlagTable, EveryFlagOfNvccHelpIsClassified) {
  std::string Help = nvccHelp();
  if (Help.empty())
    GTEST_SKIP() << "no nvcc at $CUDA_HOME or /usr/local/cuda";
  std::vector<HelpFlag> Flags = parseHelp(Help);
  ASSERT_GT(Flags.size(), 100u) << "nvcc --help changed its layout";
  for (const HelpFlag &F : Flags) {
    const NvccFlagInfo *L = findNvccFlag(F.Long);
    ASSERT_NE(L, nullptr) << F.Long << " is not in lib/Frontend/NvccArgs.cpp's table";
    // --help omits some values (-MF FILE), so only a value it shows is checked.
    if (F.TakesValue)
      EXPECT_TRUE(L->TakesValue) << F.Long;
    EXPECT_FALSE(L->Note.empty()) << F.Long;
    if (!F.Short.empty())
      EXPECT_EQ(findNvccFlag(F.Short), L) << F.Short << " should be the short form of " << F.Long;
  }
}

TEST(NvccFlagTable, SpellingsAreUnique) {
  std::set<std::string> Seen;
  for (const NvccFlagInfo &I : nvccFlagTable()) {
    EXPECT_TRUE(Seen.insert(I.Long.str()).second) << I.Long.str();
    if (!I.Short.empty() && I.Short != I.Long)
      EXPECT_TRUE(Seen.insert(I.Short.str()).second) << I.Short.str();
  }
}

} // namespace
