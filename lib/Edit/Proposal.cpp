//===- Proposal.cpp - Parsing and validating the edit language ------------===//
#include "kloop/Edit/Proposal.h"
#include "kloop/Support/Text.h"
#include "kloop/Support/JSON.h"

#include "llvm/Support/ConvertUTF.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>

using namespace llvm;
using nlohmann::json;

namespace kloop {

namespace {
struct KindInfo {
  EditKind Kind;
  const char *Name;
  std::vector<const char *> Required, Optional;
};
const std::vector<KindInfo> &kinds() {
  static const std::vector<KindInfo> K = {
      {EditKind::SetConstant, "set_constant", {"id", "value"}, {}},
      {EditKind::SetUnroll, "set_unroll", {"id", "count"}, {}},
      {EditKind::SetLaunchBounds, "set_launch_bounds", {"id", "max_threads"}, {"min_blocks"}},
      {EditKind::SetLaunchConfig, "set_launch_config", {"id"}, {"grid", "block", "shared_memory", "allow_odd_block"}},
      {EditKind::AddRestrict, "add_restrict", {"id"}, {}},
      {EditKind::AddConst, "add_const", {"id"}, {}},
      {EditKind::ReplaceBody, "replace_body", {"id", "code"}, {}},
      {EditKind::ReplaceLoop, "replace_loop", {"id", "code"}, {}},
      {EditKind::ReplaceStmt, "replace_stmt", {"id", "stmt", "code"}, {}},
      {EditKind::InsertDeviceFunction, "insert_device_function", {"before", "code"}, {}},
      {EditKind::AddKernelVariant, "add_kernel_variant", {"of", "name", "code", "retarget"}, {}},
  };
  return K;
}

Error fail(const Twine &Msg) { return createStringError(inconvertibleErrorCode(), Msg); }

const char *typeName(const json &J) {
  switch (J.type()) {
  case json::value_t::null: return "null";
  case json::value_t::boolean: return "boolean";
  case json::value_t::string: return "string";
  case json::value_t::number_integer:
  case json::value_t::number_unsigned: return "integer";
  case json::value_t::number_float: return "number";
  case json::value_t::array: return "array";
  case json::value_t::object: return "object";
  default: return "value";
  }
}

bool isIdentifier(StringRef S) {
  if (S.empty() || !(isalpha((unsigned char)S[0]) || S[0] == '_'))
    return false;
  for (char C : S)
    if (!(isalnum((unsigned char)C) || C == '_'))
      return false;
  return true;
}
} // namespace

const char *editKindName(EditKind K) {
  for (const KindInfo &I : kinds())
    if (I.Kind == K)
      return I.Name;
  return "?";
}

std::string Edit::label() const {
  std::string L = std::string(editKindName(Kind)) + " " + ID;
  if (Kind == EditKind::ReplaceStmt)
    L += " stmt " + std::to_string(StmtIndex);
  return L;
}

namespace {
/// Spellings of the numbers nlohmann stored as doubles (StrictJson::FloatSpellings).
using Spellings = std::map<std::string, std::string>;

/// clang refuses `#pragma unroll N` above 2^31 - 1 ("value 'N' is too large").
constexpr long long MaxUnrollCount = 2147483647;

/// How an integer field is bounded, for intProblem().
struct IntRange {
  long long Min, Max;
  /// Said after the range when a value is outside it ("null removes the pragma").
  const char *Note = nullptr;
  /// The field also takes a C++ expression string (set_constant, set_launch_config).
  bool ExprAllowed = false;
};

/// "[1, 1024]", or for a field bounded only by int64: "at most 9223372036854775807"
/// (or "at least ..." when \p Written is negative).
std::string rangeText(const IntRange &R, StringRef Written) {
  if (R.Min == std::numeric_limits<long long>::min() && R.Max == std::numeric_limits<long long>::max())
    return Written.starts_with("-") ? "at least " + std::to_string(R.Min) : "at most " + std::to_string(R.Max);
  return "[" + std::to_string(R.Min) + ", " + std::to_string(R.Max) + "]";
}

/// Why the number \p V (written \p Written) is not an integer in \p R, or
/// std::nullopt with the value in \p Out. V must be a JSON number.
std::optional<std::string> intProblem(const json &V, const std::string &Written, const IntRange &R, long long &Out) {
  const std::string Range = rangeText(R, Written);
  auto outOfRange = [&] {
    if (Range.front() == '[')
      return Written + " is out of range " + Range + (R.Note ? std::string(" (") + R.Note + ")" : "");
    return Written + " is out of range (" + Range + (R.Note ? std::string("; ") + R.Note : "") + ")";
  };
  if (V.is_number_unsigned()) {
    std::uint64_t U = V.get<std::uint64_t>();
    if (R.Max < 0 || U > static_cast<std::uint64_t>(R.Max) ||
        (R.Min > 0 && U < static_cast<std::uint64_t>(R.Min)))
      return outOfRange();
    Out = static_cast<long long>(U);
    return std::nullopt;
  }
  if (V.is_number_integer()) {
    long long S = V.get<long long>();
    if (S < R.Min || S > R.Max)
      return outOfRange();
    Out = S;
    return std::nullopt;
  }
  // A double: an integer written beyond int64/uint64 (only its spelling tells),
  // or a number with a fraction or an exponent, which is not an integer even when
  // its value is whole ("1e3", "4.0").
  StringRef Digits = StringRef(Written);
  Digits.consume_front("-");
  if (!Digits.empty() && Digits.find_first_not_of("0123456789") == StringRef::npos)
    return outOfRange();
  return Written + " is not an integer (expected: an integer" + (Range.front() == '[' ? " in " + Range : "") +
         (R.ExprAllowed ? ", or a C++ expression string" : "") + ")";
}
} // namespace

namespace {
/// The code fields of \p E (JSON name, text) that are set.
std::vector<std::pair<const char *, const std::string *>> codeFields(const Edit &E) {
  std::vector<std::pair<const char *, const std::string *>> F;
  if (E.Kind == EditKind::SetConstant)
    F.push_back({"value", &E.Value});
  for (auto [Name, V] : {std::pair{"grid", &E.Grid}, {"block", &E.Block}, {"shared_memory", &E.SharedMemory}})
    if (*V)
      F.push_back({Name, &**V});
  if (!E.Code.empty())
    F.push_back({"code", &E.Code});
  return F;
}

/// codeTextProblem() of every code field of \p E, naming the field.
std::optional<std::string> codeFieldsProblem(const Edit &E) {
  for (auto [Name, Text] : codeFields(E))
    if (auto Why = codeTextProblem(*Text))
      return "field '" + std::string(Name) + "' " + *Why;
  return std::nullopt;
}
} // namespace

namespace {

/// The value as written: the spelling of a double when the text is known (\p Spelled, keyed by
/// JSON pointer), else nlohmann's rendering (exact for integers).
std::string writtenValue(const json &V, const std::string &Pointer, const Spellings *Spelled) {
  if (V.is_number_float() && Spelled) {
    auto It = Spelled->find(Pointer);
    if (It != Spelled->end())
      return It->second;
  }
  return dumpJSON(V);
}

/// The kind named by edit \p EJ, or an error naming it (\p Where: "edit #N").
Expected<const KindInfo *> editKindOf(const json &EJ, const std::string &Where) {
  if (!EJ.is_object())
    return fail(Where + ": must be an object, not " + typeName(EJ));
  if (!EJ.contains("kind"))
    return fail(Where + ": missing field 'kind'");
  if (!EJ["kind"].is_string())
    return fail(Where + ": field 'kind' must be a string, not " + typeName(EJ["kind"]));
  std::string KindName = EJ["kind"].get<std::string>();
  for (const KindInfo &I : kinds())
    if (KindName == I.Name)
      return &I;
  std::string Known;
  for (const KindInfo &I : kinds())
    Known += (Known.empty() ? "" : ", ") + std::string(I.Name);
  return fail(Where + ": unknown kind '" + KindName + "' (known kinds: " + Known + ")");
}

/// Reads the fields of one edit of a known kind, each checked against its type and range.
class EditReader {
public:
  EditReader(const json &EJ, unsigned Index, const KindInfo &Info, const Spellings *Spelled)
      : EJ(EJ), Index(Index), Info(Info), Spelled(Spelled),
        Where("edit #" + std::to_string(Index) + " (" + Info.Name + ")") {}

