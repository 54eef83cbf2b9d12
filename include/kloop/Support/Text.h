//===- kloop/Support/Text.h - Text that is safe to show ---------------------===//
///
/// \file
/// Characters that make text display differently from what it is, and the one
/// escaping of text that a model, a proposer command or a journal supplied
/// before kloop shows it (issue 12, item 8).
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_SUPPORT_TEXT_H
#define KLOOP_SUPPORT_TEXT_H

#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <string>

namespace kloop {

/// Whether the code point \p C is one of Unicode's bidirectional formatting
/// characters (Unicode Standard Annex #9): LRE, RLE, PDF, LRO, RLO
/// (U+202A-U+202E), LRI, RLI, FSI, PDI (U+2066-U+2069) and the implicit marks
/// LRM, RLM (U+200E, U+200F) and ALM (U+061C). They reorder how text is
/// displayed, not how it compiles ("Trojan Source", CVE-2021-42574).
bool isBidiControl(std::uint32_t C);

/// \p Text made safe to show on a terminal or in a file a person reads with
/// `cat`: every control character but newline and tab (C0, DEL, and the C1
/// range U+0080..U+009F, which terminals read as CSI/OSC introducers) and every
/// bidirectional control character (isBidiControl) is written as an escape:
/// "\x1b", "\u{202e}". Bytes that are not valid UTF-8 are written as "\xNN".
/// Everything else is kept, so ordinary text is unchanged.
std::string terminalSafe(llvm::StringRef Text);

/// \p Text with every white-space character removed: the form in which two spellings of one expression
/// ("BLOCK / 2", "BLOCK/2") compare equal.
std::string withoutSpaces(llvm::StringRef Text);

/// C++ expression \p Expr (one line) written so that it binds as one operand wherever its text is pasted
/// (a macro body, a name substituted inside a larger expression): a single token (a number or a name)
/// and an expression wholly inside one pair of parentheses as they are, anything else in parentheses.
/// `16 + 16` becomes `(16 + 16)`, since `2 * TILE` would otherwise read 2 * 16 + 16. Character and
/// string literals and comments are skipped when matching parentheses; a trailing `//` comment stays after
/// the closing parenthesis (`(16 + 16) // note`). Surrounding blanks are dropped.
std::string asOperand(llvm::StringRef Expr);

} // namespace kloop

#endif
