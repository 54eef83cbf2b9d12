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
#include <optional>
#include <string>
#include <vector>

namespace kloop {

/// Version of the proposal schema (field "version"); bumped on incompatible change.
constexpr int ProposalSchemaVersion = 1;

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

/// Validates \p J against the schema of docs/edits.md. Errors (llvm::StringError)
/// name the edit index and field: "edit #2 (set_unroll): field 'count' must be a
/// positive integer or null", "edit #1: unknown kind 'set_magic'", "unknown
/// top-level field 'foo'", "field 'version' must be 1".
llvm::Expected<Proposal> parseProposal(const nlohmann::json &J);

/// Parses \p Text as JSON then validates it; a syntax error is reported as
/// "<Source>: not JSON: <parser message>".
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

/// The JSON form of \p P (round-trips through parseProposal).
nlohmann::json proposalToJson(const Proposal &P);

} // namespace kloop

#endif
