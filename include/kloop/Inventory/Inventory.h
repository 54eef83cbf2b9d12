//===- kloop/Inventory/Inventory.h - Kernels and their tunable regions ----===//
///
/// \file
/// The inventory names every CUDA kernel of a codebase, its launch sites and its
/// tunable regions (loops, shared-memory arrays, tunable constants, template
/// parameters, `__launch_bounds__`, pointer parameters) with stable, readable IDs.
/// Every later stage (kloop apply, optimize) names code by these IDs.
///
/// ID grammar (docs/inventory.md has the full schema):
///   kernel         <qualified name>                 e.g. `ns::reduce`
///                  (+ `(<param types>)` for overloads, `@<file>` when two files
///                   define different kernels with one name)
///   instantiation  <kernel><<template args>>         e.g. `ns::reduce<256>`
///   loop           <kernel>/loop#<N>    N: 1-based pre-order index of the loop in the body
///   shared array   <kernel>/shared:<name>
///   local constant <kernel>/const:<name>
///   template param <kernel>/tparam:<name>
///   parameter      <kernel>/param:<name>
///   launch bounds  <kernel>/launch_bounds
///   device fn      device:<qualified name>
///   launch site    <file>:<enclosing function>/launch#<N>   N: 1-based, source order
///   constant       macro:<NAME> | const:<qualified name>
/// An ID depends only on names and on the order of loops/launches within their
/// own function, so edits elsewhere, reformatting and comments leave it unchanged.
/// Kernels carry nvcc's symbols (kloop/Inventory/KernelNames.h); kernel
/// templates in system headers that a translation unit instantiates (CUB,
/// Thrust) are listed as library kernels: names only, not editable.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_INVENTORY_INVENTORY_H
#define KLOOP_INVENTORY_INVENTORY_H

#include "kloop/Frontend/Frontend.h"
#include "nlohmann/json.hpp"
#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace clang {
class ASTContext;
class Decl;
class Stmt;
class Preprocessor;
class FrontendAction;
} // namespace clang

namespace kloop {

/// Version of the JSON document `kloop extract` writes (field "version").
/// Bumped on any incompatible change of docs/inventory.md's schema.
constexpr int InventorySchemaVersion = 1;

/// What an inventory entity is.
enum class EntityKind {
  Kernel,
  DeviceFunction,
  Loop,
  SharedArray,
  LocalConstant,
  TemplateParam,
  Param,
  LaunchBounds,
  LaunchSite,
  Constant, ///< a macro or a namespace-scope const/constexpr variable
};

/// "kernel", "device_function", "loop", ...: the spelling used in JSON.
const char *entityKindName(EntityKind K);

/// A source range in one file. Lines and columns are 1-based; the end is the
/// last character of the last token (inclusive). Offsets are byte offsets
/// into the file, [BeginOffset, EndOffset).
struct SourceSpan {
  std::string File;
  unsigned BeginLine = 0, BeginColumn = 0, EndLine = 0, EndColumn = 0;
  unsigned BeginOffset = 0, EndOffset = 0;
  nlohmann::json toJson() const;
};

/// One named thing in the inventory.
struct Entity {
  /// Stable ID (see the grammar above).
  std::string ID;
  EntityKind Kind = EntityKind::Kernel;
  /// ID of the kernel (or host function, for launch sites) that contains it;
  /// empty for kernels, device functions and namespace-scope constants.
  std::string Owner;
  /// Where it is written (for macro-expanded code: where the macro is expanded).
  SourceSpan Span;
  /// False when the entity comes from a macro expansion (or a system header);
  /// then NotEditableReason says why and kloop apply refuses to edit it.
  bool Editable = true;
  std::string NotEditableReason;
  /// Kind-specific fields, exactly as they appear in the JSON document.
  nlohmann::json Data = nlohmann::json::object();
  /// The AST node, valid only while the ASTContext that produced the entity
  /// lives (kloop apply resolves IDs through these).
  const clang::Decl *D = nullptr;
  const clang::Stmt *S = nullptr;
};

/// Recorded by the preprocessor callbacks of one parse: object-like macros whose
/// body is one integer literal, and where each is expanded.
struct MacroTable {
  struct Definition {
    std::string Name;
    long long Value = 0;
    std::string Text; ///< the body as written
    SourceSpan Span;
    bool InSystemHeader = false;
  };
  struct Expansion {
    std::string Name;
    std::string File;
    unsigned Offset = 0, Line = 0, Column = 0;
  };
  std::vector<Definition> Definitions;
  std::vector<Expansion> Expansions;
};

/// Everything one parse (one side of one translation unit) contributed.
struct SideInventory {
  Side Which = Side::Device;
  std::vector<Entity> Entities;
  /// Uses of tunable constants in tunable contexts: one JSON object per use
  /// {"constant": ID, "context": "block_size"|"grid_size"|"array_size"|
  ///  "loop_bound"|"unroll"|"launch_bounds"|"template_arg"|"shared_memory_size",
  ///  "owner": ID, "file", "line", "column"}.
  std::vector<nlohmann::json> ConstantUses;
};

/// Walks a parsed translation unit and lists its entities. \p Macros is the
/// table the same parse's preprocessor callbacks filled (may be empty).
SideInventory collectSideInventory(clang::ASTContext &Ctx, Side Which, const MacroTable &Macros);

/// Installs preprocessor callbacks on \p PP that fill \p Table.
void recordMacros(clang::Preprocessor &PP, MacroTable &Table);

/// A FrontendAction that records macros and, at the end of the translation
/// unit, runs collectSideInventory into \p Out.
std::unique_ptr<clang::FrontendAction> makeInventoryAction(Side Which, SideInventory &Out);

/// Outcome of parsing one translation unit on both sides.
struct TUResult {
  CompileJob Job;
  ParseResult Device, Host;
  SideInventory DeviceInv, HostInv;
  /// True when the job could not even be parsed (Job.Error set) or a side failed.
  bool failed() const { return Job.Error.has_value() || !Device.Ok || !Host.Ok; }
};

/// Parses every job on both sides (in parallel, Opts.Jobs threads).
std::vector<TUResult> runInventory(const std::vector<CompileJob> &Jobs, const FrontendOptions &Opts);

/// Merges per-TU results into the JSON document of docs/inventory.md: kernels
/// (deduplicated across translation units that include one header), device
/// functions, launch sites, constants with every use, and per-TU status with
/// errors. Paths are written relative to \p Root when they lie below it.
nlohmann::json mergeInventory(const std::vector<TUResult> &Results, llvm::StringRef Root);

} // namespace kloop

#endif
