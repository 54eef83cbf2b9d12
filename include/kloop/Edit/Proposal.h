//===- kloop/Edit/Proposal.h - The edit language ----------------*- C++ -*-===//
///
/// \file
/// A proposal is data: typed edits anchored to inventory IDs (never byte
/// offsets), a rationale and a provenance object. docs/edits.md documents the
/// versioned schema; prompts/proposal.schema.json is its JSON Schema form.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_EDIT_PROPOSAL_H
#define KLOOP_EDIT_PROPOSAL_H

#include "nlohmann/json.hpp"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kloop {

/// Version of the proposal schema (field "version"); bumped on incompatible change.
constexpr int ProposalSchemaVersion = 1;

/// CUDA's maximum grid size in blocks, x, y and z (CUDA C Programming Guide,
/// "Features and Technical Specifications"). An integer set_launch_config "grid"
/// (its x dimension) is checked against x while parsing; applyProposal checks
/// every constant grid of an edited launch against all three.
constexpr long long MaxGridDim[3] = {2147483647, 65535, 65535};

/// The most dynamic shared memory, in bytes, that one block may use on sm_90
/// (H100/H200), with cudaFuncSetAttribute's opt-in: 227 KiB. An integer
/// "shared_memory" and every constant size of an edited launch must be 0 to this;
/// lower limits of other GPUs (sm_80: 163 KiB) are not checked.
constexpr long long MaxDynamicSharedMemory = 232448;

/// The kinds of edit (JSON field "kind", spelled as in editKindName()).
enum class EditKind {
  SetConstant,          ///< set_constant {id, value}
  SetUnroll,            ///< set_unroll {id, count}
  SetLaunchBounds,      ///< set_launch_bounds {id, max_threads, min_blocks?}
  SetLaunchConfig,      ///< set_launch_config {id, grid?, block?, shared_memory?, allow_odd_block?}
  AddRestrict,          ///< add_restrict {id}
  AddConst,             ///< add_const {id}
  ReplaceBody,          ///< replace_body {id, code}
  ReplaceLoop,          ///< replace_loop {id, code}
  ReplaceStmt,          ///< replace_stmt {id (kernel or loop), stmt (1-based), code}
  InsertDeviceFunction, ///< insert_device_function {before, code}
  AddKernelVariant,     ///< add_kernel_variant {of, name, code, retarget}
};

/// "set_constant", "set_unroll", ...
const char *editKindName(EditKind K);

/// One validated edit. Only the fields of its kind are meaningful.
struct Edit {
  EditKind Kind = EditKind::SetConstant;
  /// The inventory ID the edit is anchored to ("id", or "before"/"of").
  std::string ID;
  /// set_constant: the new value as source text (an integer is printed in decimal).
  std::string Value;
  /// set_unroll: the factor; std::nullopt removes the pragma. Always >= 1 once parsed.
  std::optional<long long> Count;
  /// set_launch_bounds: maxThreadsPerBlock (1..1024) and optional minBlocksPerMultiprocessor (>= 1).
  long long MaxThreads = 0;
  std::optional<long long> MinBlocks;
  /// set_launch_config: new C++ expressions; unset ones stay as they are.
  std::optional<std::string> Grid, Block, SharedMemory;
  /// set_launch_config: why a block size that is not a multiple of 32 (or over 1024) is wanted.
  std::optional<std::string> AllowOddBlock;
  /// replace_stmt: the 1-based index of the statement among the direct statements
  /// of the body named by ID (a kernel's body, or a loop's body); 0 for other kinds.
  /// Always in [1, 1048576] once parsed; the upper bound of the body is checked by
  /// applyProposal.
  long long StmtIndex = 0;
  /// replace_body / replace_loop / replace_stmt / insert_device_function / add_kernel_variant: new code.
  std::string Code;
  /// add_kernel_variant: the new kernel's (unqualified) name and the launch-site IDs to retarget.
  std::string Name;
  std::vector<std::string> Retarget;
  /// "kind id" as used in refusal messages, e.g. "set_unroll k/loop#1";
  /// replace_stmt adds the index: "replace_stmt k/loop#1 stmt 2".
  std::string label() const;
};