  Expected<Edit> read() {
    if (Error Err = checkFieldNames())
      return Err;
    Edit E;
    E.Kind = Info.Kind;
    const char *IdField = E.Kind == EditKind::InsertDeviceFunction ? "before"
                          : E.Kind == EditKind::AddKernelVariant   ? "of"
                                                                   : "id";
    if (Error Err = str(IdField, E.ID))
      return Err;
    if (Error Err = readKindFields(E))
      return Err;
    if (auto Why = codeFieldsProblem(E))
      return fail(Where + ": " + *Why);
    return E;
  }

private:
  const json &EJ;
  unsigned Index; // 1-based
  const KindInfo &Info;
  const Spellings *Spelled;
  std::string Where;

  Error checkFieldNames() {
    std::set<std::string> Allowed = {"kind"};
    for (const char *F : Info.Required) {
      Allowed.insert(F);
      if (!EJ.contains(F))
        return fail(Where + ": missing field '" + F + "'");
    }
    for (const char *F : Info.Optional)
      Allowed.insert(F);
    for (auto It = EJ.begin(); It != EJ.end(); ++It)
      if (!Allowed.count(It.key()))
        return fail(Where + ": unknown field '" + It.key() + "'");
    return Error::success();
  }

  Error str(const char *F, std::string &Out, bool NonEmpty = true) {
    const json &V = EJ[F];
    if (!V.is_string())
      return fail(Where + ": field '" + F + "' must be a string, not " + typeName(V));
    Out = V.get<std::string>();
    if (NonEmpty && StringRef(Out).trim().empty())
      return fail(Where + ": field '" + F + "' must not be empty");
    return Error::success();
  }

