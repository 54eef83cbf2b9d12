//===- kloop/Inventory/Model.h - The inventory as typed values --*- C++ -*-===//
///
/// \file
/// The document `kloop extract` writes (docs/inventory.md, schema
/// "kloop-inventory" version 1) as typed values, for the stages that read an
/// inventory (the builtin search, the rules, prompt building, optimize): they
/// read fields, never JSON members by string key. One pair converts at the
/// boundary: inventoryFromJSON (strict about every member's type) and
/// toJSON (the same document back). The writer is mergeInventory
/// (kloop/Inventory/Inventory.h); unittests/Inventory/ModelTest.cpp proves on
/// the inventories of test/Extract/ and examples/ that toJSON(inventoryFromJSON(D))
/// == D, member for member, so the model cannot silently fall behind it.
///
/// Fields mirror the JSON members one to one (CamelCase of the member name).
/// Members the writer sets to null are std::optional and written back as
/// null; members it omits unless they apply (not_editable_reason,
/// nvcc_unknown_reason, entry, ...) are std::optional and omitted when unset.
/// Lines and columns are 1-based; a location's end is inclusive.
///
/// This library needs LLVM and nlohmann::json only, not clang.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_INVENTORY_MODEL_H
#define KLOOP_INVENTORY_MODEL_H

