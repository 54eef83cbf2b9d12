//===- Text.cpp - Text that is safe to show --------------------------------===//
#include "kloop/Support/Text.h"

#include <cctype>

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ConvertUTF.h"
#include <cstdio>

using namespace llvm;

namespace kloop {

bool isBidiControl(std::uint32_t CP) {
  return CP == 0x061C || CP == 0x200E || CP == 0x200F || (CP >= 0x202A && CP <= 0x202E) ||
         (CP >= 0x2066 && CP <= 0x2069);
}

/// \p V formatted by the printf format \p Fmt (one unsigned conversion).
static std::string escaped(const char *Fmt, unsigned V) {
  char Buf[16];
  std::snprintf(Buf, sizeof(Buf), Fmt, V);
  return Buf;
}

std::string terminalSafe(StringRef Text) {
  std::string Out;
  Out.reserve(Text.size());
  for (size_t I = 0; I < Text.size();) {
    unsigned char C = static_cast<unsigned char>(Text[I]);
    if (C < 0x80) {
      if ((C < 0x20 && C != '\n' && C != '\t') || C == 0x7f)
        Out += escaped("\\x%02x", C);
      else
        Out += static_cast<char>(C);
      ++I;
      continue;
    }
    const UTF8 *Begin = reinterpret_cast<const UTF8 *>(Text.data() + I);
    unsigned Len = getNumBytesForUTF8(*Begin);
    UTF32 CP = 0;
    const UTF8 *Src = Begin;
    UTF32 *Dst = &CP;
    if (I + Len > Text.size() ||
        ConvertUTF8toUTF32(&Src, Begin + Len, &Dst, &CP + 1, strictConversion) != conversionOK) {
      Out += escaped("\\x%02x", C);
      ++I;
      continue;
    }
    if ((CP >= 0x80 && CP <= 0x9f) || isBidiControl(CP))
      Out += escaped("\\u{%04x}", CP);
    else
      Out.append(Text.data() + I, Len);
    I += Len;
  }
  return Out;
}

std::string withoutSpaces(llvm::StringRef Text) {
  std::string Out;
  for (char C : Text)
    if (!std::isspace(static_cast<unsigned char>(C)))
      Out += C;
  return Out;
}

/// Whether the `'` at \p I of \p Text separates digits of a number (`1'024`, `0xFF'FF`): it follows a
/// run of number characters that starts with a digit, and a digit or letter follows it.
static bool digitSeparator(StringRef Text, size_t I) {
  if (I == 0 || I + 1 >= Text.size() || !isAlnum(Text[I - 1]) || !isAlnum(Text[I + 1]))
    return false;
  size_t Start = I;
  while (Start > 0 && (isAlnum(Text[Start - 1]) || Text[Start - 1] == '.' || Text[Start - 1] == '\'' ||
                       Text[Start - 1] == '_'))
    --Start;
  return isDigit(Text[Start]) || (Text[Start] == '.' && Start + 1 < Text.size() && isDigit(Text[Start + 1]));
}

/// The offset of the end of the literal or comment that starts at \p I of \p Text (a character or string
/// literal, a block comment), or \p I when none starts there.
static size_t skipLiteral(StringRef Text, size_t I) {
  char Ch = Text[I];
  if ((Ch == '\'' && !digitSeparator(Text, I)) || Ch == '"') {
    for (++I; I < Text.size() && Text[I] != Ch; ++I)
      if (Text[I] == '\\')
        ++I;
    return I;
  }
  if (Text.substr(I).starts_with("/*")) {
    size_t End = Text.find("*/", I + 2);
    return End == StringRef::npos ? Text.size() : End + 1;
  }
  return I;
}

/// The offset of the parenthesis that closes the one at \p Text's start, or StringRef::npos.
static size_t closingParen(StringRef Text) {
  int Depth = 0;
  for (size_t I = 0; I < Text.size(); I = skipLiteral(Text, I) + 1) {
    if (Text[I] == '(')
      ++Depth;
    else if (Text[I] == ')' && --Depth == 0)
      return I;
  }
  return StringRef::npos;
}

/// The offset of a `//` comment in \p Text (not inside a literal or a block comment), or its size.
static size_t lineComment(StringRef Text) {
  for (size_t I = 0; I < Text.size(); I = skipLiteral(Text, I) + 1)
    if (Text.substr(I).starts_with("//"))
      return I;
  return Text.size();
}

std::string asOperand(StringRef Expr) {
  Expr = Expr.trim();
  size_t Comment = lineComment(Expr);
  StringRef Code = Expr.take_front(Comment).rtrim(), Rest = Expr.drop_front(Comment);
  std::string Tail = Rest.empty() ? "" : " " + Rest.str(); // a // comment stays after the closing parenthesis
  bool OneToken = !Code.empty() && llvm::all_of(Code, [](char Ch) {
    return isAlnum(Ch) || Ch == '_' || Ch == '.' || Ch == '\'';
  });
  if (OneToken || (Code.starts_with("(") && closingParen(Code) == Code.size() - 1))
    return Code.str() + Tail;
  return "(" + Code.str() + ")" + Tail;
}

} // namespace kloop