  // An integer field: a JSON number that is an integer in R. The caller refuses
  // other types, saying what it expects.
  Error number(const char *F, const IntRange &R, long long &Out) {
    const json &V = EJ[F];
    std::string Written = writtenValue(V, "/edits/" + std::to_string(Index - 1) + "/" + F, Spelled);
    if (auto Why = intProblem(V, Written, R, Out))
      return fail(Where + ": field '" + F + "' " + *Why);
    return Error::success();
  }

  Error posInt(const char *F, long long &Out, long long Max) {
    const json &V = EJ[F];
    if (!V.is_number())
      return fail(Where + ": field '" + F + "' must be an integer in [1, " + std::to_string(Max) + "], got " +
                  dumpJSON(V));
    return number(F, IntRange{1, Max}, Out);
  }

  Error optExpr(const char *F, std::optional<std::string> &Out, const IntRange &R) {
    if (!EJ.contains(F))
      return Error::success();
    const json &V = EJ[F];
    if (V.is_number()) {
      long long N;
      if (Error Err = number(F, R, N))
        return Err;
      Out = std::to_string(N);
      return Error::success();
    }
    std::string S;
    if (Error E = str(F, S))
      return fail(Where + ": field '" + F + "' must be a C++ expression (string) or an integer, not " + typeName(V) +
                  (consumeError(std::move(E)), ""));
    Out = S;
    return Error::success();
  }

  Error readKindFields(Edit &E) {
    switch (E.Kind) {
    case EditKind::SetConstant: return readValue(E);
    case EditKind::SetUnroll: return readCount(E);
    case EditKind::SetLaunchBounds: return readLaunchBounds(E);
    case EditKind::SetLaunchConfig: return readLaunchConfig(E);
    case EditKind::AddRestrict:
    case EditKind::AddConst: return Error::success();
    case EditKind::ReplaceStmt:
      if (Error Err = posInt("stmt", E.StmtIndex, 1 << 20))
        return Err;
      return str("code", E.Code);
    case EditKind::ReplaceBody:
    case EditKind::ReplaceLoop:
    case EditKind::InsertDeviceFunction: return str("code", E.Code);
    case EditKind::AddKernelVariant: return readVariant(E);
    }
    return Error::success();
  }

  Error readValue(Edit &E) {
    const json &V = EJ["value"];
    long long N;
    if (V.is_number()) {
      if (Error Err = number("value", IntRange{std::numeric_limits<long long>::min(),
                                               std::numeric_limits<long long>::max(),
                                               "write a wider constant as an expression string, e.g. "
                                               "\"18446744073709551615ull\"",
                                               /*ExprAllowed=*/true},
                             N))
        return Err;
      E.Value = std::to_string(N);
    } else if (V.is_string() && !StringRef(V.get<std::string>()).trim().empty())
      E.Value = V.get<std::string>();
    else
      return fail(Where + ": field 'value' must be an integer or a non-empty expression string, not " + typeName(V));
    return Error::success();
  }

  Error readCount(Edit &E) {
    const json &V = EJ["count"];
    if (V.is_null())
      return Error::success();
    if (!V.is_number())
      return fail(Where + ": field 'count' must be an integer in [1, " + std::to_string(MaxUnrollCount) +
                  "] or null (remove the pragma), got " + dumpJSON(V));
    long long N;
    if (Error Err = number("count", IntRange{1, MaxUnrollCount, "null removes the pragma"}, N))
      return Err;
    E.Count = N;
    return Error::success();
  }

