// deferCommandLineMacros: which -D/-U flags move behind clang's CUDA wrapper (docs/nvcc-compat.md).
#include "NvccCompat.h"
#include "kloop/Frontend/Frontend.h"

#include "gtest/gtest.h"

using namespace kloop;

namespace {

std::vector<std::string> withCompat(std::vector<std::string> Rest) {
  std::vector<std::string> CL = {"clang++", "-include", nvccCompatHeaderPath().str()};
  CL.insert(CL.end(), Rest.begin(), Rest.end());
  return CL;
}

TEST(CommandLineMacros, OrdinaryNamesMoveIntoTheHeaderInOrder) {
  DeferredMacros D = deferCommandLineMacros(
      withCompat({"-DN=64", "-D", "X=1=2", "-DFLAG", "-D", "F(a)=a+1", "--define-macro=M=3", "-UN",
                  "-include", "user.h", "a.cu"}));
  EXPECT_EQ(D.Header, "#line 1 \"<command line>\"\n#define N 64\n#define X 1=2\n#define FLAG 1\n"
                      "#define F(a) a+1\n#define M 3\n#undef N\n");
  std::vector<std::string> Want = withCompat({"-include", "user.h", "a.cu"});
  Want.insert(Want.begin() + 3, {"-include", commandLineMacrosPath().str()});
  EXPECT_EQ(D.CommandLine, Want);
}

TEST(CommandLineMacros, HeaderConfigurationStaysOnTheCommandLine) {
  std::vector<std::string> CL =
      withCompat({"-D_GNU_SOURCE", "-DNDEBUG", "-DCUDA_API_PER_THREAD_DEFAULT_STREAM", "-D", "__X=1",
                  "-UNV_MATH_USE_TEMPLATE", "-Xclang", "-DOPAQUE", "a.cu"});
  DeferredMacros D = deferCommandLineMacros(CL);
  EXPECT_EQ(D.Header, "");
  EXPECT_EQ(D.CommandLine, CL);
}

TEST(CommandLineMacros, BodyEndsAtANewlineAsInClang) {
  DeferredMacros D = deferCommandLineMacros({"clang++", "-DB=1\n#define C 2", "a.cu"});
  EXPECT_EQ(D.Header, "#line 1 \"<command line>\"\n#define B 1\n");
  EXPECT_EQ(D.CommandLine,
            (std::vector<std::string>{"clang++", "-include", commandLineMacrosPath().str(), "a.cu"}));
}

TEST(CommandLineMacros, Classification) {
  for (const char *Name : {"_GNU_SOURCE", "__CUDA_NO_HALF_OPERATORS__", "NDEBUG", "NOMINMAX", "QUALIFIERS",
                           "CUDA_API_PER_THREAD_DEFAULT_STREAM", "CUDART_X", "CURAND_Y", "NV_Z", "PSTL_W"})
    EXPECT_TRUE(macroConfiguresHeaders(Name)) << Name;
  for (const char *Name : {"N", "X", "BLOCK", "TILE_SIZE", "CUB_IGNORE", "USE_CUDA"})
    EXPECT_FALSE(macroConfiguresHeaders(Name)) << Name;
}

} // namespace
