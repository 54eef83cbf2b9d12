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

/// The offset of the parenthesis that closes the one at \p Text's start (character and string literals
/// skipped), or StringRef::npos.
static size_t closingParen(StringRef Text) {
  int Depth = 0;
  for (size_t I = 0; I < Text.size(); ++I) {
    char Ch = Text[I];
    if (Ch == '\'' || Ch == '"') {
      for (++I; I < Text.size() && Text[I] != Ch; ++I)
        if (Text[I] == '\\')
          ++I;
      continue;
    }
    if (Ch == '(')
      ++Depth;
    else if (Ch == ')' && --Depth == 0)
      return I;
  }
  return StringRef::npos;
}

std::string asOperand(StringRef Expr) {
  Expr = Expr.trim();
  bool OneToken = !Expr.empty() && llvm::all_of(Expr, [](char Ch) { return isAlnum(Ch) || Ch == '_' || Ch == '.'; });
  if (OneToken || (Expr.starts_with("(") && closingParen(Expr) == Expr.size() - 1))
    return Expr.str();
  return "(" + Expr.str() + ")";
}

} // namespace kloop