  Error readLaunchBounds(Edit &E) {
    if (Error Err = posInt("max_threads", E.MaxThreads, 1024))
      return Err;
    if (EJ.contains("min_blocks")) {
      long long M;
      if (Error Err = posInt("min_blocks", M, 1 << 20))
        return Err;
      E.MinBlocks = M;
    }
    return Error::success();
  }

  Error readLaunchConfig(Edit &E) {
    if (Error Err = optExpr("grid", E.Grid,
                            IntRange{1, MaxGridDim[0], "an integer grid is its x dimension: CUDA's maximum grid "
                                                  "size is 2147483647 x 65535 x 65535 blocks",
                                     /*ExprAllowed=*/true}))
      return Err;
    if (Error Err = optExpr("block", E.Block, IntRange{1, 1024, "threads in a block", /*ExprAllowed=*/true}))
      return Err;
    if (Error Err = optExpr("shared_memory", E.SharedMemory,
                            IntRange{0, MaxDynamicSharedMemory,
                                     "bytes of dynamic shared memory; 232448 = 227 KiB is the most one block "
                                     "may use on sm_90 (H100/H200), with opt-in",
                                     /*ExprAllowed=*/true}))
      return Err;
    if (EJ.contains("allow_odd_block")) {
      std::string Why;
      if (Error Err = str("allow_odd_block", Why))
        return Err;
      E.AllowOddBlock = Why;
    }
    if (!E.Grid && !E.Block && !E.SharedMemory)
      return fail(Where + ": needs at least one of 'grid', 'block', 'shared_memory'");
    return Error::success();
  }

  Error readVariant(Edit &E) {
    if (Error Err = str("code", E.Code))
      return Err;
    if (Error Err = str("name", E.Name))
      return Err;
    if (!isIdentifier(E.Name))
      return fail(Where + ": field 'name' must be an identifier, got '" + E.Name + "'");
    const json &R = EJ["retarget"];
    if (!R.is_array())
      return fail(Where + ": field 'retarget' must be an array of launch-site IDs, not " + typeName(R));
    for (const json &S : R) {
      if (!S.is_string() || S.get<std::string>().empty())
        return fail(Where + ": field 'retarget' must hold launch-site ID strings, found " + typeName(S));
      E.Retarget.push_back(S.get<std::string>());
    }
    return Error::success();
  }
};

/// The top-level fields of a proposal (all but the edits) into \p P.
Error readTopLevel(const json &J, const Spellings *Spelled, Proposal &P) {
  if (!J.is_object())
    return fail(Twine("a proposal must be a JSON object, not ") + typeName(J));
  static const std::set<std::string> Top = {"version", "edits", "rationale", "provenance"};
  for (auto It = J.begin(); It != J.end(); ++It)
    if (!Top.count(It.key()))
      return fail("unknown top-level field '" + It.key() + "' (allowed: version, edits, rationale, provenance)");
  // "version" may be left out (an LLM's answer often is); it means 1.
  if (J.contains("version")) {
    const json &V = J["version"];
    bool One = V.is_number_unsigned() ? V.get<std::uint64_t>() == ProposalSchemaVersion
                                      : V.is_number_integer() && V.get<long long>() == ProposalSchemaVersion;
    if (!One)
      return fail("field 'version' must be 1, got " + writtenValue(V, "/version", Spelled));
  }
  if (!J.contains("edits"))
    return fail("missing field 'edits'");
  if (!J["edits"].is_array())
    return fail(Twine("field 'edits' must be an array, not ") + typeName(J["edits"]));
  if (J["edits"].empty())
    return fail("field 'edits' must hold at least one edit");
  if (!J.contains("rationale"))
    return fail("missing field 'rationale'");
  if (!J["rationale"].is_string())
    return fail(Twine("field 'rationale' must be a string, not ") + typeName(J["rationale"]));
  P.Rationale = J["rationale"].get<std::string>();
  if (J.contains("provenance")) {
    if (!J["provenance"].is_object())
      return fail(Twine("field 'provenance' must be an object, not ") + typeName(J["provenance"]));
    P.Provenance = J["provenance"];
  }
  return Error::success();
}

} // namespace

/// parseProposal, with the spellings of the doubles when \p J was read from text
/// (null otherwise).
static Expected<Proposal> parseProposalImpl(const json &J, const Spellings *Spelled) {
  Proposal P;
  if (Error Err = readTopLevel(J, Spelled, P))
    return Err;
  unsigned Index = 0;
  for (const json &EJ : J["edits"]) {
    ++Index;
    Expected<const KindInfo *> Info = editKindOf(EJ, "edit #" + std::to_string(Index));
    if (!Info)
      return Info.takeError();
    Expected<Edit> E = EditReader(EJ, Index, **Info, Spelled).read();
    if (!E)
      return E.takeError();
    P.Edits.push_back(std::move(*E));
  }
  return P;
}

Expected<Proposal> parseProposal(const json &J) { return parseProposalImpl(J, nullptr); }

Expected<Proposal> parseProposalText(StringRef Text, StringRef Source) {
  // parseStrictJson reports every parser error, a number too large for a double
  // ("1e999": out_of_range.406, found by kloop-fuzz-proposal) included, without throwing.
  StrictJson S = parseStrictJson(Text);
  if (S.SyntaxError)
    return fail(Source + ": not JSON: " + *S.SyntaxError);
  if (!S.Duplicates.empty())
    return fail(Source + ": " + S.Duplicates.front().message());
  auto P = parseProposalImpl(S.Value, &S.FloatSpellings);
  if (!P)
    return fail(Source + ": " + toString(P.takeError()));
  return P;
}

namespace {
bool isIdentChar(char C) { return isalnum((unsigned char)C) || C == '_' || (unsigned char)C >= 0x80; }
} // namespace

namespace {

using Problem = std::optional<std::string>;

/// \p Text after translation phase 2: backslash-newline splices removed (clang allows blanks
/// between them). Sets \p Why when a backslash ends the text.
std::string spliceLines(StringRef Text, Problem &Why) {
  std::string T;
  T.reserve(Text.size());
  for (size_t I = 0; I < Text.size(); ++I) {
    if (Text[I] == '\\') {
      size_t J = I + 1;
      while (J < Text.size() && (Text[J] == ' ' || Text[J] == '\t'))
        ++J;
      if (J < Text.size() && (Text[J] == '\n' || Text[J] == '\r')) {
        if (Text[J] == '\r' && J + 1 < Text.size() && Text[J + 1] == '\n')
          ++J;
        I = J;
        continue;
      }
      if (J == Text.size()) {
        Why = std::string("it ends with a backslash, which would join it with the line after it");
        return T;
      }
    }
    T += Text[I];
  }
  return T;
}

/// The lexical scan of codeSlotProblem: one token at a time, with the brackets still open.
class SlotScanner {
public:
  SlotScanner(std::string Text, CodeSlot Slot)
      : T(std::move(Text)), N(T.size()), Slot(Slot), Expr(Slot == CodeSlot::Expression) {}