/// A validated proposal.
struct Proposal {
  int Version = ProposalSchemaVersion;
  std::vector<Edit> Edits;
  std::string Rationale;
  /// Free-form provenance object (proposer, model, prompt hash, ...), kept as given.
  nlohmann::json Provenance = nlohmann::json::object();
};

/// What parseStrictJson() read from a JSON text.
struct StrictJson {
  /// The parsed value; null when SyntaxError is set. Where an object repeats a
  /// key, the last occurrence is kept (as nlohmann::json::parse does), so check
  /// Duplicates before using it.
  nlohmann::json Value;
  /// nlohmann's parser message when the text is not one JSON value, e.g.
  /// "[json.exception.parse_error.101] parse error at line 1, column 2: ...", or
  /// "[json.exception.out_of_range.406] number overflow parsing '1e999'", or
  /// "arrays and objects nested deeper than 256 levels (at '/provenance/a/0/0/0/0/0/0/...')" (the
  /// first 8 keys or indices).
  std::optional<std::string> SyntaxError;
  /// The deepest nesting of arrays and objects read. A proposal needs 4 (the object, `edits`, an edit, a
  /// value) and a reply a few more; a deeper text is refused, so that no recursive walk of the value
  /// (nlohmann's copy, dump and comparison recurse) can exhaust the stack: 150,000 nested arrays in a
  /// proposal's `provenance` crashed `kloop apply` before this bound.
  static constexpr std::size_t MaxDepth = 256;
  /// A key that one object holds more than once.
  struct DuplicatedKey {
    std::string Key;    ///< the key as decoded from its string
    std::string Object; ///< JSON pointer (RFC 6901) of the object; "" for the top level
    /// "duplicated key 'edits' in the top-level object", "duplicated key 'value'
    /// in edit #2" (the object at /edits/1) or "duplicated key 'model' in the
    /// object at '/provenance'".
    inline std::string message() const;
  };
  /// Every repeated key, in the order of the text (each repetition once; those
  /// before a syntax error included).
  std::vector<DuplicatedKey> Duplicates;
  /// The text as written of every number that nlohmann stores as a double, keyed
  /// by the JSON pointer of the value: numbers with a fraction or an exponent
  /// ("2.5", "1e3") and integers beyond the range of int64/uint64
  /// ("99999999999999999999999"), which a double cannot hold exactly.
  std::map<std::string, std::string> FloatSpellings;
};

/// Parses \p Text as exactly one JSON value (RFC 8259, surrounding whitespace
/// allowed; no comments, nothing after the value) with nlohmann's parser, and
/// also records what nlohmann::json::parse silently loses: repeated keys of an
/// object (the last one would win) and the spelling of floating-point numbers.
/// Never throws. Every proposal reader uses it, kloopEdit's parseProposalText
/// and the proposers' reply parser (kloop/Propose/Proposer.h), so that both
/// refuse a duplicated key; it is defined in this header because kloopPropose
/// does not link kloopEdit.
inline StrictJson parseStrictJson(llvm::StringRef Text);

/// Validates \p J against the schema of docs/edits.md. Errors (llvm::StringError)
/// name the edit index and field: "edit #2 (set_unroll): field 'count' must be an
/// integer in [1, 2147483647] or null (remove the pragma), got \"4\"", "edit #1:
/// unknown kind 'set_magic'", "unknown top-level field 'foo'", "field
/// 'version' must be 1".
/// An integer field outside its range, or a JSON number that is not an integer,
/// is refused naming the field, the value and the range: "edit #1
/// (set_launch_bounds): field 'max_threads' 2048 is out of range [1, 1024]",
/// "edit #1 (set_constant): field 'value' 18446744073709551615 is out of range
/// (at most 9223372036854775807)", "field 'value' 2.5 is not an integer (...)".
/// \p J carries no number spellings, so an integer too large for uint64 (which
/// nlohmann stores as a double) is reported as not an integer here;
/// parseProposalText() tells the two apart.
llvm::Expected<Proposal> parseProposal(const nlohmann::json &J);

