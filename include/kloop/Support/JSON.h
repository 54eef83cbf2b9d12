//===- kloop/Support/JSON.h - JSON text that is always valid UTF-8 -*- C++ -*-===//
///
/// \file
/// The one serializer of kloop's JSON (outputs, journal columns, requests to
/// proposers). Strings kloop puts in JSON come from outside as bytes: file
/// names, compiler messages, source text, model replies. nlohmann::json::dump()
/// throws type_error 316 on a byte sequence that is not UTF-8, which aborted
/// `kloop extract` on a non-UTF-8 file name; dumpJSON never throws for that
/// reason and replaces each invalid sequence by U+FFFD (the Unicode
/// replacement character), so every JSON text kloop writes is valid UTF-8.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_SUPPORT_JSON_H
#define KLOOP_SUPPORT_JSON_H

#include <nlohmann/json.hpp>
#include <string>

namespace kloop {

/// \p V as JSON text, indented by \p Indent spaces per level (-1: one line),
/// with invalid UTF-8 in strings replaced by U+FFFD.
inline std::string dumpJSON(const nlohmann::json &V, int Indent = -1) {
  return V.dump(Indent, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

} // namespace kloop

#endif