  Problem scan() {
    while (I < N) {
      char C = T[I];
      if (C == '\n' || C == '\r') {
        LineStart = true;
        ++I;
        continue;
      }
      if (C == ' ' || C == '\t' || C == '\f' || C == '\v') {
        ++I;
        continue;
      }
      bool AtLineStart = LineStart;
      LineStart = false;
      if (Problem Why = token(C, AtLineStart))
        return Why;
    }
    if (!Open.empty())
      return std::string("it leaves a '") + (Open.back() == ')' ? '(' : Open.back() == ']' ? '[' : '{') + "' open";
    if (Slot == CodeSlot::Body && !BodyClosed)
      return std::string("it is not a body in braces");
    return std::nullopt;
  }

private:
  std::string T;
  size_t N, I = 0;
  CodeSlot Slot;
  bool Expr;
  std::string Open; // the closers still expected, innermost last
  bool LineStart = true, First = true, BodyClosed = false;

  bool at(size_t At, StringRef S) const { return StringRef(T).substr(At).starts_with(S); }

  /// The token at I (not a blank); advances I past it.
  Problem token(char C, bool AtLineStart) {
    if (at(I, "//"))
      return lineComment();
    if (at(I, "/*"))
      return blockComment(AtLineStart);
    if (Slot == CodeSlot::Body && BodyClosed)
      return std::string("there is code after the body's closing '}'");
    if (Slot == CodeSlot::Body && First && !(C == '{' || at(I, "<%")))
      return std::string("it does not start with '{'");
    First = false;
    if (C == '#' || at(I, "%:"))
      return directive(C, AtLineStart);
    if (C == '"' || C == '\'')
      return quoted(C);
    if (isdigit((unsigned char)C) || (C == '.' && I + 1 < N && isdigit((unsigned char)T[I + 1])))
      return number();
    if (isIdentChar(C))
      return identifier();
    return punctuator(C);
  }

  Problem lineComment() {
    if (Expr)
      return std::string("it contains a // comment, which would swallow the rest of the line");
    size_t E = T.find('\n', I);
    if (E == std::string::npos)
      return std::string("it ends inside a // comment, which would swallow the code after it on that line");
    I = E;
    return std::nullopt;
  }

