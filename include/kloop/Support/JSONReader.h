//===- kloop/Support/JSONReader.h - Strict, typed reads of JSON -*- C++ -*-===//
///
/// \file
/// Reads the members of a JSON document kloop wrote (an inventory, a journal
/// payload) into typed fields, without exceptions. Every read checks the
/// member's type; the first failure is kept with the document's name and the
/// member's path (`inventory.json: kernels[2].loops[0].depth: expected a
/// non-negative integer`), later reads are skipped, and the caller takes it as
/// an llvm::Error once at the end.
///
/// Conventions of the typed reads:
///  - `T &Out`: the member must be present and of type T;
///  - `std::optional<T> &Out`: absent or null gives std::nullopt, anything
///    else must be a T;
///  - a struct is read by an overload `void readFields(JSONObject &, S &)`
///    found by argument-dependent lookup (object(), objects()).
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_SUPPORT_JSONREADER_H
#define KLOOP_SUPPORT_JSONREADER_H

#include "nlohmann/json.hpp"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kloop {

/// The first error of one read, with the name of the document read.
class JSONReadErrors {
public:
  /// \p Source names the document in errors (a file name, "the journal's extract step").
  /// \p Strict: every object read refuses members no read asked for (JSONObject::finish), for
  /// tests that prove a typed model covers every member its writer emits.
  explicit JSONReadErrors(std::string Source, bool Strict = false)
      : Source(std::move(Source)), Strict(Strict) {}
  bool strict() const { return Strict; }
  /// Records "<Source>: <Path>: <What>" unless an error is already recorded.
  void fail(const std::string &Path, const llvm::Twine &What);
  bool failed() const { return First.has_value(); }
  /// The recorded error (a StringError), or success.
  llvm::Error take();

private:
  std::string Source;
  bool Strict = false;
  std::optional<std::string> First;
};

/// Typed reads of the members of one JSON object. Construction records an
/// error when the value is not an object (every read then does nothing).
class JSONObject {
public:
  JSONObject(const nlohmann::json &J, std::string Path, JSONReadErrors &Errors);

  /// "kernels[2].loops" for member Key of this object.
  std::string pathOf(llvm::StringRef Key) const;
  /// True when the member exists (null included).
  bool has(llvm::StringRef Key) const;

  void read(llvm::StringRef Key, std::string &Out);
  void read(llvm::StringRef Key, bool &Out);
  void read(llvm::StringRef Key, int64_t &Out);
  void read(llvm::StringRef Key, unsigned &Out);
  void read(llvm::StringRef Key, std::vector<std::string> &Out);
  void read(llvm::StringRef Key, std::optional<std::string> &Out);
  void read(llvm::StringRef Key, std::optional<bool> &Out);
  void read(llvm::StringRef Key, std::optional<int64_t> &Out);
  void read(llvm::StringRef Key, std::optional<unsigned> &Out);
  /// Any JSON number (integer or not).
  void read(llvm::StringRef Key, double &Out);
  /// Any JSON number, or null/absent (std::nullopt).
  void read(llvm::StringRef Key, std::optional<double> &Out);
  /// An array of integers, each possibly null (std::nullopt).
  void read(llvm::StringRef Key, std::vector<std::optional<int64_t>> &Out);

  /// Member Key, an object, read by readFields(JSONObject &, T &).
  template <typename T> void object(llvm::StringRef Key, T &Out) {
    if (const nlohmann::json *M = member(Key, /*Required=*/true)) {
      JSONObject O(*M, pathOf(Key), Errors);
      readFields(O, Out);
      O.finish();
    }
  }
  /// Member Key, an object or null/absent (std::nullopt).
  template <typename T> void object(llvm::StringRef Key, std::optional<T> &Out) {
    Out.reset();
    const nlohmann::json *M = member(Key, /*Required=*/false);
    if (!M || M->is_null())
      return;
    JSONObject O(*M, pathOf(Key), Errors);
    readFields(O, Out.emplace());
    O.finish();
  }
  /// Member Key, an array of objects, each read by readFields.
  template <typename T> void objects(llvm::StringRef Key, std::vector<T> &Out) {
    Out.clear();
    const nlohmann::json *M = member(Key, /*Required=*/true);
    if (!M)
      return;
    if (!M->is_array())
      return Errors.fail(pathOf(Key), "expected an array");
    for (size_t I = 0; I < M->size() && !Errors.failed(); ++I) {
      JSONObject O((*M)[I], pathOf(Key) + "[" + std::to_string(I) + "]", Errors);
      readFields(O, Out.emplace_back());
      O.finish();
    }
  }

  /// Records "<path of Key>: <What>" as this document's error (for a member
  /// that a read of its own checked).
  void fail(llvm::StringRef Key, const llvm::Twine &What) { Errors.fail(pathOf(Key), What); }
  /// True once any read of this document failed.
  bool failed() const { return Errors.failed(); }

  /// Member Key as it is (marked as read); nullptr when absent and !Required.
  const nlohmann::json *member(llvm::StringRef Key, bool Required);
  /// With strict reads (JSONReadErrors::strict), records an error naming the
  /// first member no read asked for: a field the reader does not know.
  void finish();

private:
  const nlohmann::json &J;
  std::string Path;
  JSONReadErrors &Errors;
  std::set<std::string> Seen;
};

} // namespace kloop

#endif
