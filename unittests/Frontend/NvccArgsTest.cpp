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
  // -arch=native is the machine's GPUs, or nvcc's default sm_75 where none answers (nativeGpuArchs;
  // test/Apply/multi-arch.test NATIVE runs it with stand-ins for nvidia-smi).
  auto N = translateNvccArgs({"-arch=native", "a.cu"}, "");
  ASSERT_TRUE(static_cast<bool>(N));
  EXPECT_EQ(N->GpuArchs, nativeGpuArchs());
  EXPECT_FALSE(N->GpuArchs.empty());
}

TEST(NvccArgs, GencodeIsItsVirtualArchitecture) {
  // __CUDA_ARCH__ is 750 for arch=compute_75 whatever code= lists (nvcc 13.0 --dryrun).
  auto T = translateNvccArgs({"-gencode", "arch=compute_75,code=[sm_75,sm_90]", "-gencode=arch=compute_70,code=sm_75",
                              "--generate-code", "code=sm_86", "a.cu"},
                             "");
  ASSERT_TRUE(static_cast<bool>(T));
  EXPECT_EQ(T->GpuArchs, (std::vector<std::string>{"sm_75", "sm_70", "sm_86"}));
}

TEST(NvccArgs, SpecificArchitecturesAlsoCompileThePlainOne) {
  // -arch=sm_90a and -arch=sm_100f run two device passes, compute_90a and compute_90 (nvcc 13.0 --dryrun);
  // a -gencode names its one virtual architecture; compute_100f alone is one pass.
  auto T = translateNvccArgs({"-arch=sm_90a", "--gpu-architecture=sm_100f", "-gencode", "arch=compute_103f,code=sm_103f",
                              "-arch", "compute_120f", "a.cu"},
                             "");
  ASSERT_TRUE(static_cast<bool>(T));
  EXPECT_EQ(T->GpuArchs,
            (std::vector<std::string>{"sm_90a", "sm_90", "sm_100f", "sm_100", "sm_103f", "sm_120f"}));
}

TEST(NvccArgs, AllAndAllMajorAreNvccsLists) {
  auto A = translateNvccArgs({"-arch=all", "a.cu"}, "");
  ASSERT_TRUE(static_cast<bool>(A));
  ASSERT_EQ(A->GpuArchs.size(), 12u);
  EXPECT_EQ(A->GpuArchs.front(), "sm_75");
  EXPECT_EQ(A->GpuArchs.back(), "sm_121");
  auto M = translateNvccArgs({"-arch", "all-major", "a.cu"}, "");
  ASSERT_TRUE(static_cast<bool>(M));
  EXPECT_EQ(M->GpuArchs, (std::vector<std::string>{"sm_75", "sm_80", "sm_90", "sm_100", "sm_110", "sm_120"}));
}

TEST(NvccArgs, XcompilerListsAreSplitAndFiltered) {
  auto T = translateNvccArgs({"-Xcompiler", "-Wall,-fPIC", "--compiler-options=-DX=1",
                              "-Xcompiler=-fopenmp", "-Xcompiler", "-isystem,/opt/inc", "a.cu"},
                             "");
  ASSERT_TRUE(static_cast<bool>(T));
  EXPECT_FALSE(has(T->Args, "-Wall")) << "warnings do not matter for parsing";
  EXPECT_TRUE(has(T->Dropped, "-Wall"));
  EXPECT_TRUE(has(T->Args, "-fPIC"));
  EXPECT_TRUE(has(T->Args, "-DX=1"));
  EXPECT_FALSE(has(T->Args, "-fopenmp")) << "clang would need omp.h";
  EXPECT_TRUE(has(T->Dropped, "-fopenmp"));
  EXPECT_TRUE(T->HostOpenMP) << "the caller adds the host compiler's omp.h and _OPENMP";
  auto Isys = std::find(T->Args.begin(), T->Args.end(), "-isystem");
  ASSERT_NE(Isys, T->Args.end());
  EXPECT_EQ(*(Isys + 1), "/opt/inc");
}

// CMake writes `-Xcompiler "-DA -DB"`; nvcc hands the host compiler one command line, which splits the
// value at blanks (ggml's database). kloop took "-DHOST_A -DHOST_B" for one flag, and HOST_B stayed undefined.
TEST(NvccArgs, XcompilerValuesAreSplitAtBlanks) {
  auto T = translateNvccArgs({"-Xcompiler", "-DHOST_A -DHOST_B", "-Xcompiler", "-fsanitize=address -fno-rtti,-DQ=\"a b\"",
                              "a.cu"},
                             "");
  ASSERT_TRUE(static_cast<bool>(T));
  EXPECT_TRUE(has(T->Args, "-DHOST_A"));
  EXPECT_TRUE(has(T->Args, "-DHOST_B"));
  EXPECT_TRUE(has(T->Args, "-fno-rtti"));
  EXPECT_TRUE(has(T->Args, "-fsanitize=address"));
  EXPECT_TRUE(has(T->Args, "-DQ=a b")) << "quotes group words, as the shell's";
  // A comma inside quotes or escaped stays (nvcc 13.0 passes -DX=a,b and -DY=1,2 to the host compiler).
  auto C = translateNvccArgs({"-Xcompiler", "'-DX=\"a,b\"'", "-Xcompiler", "-DY=1\\,2,-DZ", "a.cu"}, "");
  ASSERT_TRUE(static_cast<bool>(C));
  EXPECT_TRUE(has(C->Args, "-DX=\"a,b\"")) << "a comma in quotes";
  EXPECT_TRUE(has(C->Args, "-DY=1,2")) << "an escaped comma";
  EXPECT_TRUE(has(C->Args, "-DZ"));
}

