//===- JSONReader.cpp - Strict, typed reads of JSON -----------------------===//
#include "kloop/Support/JSONReader.h"

#include <limits>

using nlohmann::json;
using llvm::StringRef;

namespace kloop {

void JSONReadErrors::fail(const std::string &Path, const llvm::Twine &What) {
  if (!First)
    First = Source + ": " + (Path.empty() ? std::string("<root>") : Path) + ": " + What.str();
}

llvm::Error JSONReadErrors::take() {
  if (!First)
    return llvm::Error::success();
  std::string M = std::move(*First);
  First.reset();
  return llvm::createStringError(llvm::inconvertibleErrorCode(), M);
}

JSONObject::JSONObject(const json &J, std::string Path, JSONReadErrors &Errors)
    : J(J), Path(std::move(Path)), Errors(Errors) {
  if (!J.is_object())
    Errors.fail(this->Path, "expected an object");
}

std::string JSONObject::pathOf(StringRef Key) const {
  return Path.empty() ? Key.str() : Path + "." + Key.str();
}

bool JSONObject::has(StringRef Key) const { return J.is_object() && J.contains(Key.str()); }

const json *JSONObject::member(StringRef Key, bool Required) {
  if (Errors.failed() || !J.is_object())
    return nullptr;
  Seen.insert(Key.str());
  auto It = J.find(Key.str());
  if (It != J.end())
    return &*It;
  if (Required)
    Errors.fail(pathOf(Key), "missing");
  return nullptr;
}

void JSONObject::finish() {
  if (!Errors.strict() || Errors.failed() || !J.is_object())
    return;
  for (const auto &[K, V] : J.items())
    if (!Seen.count(K))
      return Errors.fail(pathOf(K), "not a member this reader knows");
}

namespace {
/// The one type test and conversion per C++ type (the error says what was expected).
template <typename T> struct Kind;
template <> struct Kind<std::string> {
  static bool is(const json &V) { return V.is_string(); }
  static constexpr const char *What = "expected a string";
};
template <> struct Kind<bool> {
  static bool is(const json &V) { return V.is_boolean(); }
  static constexpr const char *What = "expected true or false";
};
template <> struct Kind<int64_t> {
  static bool is(const json &V) { return V.is_number_integer(); }
  static constexpr const char *What = "expected an integer";
};
template <> struct Kind<unsigned> {
  static bool is(const json &V) {
    // JSON has one kind of number: a non-negative integer written from a signed C++ type counts.
    return V.is_number_integer() && V.get<int64_t>() >= 0 &&
           V.get<int64_t>() <= std::numeric_limits<unsigned>::max();
  }
  static constexpr const char *What = "expected a non-negative 32-bit integer";
};

template <> struct Kind<double> {
  static bool is(const json &V) { return V.is_number(); }
  static constexpr const char *What = "expected a number";
};

template <typename T>
void readRequired(JSONObject &O, JSONReadErrors &E, StringRef Key, T &Out) {
  if (const json *M = O.member(Key, /*Required=*/true)) {
    if (Kind<T>::is(*M))
      Out = M->get<T>();
    else
      E.fail(O.pathOf(Key), Kind<T>::What);
  }
}

template <typename T>
void readOptional(JSONObject &O, JSONReadErrors &E, StringRef Key, std::optional<T> &Out) {
  Out.reset();
  const json *M = O.member(Key, /*Required=*/false);
  if (!M || M->is_null())
    return;
  if (Kind<T>::is(*M))
    Out = M->get<T>();
  else
    E.fail(O.pathOf(Key), llvm::Twine(Kind<T>::What) + " or null");
}
} // namespace

void JSONObject::read(StringRef Key, std::string &Out) { readRequired(*this, Errors, Key, Out); }
void JSONObject::read(StringRef Key, bool &Out) { readRequired(*this, Errors, Key, Out); }
void JSONObject::read(StringRef Key, int64_t &Out) { readRequired(*this, Errors, Key, Out); }
void JSONObject::read(StringRef Key, unsigned &Out) { readRequired(*this, Errors, Key, Out); }
void JSONObject::read(StringRef Key, std::optional<std::string> &Out) { readOptional(*this, Errors, Key, Out); }
void JSONObject::read(StringRef Key, std::optional<bool> &Out) { readOptional(*this, Errors, Key, Out); }
void JSONObject::read(StringRef Key, std::optional<int64_t> &Out) { readOptional(*this, Errors, Key, Out); }
void JSONObject::read(StringRef Key, std::optional<unsigned> &Out) { readOptional(*this, Errors, Key, Out); }
void JSONObject::read(StringRef Key, double &Out) { readRequired(*this, Errors, Key, Out); }
void JSONObject::read(StringRef Key, std::optional<double> &Out) { readOptional(*this, Errors, Key, Out); }

void JSONObject::read(StringRef Key, std::vector<std::string> &Out) {
  Out.clear();
  const json *M = member(Key, /*Required=*/true);
  if (!M)
    return;
  if (!M->is_array())
    return Errors.fail(pathOf(Key), "expected an array of strings");
  for (size_t I = 0; I < M->size(); ++I) {
    if (!(*M)[I].is_string())
      return Errors.fail(pathOf(Key) + "[" + std::to_string(I) + "]", "expected a string");
    Out.push_back((*M)[I].get<std::string>());
  }
}

void JSONObject::read(StringRef Key, std::vector<std::optional<int64_t>> &Out) {
  Out.clear();
  const json *M = member(Key, /*Required=*/true);
  if (!M)
    return;
  if (!M->is_array())
    return Errors.fail(pathOf(Key), "expected an array of integers");
  for (size_t I = 0; I < M->size(); ++I) {
    const json &V = (*M)[I];
    if (!V.is_null() && !V.is_number_integer())
      return Errors.fail(pathOf(Key) + "[" + std::to_string(I) + "]", "expected an integer or null");
    Out.push_back(V.is_null() ? std::nullopt : std::optional<int64_t>(V.get<int64_t>()));
  }
}

} // namespace kloop
