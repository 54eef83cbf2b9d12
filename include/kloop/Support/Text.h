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

} // namespace kloop

#endif