/// Parses \p Text with parseStrictJson() then validates it with the rules of
/// parseProposal(). A syntax error is reported as "<Source>: not JSON: <parser
/// message>", a repeated key as "<Source>: duplicated key 'edits' in the
/// top-level object" (or "in edit #N", "in the object at '/provenance'"): JSON
/// parsers disagree on which occurrence counts, so kloop does not pick one. An
/// integer written beyond the range of int64 is "out of range", and a number
/// written with a fraction or an exponent ("1e3") is "not an integer".
llvm::Expected<Proposal> parseProposalText(llvm::StringRef Text, llvm::StringRef Source = "proposal");

/// Where a proposal's source text goes, for codeSlotProblem().
enum class CodeSlot {
  Expression, ///< set_constant value, set_launch_config grid/block/shared_memory: one expression on one line
  Body,       ///< replace_body code: one compound statement `{ ... }`
  Statements, ///< replace_loop / replace_stmt code: statements that stay inside the enclosing body
  TopLevel,   ///< insert_device_function / add_kernel_variant code: declarations between two kernels
};

/// Why \p Text cannot go into \p Slot without reaching code outside the edited
/// region, or std::nullopt when it can. A lexical check (comments, string and
/// character literals, line splices and digraphs are understood): brackets must
/// balance and never close one opened before the text; an expression holds no
/// `;`, no top-level `,`, no `<<<`/`>>>`, no `//` comment, no backslash and no
/// line break; code holds no preprocessor directive but `#pragma` (and, between
/// kernels, `#include <system header>`). Without it,
/// `"block": "128>>>(a); cudaFree(b); k<<<1, 128"` or a body `{ } int f() { ... }`
/// would add host code through an edit whose replacement lies inside its region.
std::optional<std::string> codeSlotProblem(llvm::StringRef Text, CodeSlot Slot);

/// Why the text of a code field (set_constant "value", set_launch_config "grid",
/// "block", "shared_memory", and "code") is refused regardless of where it goes, or
/// std::nullopt. Two things (issue #12, item 8): a Unicode bidirectional control
/// character anywhere, comments and string literals included (U+202A-U+202E,
/// U+2066-U+2069, U+200E, U+200F; "Trojan Source", CVE-2021-42574), and an
/// identifier (or pp-number) holding a non-ASCII character or a universal character
/// name (`\u0441`), which covers identifiers that mix scripts (`sсale` with a
/// Cyrillic 'с'). Non-ASCII text in comments and literals is allowed. Invalid UTF-8
/// is refused. Messages give the code point and the line and column (bytes,
/// 1-based) in the field, e.g. "has the identifier 'sсale' (line 1, column 18)
/// with the non-ASCII character U+0441: identifiers in code must be ASCII ...".
/// parseProposal() applies it to every code field and names the edit and field.
std::optional<std::string> codeTextProblem(llvm::StringRef Text);

/// The JSON form of \p P (round-trips through parseProposal).
nlohmann::json proposalToJson(const Proposal &P);

// ---- parseStrictJson (inline: kloopPropose uses it without linking kloopEdit) ----

namespace detail {
/// A nlohmann SAX handler that builds the same DOM as nlohmann::json::parse and
/// records repeated keys and the spelling of floating-point numbers.
class StrictJsonBuilder : public nlohmann::json::json_sax_t {
public:
  /// Builds into \p Out (Value, Duplicates, FloatSpellings, SyntaxError).
  explicit StrictJsonBuilder(StrictJson &Out) : Out(Out) {}

