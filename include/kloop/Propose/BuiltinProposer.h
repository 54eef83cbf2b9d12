//===- kloop/Propose/BuiltinProposer.h - Search the tunable space ---------===//
///
/// \file
/// The builtin proposer (the default of `kloop optimize`; no network). It
/// enumerates the tunable space an inventory (docs/inventory.md) exposes and
/// walks it by coordinate descent from the incumbent: one parameter at a time,
/// ordered by what the incumbent's counters say limits the kernel (ProfileGuide.h)
/// or else by expected impact, continuing in a direction while the measured
/// verdict says it wins, pruned with the ptxas report. docs/builtin-search.md
/// documents the strategy and every threshold.
///
/// The proposer is stateless: each propose() replays the history in its
/// context, so a resumed run (same history) gets the same next proposal, and a
/// given seed always yields the same sequence.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_PROPOSE_BUILTINPROPOSER_H
#define KLOOP_PROPOSE_BUILTINPROPOSER_H

#include "kloop/Inventory/KernelNames.h"
#include "kloop/Propose/Proposer.h"
#include "kloop/Inventory/WorkloadScope.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kloop {
namespace builtin {

/// What a dimension of the space tunes, in order of expected impact (the
/// search visits kinds in this order).
enum class DimKind {
  Rule,       ///< a structural rewrite rule's proposal at one site, tried or not (docs/rules/)
  BlockSize,  ///< a constant used as a launch's block size (set_constant)
  Tile,       ///< a constant sizing an array or bounding a loop (set_constant)
  Unroll,     ///< a loop's `#pragma unroll` factor (set_unroll)
  MinBlocks,  ///< `__launch_bounds__` min blocks per SM (set_launch_bounds)
  Qualifiers, ///< `const`/`__restrict__` on a kernel's read-only pointers (add_const/add_restrict)
};

/// "rule", "block_size", "tile", "unroll", "min_blocks", "qualifiers".
const char *dimKindName(DimKind K);

/// Sentinel value of an Unroll or MinBlocks dimension meaning "as written"
/// (no pragma / no min_blocks): it produces no edit.
inline constexpr int64_t AsWritten = 0;

/// One tunable parameter.
struct Dimension {
  DimKind Kind = DimKind::BlockSize;
  /// Inventory ID edited: constant ID (macro:N, const:N), loop ID, or kernel ID.
  std::string Target;
  /// The kernel whose resources bound it ("" when unknown).
  std::string Kernel;
  /// Values in walk order (ascending, except that Unroll's AsWritten sits
  /// between 1 and 2); contains Baseline.
  std::vector<int64_t> Values;
  /// The value in the unedited sources.
  int64_t Baseline = 0;
  /// MinBlocks: max_threads of the launch bounds (a literal), or 0 when it
  /// follows the BlockSize dimension named by MaxThreadsFrom.
  int64_t MaxThreads = 0;
  std::string MaxThreadsFrom;
  /// Qualifiers: (param ID, "add_const" | "add_restrict") applied when the value is 1.
  std::vector<std::pair<std::string, std::string>> ParamEdits;
  /// Rule: the rule's edits (edit-language objects) applied when the value is 1,
  /// and why the rule fires there.
  nlohmann::json RuleEdits = nlohmann::json::array();
  std::string RuleWhy;
  /// Rule: the inventory IDs its edits rewrite (each edit's "id": a loop, a
  /// kernel's body, a launch site; a replace_stmt's `<id>/stmt:<n>`), for rewritesOverlap.
  std::vector<std::string> RuleScope;
  /// Stable key "<kind>:<target>", used in assignments.
  std::string key() const;
};

/// Whether Rule dimensions \p A and \p B rewrite the same code: an ID of one
/// scope equals one of the other or contains it (`k` contains `k/loop#1`;
/// IDs nest with `/`). Two such rewrites are alternatives (coarsen-grid-stride-2
/// and -8 of one loop, tile-shared-memory and its -rb4 variant of one kernel):
/// the walk never turns both on, since kloop apply refuses two edits of one
/// loop and a second `replace_body` or `set_launch_config` would discard the first.
bool rewritesOverlap(const Dimension &A, const Dimension &B);

/// Whether Rule dimension \p Rule rewrites the loop of Unroll dimension \p Unroll: one ID of its
/// scope is the loop's or contains it (`replace_body` of `k` rewrites `k/loop#1`). While the rule is
/// on, the walk leaves that loop's unroll as written: the loop it names is gone from the rewritten
/// code, and kloop apply refuses the two overlapping edits (on the H200, matmul's second candidate was
/// `tile-shared-memory-rb4` with unroll 8 of the naive loop, refused; docs/results.md, "Tenth GPU
/// session"). A loop inside a statement that a `replace_stmt` rewrites is not seen: the scope names
/// the statement, not its loops, so such a pair is still refused by kloop apply, at no GPU cost.
bool rewritesLoop(const Dimension &Rule, const Dimension &Unroll);

/// The space found in one inventory.
struct TunableSpace {
  std::vector<Dimension> Dims;
  /// Why candidates were left out ("macro:X: value 65535 is not a tile size").
  std::vector<std::string> Notes;
  /// Kernel ID -> its symbols (inventoryKernelSymbols), to match ptxas
  /// reports with symbolNamesKernel().
  std::map<std::string, std::vector<KernelSymbol>> Symbols;
};

/// The structural rules' candidate sites on an inventory, in the form of
/// kloop::structuralRuleCandidates (include/kloop/Edit/Rules.h): [{"rule",
/// "site", "why", "edits"}]. The rules live in kloopEdit, which this library
/// does not link; kloop optimize passes that function.
using RuleCandidatesFn = std::function<nlohmann::json(const inv::Inventory &Inventory)>;

/// Enumerates the space of an inventory (`kloop extract` output).
/// Only editable entities are used, and only those \p Scope allows
/// (ScopeFilter: targets and what they call, in `sources:`, not `protected:`;
/// nullptr: no workload bounds); constants marked `hardware_fact` never. Each
/// entity left out gets a note.
/// \p Rules (may be empty) runs on the inventory within the scope; each site
/// where a rule fires is a Rule dimension (off / on), each where it does not a
/// note with its reason.
TunableSpace enumerateSpace(const inv::Inventory &Inventory, const WorkloadScope *Scope = nullptr,
                            const RuleCandidatesFn &Rules = nullptr);

/// A value per dimension key; a missing key means the baseline value.
using Assignment = std::map<std::string, int64_t>;

/// \p A without the dimensions at their baseline value and without keys that
/// are not dimensions of \p S: the form in which the search compares
/// assignments (an empty result is the baseline itself).
Assignment normalAssignment(const TunableSpace &S, const Assignment &A);
/// The proposal edits (edit language of include/kloop/Edit/Proposal.h) that
/// turn the baseline into \p A: one per dimension whose value differs.
nlohmann::json editsFor(const TunableSpace &S, const Assignment &A);

/// Resources of a compiled kernel (ptxas -v).
struct KernelResources {
  unsigned Registers = 0;   ///< registers per thread
  unsigned SpillBytes = 0;  ///< spill stores + loads, bytes
  unsigned SmemBytes = 0;   ///< static shared memory per block, bytes
};

/// Resident blocks per SM on sm_90 for a kernel with \p Threads threads per
/// block, \p Registers registers per thread and \p SmemBytes shared memory per
/// block. Limits (CUDA C Programming Guide, "Compute Capability 9.0" table):
/// 65536 registers, 2048 threads, 32 blocks and 228 KiB shared memory per SM;
/// registers allocated per warp in units of 256. 0 means it cannot launch.
unsigned estimateBlocksPerSM(unsigned Threads, unsigned Registers, unsigned SmemBytes);

/// What happened to one earlier candidate, as the search needs it.
struct Attempt {
  Assignment A;
  bool Won = false;      ///< accepted as the new incumbent
  bool Spilled = false;  ///< its ptxas report has more spill bytes than the baseline
  /// Not accepted, yet faster on at least one shape it was timed on (partialWin): the walk tries it
  /// again together with another structural rule (docs/builtin-search.md, "Composites").
  bool Partial = false;
};

/// Whether a history entry's per-shape "evidence" (rows with "ci_low") shows a win on at least one
/// shape: a 95% CI lower bound above 1 + PartialWinGain.
bool partialWin(const nlohmann::json &Evidence);

/// The gain a shape's CI lower bound must clear for partialWin: the decision rule's default minimum
/// gain (docs/decide.md, rule 2).
constexpr double PartialWinGain = 0.02;

/// Search options.
struct SearchOptions {
  /// Orders dimensions of one kind (deterministic Fisher-Yates with mt19937_64).
  uint64_t Seed = 0;
  /// Whether the incumbent's hardware counters (context "counters") order
  /// the dimensions and leave out those that address none of the limiters
  /// they show (ProfileGuide.h); without counters the kind order holds.
  bool ProfileGuided = true;
  /// The structural rules (empty: none are tried).
  RuleCandidatesFn StructuralRules;
};

/// The next candidate of the search.
struct Candidate {
  Assignment A;
  std::string DimKey;   ///< the dimension changed from the incumbent
  int64_t Value = 0;    ///< its new value
  std::string Why;      ///< one sentence for the rationale
};

struct ProfileGuide;

/// The first candidate not yet tried of the coordinate-descent walk from the
/// incumbent of \p History (its last win; the baseline without one), or
/// std::nullopt when the walk is over: each dimension, in order, one step
/// upward, else one step downward, from the incumbent's value. \p Baseline maps
/// kernel IDs to their baseline resources (may be empty: no pruning). With
/// \p Guide (may be null) the order is the profile's (rankOf) and dimensions
/// that address none of the limiters are never proposed.
std::optional<Candidate> nextCandidate(const TunableSpace &S, const std::vector<Attempt> &History,
                                       const std::map<std::string, KernelResources> &Baseline,
                                       const SearchOptions &O, const ProfileGuide *Guide = nullptr);

/// The keys of the dimensions \p Guide leaves out of the walk: their kernel was
/// profiled and they address none of its limiters.
std::vector<std::string> leftOutByProfile(const TunableSpace &S, const ProfileGuide &Guide);

/// Returned by BuiltinProposer::propose when the walk is over.
class SearchExhaustedError : public llvm::ErrorInfo<SearchExhaustedError> {
public:
  static char ID;
  explicit SearchExhaustedError(std::string Why) : Why(std::move(Why)) {}
  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }
  std::string Why;
};

