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
/// Kernels carry nvcc's symbols (kloop/Inventory/KernelNames.h); kernels in
/// system headers (CUB, Thrust) are listed as library kernels, names only, not
/// editable: a template for the instantiations a translation unit defines, any
/// other kernel whenever the translation unit defines it (nvcc emits them all).
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_INVENTORY_INVENTORY_H
#define KLOOP_INVENTORY_INVENTORY_H

#include "kloop/Frontend/Frontend.h"
#include "kloop/Inventory/Model.h"
#include "nlohmann/json.hpp"
#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace clang {
class ASTContext;
class CUDALaunchBoundsAttr;
class Decl;
class SourceRange;
class DiagnosticsEngine;
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

/// A place in a source file: the presumed file name (spelled as in
/// SourceSpan::File) and a byte offset into it.
struct SourcePoint {
  std::string File;
  unsigned Offset = 0;
};

/// One error (level "error" or "fatal") that clang reported in one parse,
/// located so that it can be attributed to the entities it touches.
struct LocatedError {
  /// The error as clang reported it (presumed file, line, column, message).
  ParseDiagnostic Diag;
  /// The side whose parse reported it.
  Side Which = Side::Device;
  /// Where it lies; for code produced by a macro, where the macro is expanded
  /// (as for SourceSpan). File is empty when the error has no location.
  SourcePoint At;
  /// Where the error's context notes point: clang's "in instantiation of ...
  /// requested here", "while substituting ...", "during template argument
  /// deduction ..." and CUDA's "called by ..." notes that follow the error. An
  /// error inside a template (or a device function reached through a call
  /// chain) thereby also touches the kernel or launch site that instantiates or
  /// calls it.
  std::vector<SourcePoint> Context;
  /// True when At or one of Context lies inside \p S (same file, offset in
  /// [BeginOffset, EndOffset]).
  bool touches(const SourceSpan &S) const;
  /// True when At itself lies inside \p S (the context notes are not looked at).
  bool at(const SourceSpan &S) const;
};

/// The errors one parse reported, in order; filled by recordErrors.
struct ErrorTable {
  std::vector<LocatedError> Errors;
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
  /// Kernels, device functions and launch sites: the errors that touch the
  /// entity (LocatedError::touches its Span), from either side. With any, or
  /// with InvalidDecl, its status is "error" and it is not editable.
  std::vector<LocatedError> Errors;
  /// True when clang marked the entity's declaration invalid
  /// (clang::Decl::isInvalidDecl): its status is "error" even when the error
  /// that made it so lies elsewhere (e.g. in a header declaring a type it uses).
  bool InvalidDecl = false;
  /// "ok" or "error" (docs/inventory.md, "Errors").
  bool hasErrors() const { return InvalidDecl || !Errors.empty(); }
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
    std::string Text; ///< the definition as written, name first ("BLOCK 256")
    SourceSpan Span;
    bool InSystemHeader = false;
    /// Defined by a -D flag of the compile command (its location reads "<command line>"):
    /// there is no source text to edit.
    bool CommandLine = false;
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
  /// Uses of constants where their value is a hardware fact (the warp size of
  /// a lane index `i % 32`, a lane mask `i & 31`, a shuffle width, a comparison
  /// with warpSize), in the form of ConstantUses with "context" holding the
  /// reason ("width argument of __shfl_down_sync (...)"). They do not make a
  /// constant tunable; they mark it `hardware_fact` (docs/inventory.md).
  std::vector<nlohmann::json> HardwareUses;
  /// True when the parse produced an AST and it was walked: false when the
  /// parse did not run or stopped at a fatal error (a missing #include), after
  /// which clang reports nothing more, so no entity could be trusted.
  bool Parsed = false;
  /// Every error of the parse (when collectSideInventory was given an ErrorTable).
  std::vector<LocatedError> Errors;
};

/// The source range of \p LB's written arguments, from max_threads to the last one written (min blocks,
/// then sm_90's max blocks per cluster): what the inventory's launch_bounds entity spans and what
/// set_launch_bounds rewrites.
clang::SourceRange launchBoundsArguments(const clang::CUDALaunchBoundsAttr &LB);