  // The SAX events of nlohmann::json_sax, in the order of the text. Each value
  // goes where the parser is (the top level, the next element of the open
  // array, or the open object's member under the last key); returning false
  // stops the parse, which only parse_error does.
  bool null() override { return put(nullptr); }
  bool boolean(bool V) override { return put(V); }
  bool number_integer(number_integer_t V) override { return put(V); }
  bool number_unsigned(number_unsigned_t V) override { return put(V); }
  bool number_float(number_float_t V, const string_t &Spelling) override {
    put(V);
    Out.FloatSpellings[pointer(Frames.size())] = Spelling;
    return true;
  }
  bool string(string_t &V) override { return put(V); }
  bool binary(binary_t &V) override { return put(nlohmann::json::binary(V)); }
  bool start_object(std::size_t) override { return open(nlohmann::json::object()); }
  bool key(string_t &K) override {
    Frame &F = Frames.back();
    if (!F.Keys.insert(K).second)
      Out.Duplicates.push_back({K, pointer(Frames.size() - 1)});
    F.Token = K;
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(nlohmann::json::array()); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string &, const nlohmann::json::exception &E) override {
    Out.SyntaxError = E.what();
    return false;
  }

private:
  /// One open object or array: the container, the keys seen so far (objects),
  /// the key or index of the member being read.
  struct Frame {
    nlohmann::json *Container;
    std::set<std::string> Keys;
    std::string Token;
    std::size_t NextIndex = 0;
  };
  StrictJson &Out;
  std::vector<Frame> Frames;

  /// Stores \p V where the parser is; returns it (its address is stable until
  /// the next value of the same array).
  nlohmann::json *store(nlohmann::json V) {
    if (Frames.empty()) {
      Out.Value = std::move(V);
      return &Out.Value;
    }
    Frame &F = Frames.back();
    if (F.Container->is_array()) {
      F.Token = std::to_string(F.NextIndex++);
      F.Container->push_back(std::move(V));
      return &F.Container->back();
    }
    nlohmann::json &Slot = (*F.Container)[F.Token];
    Slot = std::move(V);
    return &Slot;
  }
  bool put(nlohmann::json V) {
    store(std::move(V));
    return true;
  }
  bool open(nlohmann::json Empty) {
    if (Frames.size() >= StrictJson::MaxDepth) {
      Out.SyntaxError = "arrays and objects nested deeper than " + std::to_string(StrictJson::MaxDepth) +
                        " levels (at '" + pointer(8) + "/...')";
      return false;
    }
    nlohmann::json *C = store(std::move(Empty));
    Frames.push_back(Frame{C, {}, {}, 0});
    return true;
  }
  bool close() {
    Frames.pop_back();
    return true;
  }
  /// The JSON pointer made of the tokens of the first \p Depth open containers.
  std::string pointer(std::size_t Depth) const {
    std::string P;
    for (std::size_t I = 0; I < Depth; ++I) {
      P += '/';
      for (char C : Frames[I].Token)
        P += C == '~' ? std::string("~0") : C == '/' ? std::string("~1") : std::string(1, C);
    }
    return P;
  }
};
} // namespace detail

inline std::string StrictJson::DuplicatedKey::message() const {
  std::string Where;
  llvm::StringRef Rest(Object);
  if (Object.empty()) {
    Where = "the top-level object";
  } else if (Rest.consume_front("/edits/") && !Rest.empty() && Rest.size() < 10 &&
             Rest.find_first_not_of("0123456789") == llvm::StringRef::npos) {
    Where = "edit #" + std::to_string(std::stoul(Rest.str()) + 1);
  } else {
    Where = "the object at '" + Object + "'";
  }
  return "duplicated key '" + Key + "' in " + Where;
}

inline StrictJson parseStrictJson(llvm::StringRef Text) {
  StrictJson Out;
  detail::StrictJsonBuilder Builder(Out);
  bool Ok = nlohmann::json::sax_parse(Text.begin(), Text.end(), &Builder);
  if (!Ok || Out.SyntaxError) {
    if (!Out.SyntaxError)
      Out.SyntaxError = "the JSON parser stopped";
    Out.Value = nullptr;
  }
  return Out;
}

} // namespace kloop

#endif