TEST(NvccArgs, NvccSpellingsOfOneFlag) {
  for (std::vector<std::string> Spelling :
       {std::vector<std::string>{"-isystem=/d"}, {"-isystem", "/d"}, {"--system-include=/d"},
        {"--system-include", "/d"}})
    EXPECT_EQ(translate(Spelling), (std::vector<std::string>{"-isystem", "/d"})) << Spelling[0];
  EXPECT_EQ(translate({"-DA=1,B=2", "-O3", "-Iinc"}),
            (std::vector<std::string>{"-DA=1", "-DB=2", "-O3", "-Iinc"}));
  EXPECT_EQ(translate({"--define-macro", "A", "--optimize=2", "--std=c++17"}),
            (std::vector<std::string>{"-DA", "-O2", "-std=c++17"}));
}

TEST(NvccArgs, DroppedFlagsTakeTheirValues) {
  auto T = translateNvccArgs({"--threads=0", "-t=0", "-t0", "-t", "4", "-compress-mode=size",
                              "-forward-unknown-to-host-compiler", "-MD", "-MT", "x.o", "-MF",
                              "x.d", "-o", "x.o", "--keep-dir", "/tmp", "a.cu"},
                             "");
  ASSERT_TRUE(static_cast<bool>(T));
  EXPECT_EQ(T->Args, (std::vector<std::string>{"a.cu"}));
  EXPECT_TRUE(T->Unknown.empty());
  EXPECT_TRUE(has(T->Dropped, "-compress-mode=size"));
}

TEST(NvccArgs, FastMathAndOtherTranslations) {
  EXPECT_EQ(translate({"--use_fast_math", "-noeh", "-w", "--default-stream", "per-thread"}),
            (std::vector<std::string>{"-fgpu-approx-transcendentals", "-fno-exceptions", "-w",
                                      "-fgpu-default-stream=per-thread"}));
}

TEST(NvccArgs, UnknownAndUnsupportedFlagsAreListedNotPassed) {
  auto T = translateNvccArgs({"--no-such-flag", "--target-directory", "aarch64-linux",
                              "-nocudainc", "-Xclang", "-fno-builtin", "a.cu"},
                             "");
  ASSERT_TRUE(static_cast<bool>(T));
  EXPECT_EQ(T->Unknown, (std::vector<std::string>{"--no-such-flag"}));
  EXPECT_EQ(T->Unsupported, (std::vector<std::string>{"--target-directory"}));
  EXPECT_EQ(T->Args, (std::vector<std::string>{"-nocudainc", "-Xclang", "-fno-builtin", "a.cu"}))
      << "clang flags stay, with their separate values";
}

TEST(NvccArgs, ValueOnAFlagWithoutOneIsNotThatFlag) {
  auto T = translateNvccArgs({"--generate-line-info=1", "a.cu"}, "");
  ASSERT_TRUE(static_cast<bool>(T));
  EXPECT_EQ(T->Unknown, (std::vector<std::string>{"--generate-line-info=1"}));
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
  // The macros nvcc 13.0 defines for these modes (helper-58's break test: code that tests them, such as
  // `#ifndef __CUDACC_EXTENDED_LAMBDA__ #error`, failed in kloop and built with nvcc).
  for (const char *Macro : {"-D__CUDACC_RELAXED_CONSTEXPR__=1", "-D__CUDACC_EXTENDED_LAMBDA__=1", "-D__CUDACC_RDC__=1"})
    EXPECT_TRUE(has(A, Macro)) << Macro;
  EXPECT_FALSE(has(A, "-D__CUDACC_DEBUG__=1"));
  EXPECT_TRUE(has(translate({"-G", "-dc", "a.cu"}), "-D__CUDACC_DEBUG__=1"));
  EXPECT_TRUE(has(translate({"--extended-lambda", "a.cu"}), "-D__CUDACC_EXTENDED_LAMBDA__=1"));
  EXPECT_TRUE(has(translate({"-dc", "a.cu"}), "-D__CUDACC_RDC__=1"));
  EXPECT_FALSE(has(translate({"-rdc=false", "a.cu"}), "-D__CUDACC_RDC__=1"));
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

TEST(NvccArgs, HostCompilerAndOpenMP) {
  auto T = translateNvccArgs({"-ccbin", "/opt/gcc-13/bin", "-fopenmp", "a.cu"}, "");
  ASSERT_TRUE(static_cast<bool>(T));
  EXPECT_EQ(T->HostCompilerBindir, "/opt/gcc-13/bin");
  EXPECT_TRUE(T->HostOpenMP) << "a bare -fopenmp is the host compiler's (nvcc forwards it)";
  EXPECT_FALSE(has(T->Args, "-fopenmp"));
  auto L = translateNvccArgs({"--compiler-bindir=g++-12", "-Xcompiler", "-fopenmp-simd", "a.cu"}, "");
  ASSERT_TRUE(static_cast<bool>(L));
  EXPECT_EQ(L->HostCompilerBindir, "g++-12");
  EXPECT_FALSE(L->HostOpenMP) << "-fopenmp-simd defines no _OPENMP";
}

} // namespace
