//===- TextTest.cpp - asOperand --------------------------------------------===//
#include "kloop/Support/Text.h"

#include "gtest/gtest.h"

using kloop::asOperand;

TEST(AsOperand, OneTokenStaysAsWritten) {
  EXPECT_EQ(asOperand("64"), "64");
  EXPECT_EQ(asOperand(" BLOCK_SIZE "), "BLOCK_SIZE");
  EXPECT_EQ(asOperand("1'024"), "1'024");
  EXPECT_EQ(asOperand("0.5f"), "0.5f");
}

TEST(AsOperand, AnExpressionIsParenthesized) {
  EXPECT_EQ(asOperand("16 + 16"), "(16 + 16)");
  EXPECT_EQ(asOperand("-16"), "(-16)");
  EXPECT_EQ(asOperand("(4) * (2)"), "((4) * (2))"); // starts with '(' but the first pair closes early
  EXPECT_EQ(asOperand("1'024 /* 32 warps */"), "(1'024 /* 32 warps */)");
  // Digit separators are no character literals: "'6) + (1'" once read as one, and this stayed bare.
  EXPECT_EQ(asOperand("(1'6) + (1'6)"), "((1'6) + (1'6))");
  EXPECT_EQ(asOperand("(0xF'F) * (2)"), "((0xF'F) * (2))");
  EXPECT_EQ(asOperand("(u'a') + 1"), "((u'a') + 1)"); // a prefixed character literal is one
}

TEST(AsOperand, AWhollyParenthesizedExpressionStays) {
  EXPECT_EQ(asOperand("(16 + 16)"), "(16 + 16)");
  EXPECT_EQ(asOperand("(f(')') + 1)"), "(f(')') + 1)"); // a ')' in a character literal does not close
  EXPECT_EQ(asOperand("(a /* ) */ + b)"), "(a /* ) */ + b)");
}

TEST(AsOperand, ALineCommentStaysOutsideTheParentheses) {
  // Inside them it would comment out the closing parenthesis of a macro body.
  EXPECT_EQ(asOperand("16 + 16 // tile"), "(16 + 16) // tile");
  EXPECT_EQ(asOperand("64 // tile"), "64 // tile");
  EXPECT_EQ(asOperand("\"a//b\" + 1"), "(\"a//b\" + 1)"); // '//' in a string literal is no comment
}
