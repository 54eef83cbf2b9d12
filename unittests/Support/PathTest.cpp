//===- PathTest.cpp - isAtOrBelow and relativePath ---------------------------===//
#include "kloop/Support/Path.h"
#include "gtest/gtest.h"

using namespace kloop;

TEST(IsAtOrBelow, WholeComponentsOnly) {
  EXPECT_TRUE(isAtOrBelow("/o/candidates/cand-2", "/o/candidates/cand-2"));
  EXPECT_TRUE(isAtOrBelow("/o/candidates/cand-2/src", "/o/candidates/cand-2"));
  EXPECT_TRUE(isAtOrBelow("/o/candidates/cand-2/src", "/o/candidates/cand-2/"));
  // cand-20 is not below cand-2: a textual prefix is not a directory prefix.
  EXPECT_FALSE(isAtOrBelow("/o/candidates/cand-20/src", "/o/candidates/cand-2"));
  EXPECT_FALSE(isAtOrBelow("/o/candidates", "/o/candidates/cand-2"));
  EXPECT_TRUE(isAtOrBelow("/anything", "/"));
}

TEST(RelativePath, BelowTheRootOnly) {
  EXPECT_EQ(relativePath("/w/src/k.cu", "/w"), "src/k.cu");
  EXPECT_EQ(relativePath("/wx/k.cu", "/w"), "/wx/k.cu");
  EXPECT_EQ(relativePath("/w/k.cu", ""), "/w/k.cu");
}
