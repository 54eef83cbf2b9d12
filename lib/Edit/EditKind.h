//===- EditKind.h - One edit kind, and the registry of all kinds -*- C++ -*-===//
//
// Internal to kloopEdit. Each edit kind of docs/edits.md is one class in
// lib/Edit/Kinds/<Kind>.cpp that implements EditKindPlanner: the kind's name,
// the inventory entity its ID names, the sides of a translation unit it is
// planned on, the slot its text must stay in, the replacements it makes on the
// AST of one parse (plan) and what it checks on the edited inventory
// (checkEdited). Kinds/Module.cpp registers all kinds, the way a clang-tidy
// module registers its checks; applyProposal reaches a kind only through
// editKindPlanner().
//
//===----------------------------------------------------------------------===//
#ifndef KLOOP_LIB_EDIT_EDITKIND_H
#define KLOOP_LIB_EDIT_EDITKIND_H

#include "kloop/Edit/Apply.h"
#include "kloop/Inventory/Inventory.h"

#include "clang/Basic/SourceLocation.h"
#include "llvm/ADT/StringRef.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace clang {
class ASTContext;
class Expr;
class ParmVarDecl;
class SourceManager;
class TypeLoc;
} // namespace clang

namespace kloop {
namespace edit {

/// A region [Begin, End) of one file that an edit may change.
struct Region {
  std::string File; ///< absolute path
  unsigned Begin = 0, End = 0;
};

/// A range of one file: [Begin, End), byte offsets.
struct FileRange {
  std::string File; ///< absolute path
  unsigned Begin = 0, End = 0;
};

/// What one side of one parse made of one edit.
struct Outcome {
  enum State { NotFound, Ok, Refused } St = NotFound;
  std::string Reason; ///< when Refused
  std::vector<TextEdit> Edits;
  /// Where Edits may lie; empty: the entity's region (its kernel's for a loop or a parameter).
  std::vector<Region> Regions;
  /// add_kernel_variant on the host side: the retargeted launch sites found in this parse.
  std::vector<std::string> FoundSites;
  /// The file-qualified ID of the entity this parse resolved the edit's ID to
  /// (PlanContext::qualifiedID); empty when none was found. Two different ones for one edit mean
  /// its plain ID names entities of several files (kernels of one name in two files).
  std::string Resolved;
};

Outcome refuse(std::string Why);
Outcome accept(std::vector<TextEdit> Edits);
/// \p R replaced by \p Text (EditIndex is set when the outcomes are merged).
TextEdit replaceRange(const FileRange &R, std::string Text);
/// Why a range that crosses a macro expansion is not edited.
const char *macroRefusal();
/// The statement whose end decides whether a `;` after \p S's source range still belongs to \p S:
/// `if (c) x = 1;` ends like `x = 1`, `for (...) s += x[i];` like `s += x[i]`.
const clang::Stmt *lastSubStmt(const clang::Stmt *S);
/// The offset where the line holding offset \p Off of \p Buf begins.
unsigned lineStart(llvm::StringRef Buf, unsigned Off);
/// The offset of the `;` at or after \p I in \p Buf, past whitespace and comments; nullopt when another
/// character comes first.
std::optional<size_t> semicolonAt(llvm::StringRef Buf, size_t I);
/// \p E without parentheses, implicit and explicit casts.
const clang::Expr *stripCasts(const clang::Expr *E);
/// The part of an ID before `@file`, and the file (empty when none).
std::pair<std::string, std::string> splitAt(llvm::StringRef ID);
/// The type of \p P as written, without its top-level qualifiers.
clang::TypeLoc unqualifiedTypeLoc(const clang::ParmVarDecl &P);

/// Text that must stay in the place it replaces (a region check on the replaced range alone
/// lets `128>>>(a); hostCode(); k<<<1, 128` through): "field 'F' must be one C++ expression
/// on one line: ..." for an expression field, "'code' must stay WHERE: ..." for code.
std::optional<std::string> expressionSlotProblem(llvm::StringRef Field, const std::string &Value);
std::optional<std::string> codeSlotProblemOf(const Edit &Ed, CodeSlot S, llvm::StringRef Where);

/// One visible launch of a kernel from host code: the pairs of pointer
/// parameters that receive the same pointer (or one derived from it).
struct LaunchFacts {
  std::string SiteID, Kernel;
  /// Parameters by position (0-based): the launching TU may declare the kernel with other
  /// parameter names than its definition, or none. A1 and A2 are the argument texts, Why the reason
  /// they may overlap: "both derived from 'x'" (a variable both may derive from) or "where 'z' points cannot
  /// be told from the launching function" (a local set again, an array element, a call's result).
  struct Alias {
    unsigned I1 = 0, I2 = 0;
    std::string A1, A2, Why;
  };
  std::vector<Alias> Aliases;
  /// Set for a use of the kernel whose arguments cannot be read at all (a function pointer, a launch
  /// clang does not resolve): why; SiteID is then `file:line` and Aliases is empty.
  std::string Unchecked;
  /// Functions that pass their pointer parameters to this launch's pointer arguments and whose callers
  /// the alias check cannot see, since they are externally visible and their translation unit calls
  /// them nowhere (`'run' (a.cu:3)`): what the arguments receive is assumed not to overlap.
  std::vector<std::string> CallersUnseen;
};

struct PlanState;
struct ArchFact;

/// One side of one parse of one translation unit, as a kind's plan function
/// sees it: the side inventory by ID, and source ranges turned into file
/// ranges (Lexer::makeFileCharRange; a range in a macro expansion has none).
class PlanContext {
public:
  PlanContext(PlanState &St, Side W, const CompileJob &Job, clang::ASTContext &Ctx, SideInventory &Inv);