/// Walks a parsed translation unit and lists its entities. \p Macros is the
/// table the same parse's preprocessor callbacks filled (may be empty). The
/// AST may hold errors (clang's recovery: invalid declarations, RecoveryExpr):
/// with \p Errors (the table recordErrors filled for this parse) every error is
/// attributed to the kernels, device functions and launch sites it touches
/// (attributeErrors).
SideInventory collectSideInventory(clang::ASTContext &Ctx, Side Which, const MacroTable &Macros,
                                   const ErrorTable *Errors = nullptr);

/// Records every error and fatal error \p Diags reports from now on, with the
/// context notes that follow it, into \p Table; the diagnostics still reach the
/// consumer installed before (it is wrapped, not replaced). \p Which names the
/// side of the parse. \p Table must outlive the parse.
void recordErrors(clang::DiagnosticsEngine &Diags, Side Which, ErrorTable &Table);

/// Adds each of \p Errors to every kernel, device function and launch site of
/// \p Inv it touches (an error already there is not added twice). A touched
/// entity becomes not editable, its reason naming the first error. A kernel without errors that calls a
/// device function with errors (through others too, by "calls") keeps status "ok", but its
/// "indirect_pointer" names that call when it named nothing: what clang dropped there is not known.
void attributeErrors(SideInventory &Inv, const std::vector<LocatedError> &Errors);

/// The not-editable reason of an entity with errors, from its error lines
/// ("file:line:col: error: message [side]"): "has N compile error(s), the
/// first: <line>"; with none, that its declaration is invalid.
std::string errorReason(const std::vector<std::string> &ErrorLines);

/// True when a parse yields nothing to read: a fatal error (clang stops
/// reporting after one, e.g. a missing #include), or an error without a
/// location (the driver refused the command line, so nothing was parsed).
bool parseUnusable(const ParseResult &R);

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
  /// True when the translation unit yields nothing: the job could not be
  /// parsed (Job.Error set), or a side is unusable (parseUnusable) or produced
  /// no AST. Its status is "error" and it contributes no entity.
  bool lost() const {
    return Job.Error.has_value() || parseUnusable(Device) || parseUnusable(Host) || !DeviceInv.Parsed ||
           !HostInv.Parsed;
  }
};

class ExtractCache;

/// Parses every job on both sides (in parallel, Opts.Jobs threads), with no
/// error limit, and collects the inventory of each side even when it has
/// errors; each side's entities also get the other side's errors that touch
/// them (attributeErrors). With \p Cache, a job whose entry is still valid is
/// taken from it instead of being parsed, and every parsed job is stored
/// (kloop/Inventory/ExtractCache.h); a failed store is ignored (it only costs a
/// parse next time).
std::vector<TUResult> runInventory(const std::vector<CompileJob> &Jobs, const FrontendOptions &Opts,
                                   ExtractCache *Cache = nullptr);

/// Merges per-TU results into the JSON document of docs/inventory.md: kernels
/// (deduplicated across translation units that include one header), device
/// functions, launch sites, constants with every use, and per-TU status with
/// errors. Paths are written relative to \p Root when they lie below it.
/// Kernels, device functions and launch sites carry "status" ("ok" or "error")
/// and "errors"; a translation unit's status is "ok" (no error), "partial"
/// (errors, and at least one of its kernels or launch sites has status "ok") or
/// "error" (lost(), or none of its kernels and launch sites has status "ok").
nlohmann::json mergeInventory(const std::vector<TUResult> &Results, llvm::StringRef Root);

/// mergeInventory's document as typed values (kloop/Inventory/Model.h), read
/// strictly: a member the model lacks is an error (a kloop bug, caught by every
/// kloop extract test, since `kloop extract` prints inv::toJSON of this value).
llvm::Expected<inv::Inventory> typedInventory(const std::vector<TUResult> &Results, llvm::StringRef Root);

} // namespace kloop

#endif
