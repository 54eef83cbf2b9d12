//===- kloop/Edit/Rules.h - Built-in rewrite rules --------------*- C++ -*-===//
///
/// \file
/// Built-in rules in the style of clang's Tooling/Transformer: each rule
/// matches entities of the inventory (the document `kloop extract` writes, as
/// the typed values of kloop/Inventory/Model.h) and
/// produces edits in the edit language, so its output goes through the same
/// checks as any proposal (`kloop apply --rule NAME`). One file per rule in
/// lib/Edit/Rules/, one page per rule in docs/rules/.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_EDIT_RULES_H
#define KLOOP_EDIT_RULES_H

#include "kloop/Edit/Proposal.h"
#include "kloop/Inventory/Model.h"
#include "nlohmann/json.hpp"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"
#include <optional>
#include <string>
#include <vector>

namespace kloop {

/// What a rule made of one candidate site: the edits when it fired, else none
/// and the reason it did not (the way MLIR's notifyMatchFailure reports a
/// pattern that does not apply), so that the reason can be shown and journaled.
struct RuleSite {
  /// Inventory ID of the candidate (a shared array, a loop, a parameter).
  std::string Site;
  /// The rule's edits at this site; empty when it did not fire.
  std::vector<Edit> Edits;
  /// Fired: what the edits do and why the rule applies; else why it does not.
  std::string Why;
};

/// A checked output of the workload as the rules see it (`.kloop.yaml`
/// `outputs[]`, docs/kloop-yaml.md): which kernel writes it and how far a
/// candidate's value may be from the baseline's (docs/verify.md).
struct OutputTolerance {
  /// `outputs[].kernel`: matched like `targets:` (kernelNameMatches).
  std::string Kernel;
  /// `outputs[].arg`: zero-based index of the kernel parameter (all parameters counted).
  unsigned Arg = 0;
  /// `tolerance.kind`: "abs", "rel", "ulp" or "exact".
  std::string Kind = "exact";
  /// `tolerance.value`: units of the dtype (abs), a fraction (rel), a count (ulp); 0 for exact.
  double Value = 0;
};

/// One built-in rule.
struct Rule {
  /// Name used on the command line, e.g. "unroll-constant-loops".
  const char *Name;
  /// One line: what the rule does.
  const char *Summary;
  /// Matches the inventory \p Inventory (extractInventory's typed value) and returns
  /// candidate edits (possibly none). Entities that are not editable are skipped.
  std::vector<Edit> (*Match)(const inv::Inventory &Inventory);
  /// Every candidate site with the outcome (nullptr: the rule reports only the
  /// sites where it fires, one per edit of Match; see explainRule).
  std::vector<RuleSite> (*Explain)(const inv::Inventory &Inventory) = nullptr;
  /// A structural rewrite the builtin search tries as a dimension of its own
  /// (docs/builtin-search.md); the others are covered by its parameter
  /// dimensions already (unroll, qualifiers).
  bool Structural = false;
  /// A rule that reads the workload's output tolerances (fast-math) sets this
  /// instead of Match and Explain; Outputs is null when no workload is given.
  std::vector<RuleSite> (*ExplainWithOutputs)(const inv::Inventory &Inventory,
                                              const std::vector<OutputTolerance> *Outputs) = nullptr;
};

/// Rule \p R's outcome on every candidate site of \p Inventory: R.ExplainWithOutputs
/// (given \p Outputs, the workload's `outputs:`, or null without a workload), else
/// R.Explain, or without one a fired site per edit of R.Match (Site the edit's ID).
std::vector<RuleSite> explainRule(const Rule &R, const inv::Inventory &Inventory,
                                  const std::vector<OutputTolerance> *Outputs = nullptr);

/// The edits of the sites that fired, in site order.
std::vector<Edit> editsOf(const std::vector<RuleSite> &Sites);

/// Every candidate site of every structural rule on \p Inventory, as JSON for
/// the builtin search: [{"rule", "site", "why", "edits": [edit-language
/// objects]}]; "edits" is empty where the rule does not fire ("why" says why).
nlohmann::json structuralRuleCandidates(const inv::Inventory &Inventory,
                                        const std::vector<OutputTolerance> *Outputs = nullptr);

/// `pad-shared-tiles` (docs/rules/pad-shared-tiles.md): a 2-D `__shared__`
/// tile `T[R][C]`, C a multiple of 32, read by columns (inventory field
/// `column_access`) gets its last dimension `C + 1`, through `replace_stmt` of
/// its declaration, when it is used only through full subscripts (`escapes`
/// null), is declared by a statement of its own (`stmt`) and the kernel's
/// static shared memory stays within StaticSharedLimit.
std::vector<RuleSite> explainPadSharedTiles(const inv::Inventory &Inventory);
/// The edits of explainPadSharedTiles.
std::vector<Edit> matchPadSharedTiles(const inv::Inventory &Inventory);

/// Static shared memory a block may declare, bytes: 48 KiB (CUDA C Programming
/// Guide, "Shared Memory": more needs dynamic shared memory and an opt-in).
constexpr long long StaticSharedLimit = 48 * 1024;

/// The static shared memory \p Kernel declares, bytes: the sum of its
/// `__shared__` arrays' sizes (those with a known size; dynamic arrays count 0).
long long staticSharedBytes(const inv::Kernel &Kernel);

/// `warp-shuffle-reductions` (docs/rules/warp-shuffle-reductions.md): a
/// shared-memory tree `for (s = START; s > 0; s >>= 1) { if (tid < s) a[tid]
/// op= a[tid + s]; __syncthreads(); }` (inventory `tree_reductions`, tid proved
/// threadIdx.x) keeps its steps above 32 and ends with warp 0's
/// `__shfl_down_sync` steps on the same pairs in the same order, leaving
/// a[0..31] as the tree did (bit-identical), guarded at run time by START a
/// power of two >= 32 and blockDim.x % 32 == 0. A loop in the kernel body is
/// rewritten with `replace_stmt`; a loop in a device function f through a
/// copy `f_warp_tail` (`insert_device_function`) and `replace_stmt` of the
/// kernel's statements that call f.
std::vector<RuleSite> explainWarpShuffleReductions(const inv::Inventory &Inventory);
/// The edits of explainWarpShuffleReductions.
std::vector<Edit> matchWarpShuffleReductions(const inv::Inventory &Inventory);

/// `privatize-atomics` (docs/rules/privatize-atomics.md): a kernel whose body
/// updates one pointer parameter p only with integer atomicAdd, atomicMin or
/// atomicMax at indexes with a compile-time bound N (inventory
/// `atomic_targets`) gets, through `replace_body`, a `__shared__` copy of N
/// elements set to the operation's identity, the atomics on that copy, and
/// after a `__syncthreads()` one atomic per element that changed. Refused when
/// anything else uses p, a returned value is used, the body has a `return`,
/// p may alias another pointer parameter, or the copy would pass
/// StaticSharedLimit.
std::vector<RuleSite> explainPrivatizeAtomics(const inv::Inventory &Inventory);
/// The edits of explainPrivatizeAtomics.
std::vector<Edit> matchPrivatizeAtomics(const inv::Inventory &Inventory);

/// All built-in rules, by name.
const std::vector<Rule> &builtinRules();

/// `restrict-const-params`: for every editable kernel, `const` on each pointer
/// parameter the kernel never writes through (inventory field "written" false)
/// and `__restrict__` on each pointer parameter that is not yet restrict.
/// Aliasing launches are filtered out by kloop apply's own checks.
std::vector<Edit> matchRestrictConstParams(const inv::Inventory &Inventory);

/// `unroll-constant-loops`: `#pragma unroll N` on every editable loop without an
/// unroll hint whose trip count is a constant N with 2 <= N <= MaxFullUnroll.
std::vector<Edit> matchUnrollConstantLoops(const inv::Inventory &Inventory);

/// Largest trip count `unroll-constant-loops` unrolls fully (16: past that,
/// full unrolling mostly costs registers and instruction cache; nvcc's own
/// heuristics unroll small constant loops by 4 at -O3).
constexpr long long MaxFullUnroll = 16;

//===--- Elementwise loops: vectorize-global-access, coarsen-grid-stride-N ---===//

/// Why the rules on elementwise loops do not fire on loop \p L of kernel \p K
/// (kernel or loop not editable, not a `for` loop, or the inventory's
/// `elementwise.refusal`), or nullopt when \p L is an elementwise grid-stride
/// loop they may rewrite (inv::Elementwise; a block-stride loop or one with
/// reductions passes too: each rule checks what it needs of those).
std::optional<std::string> elementwiseRefusal(const inv::Kernel &K, const inv::Loop &L);

/// The site of loop \p L for a rule that rewrites it: refused with \p Why when set; else one
/// `replace_loop` of \p L with the code \p Code returns, explained by what \p Fired returns.
RuleSite replaceLoopSite(const inv::Loop &L, const std::optional<std::string> &Why,
                         llvm::function_ref<std::string()> Code, llvm::function_ref<std::string()> Fired);

/// `vectorize-global-access` (docs/rules/vectorize-global-access.md): an
/// elementwise grid-stride or block-stride loop whose pointers' elements all
/// have one size E (1, 2, 4 or 8 bytes) is rewritten, through `replace_loop`,
/// into a loop of 16-byte (`uint4`) loads and stores of 16 / E elements each,
/// taken only when every accessed pointer is 16-byte aligned and blockDim.x is
/// the loop's block extent (both checked at run time), then a scalar loop over
/// the last n % (16 / E) elements; the original loop runs otherwise. A
/// reduction fires only in a block-stride loop whose partials a halving tree
/// of the kernel combines (docs/rules/vectorize-global-access.md, "Legality"). With \p Outputs
/// (the workload's), a floating-point + or * reduction is refused when an output
/// of the kernel has an exact tolerance (reordering it changes rounding).
std::vector<RuleSite> explainVectorizeGlobalAccess(const inv::Inventory &Inventory,
                                                   const std::vector<OutputTolerance> *Outputs);

/// `coarsen-grid-stride-F` (docs/rules/coarsen-grid-stride.md), F in
/// {2, 4, 8}: an elementwise grid-stride loop that is all its kernel does runs
/// F iterations per step (each thread handles F elements, one grid apart), and
/// every launch site of the kernel gets a grid of ceil(grid.x / F) blocks
/// through `set_launch_config`. Refused when a launch site is not editable or
/// its grid expression is not a name or a literal.
std::vector<RuleSite> explainCoarsenGridStride(const inv::Inventory &Inventory, unsigned Factor);

/// Why set_launch_config cannot replace the grid (\p Grid) or the block of
/// launch site \p L: the site is not editable, launches through
/// cudaLaunchKernelEx, or the expression is not a name or a literal (the
/// rewritten one names it three times, `dim3(g).x`, `.y`, `.z`); else nullopt.
std::optional<std::string> launchDimRefusal(const inv::LaunchSite &L, bool Grid);

/// `tile-shared-memory` (\p Strip 1) and `tile-shared-memory-rb4` (\p Strip 4)
/// (docs/rules/tile-shared-memory.md): a dot-product loop (inventory
/// `dot_product`: the naive matmul pattern) gets, through `replace_body` of its
/// kernel, T x T tiles of both operands in `__shared__` memory, loaded once per
/// block and k step (zero past the bound), with every thread reaching both
/// `__syncthreads()` and the early return turned into guarded loads and a
/// guarded store. With \p Strip > 1 each thread computes \p Strip outputs T /
/// Strip rows apart (register blocking) and every launch site gets a block of
/// T / Strip rows through `set_launch_config`. Refused unless every launch site
/// of the kernel has a constant block (T, T, 1), T the tile constant's value
/// there, T % Strip == 0, and the tiles fit in StaticSharedLimit.
std::vector<RuleSite> explainTileSharedMemory(const inv::Inventory &Inventory, unsigned Strip);

/// `fast-math` (docs/rules/fast-math.md), a precision change: the float
/// operations of a kernel body (inventory `float_ops`) that have a faster,
/// less precise intrinsic (`expf` -> `__expf`, `x / y` -> `__fdividef(x, y)`)
/// are replaced, through `replace_body`, where the documented maximum error of
/// the intrinsic plus that of the function it replaces (CUDA C Programming
/// Guide, "Mathematical Functions" and "Intrinsic Functions") fits the tightest
/// tolerance of the kernel's outputs in \p Outputs. Refused without
/// \p Outputs, for a kernel that writes a pointer parameter no output lists,
/// for `exact` and `abs` tolerances, below the bound, and for the intrinsics
/// whose bound is absolute or undocumented (__logf, __sinf, __powf, ...).
std::vector<RuleSite> explainFastMath(const inv::Inventory &Inventory, const std::vector<OutputTolerance> *Outputs);

/// `coalesce-thread-index` (docs/rules/coalesce-thread-index.md): a kernel
/// whose body declares X = blockIdx.x * blockDim.x + threadIdx.x and
/// Y = blockIdx.y * blockDim.y + threadIdx.y and reads `p[X * e + Y]`
/// (inventory `index_2d`) gets threadIdx.x and threadIdx.y swapped in those
/// two declarations (`replace_stmt`), so that a warp's threads read
/// consecutive elements. Refused unless every launch site's block is a
/// constant square (blockDim.x == blockDim.y: each block then covers the same
/// elements) and the inventory proves that nothing else in the body depends
/// on the thread's position (`index_2d.refusal`).
std::vector<RuleSite> explainCoalesceThreadIndex(const inv::Inventory &Inventory);
/// The edits of explainCoalesceThreadIndex.
std::vector<Edit> matchCoalesceThreadIndex(const inv::Inventory &Inventory);

/// Runs rule \p Name on \p Inventory (with the workload's \p Outputs, or null)
/// and wraps its edits into a proposal with a rationale naming the rule.
/// Errors: unknown rule (listing the known ones); the rule matched nothing
/// (with the reason of each site where it did not fire).
llvm::Expected<Proposal> proposalFromRule(llvm::StringRef Name, const inv::Inventory &Inventory,
                                          const std::vector<OutputTolerance> *Outputs = nullptr);

} // namespace kloop

#endif