  Side side() const { return W; }
  const CompileJob &job() const { return Job; }
  /// The root that messages name files relative to (ApplyOptions::Root).
  llvm::StringRef root() const;
  clang::ASTContext &astContext() const { return Ctx; }
  const clang::SourceManager &sourceManager() const { return SM; }
  /// Every entity of this side, by ID (launch sites as `file:ID`, the file relative to the root).
  const std::map<std::string, Entity *> &entities() const { return ByID; }
  /// Every entity of this side, in the inventory's order: overloaded kernels share an ID, and entities()
  /// holds the first of them only.
  const std::vector<Entity> &allEntities() const { return All; }

  /// The entity of \p ID on this side, or null. \p ID may also be file-qualified
  /// (qualifiedID): `k@a.cu`, `k@a.cu/loop#1`, `macro:BLOCK@a.cu`.
  const Entity *find(const std::string &ID) const;
  /// \p E's ID with the file of its kernel (a kernel, or a region or parameter of one) or its own
  /// file (any other entity) after `@`, relative to the root: the ID the inventory gives it when
  /// another file defines one of the same name (mergeInventory).
  const std::string &qualifiedID(const Entity &E) const { return Qualified.at(&E); }
  /// The kernel that holds a loop, parameter or local constant, or null.
  const Entity *owner(const Entity &E) const;
  /// The kernel entity that declares parameter \p P, found by its declaration: overloads share an ID, so
  /// owner may name another. owner(P) when \p P has no declaration.
  const Entity *kernelOfParam(const Entity &P) const;
  /// The absolute path of the file that holds \p E.
  const std::string &fileOf(const Entity &E) const { return FileOf.at(&E); }
  /// The region of \p E (its whole source range).
  Region regionOf(const Entity &E) const;

  std::optional<FileRange> rangeOf(clang::SourceRange R) const;
  /// An empty range at \p L (through a macro argument to its spelling).
  std::optional<FileRange> pointOf(clang::SourceLocation L) const;
  /// The text of \p File as this parse read it; empty when it did not.
  llvm::StringRef bufferOf(const std::string &File) const;
  std::string textOf(clang::SourceRange R) const;
  /// A launch (of the host side of any TU of the proposal; planEdits plans a device side once
  /// every host side is done) that passes aliased pointers to the
  /// parameter at position \p Param (0-based) of \p Kernel; \p Site is set to its ID. For a use of the
  /// kernel whose arguments cannot be read (LaunchFacts::Unchecked), I1 = I2 = \p Param, Why says why and
  /// \p Site is its `file:line`.
  std::optional<LaunchFacts::Alias> aliasFor(const std::string &Kernel, unsigned Param, std::string &Site) const;
  /// Where this parse's device code launches \p Kernel (an inventory kernel ID): a `<<<>>>` inside a
  /// kernel or a __device__-only function (dynamic parallelism), as `file:line`; nothing when none does. Such a
  /// launch may exist on the device side only (under `#ifdef __CUDA_ARCH__`), which the host-side alias
  /// check does not read.
  std::optional<std::string> deviceLaunchOf(const std::string &Kernel) const;
  /// Every kernel (inventory ID) this parse's device code launches, with the first such launch as
  /// deviceLaunchOf gives it.
  std::map<std::string, std::string> deviceLaunches() const;
  /// What this job's device side under each of its other architectures says of \p E (a kernel or a
  /// parameter of this parse), in architecture order; none on the host side, for an entity those parses
  /// lack (a kernel under `#if __CUDA_ARCH__ >= 900`), and when no edit reads them (readsArchFacts).
  std::vector<const ArchFact *> archFacts(const Entity &E) const;
  /// What this parse and then each of archFacts says of \p E: this parse's as an ArchFact with an empty
  /// Arch, its Data, and for a kernel deviceLaunchOf (Definition is left empty), followed by a copy of
  /// each of archFacts(E). A check that must hold under every architecture reads them all.
  std::vector<ArchFact> factsUnderEveryArch(const Entity &E) const;
  /// Where this job's host side, or its device side under another architecture, compiles another
  /// definition of kernel \p Kernel (an entity of this device-side parse) than this parse does: "the host
  /// side" or "sm_80"; nothing when none does, on the host side, and when no add_const edit had the
  /// definitions collected. `#if __CUDA_ARCH__` around a whole definition gives each its own, and a
  /// change to one's parameter types leaves the launch naming a kernel some device code no longer defines.
  std::optional<std::string> otherDefinition(const Entity &Kernel) const;

private:
  PlanState &St;
  Side W;
  const CompileJob &Job;
  clang::ASTContext &Ctx;
  const clang::SourceManager &SM;
  const std::vector<Entity> &All;
  std::map<std::string, Entity *> ByID, ByQualifiedID;
  std::map<const Entity *, std::string> FileOf, Qualified;
  /// deviceLaunches, walked once per parse.
  mutable std::optional<std::map<std::string, std::string>> DeviceLaunches;
};

/// The edited code's inventory, where clang evaluated the constants: launch
/// sites by `file:ID` and kernels by ID.
struct EditedInventory {
  std::map<std::string, const Entity *> Sites, Kernels;
};

/// One edit kind. Subclasses live in lib/Edit/Kinds/, one file each.
class EditKindPlanner {
public:
  enum class Sides { Host, Device, Both };
  virtual ~EditKindPlanner() = default;