  Problem blockComment(bool AtLineStart) {
    size_t E = T.find("*/", I + 2);
    if (E == std::string::npos)
      return std::string("it has an unterminated /* comment");
    LineStart = AtLineStart;
    I = E + 2;
    return std::nullopt;
  }

  Problem directive(char C, bool AtLineStart) {
    if (Expr)
      return std::string("it contains '#'");
    if (!AtLineStart) { // not a directive; clang rejects a stray '#' itself
      I += C == '#' ? 1 : 2;
      return std::nullopt;
    }
    size_t J = I + (C == '#' ? 1 : 2);
    while (J < N && (T[J] == ' ' || T[J] == '\t'))
      ++J;
    size_t K = J;
    while (K < N && isIdentChar(T[K]))
      ++K;
    std::string Name = T.substr(J, K - J);
    // A system header between two kernels (`#include <cuda_fp16.h>`) only declares.
    bool SystemInclude = false;
    if (Slot == CodeSlot::TopLevel && Name == "include") {
      size_t A = K;
      while (A < N && (T[A] == ' ' || T[A] == '\t'))
        ++A;
      SystemInclude = A < N && T[A] == '<';
    }
    if (Name != "pragma" && !SystemInclude)
      return "it holds a #" + Name + " directive; only #pragma lines" +
             (Slot == CodeSlot::TopLevel ? " and #include <system header>" : "") +
             " may appear in code (a directive also acts on the code after the edit)";
    size_t E = T.find('\n', K);
    if (E == std::string::npos)
      return "it ends inside a #" + Name + " line, which would swallow the code after it on that line";
    I = E;
    return std::nullopt;
  }

  Problem quoted(char C) {
    if (Expr && C == '"')
      return std::string("it contains a string literal");
    size_t J = I + 1;
    while (J < N && T[J] != C && T[J] != '\n')
      J += T[J] == '\\' ? 2 : 1;
    if (J >= N || T[J] != C)
      return std::string("it has an unterminated ") + (C == '"' ? "string" : "character") + " literal";
    I = J + 1;
    return std::nullopt;
  }

  /// A pp-number, digit separators included.
  Problem number() {
    size_t J = I + 1;
    while (J < N) {
      if (isIdentChar(T[J]) || T[J] == '.')
        ++J;
      else if (T[J] == '\'' && J + 1 < N && isIdentChar(T[J + 1]))
        J += 2;
      else if ((T[J] == '+' || T[J] == '-') && strchr("eEpP", T[J - 1]))
        ++J;
      else
        break;
    }
    I = J;
    return std::nullopt;
  }

  Problem identifier() {
    size_t J = I;
    while (J < N && isIdentChar(T[J]))
      ++J;
    StringRef Name = StringRef(T).slice(I, J);
    if (J < N && T[J] == '"' && (Name == "R" || Name == "u8R" || Name == "uR" || Name == "UR" || Name == "LR"))
      return rawString(J);
    I = J; // a literal's prefix (u8, L, ...) is followed by its literal, read next
    return std::nullopt;
  }

  /// A raw string literal whose `"` is at \p J.
  Problem rawString(size_t J) {
    if (Expr)
      return std::string("it contains a string literal");
    size_t Paren = T.find('(', J + 1);
    if (Paren == std::string::npos || Paren - J - 1 > 16 ||
        StringRef(T).slice(J + 1, Paren).find_first_of(" )\\\t\n") != StringRef::npos)
      return std::string("it has a malformed raw string literal");
    std::string Close = ")" + T.substr(J + 1, Paren - J - 1) + "\"";
    size_t E = T.find(Close, Paren + 1);
    if (E == std::string::npos)
      return std::string("it has an unterminated raw string literal");
    I = E + Close.size();
    return std::nullopt;
  }

  /// Punctuators, digraphs included.
  Problem punctuator(char C) {
    char B = C;
    size_t Len = 1;
    if (at(I, "<%"))
      B = '{', Len = 2;
    else if (at(I, "%>"))
      B = '}', Len = 2;
    else if (at(I, "<:") && !(at(I, "<::") && !at(I, "<:::") && !at(I, "<::>")))
      B = '[', Len = 2;
    else if (at(I, ":>"))
      B = ']', Len = 2;
    Problem Why = bracketOrSeparator(B);
    I += Len;
    return Why;
  }

