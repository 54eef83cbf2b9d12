//===- PragmaMacrosTest.cpp - normalizePragmaMacros -----------------------===//
#include "kloop/Frontend/Frontend.h"

#include "gtest/gtest.h"

using namespace kloop;

namespace {

TEST(PragmaMacrosTest, ObjectLikeUnrollBodyBecomesTheSameLengthName) {
  std::string In = "#ifdef __CUDA_ARCH__\n  #define PRAGMA_UNROLL #pragma unroll\n#endif\n"
                   "# define U\t#pragma unroll  \r\nint x;\n";
  std::optional<std::string> Out = normalizePragmaMacros(In);
  ASSERT_TRUE(Out);
  EXPECT_EQ(*Out, "#ifdef __CUDA_ARCH__\n  #define PRAGMA_UNROLL __kloop_unroll\n#endif\n"
                  "# define U\t__kloop_unroll  \r\nint x;\n");
  EXPECT_EQ(Out->size(), In.size());
}

TEST(PragmaMacrosTest, EverythingElseIsLeftAlone) {
  for (const char *In : {"#pragma unroll\nfor (;;) {}\n",                // the directive itself
                         "#define U(x) #pragma unroll\n",                 // function-like
                         "#define U #pragma unroll 4\n",                  // no same-length form
                         "#define U #pragma unroll // comment\n",         // more than the pragma
                         "// #define U #pragma unroll\n",                 // a comment
                         "#define #pragma unroll\n",                      // no name
                         "#define PRAGMA_UNROLL\n"})                     // no body
    EXPECT_FALSE(normalizePragmaMacros(In)) << In;
}

} // namespace