  virtual EditKind kind() const = 0;
  /// "set_constant", ... (the JSON spelling).
  llvm::StringRef name() const { return editKindName(kind()); }
  /// The entity kind the edit's ID names.
  virtual EntityKind target() const = 0;
  /// Whether an ID of entity kind \p Have (LocalConstant reads as Constant) fits.
  virtual bool accepts(EntityKind Have) const { return Have == target(); }
  /// "a kernel", as in "'x' is a param, but K needs a kernel".
  virtual std::string targetDescription() const;
  /// The sides of a translation unit whose AST holds the edit's entity.
  virtual Sides sides() const { return Sides::Device; }
  /// Adds code next to its entity rather than changing it (two such edits of one entity do not conflict).
  virtual bool addsBeside() const { return false; }
  /// Two edits of this kind and \p Other's kind on one entity may both apply.
  virtual bool sharesEntityWith(const Edit &Mine, const Edit &Other) const { return false; }
  /// Its new text is a host expression (added-code checks of side effects, AddedCode.h).
  virtual bool writesExpression() const { return false; }
  /// Text that does not stay in its slot (checked lexically, before planning).
  virtual std::optional<std::string> slotProblem(const Edit &Ed) const { return std::nullopt; }
  /// The replacements of \p Ed on \p E, on a side in sides().
  virtual Outcome plan(const Edit &Ed, const Entity &E, PlanContext &C) const = 0;
  /// What \p Ed does on a side outside sides() (add_kernel_variant: the retargeted launches).
  virtual Outcome planOtherSide(const Edit &Ed, PlanContext &C) const { return {}; }
  /// Refusals of \p Ed (applied) on the edited code's inventory.
  virtual std::vector<std::string> checkEdited(const Edit &Ed, const EditedInventory &Inv) const { return {}; }
};

/// A kind that adds top-level code beside a kernel (insert_device_function, add_kernel_variant):
/// its ID names the kernel, its code stays whole declarations, and two such edits of one kernel
/// do not conflict.
class AddsBesideKernel : public EditKindPlanner {
public:
  EntityKind target() const override { return EntityKind::Kernel; }
  bool addsBeside() const override { return true; }
  std::optional<std::string> slotProblem(const Edit &Ed) const override {
    return codeSlotProblemOf(Ed, CodeSlot::TopLevel, "whole declarations beside the kernel");
  }
};

/// The planner of kind \p K (every EditKind has one).
const EditKindPlanner &editKindPlanner(EditKind K);

/// Where kinds are registered (clang-tidy's ClangTidyCheckFactories, for edit kinds).
class EditKindRegistry {
public:
  template <typename T> void add() { add(std::make_unique<T>()); }
  void add(std::unique_ptr<EditKindPlanner> K);
  const EditKindPlanner *find(EditKind K) const;
  const std::vector<std::unique_ptr<EditKindPlanner>> &all() const { return Kinds; }

private:
  std::vector<std::unique_ptr<EditKindPlanner>> Kinds;
};

/// Registers every built-in kind (Kinds/Module.cpp).
void addBuiltinEditKinds(EditKindRegistry &R);

} // namespace edit
} // namespace kloop

#endif