  Problem bracketOrSeparator(char B) {
    switch (B) {
    case '(': Open += ')'; break;
    case '[': Open += ']'; break;
    case '{': Open += '}'; break;
    case ')':
    case ']':
    case '}':
      if (Open.empty())
        return std::string("it closes a '") + B + "' that it did not open";
      if (Open.back() != B)
        return std::string("it closes '") + B + "' where '" + Open.back() + "' is expected";
      Open.pop_back();
      if (Open.empty() && Slot == CodeSlot::Body)
        BodyClosed = true;
      break;
    case ';':
      if (Expr)
        return std::string("it contains ';'");
      break;
    case ',':
      if (Expr && Open.empty())
        return std::string("it is a list, not one expression (a ',' outside brackets)");
      break;
    case '<':
    case '>':
      if (Expr && (at(I, "<<<") || at(I, ">>>")))
        return std::string("it contains '") + std::string(3, B) + "'";
      break;
    default: break;
    }
    return std::nullopt;
  }
};

} // namespace

std::optional<std::string> codeSlotProblem(StringRef Text, CodeSlot Slot) {
  const bool Expr = Slot == CodeSlot::Expression;
  if (Expr && Text.find_first_of("\n\r") != StringRef::npos)
    return std::string("it spans several lines");
  if (Expr && Text.contains('\\'))
    return std::string("it contains a backslash");
  Problem Why;
  std::string T = spliceLines(Text, Why);
  if (Why)
    return Why;
  return SlotScanner(std::move(T), Slot).scan();
}

json proposalToJson(const Proposal &P) {
  json J{{"version", P.Version}, {"rationale", P.Rationale}, {"provenance", P.Provenance}};
  json Edits = json::array();
  for (const Edit &E : P.Edits) {
    json X{{"kind", editKindName(E.Kind)}};
    switch (E.Kind) {
    case EditKind::SetConstant: X["id"] = E.ID; X["value"] = E.Value; break;
    case EditKind::SetUnroll: X["id"] = E.ID; X["count"] = E.Count ? json(*E.Count) : json(nullptr); break;
    case EditKind::SetLaunchBounds:
      X["id"] = E.ID;
      X["max_threads"] = E.MaxThreads;
      if (E.MinBlocks) X["min_blocks"] = *E.MinBlocks;
      break;
    case EditKind::SetLaunchConfig:
      X["id"] = E.ID;
      if (E.Grid) X["grid"] = *E.Grid;
      if (E.Block) X["block"] = *E.Block;
      if (E.SharedMemory) X["shared_memory"] = *E.SharedMemory;
      if (E.AllowOddBlock) X["allow_odd_block"] = *E.AllowOddBlock;
      break;
    case EditKind::AddRestrict:
    case EditKind::AddConst: X["id"] = E.ID; break;
    case EditKind::ReplaceBody:
    case EditKind::ReplaceLoop: X["id"] = E.ID; X["code"] = E.Code; break;
    case EditKind::ReplaceStmt: X["id"] = E.ID; X["stmt"] = E.StmtIndex; X["code"] = E.Code; break;
    case EditKind::InsertDeviceFunction: X["before"] = E.ID; X["code"] = E.Code; break;
    case EditKind::AddKernelVariant:
      X["of"] = E.ID; X["name"] = E.Name; X["code"] = E.Code; X["retarget"] = E.Retarget; break;
    }
    Edits.push_back(X);
  }
  J["edits"] = Edits;
  return J;
}

namespace {
/// One decoded code point of a code field and where it is.
struct CodePoint {
  std::uint32_t Value = 0;
  size_t Offset = 0, Size = 1;
};

/// "U+0441".
std::string codePointName(std::uint32_t C) {
  char Buf[16];
  snprintf(Buf, sizeof Buf, "U+%04X", (unsigned)C);
  return Buf;
}

/// "(line L, column C)" of byte \p Off of \p S; columns count bytes, 1-based.
std::string positionOf(StringRef S, size_t Off) {
  size_t LineStart = S.rfind('\n', Off);
  LineStart = LineStart == StringRef::npos ? 0 : LineStart + 1;
  return "(line " + std::to_string(1 + S.substr(0, Off).count('\n')) + ", column " +
         std::to_string(Off - LineStart + 1) + ")";
}

/// The end of the identifier-like token (an identifier or a pp-number) at \p I of \p S:
/// ASCII letters, digits, '_', UTF-8 sequences and universal character names (\\u, \\U).
size_t identEnd(StringRef S, size_t I) {
  while (I < S.size()) {
    unsigned char C = S[I];
    if (isalnum(C) || C == '_' || C >= 0x80)
      ++I;
    else if (C == '\\' && I + 1 < S.size() && (S[I + 1] == 'u' || S[I + 1] == 'U'))
      I += 2;
    else
      break;
  }
  return I;
}

/// The end of the pp-number at \p I of \p S (it starts with a digit): digit separators
/// (`1'000`), '.', exponents with their sign and identifier characters are part of it.
size_t ppNumberEnd(StringRef S, size_t I) {
  for (size_t J = I + 1;;) {
    size_t E = identEnd(S, J);
    if (E < S.size() && (S[E] == '.' || ((S[E] == '+' || S[E] == '-') && strchr("eEpP", S[E - 1]))))
      J = E + 1;
    else if (E + 1 < S.size() && S[E] == '\'' && (isalnum((unsigned char)S[E + 1]) || S[E + 1] == '_'))
      J = E + 2;
    else
      return E;
  }
}

/// The end of the comment or literal that starts at \p I of \p S (skipped by the identifier
/// scan), or \p I when none starts there. Unterminated ones run to the end.
size_t skipNonCode(StringRef S, size_t I) {
  if (S.substr(I).starts_with("//")) {
    size_t E = S.find('\n', I);
    return E == StringRef::npos ? S.size() : E;
  }
  if (S.substr(I).starts_with("/*")) {
    size_t E = S.find("*/", I + 2);
    return E == StringRef::npos ? S.size() : E + 2;
  }
  if (S[I] == '"' || S[I] == '\'') {
    size_t J = I + 1;
    while (J < S.size() && S[J] != S[I] && S[J] != '\n')
      J += S[J] == '\\' ? 2 : 1;
    return std::min(J + 1, S.size());
  }
  return I;
}
} // namespace

std::optional<std::string> codeTextProblem(StringRef Text) {
  // Bidi controls are refused anywhere, comments and literals included: that is where they hide.
  for (size_t I = 0; I < Text.size();) {
    const UTF8 *Begin = reinterpret_cast<const UTF8 *>(Text.data() + I), *P = Begin;
    UTF32 C = 0;
    if (convertUTF8Sequence(&P, reinterpret_cast<const UTF8 *>(Text.end()), &C, strictConversion) != conversionOK)
      return "is not valid UTF-8 at byte " + std::to_string(I);
    if (isBidiControl(C))
      return "holds the bidirectional control character " + codePointName(C) + " " + positionOf(Text, I) +
             ": it makes code display in another order than it compiles in (refused anywhere in code, comments "
             "and strings included)";
    I += P - Begin;
  }
  // Identifiers must be ASCII: a letter of another script that looks like a Latin one ('с' U+0441
  // in 'sсale') names a different function or variable than the reader sees.
  for (size_t I = 0; I < Text.size();) {
    if (size_t E = skipNonCode(Text, I); E != I) {
      I = E;
      continue;
    }
    unsigned char C = Text[I];
    bool Starts = isalnum(C) || C == '_' || C >= 0x80 || (C == '\\' && identEnd(Text, I) != I);
    if (!Starts) {
      ++I;
      continue;
    }
    size_t E = isdigit(C) ? ppNumberEnd(Text, I) : identEnd(Text, I);
    StringRef Tok = Text.slice(I, E);
    // A raw string literal R"d( ... )d" (also u8R, LR, uR, UR): skip to its end.
    if (E < Text.size() && Text[E] == '"' && Tok.ends_with("R")) {
      size_t Paren = Text.find('(', E + 1);
      size_t End = Paren == StringRef::npos ? StringRef::npos
                                            : Text.find(")" + Text.slice(E + 1, Paren).str() + "\"", Paren);
      I = End == StringRef::npos ? Text.size() : End + (Paren - E) + 1;
      continue;
    }
    size_t Bad = Tok.find_if([](char X) { return (unsigned char)X >= 0x80 || X == '\\'; });
    if (Bad != StringRef::npos) {
      std::string What;
      if (Tok[Bad] == '\\') {
        What = "the universal character name '" + Tok.substr(Bad, Tok[Bad + 1] == 'u' ? 6 : 10).str() + "'";
      } else {
        const UTF8 *P = reinterpret_cast<const UTF8 *>(Tok.data() + Bad);
        UTF32 CP = 0;
        convertUTF8Sequence(&P, reinterpret_cast<const UTF8 *>(Tok.end()), &CP, lenientConversion);
        What = "the non-ASCII character " + codePointName(CP);
      }
      return "has the identifier '" + Tok.str() + "' " + positionOf(Text, I) + " with " + What +
             ": identifiers in code must be ASCII (a look-alike letter from another script, such as "
             "Cyrillic 'с' U+0441 for 's', names something else than the reader sees)";
    }
    I = E;
  }
  return std::nullopt;
}

} // namespace kloop