#include "kloop/Inventory/LaunchFormula.h"
#include "nlohmann/json.hpp"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kloop {
namespace inv {

/// A line and a column, 1-based.
struct Position {
  unsigned Line = 0, Column = 0;
};

/// "location": where an entity is written (for code from a macro expansion:
/// where the macro is expanded). File is relative to the document's root.
struct Location {
  std::string File;
  Position Begin, End;
};

/// "editable" and, when false, "not_editable_reason".
struct Editability {
  bool Editable = true;
  std::optional<std::string> NotEditableReason;
};

/// "status" ("ok" or "error") and "errors" (the compile errors that touch the
/// entity, each `file:line:col: error: message [device|host|device, host]`).
struct Health {
  std::string Status = "ok";
  std::vector<std::string> Errors;
  bool ok() const { return Status == "ok"; }
};

/// {"expr", "value"}: an expression as written and its integer value, null
/// when it is not a constant (a template argument, a runtime value).
struct ExprValue {
  std::string Expr;
  std::optional<int64_t> Value;
};

/// One symbol of a kernel in the cubin (docs/inventory.md, "Kernel names").
struct Symbol {
  std::string Mangled;      ///< nvcc's symbol, or clang's when nvcc's is unknown
  std::string ClangMangled; ///< clang's Itanium name
  std::string Linkage;      ///< "external" or "internal"
  std::string MatchKey;     ///< demangled name without nvcc's internal prefixes
  bool NvccKnown = false;
  std::optional<std::string> NvccUnknownReason; ///< only when !NvccKnown
};

/// "instantiations[]": one instantiation of a kernel template with its symbol.
struct Instantiation {
  std::string ID;           ///< `reduce<256>`
  std::string TemplateArgs; ///< `<256>`
  Symbol Sym;
};

/// "template_params[]" of a kernel.
struct TemplateParam {
  std::string Name;
  std::string Kind;                 ///< "value", "type" or "template"
  std::optional<std::string> ID;    ///< value parameters: `<kernel>/tparam:<name>`
  std::optional<std::string> Type;  ///< value parameters: the parameter's type
  std::optional<std::string> Default; ///< value parameters: the default argument as written, or null
};

/// "params[]" of a kernel.
struct Param {
  std::string ID, Name, Type;
  bool Pointer = false, ConstPointee = false, Restrict = false;
  /// Pointers: whether the kernel writes through it (conservative,
  /// docs/inventory.md); null for non-pointers.
  std::optional<bool> Written;
  /// The first write ("store at line 12"), or null.
  std::optional<std::string> WriteEvidence;
};

/// What every region of a kernel carries: "id", "kind" (the entity kind:
/// "loop", "shared_array", "local_constant", "template_param"), "location"
/// and the editability.
struct RegionBase {
  std::string ID, Kind;
  Location Loc;
  Editability Edit;
};

/// "unroll" of a loop: the `#pragma unroll` in front of it.
struct Unroll {
  std::string Spelling;             ///< "unroll", "nounroll", ...
  std::optional<int64_t> Count;     ///< the count's value (1 for nounroll); null for full unroll
  std::optional<std::string> CountExpr; ///< the count as written, when given
  std::optional<std::string> State; ///< "full" or "disable", when no count is given
  std::optional<unsigned> Line;     ///< the pragma's line
};

//===--- Elementwise loops (rules vectorize-global-access, coarsen-grid-stride) ---===//

/// "elementwise.accesses[]": one subscript `p[i]` of a kernel pointer parameter,
/// or of a local pointer based on one, by the loop variable in the loop body
/// (lib/Inventory/ElementwiseLoops.cpp).
struct ElementwiseAccess {
  std::string Param;        ///< the pointer's name: a parameter, or a local `T *x = p + offset;`
  std::string Root;         ///< the kernel pointer parameter it is based on (Param itself for a parameter)
  std::string ElementType;  ///< the pointee type without qualifiers ("float")
  unsigned ElementBytes = 0; ///< sizeof the element, bytes
  unsigned Begin = 0, End = 0; ///< [Begin, End): the subscript's characters in Elementwise::Body
  bool Read = false;        ///< the element's old value is used (a read, `+=`, `++`)
  bool Written = false;     ///< assigned (`=`, `+=`, `++`)
  bool Unconditional = false; ///< a plain `p[i] = ...` that is a direct statement of the body
};

/// "elementwise.reductions[]": a variable declared before the loop that its
/// iterations only accumulate into (`s += x[i]`, `m = fmaxf(m, x[i])`).
struct ElementwiseReduction {
  std::string Var;  ///< its name
  std::string Type; ///< its type, unqualified ("float")
  /// "+" (`+=`, `-=`), "*", "&", "|", "^", "max" or "min" (`v = fmaxf(v, e)`, fminf, fmax, fmin, max, min).
  std::string Op;
  /// Reordering its updates changes rounding: a floating-point `+` or `*` (max and min are exact).
  bool Reassociates = false;
  /// The `__shared__` array A whose halving tree is proved to fold every thread's partial of the variable
  /// before anything reads them (lib/Inventory/BlockCombine.h lists the forms); else null, and NotCombined
  /// says which step is not proved.
  std::optional<std::string> CombinedIn, NotCombined;
  /// With CombinedIn: the 1-based index among the kernel body's statements of the one that folds A (the
  /// tree, or the call of the device function that holds it).
  std::optional<unsigned> TreeStmt;
};

/// "elementwise" of a `for` loop: whether it is a grid-stride or block-stride
/// loop over independent elements (reductions into locals apart), `for (T i =
/// blockIdx.x * B + threadIdx.x; i < n; i += B * gridDim.x)` or `for (T i =
/// threadIdx.x; i < n; i += B)`, whose body touches global memory only through
/// `p[i]` (docs/rules/vectorize-global-access.md, docs/rules/coarsen-grid-stride.md).
struct Elementwise {
  /// Why the loop is not one (the first failed condition, with its line); null when it is.
  std::optional<std::string> Refusal;
  /// Set when Refusal is null: the loop variable and its type, the initializer
  /// (blockIdx.x * blockDim.x + threadIdx.x), the bound `n` and the stride, as written.
  std::string Var, VarType, Init, Bound, Stride;
  /// "grid": the loop walks the whole grid (`i += B * gridDim.x`); "block": each block walks [0, n) on its
  /// own (`i += B`, the start threadIdx.x).
  std::string StrideKind = "grid";
  /// B as written when it is not `blockDim.x` (a literal, macro or template parameter): the threads visit
  /// each element once only when blockDim.x == B, which a rewrite that moves elements between threads
  /// must check at run time; null when B is blockDim.x.
  std::optional<std::string> BlockExtent;
  /// The body as written, braces included.
  std::string Body;
  std::vector<ElementwiseAccess> Accesses;
  /// The variables the iterations accumulate into (empty: the iterations are independent).
  std::vector<ElementwiseReduction> Reductions;
  /// The first direct statement of the kernel body besides this loop that is
  /// not a declaration without assignments whose calls are those the body may
  /// make ("statement 3 at line 9"), or null: then the loop is all the kernel does.
  std::optional<std::string> OtherEffects;
};

/// "dot_product" of a `for` loop: whether it is the naive matmul pattern the
/// rules tile-shared-memory and tile-shared-memory-rb4 rewrite
/// (lib/Inventory/DotProducts.cpp, docs/rules/tile-shared-memory.md): the
/// kernel body is declarations and early returns `if (C) return;`, then this
/// loop `for (int k = A; k < B; ++k) acc += X * Y;`, then statements that store
/// acc. Texts are as written, but with every `threadIdx.y` renamed `kloop_ty`
/// and every `blockDim.y` renamed `kloop_bdy` (the rewrite declares both).
struct DotProduct {
  /// Why the loop is not one (the first failed condition, with its line); null when it is.
  std::optional<std::string> Refusal;
  /// The tile size T of `blockIdx.x * T` and `blockIdx.y * T` ("tile"; null when refused), and
  /// the index of the kernel's template parameter it names ("tile_param"), if it names one.
  std::optional<ExprValue> Tile;
  std::optional<unsigned> TileParam;
  /// The loop variable, its type, its initial value and bound (one value per block).
  std::string Var, VarType, Init, Bound;
  /// The accumulator's name and type.
  std::string Acc, AccType;
  /// The factor read by row (threadIdx.y and k only) and the one read by column (threadIdx.x and k
  /// only), their types (unqualified) and sizes in bytes.
  std::string RowOperand, ColOperand, RowType, ColType;
  unsigned RowBytes = 0, ColBytes = 0;
  /// The declarations before the loop (with their `;`), in order (the early returns left out).
  std::vector<std::string> Prelude;
  /// The early returns' conditions split at `||`: the terms that do not read threadIdx.x ("row_terms")
  /// and those that do not read threadIdx.y ("col_terms"); a term that reads neither is in both.
  std::vector<std::string> RowTerms, ColTerms;
  /// The statements after the loop (with their `;`).
  std::vector<std::string> After;
};

/// "loops[]" of a kernel.
struct Loop : RegionBase {
  std::string LoopKind;  ///< "for", "while", "do", "range_for"
  unsigned Depth = 0;    ///< 0: outermost
  std::optional<std::string> Parent; ///< the enclosing loop's ID
  std::optional<Unroll> UnrollPragma;
  /// The condition as written ("" for `for (;;)`); none for a range-based for.
  std::optional<std::string> Condition;
  /// ceil((B - A) / S) of `for (i = A; i < B; i += S)` with constant A, B, S.
  std::optional<int64_t> TripCount;
  /// "elementwise": for `for` loops (ElementwiseLoops.cpp); null for the others.
  std::optional<Elementwise> ElementwiseFacts;
  /// "dot_product": for `for` loops (DotProducts.cpp); null for the others.
  std::optional<DotProduct> DotProductFacts;
};

/// "shared_arrays[]" of a kernel.
struct SharedArray : RegionBase {
  std::string Name, Type, ElementType;
  std::vector<ExprValue> Dims; ///< outermost first
  std::optional<int64_t> Bytes; ///< null when dependent or dynamic
  bool Extern = false, Dynamic = false;
  /// What a rewrite of its shape needs (docs/rules/pad-shared-tiles.md): the 1-based index of its
  /// declaration among the kernel body's statements when that statement declares it alone ("stmt"),
  /// that statement ("decl_text"), the first use that sees it as flat memory ("escapes") and the first
  /// subscript that walks a column with threadIdx.x ("column_access"); each null when none.
  std::optional<unsigned> Stmt;
  std::optional<std::string> DeclText, Escapes, ColumnAccess;
};

/// "local_constants[]" of a kernel: const/constexpr locals with an initializer.
struct LocalConstant : RegionBase {
  std::string Name, Type, Init;
  bool Constexpr = false;
  std::optional<int64_t> Value; ///< null when not a constant expression
};

/// "launch_bounds" of a kernel.
struct LaunchBounds {
  std::string ID; ///< `<kernel>/launch_bounds`
  ExprValue MaxThreads;
  std::optional<ExprValue> MinBlocks;
  /// The third argument (sm_90 thread block clusters: at most this many blocks per cluster), if written.
  std::optional<ExprValue> MaxBlocksPerCluster;
};

//===--- Facts of the rules warp-shuffle-reductions and privatize-atomics ---===//
// (docs/rules/warp-shuffle-reductions.md, docs/rules/privatize-atomics.md; computed at extract time by
// lib/Inventory/TreeReductions.cpp and lib/Inventory/AtomicTargets.cpp.) Offsets are bytes from the start
// of the text they index; texts are the source as written (macros unexpanded).

/// "calls[]" of a tree reduction in a device function: one call of that function by the kernel.
struct TreeCall {
  unsigned Line = 0;
  /// The 1-based index of the kernel body's direct statement that holds the call ("stmt"), that
  /// statement's text with its `;` ("text"), and where the callee's name begins in it
  /// ("name_offset"); null when a macro hides them.
  std::optional<unsigned> Stmt;
  std::optional<std::string> Text;
  std::optional<unsigned> NameOffset;
};

/// "tree_reductions[]" of a kernel: a `for` loop with a `__syncthreads()` in its body, in the kernel or
/// in a device function it calls, and whether it is the halving tree
/// `for (int s = START; s > 0; s >>= 1) { if (tid < s) a[tid] op= a[tid + s]; __syncthreads(); }`.
struct TreeReduction {
  std::string Function; ///< the kernel's ID, or `device:<name>` of the function holding the loop
  unsigned Line = 0;    ///< the loop's line
  /// Null when the loop is the tree; else which part differs ("the stride does not halve ...").
  std::optional<std::string> Form;
  /// With Form null: the operator ("+", "*", "&", "|", "^", or the function "fmaxf", "fminf", "fmax",
  /// "fmin", "max", "min"), a[tid]'s type, the array's and the thread index's text, the stride variable.
  std::optional<std::string> Op, ElementType, Array, ThreadIndex, StrideVar;
  /// Why the thread index is threadIdx.x ("thread_index_proof"), or why that is not proved
  /// ("thread_index_unproved"); both null when Form is set.
  std::optional<std::string> ThreadIndexProof, ThreadIndexUnproved;
  std::optional<ExprValue> Start; ///< the stride's initial value
  bool Pragma = false;            ///< an unroll pragma stands in front of the loop
  std::string LoopText;           ///< the loop as written ("" when Form is set)
  unsigned CondOffset = 0, CondLength = 0; ///< the condition's place in LoopText
  std::optional<unsigned> Stmt;   ///< a loop in the kernel: its index among the body's direct statements
  /// A loop in a device function: its name, whole text (template header included), where the name and
  /// the loop begin in that text, and the kernel's calls of it.
  std::optional<std::string> FunctionName, FunctionText;
  std::optional<unsigned> NameOffset, LoopOffset;
  std::vector<TreeCall> Calls;
};

/// "atomics[]" of an atomic target: one `atomicF(&p[i], ...)` or `atomicF(p + i, ...)`.
struct AtomicSite {
  unsigned Line = 0;
  std::string Function; ///< "atomicAdd", "atomicMin_block", ...
  std::string Index;    ///< i as written
  /// N with 0 <= i < N, proved from i's form (an unsigned char or short value, `x & M`, unsigned
  /// `x % M`, `x >> k` of a bounded x, a constant); null when none is proved.
  std::optional<int64_t> Bound;
  bool ResultUsed = false; ///< the atomic's returned old value is used
  std::optional<unsigned> BaseOffset; ///< where `p` of this atomic begins in AtomicTarget::BodyText
};

/// "atomic_targets[]" of a kernel: a pointer parameter the kernel's body updates with atomics.
struct AtomicTarget {
  std::string Param, Name;   ///< the parameter's ID and name
  std::string ElementType;   ///< the pointee type, unqualified
  std::optional<int64_t> ElementBytes; ///< its size; null when dependent
  /// The first use of the parameter that is not an atomic's target ("`bins[0]` at line 9"), null when none.
  std::optional<std::string> OtherUse;
  std::optional<std::string> Returns;  ///< the kernel body's first `return` ("`return` at line 4"), or null
  std::optional<std::string> BodyText; ///< the kernel body `{ ... }` as written; null when a macro hides it
  std::vector<AtomicSite> Atomics;
};

/// "float_ops.ops[]": a single-precision operation written in the kernel body that CUDA has a
/// faster, less precise intrinsic for (lib/Inventory/FloatOps.cpp; docs/rules/fast-math.md).
struct FloatOp {
  std::string Function; ///< "expf", "exp10f", "logf", "log2f", "log10f", "sinf", "cosf", "tanf", "powf", or "/"
  unsigned Line = 0;
  unsigned Begin = 0, End = 0; ///< [Begin, End): the whole expression in FloatOps::BodyText
  /// Calls: the end of the callee's name; divisions: the offset of the `/`.
  unsigned Split = 0;
};

/// "float_ops" of a kernel: its body as written and the operations of FloatOp in source order.
struct FloatOps {
  std::optional<std::string> BodyText; ///< null when a macro hides the body
  std::vector<FloatOp> Ops;
};

/// "index_2d" of a kernel (lib/Inventory/Index2D.cpp; docs/rules/coalesce-thread-index.md): its body
/// declares `X = blockIdx.x * blockDim.x + threadIdx.x` and `Y = blockIdx.y * blockDim.y + threadIdx.y`.
struct Index2D {
  /// Why swapping threadIdx.x and threadIdx.y in them is not proved to change only which thread does which
  /// element, or is of no use (no access strides memory with X); null when neither.
  std::optional<std::string> Refusal;
  std::string XVar, YVar;       ///< the variables' names
  unsigned XStmt = 0, YStmt = 0; ///< their declarations' 1-based indexes among the body's direct statements
  std::string XText, YText;     ///< those statements, with their `;`
  unsigned XThread = 0, YThread = 0; ///< offsets in XText, YText of the component letter of threadIdx.x, .y
  /// The first access `p[X * e + Y]` ("in[row * n + col] at line 12"), or null.
  std::optional<std::string> Strided;
};

/// "kernels[]".
struct Kernel {
  std::string ID;
  Location Loc;
  Editability Edit;
  Health State;
  std::string Name, QualifiedName;
  std::optional<std::string> Signature; ///< null for library kernels
  bool Static = false, AnonymousNamespace = false, ExplicitSpecialization = false;
  bool Library = false; ///< a kernel from a system header (CUB, Thrust): names only
  std::vector<std::string> Mangled; ///< nvcc's symbols of the kernel or of every instantiation
  std::vector<Symbol> Symbols;
  std::vector<Instantiation> Instantiations;
  std::vector<TemplateParam> TemplateParams;
  std::optional<LaunchBounds> Bounds;
  std::vector<Param> Params;
  std::vector<Loop> Loops;
  std::vector<SharedArray> SharedArrays;
  std::vector<LocalConstant> LocalConstants;
  std::vector<std::string> Calls;       ///< device functions called directly (`device:<name>`)
  std::vector<std::string> LaunchSites; ///< launch-site IDs
  // Facts of the rules warp-shuffle-reductions and privatize-atomics (the block above).
  std::vector<TreeReduction> TreeReductions; ///< "tree_reductions"
  std::vector<AtomicTarget> AtomicTargets;   ///< "atomic_targets"
  /// "float_ops" (rule fast-math); null for library kernels and in inventories written before it existed.
  std::optional<FloatOps> FloatMath;
  /// "index_2d" (rule coalesce-thread-index); null when the body has no such pair of indexes, for library
  /// kernels and in inventories written before it existed.
  std::optional<Index2D> Index2DFacts;
  /// "indirect_pointer" (add_restrict, privatize-atomics): how the kernel or a function it calls reaches
  /// memory other than through its pointer parameters, e.g. "`o.p` (k.cu:8, in 'bump'): a pointer read
  /// from memory"; null when it does not, for library kernels and in inventories written before it existed.
  std::optional<std::string> IndirectPointer;
};

/// "device_functions[]".
struct DeviceFunction {
  std::string ID, Name;
  Location Loc;
  Editability Edit;
  Health State;
  bool HostDevice = false, Template = false;
  std::vector<std::string> Calls;
  /// The kernels and device functions whose Calls name it, sorted ("called_by").
  std::vector<std::string> CalledBy;
};

/// "grid" / "block" of a launch site.
struct LaunchDim {
  std::string Expr;
  /// [x, y, z] when every component is a constant; null otherwise.
  std::optional<std::vector<std::optional<int64_t>>> Value;
  std::optional<std::string> ViaVariable; ///< the dim3 local the expression names
};

/// "launch_sites[]".
struct LaunchSite {
  std::string ID;
  Location Loc;
  Editability Edit;
  Health State;
  std::string Via;                   ///< "<<<>>>", "cudaLaunchKernel", ...
  std::optional<std::string> Kernel; ///< the kernel's ID, null when unresolved
  std::string Callee, Function;
  std::optional<LaunchDim> Grid, Block;
  std::optional<ExprValue> SharedMemory;
  std::optional<std::string> Stream; ///< the stream expression, null when defaulted
  std::vector<ExprValue> TemplateArgs;
  /// The configuration as formulas of what the kernel call passes
  /// (kloop/Inventory/LaunchFormula.h); absent for launches through an API
  /// other than `<<<>>>`.
  std::optional<LaunchFormula> ConfigFormula;
};

/// "uses[]" of a constant: one use in a tunable context.
struct ConstantUse {
  std::string Constant; ///< the constant's ID
  std::string Context;  ///< "block_size", "grid_size", "array_size", "loop_bound", "unroll",
                        ///< "launch_bounds", "template_arg", "shared_memory_size"
  std::string Owner;    ///< the kernel or launch site that uses it
  std::optional<std::string> File;
  std::optional<unsigned> Line, Column;
};

/// "hardware_fact" of a constant: its value is a fact about the GPU (warp size, lane mask, shuffle
/// width), never a tuning choice (docs/inventory.md).
struct HardwareFact {
  std::string Reason;
  std::vector<ConstantUse> Uses; ///< Context is the reason of each use
};

/// "constants[]": macros, namespace-scope constants, and the local constants
/// and value template parameters that have a tunable use.
struct Constant {
  std::string ID;
  Location Loc;
  Editability Edit;
  std::string ConstantKind; ///< "macro", "constexpr", "const", "local_constant", "template_param"
  std::string Name;
  std::optional<std::string> Type, Init;
  std::optional<int64_t> Value;
  std::optional<bool> CommandLine; ///< macros: defined by a -D flag of the compile command
  /// Local constants and template parameters keep their region's members:
  std::optional<std::string> Kind;
  std::optional<bool> IsConstexpr;
  std::optional<std::string> Default; ///< template parameters: as TemplateParam::Default
  std::vector<ConstantUse> Uses;
  std::optional<HardwareFact> Hardware; ///< "hardware_fact", null when none
};

/// "translation_units[]".
struct TranslationUnit {
  std::string File;
  std::optional<unsigned> Entry; ///< 1-based command in compile_commands.json, when listed twice
  std::optional<std::string> Status; ///< "ok", "partial", "error"
  std::optional<std::string> DeviceSide, HostSide; ///< "sides": "ok" or "error"
  std::vector<std::string> Errors;
};

/// The whole document.
struct Inventory {
  std::string Schema = "kloop-inventory";
  int64_t Version = 1;
  std::string Root;
  std::vector<TranslationUnit> TranslationUnits;
  std::vector<Kernel> Kernels;
  std::vector<DeviceFunction> DeviceFunctions;
  std::vector<LaunchSite> LaunchSites;
  std::vector<Constant> Constants;

  /// The kernel, launch site or constant with ID \p ID, or nullptr.
  const Kernel *kernel(llvm::StringRef ID) const;
  const LaunchSite *launchSite(llvm::StringRef ID) const;
  const Constant *constant(llvm::StringRef ID) const;
};

/// Reads \p J, an inventory document; errors name \p Source and the member
/// (`<Source>: kernels[0].loops[1].depth: expected a non-negative 32-bit
/// integer`). A schema other than "kloop-inventory" or a version other than 1
/// is an error. With \p Strict, a member the model does not know is an error
/// too (the tests' proof that the model is complete); without, it is ignored.
llvm::Expected<Inventory> inventoryFromJSON(const nlohmann::json &J, llvm::StringRef Source,
                                            bool Strict = false);

/// The document \p I stands for.
nlohmann::json toJSON(const Inventory &I);

} // namespace inv
} // namespace kloop

#endif
