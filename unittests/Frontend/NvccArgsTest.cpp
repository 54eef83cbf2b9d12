//===- NvccArgsTest.cpp - nvcc to clang flag translation --------------------===//
#include "kloop/Frontend/NvccArgs.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <algorithm>

using namespace kloop;

namespace {

std::vector<std::string> translate(std::vector<std::string> Args, llvm::StringRef Dir = "") {
  auto T = translateNvccArgs(Args, Dir);
  EXPECT_TRUE(static_cast<bool>(T)) << (T ? "" : llvm::toString(T.takeError()));
  return T ? T->Args : std::vector<std::string>{};
}

bool has(const std::vector<std::string> &V, llvm::StringRef S) {
  return std::find(V.begin(), V.end(), S.str()) != V.end();
}

TEST(NvccArgs, RecognisesNvcc) {
  EXPECT_TRUE(isNvccCompiler("/usr/local/cuda/bin/nvcc"));
  EXPECT_TRUE(isNvccCompiler("nvcc"));
  EXPECT_FALSE(isNvccCompiler("/usr/bin/clang++"));
  EXPECT_FALSE(isNvccCompiler("nvcc-wrapper.sh"));
}

TEST(NvccArgs, ArchitecturesFromArchAndGencode) {
  auto T = translateNvccArgs({"-arch=sm_80", "-gencode", "arch=compute_90,code=[sm_90,compute_90]",
                              "--gpu-architecture", "compute_75", "-c", "a.cu"},
                             "");
  ASSERT_TRUE(static_cast<bool>(T));
  EXPECT_EQ(T->GpuArchs, (std::vector<std::string>{"sm_80", "sm_90", "sm_75"}));
  EXPECT_TRUE(has(T->Args, "a.cu"));
  EXPECT_FALSE(has(T->Args, "-arch=sm_80"));
  auto N = translateNvccArgs({"-arch=native", "a.cu"}, "");
  ASSERT_TRUE(static_cast<bool>(N));
  EXPECT_TRUE(N->GpuArchs.empty());
}

TEST(NvccArgs, XcompilerListsAreSplit) {
  auto A = translate({"-Xcompiler", "-Wall,-fPIC", "--compiler-options=-DX=1", "a.cu"});
  EXPECT_TRUE(has(A, "-Wall"));
  EXPECT_TRUE(has(A, "-fPIC"));
  EXPECT_TRUE(has(A, "-DX=1"));
}

TEST(NvccArgs, LanguageAndLambdaAndRdc) {
  auto A = translate({"-x", "cu", "--expt-relaxed-constexpr", "--expt-extended-lambda", "-rdc=true",
                      "-lineinfo", "-ccbin", "g++-12", "-Xptxas", "-v", "--std", "c++17", "a.cpp"});
  EXPECT_TRUE(has(A, "cuda"));
  EXPECT_FALSE(has(A, "cu"));
  EXPECT_TRUE(has(A, "-fgpu-rdc"));
  EXPECT_TRUE(has(A, "-std=c++17"));
  for (const char *Gone : {"--expt-relaxed-constexpr", "--expt-extended-lambda", "-lineinfo", "-ccbin",
                           "g++-12", "-Xptxas", "-v"})
    EXPECT_FALSE(has(A, Gone)) << Gone;
}

TEST(NvccArgs, NvccWerrorKindIsConsumed) {
  auto A = translate({"-Werror", "all-warnings", "a.cu"});
  EXPECT_FALSE(has(A, "-Werror"));
  EXPECT_FALSE(has(A, "all-warnings"));
  EXPECT_TRUE(has(A, "a.cu"));
}

TEST(NvccArgs, ResponseFilesAreExpandedRelativeToTheDirectory) {
  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("kloop-rsp", Dir));
  llvm::SmallString<128> Rsp(Dir);
  llvm::sys::path::append(Rsp, "flags.rsp");
  {
    std::error_code EC;
    llvm::raw_fd_ostream OS(Rsp, EC);
    ASSERT_FALSE(EC);
    OS << "-DFROM_RSP=1 -arch=sm_90\n";
  }
  auto T = translateNvccArgs({"@flags.rsp", "--options-file", std::string(Rsp), "a.cu"}, Dir);
  ASSERT_TRUE(static_cast<bool>(T));
  EXPECT_EQ(std::count(T->Args.begin(), T->Args.end(), "-DFROM_RSP=1"), 2);
  EXPECT_EQ(T->GpuArchs.size(), 2u);
  auto Missing = translateNvccArgs({"@nope.rsp"}, Dir);
  ASSERT_FALSE(static_cast<bool>(Missing));
  std::string Msg = llvm::toString(Missing.takeError());
  EXPECT_NE(Msg.find("nope.rsp"), std::string::npos) << Msg;
}

TEST(NvccArgs, MissingValueIsAnError) {
  auto T = translateNvccArgs({"a.cu", "-arch"}, "");
  ASSERT_FALSE(static_cast<bool>(T));
  EXPECT_NE(llvm::toString(T.takeError()).find("'-arch' needs a value"), std::string::npos);
}

TEST(NvccArgs, UnknownClangFlagsAreFound) {
  EXPECT_TRUE(findUnknownClangFlags({"-O2", "-std=c++17", "-DX", "-Ifoo", "a.cu"}).empty());
  auto U = findUnknownClangFlags({"-O2", "--definitely-not-a-flag", "a.cu"});
  ASSERT_EQ(U.size(), 1u);
  EXPECT_EQ(U[0], "--definitely-not-a-flag");
}

} // namespace