/// The proposer. Context keys read:
///  - "inventory": the inventory document (required), read with
///    inv::inventoryFromJSON (errors: "builtin proposer: context: inventory:
///    <member>: <reason>");
///  - "workload": the WorkloadScope (toJSON's form) that bounds the space
///    (optional; without it every editable kernel is in scope);
///  - "history": array of {"proposal": {..., "provenance": {"assignment": {...}}},
///    "accepted": bool, "spilled": bool} (optional; entries without an
///    assignment, e.g. from another proposer, are ignored);
///  - "counters": the incumbent's hardware counters ({"profiles": [...]},
///    kloop optimize's counters step), which order the walk (ProfileGuide.h;
///    optional; a profile kernelProfileFromJSON refuses is an error);
///  - "ptxas_baseline": the baseline build's ptxas report in the form of
///    kloop::toJSON(ArrayRef<PtxasFunction>) (kloop/Support/Ptxas.h) (optional;
///    an unreadable one gives no resources).
/// The reply's proposal is {"version": 1, "edits", "rationale", "provenance":
/// {"proposer": "builtin", "seed", "dimension", "value", "assignment",
/// "space_notes"}} (space_notes: TunableSpace::Notes, what was left out and why).
/// Errors: missing/invalid inventory or counters; SearchExhaustedError, whose
/// reason says whether the walk ended or the profile shows nothing left that
/// a dimension addresses.
class BuiltinProposer : public Proposer {
public:
  explicit BuiltinProposer(SearchOptions O = {}) : Opts(O) {}
  llvm::Expected<ProposalReply> propose(const nlohmann::json &Context) override;
  /// "builtin".
  llvm::StringRef kind() const override { return "builtin"; }
  /// True: the search replays its context's history and nothing else (see the file comment).
  bool deterministic() const override { return true; }

private:
  SearchOptions Opts;
};

/// Per-kernel resources from a ptxas report JSON ({"kernels": [...]}, the
/// shape of kloop::optimize::toJSON(std::vector<PtxasKernel>)) keyed by the inventory kernel
/// IDs of \p S (matched through mangled names).
std::map<std::string, KernelResources> resourcesByKernel(const TunableSpace &S,
                                                         const nlohmann::json &Ptxas);

} // namespace builtin
} // namespace kloop

#endif
