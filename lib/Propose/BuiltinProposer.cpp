//===- BuiltinProposer.cpp - Coordinate descent over the tunable space ----===//
//
// Strategy and thresholds: docs/builtin-search.md.
//
//===----------------------------------------------------------------------===//
#include "kloop/Propose/BuiltinProposer.h"
#include "kloop/Propose/ProfileGuide.h"
#include "kloop/Support/Ptxas.h"
#include "kloop/Support/JSON.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <set>

using json = nlohmann::json;
using llvm::Error;
using llvm::Expected;

namespace kloop {
namespace builtin {

char SearchExhaustedError::ID = 0;
void SearchExhaustedError::log(llvm::raw_ostream &OS) const {
  OS << "builtin search exhausted: " << Why;
}

const char *dimKindName(DimKind K) {
  switch (K) {
  case DimKind::Rule: return "rule";
  case DimKind::BlockSize: return "block_size";
  case DimKind::Tile: return "tile";
  case DimKind::Unroll: return "unroll";
  case DimKind::MinBlocks: return "min_blocks";
  case DimKind::Qualifiers: return "qualifiers";
  }
  return "?";
}

std::string Dimension::key() const { return std::string(dimKindName(Kind)) + ":" + Target; }

static std::vector<int64_t> sortedWith(std::vector<int64_t> V, int64_t Baseline) {
  V.push_back(Baseline);
  std::sort(V.begin(), V.end());
  V.erase(std::unique(V.begin(), V.end()), V.end());
  return V;
}

static bool isPow2(int64_t V) { return V > 0 && (V & (V - 1)) == 0; }

/// The first kernel or launch site in \p Broken that uses constant \p C (directly, or a launch
/// site of a broken kernel), if any.
static std::optional<std::string> brokenUser(const inv::Constant &C, const std::set<std::string> &Broken,
                                             const std::map<std::string, std::string> &SiteKernel) {
  for (const inv::ConstantUse &U : C.Uses) {
    if (Broken.count(U.Owner))
      return U.Owner;
    auto It = SiteKernel.find(U.Owner);
    if (It != SiteKernel.end() && Broken.count(It->second))
      return It->second;
  }
  return std::nullopt;
}

/// One Rule dimension per site where a structural rule fires; a note per site where it does not.
static void addRuleDims(const json &Candidates, TunableSpace &S) {
  if (!Candidates.is_array())
    return;
  for (const json &C : Candidates) {
    std::string Rule = C.value("rule", ""), Site = C.value("site", ""), Why = C.value("why", "");
    if (!C.contains("edits") || !C["edits"].is_array() || C["edits"].empty()) {
      S.Notes.push_back(Site + ": rule " + Rule + " does not fire: " + Why);
      continue;
    }
    Dimension D;
    D.Kind = DimKind::Rule;
    D.Target = Rule + "@" + Site;
    D.Kernel = Site.substr(0, Site.find('/'));
    D.Values = {0, 1};
    D.RuleEdits = C["edits"];
    D.RuleWhy = Why;
    for (const json &E : D.RuleEdits)
      if (E.is_object() && E.contains("id") && E["id"].is_string()) // a replace_stmt rewrites one statement
        D.RuleScope.push_back(E["id"].get<std::string>() +
                              (E.contains("stmt") ? "/stmt:" + E["stmt"].dump() : std::string()));
    S.Dims.push_back(D);
  }
}

/// Whether inventory ID \p Outer is \p Inner or contains it (`k` contains `k/loop#1`).
static bool containsID(const std::string &Outer, const std::string &Inner) {
  return Inner.compare(0, Outer.size(), Outer) == 0 && (Inner.size() == Outer.size() || Inner[Outer.size()] == '/');
}

bool rewritesOverlap(const Dimension &A, const Dimension &B) {
  for (const std::string &X : A.RuleScope)
    for (const std::string &Y : B.RuleScope)
      if (containsID(X, Y) || containsID(Y, X))
        return true;
  return false;
}

bool rewritesLoop(const Dimension &Rule, const Dimension &Unroll) {
  return Unroll.Kind == DimKind::Unroll &&
         llvm::any_of(Rule.RuleScope, [&](const std::string &X) { return containsID(X, Unroll.Target); });
}

namespace {
/// What the launch sites tell about the kernels and constants they involve.
struct SiteFacts {
  /// Launch site -> kernel, for block-size uses (their owner is the launch site).
  std::map<std::string, std::string> SiteKernel;
  /// Launch site -> threads per block as clang evaluated it (0 when not a constant).
  std::map<std::string, int64_t> SiteThreads;
  /// Kernels and launch sites with compile errors (status "error"): never tuned, nor are the
  /// constants they use, since clang could not check an edit of them.
  std::set<std::string> Broken;
  /// Block-size constant ID -> its kernel.
  std::map<std::string, std::string> BlockConstKernel;
};
} // namespace

static SiteFacts siteFacts(const inv::Inventory &Inv) {
  SiteFacts F;
  for (const inv::Kernel &K : Inv.Kernels)
    if (K.State.Status == "error")
      F.Broken.insert(K.ID);
  for (const inv::LaunchSite &L : Inv.LaunchSites) {
    if (L.State.Status == "error")
      F.Broken.insert(L.ID);
    if (L.Kernel)
      F.SiteKernel[L.ID] = *L.Kernel;
    if (!L.Block || !L.Block->Value || L.Block->Value->empty())
      continue;
    int64_t T = 1;
    for (const std::optional<int64_t> &V : *L.Block->Value)
      T = V && *V > 0 && T <= 1024 ? T * *V : 0;
    F.SiteThreads[L.ID] = T;
  }
  return F;
}

/// A BlockSize or Tile dimension for constant \p C, or a note on why it is none.
static void addConstantDim(const inv::Constant &C, SiteFacts &F, TunableSpace &S) {
  const std::string &ID = C.ID;
  if (ID.empty() || !C.Value)
    return;
  const int64_t V = *C.Value;
  if (!C.Edit.Editable) {
    S.Notes.push_back(ID + ": left out: " + C.Edit.NotEditableReason.value_or("not editable"));
    return;
  }
  if (auto User = brokenUser(C, F.Broken, F.SiteKernel)) {
    S.Notes.push_back(ID + ": used by " + *User + ", which has compile errors; left alone");
    return;
  }
  bool Block = false, TileUse = false;
  std::string Kernel;
  // Largest value that keeps every launch using it within 1024 threads per block, assuming the
  // block is the constant times the other factors (a dim3(BLOCK_X, BLOCK_Y) as in stencil2d).
  int64_t MaxValue = 1024;
  for (const inv::ConstantUse &U : C.Uses) {
    if (U.Context == "block_size") {
      Block = true;
      auto It = F.SiteKernel.find(U.Owner);
      if (It != F.SiteKernel.end() && Kernel.empty())
        Kernel = It->second;
      auto T = F.SiteThreads.find(U.Owner);
      if (T != F.SiteThreads.end() && T->second > 0 && V > 0 && T->second % V == 0)
        MaxValue = std::min<int64_t>(MaxValue, 1024 / (T->second / V));
    } else if (U.Context == "array_size" || U.Context == "loop_bound" || U.Context == "shared_memory_size") {
      TileUse = true;
    }
  }
  Dimension D;
  D.Target = ID;
  D.Baseline = V;
  D.Kernel = Kernel;
  if (Block) {
    if (V < 32 || V > 1024 || V % 32 != 0) {
      S.Notes.push_back(ID + ": block size " + std::to_string(V) +
                        " is not a multiple of 32 in [32, 1024]; left alone");
      return;
    }
    D.Kind = DimKind::BlockSize;
    std::vector<int64_t> Candidates;
    for (int64_t C : {64, 128, 256, 512, 1024})
      if (C <= MaxValue)
        Candidates.push_back(C);
    if (Candidates.size() < 5)
      S.Notes.push_back(ID + ": block size values above " + std::to_string(MaxValue) +
                        " left out: the launch's other block factors would exceed 1024 threads");
    D.Values = sortedWith(Candidates, V);
    F.BlockConstKernel[ID] = Kernel;
    S.Dims.push_back(D);
  } else if (TileUse) {
    if (!isPow2(V) || V > 128) {
      S.Notes.push_back(ID + ": value " + std::to_string(V) +
                        " is not a power of two <= 128; not treated as a tile size");
      return;
    }
    D.Kind = DimKind::Tile;
    D.Values = sortedWith({8, 16, 32}, V);
    S.Dims.push_back(D);
  }
}

/// An Unroll dimension per editable loop of \p K with a pragma or a constant trip count.
static void addUnrollDims(const inv::Kernel &K, TunableSpace &S) {
  for (const inv::Loop &L : K.Loops) {
    if (!L.Edit.Editable)
      continue;
    std::optional<int64_t> Trip = L.TripCount;
    if (!L.UnrollPragma && !Trip)
      continue; // neither a pragma nor a constant trip count
    Dimension D;
    D.Kind = DimKind::Unroll;
    D.Target = L.ID;
    D.Kernel = K.ID;
    std::optional<int64_t> Count = L.UnrollPragma ? L.UnrollPragma->Count : std::nullopt;
    std::vector<int64_t> Factors = {1, 2, 4, 8};
    if (Trip)
      Factors.erase(std::remove_if(Factors.begin(), Factors.end(), [&](int64_t F) { return F > *Trip; }),
                    Factors.end());
    if (Count) {
      D.Baseline = *Count;
      D.Values = sortedWith(Factors, *Count);
    } else {
      // "As written" (no pragma, or `#pragma unroll` without a count) sits between 1 and 2.
      D.Baseline = AsWritten;
      D.Values.clear();
      for (int64_t F : Factors)
        if (F == 1)
          D.Values.push_back(1);
      D.Values.push_back(AsWritten);
      for (int64_t F : Factors)
        if (F > 1)
          D.Values.push_back(F);
    }
    if (D.Values.size() > 1 && !D.Target.empty())
      S.Dims.push_back(D);
  }
}

/// A MinBlocks dimension for the launch bounds of \p K, if it has some.
static void addMinBlocksDim(const inv::Kernel &K, const SiteFacts &F, TunableSpace &S) {
  if (!K.Bounds)
    return;
  const inv::LaunchBounds &LB = *K.Bounds;
  Dimension D;
  D.Kind = DimKind::MinBlocks;
  D.Target = K.ID;
  D.Kernel = K.ID;
  for (const auto &[CID, _] : F.BlockConstKernel) {
    std::string Name = CID.substr(CID.find(':') + 1);
    if (LB.MaxThreads.Expr == Name)
      D.MaxThreadsFrom = "block_size:" + CID;
  }
  if (D.MaxThreadsFrom.empty()) {
    if (!LB.MaxThreads.Value) {
      S.Notes.push_back(K.ID + ": launch bounds max_threads is not a known value");
      return;
    }
    D.MaxThreads = *LB.MaxThreads.Value;
  }
  std::optional<int64_t> MB = LB.MinBlocks ? LB.MinBlocks->Value : std::nullopt;
  D.Baseline = MB ? *MB : AsWritten;
  D.Values = MB ? sortedWith({1, 2, 4}, *MB) : std::vector<int64_t>{AsWritten, 2, 4};
  S.Dims.push_back(D);
}

/// A Qualifiers dimension: const / __restrict__ on the read-only pointer parameters of \p K.
static void addQualifierDim(const inv::Kernel &K, TunableSpace &S) {
  Dimension D;
  D.Kind = DimKind::Qualifiers;
  D.Target = K.ID;
  D.Kernel = K.ID;
  for (const inv::Param &P : K.Params) {
    if (!P.Pointer || !P.Written || *P.Written)
      continue; // only parameters proven read-only
    if (!P.ConstPointee)
      D.ParamEdits.push_back({P.ID, "add_const"});
    if (!P.Restrict)
      D.ParamEdits.push_back({P.ID, "add_restrict"});
  }
  if (D.ParamEdits.empty())
    return;
  D.Baseline = 0;
  D.Values = {0, 1};
  S.Dims.push_back(D);
}

TunableSpace enumerateSpace(const inv::Inventory &Whole, const WorkloadScope *Scope, const RuleCandidatesFn &Rules) {
  TunableSpace S;
  // What the workload does not let the search tune is not editable here; the notes below give the reason.
  std::vector<std::string> Unused;
  const inv::Inventory Inv = scopeInventory(Whole, Scope, Unused);
  if (Rules)
    addRuleDims(Rules(Inv), S);
  SiteFacts F = siteFacts(Inv);
  // Constants: block sizes first, then tiles.
  for (const inv::Constant &C : Inv.Constants)
    addConstantDim(C, F, S);
  for (const inv::Kernel &K : Inv.Kernels) {
    if (K.ID.empty())
      continue;
    S.Symbols[K.ID] = inventoryKernelSymbols(K);
    if (F.Broken.count(K.ID)) {
      S.Notes.push_back(K.ID + ": kernel has compile errors; not tuned");
      continue;
    }
    if (!K.Edit.Editable) {
      S.Notes.push_back(K.ID + ": kernel left out: " + K.Edit.NotEditableReason.value_or("not editable"));
      continue;
    }
    addUnrollDims(K, S);
    addMinBlocksDim(K, F, S);
    addQualifierDim(K, S);
  }
  return S;
}

static int64_t valueIn(const Dimension &D, const Assignment &A) {
  auto It = A.find(D.key());
  return It == A.end() ? D.Baseline : It->second;
}

Assignment normalAssignment(const TunableSpace &S, const Assignment &A) {
  Assignment N;
  for (const Dimension &D : S.Dims) {
    auto It = A.find(D.key());
    if (It != A.end() && It->second != D.Baseline)
      N[D.key()] = It->second;
  }
  return N;
}

json editsFor(const TunableSpace &S, const Assignment &A) {
  json Edits = json::array();
  for (const Dimension &D : S.Dims) {
    int64_t V = valueIn(D, A);
    bool FollowsBlock = false;
    if (D.Kind == DimKind::MinBlocks && !D.MaxThreadsFrom.empty())
      for (const Dimension &B : S.Dims)
        if (B.key() == D.MaxThreadsFrom && valueIn(B, A) != B.Baseline)
          FollowsBlock = true;
    if (V == D.Baseline && !(FollowsBlock && V != AsWritten))
      continue;
    switch (D.Kind) {
    case DimKind::BlockSize:
    case DimKind::Tile:
      Edits.push_back({{"kind", "set_constant"}, {"id", D.Target}, {"value", V}});
      break;
    case DimKind::Unroll:
      Edits.push_back({{"kind", "set_unroll"},
                       {"id", D.Target},
                       {"count", V == AsWritten ? json(nullptr) : json(V)}});
      break;
    case DimKind::MinBlocks: {
      int64_t MT = D.MaxThreads;
      if (!D.MaxThreadsFrom.empty())
        for (const Dimension &B : S.Dims)
          if (B.key() == D.MaxThreadsFrom)
            MT = valueIn(B, A);
      json E = {{"kind", "set_launch_bounds"}, {"id", D.Target}, {"max_threads", MT}};
      if (V != AsWritten)
        E["min_blocks"] = V;
      Edits.push_back(E);
      break;
    }
    case DimKind::Qualifiers:
      if (V == 1)
        for (const auto &[PID, Kind] : D.ParamEdits)
          Edits.push_back({{"kind", Kind}, {"id", PID}});
      break;
    case DimKind::Rule:
      if (V == 1)
        Edits.insert(Edits.end(), D.RuleEdits.begin(), D.RuleEdits.end());
      break;
    }
  }
  return Edits;
}

unsigned estimateBlocksPerSM(unsigned Threads, unsigned Registers, unsigned SmemBytes) {
  if (Threads == 0 || Threads > 1024 || Registers > 255)
    return 0;
  unsigned Warps = (Threads + 31) / 32;
  unsigned RegsPerWarp = ((std::max(Registers, 1u) * 32 + 255) / 256) * 256;
  unsigned ByRegs = 65536 / (RegsPerWarp * Warps);
  unsigned ByThreads = 2048 / (Warps * 32);
  unsigned BySmem = SmemBytes ? (228u * 1024u) / SmemBytes : 32;
  return std::min({32u, ByRegs, ByThreads, BySmem});
}

namespace {
/// The walk of docs/builtin-search.md from the incumbent of a history.
class Walk {
public:
  Walk(const TunableSpace &S, const std::vector<Attempt> &H,
       const std::map<std::string, KernelResources> &R, const SearchOptions &O, const ProfileGuide *G)
      : S(S), Res(R), O(O), G(G) {
    for (const Attempt &A : H) {
      Assignment N = normal(A.A);
      Tried[N] = A;
      if (A.Won) { // each win is the incumbent of the candidates after it
        noteStep(Incumbent, N);
        Previous = Incumbent;
        Incumbent = N;
        IncumbentSpilled = A.Spilled;
      }
    }
    for (auto It = H.rbegin(); It != H.rend(); ++It) // the newest partial win first
      if (It->Partial && rulesOnTop(normal(It->A)))
        Partials.push_back(normal(It->A));
  }

  std::optional<Candidate> run() {
    if (std::optional<Candidate> C = composite())
      return C;
    for (const Dimension *D : order()) {
      if (IncumbentSpilled && steppedLast(*D))
        continue; // a win that spills: do not push that dimension further
      if (std::optional<Candidate> C = stepOf(*D))
        return C;
    }
    return std::nullopt;
  }

private:
  const TunableSpace &S;
  const std::map<std::string, KernelResources> &Res;
  const SearchOptions &O;
  const ProfileGuide *G;
  std::map<Assignment, Attempt> Tried;
  Assignment Incumbent, Previous; // the latest win and the one before it (the baseline: empty)
  bool IncumbentSpilled = false;
  /// Per parameter dimension, the direction (+1 upward, -1 downward) of its last winning step: the walk
  /// never steps back against it, so a dimension wins at most once per value and the walk ends.
  std::map<std::string, int> WonDirection;
  /// Rules that were on in an incumbent: once replaced by an alternative they are not turned on again.
  std::set<std::string> RulesOnceOn;
  /// Partial wins over the current incumbent (the incumbent with structural rules turned on), newest first.
  std::vector<Assignment> Partials;

  /// Whether \p A is the incumbent with one or more structural rules turned on and nothing else changed.
  bool rulesOnTop(const Assignment &A) const {
    bool Any = false;
    for (const Dimension &D : S.Dims) {
      int64_t V = valueIn(D, A);
      if (V == valueIn(D, Incumbent))
        continue;
      if (D.Kind != DimKind::Rule || V != 1)
        return false;
      Any = true;
    }
    return Any;
  }

  /// The structural rules on in \p A and off in the incumbent, ", " joined.
  std::string rulesAdded(const Assignment &A) const {
    std::string Out;
    for (const Dimension &D : S.Dims)
      if (D.Kind == DimKind::Rule && valueIn(D, A) == 1 && valueIn(D, Incumbent) != 1)
        Out += (Out.empty() ? "" : ", ") + D.Target;
    return Out;
  }

  /// A partial win (faster on some shapes, not on all) with one more structural rule that lost when
  /// tried alone from the incumbent: each may win the shapes the other lost, which a step of one rule
  /// at a time never shows (docs/builtin-search.md, "Composites"). Each pair once; never two rules
  /// that rewrite the same code.
  std::optional<Candidate> composite() const {
    for (const Assignment &P : Partials)
      for (const Dimension &R : S.Dims) {
        if (R.Kind != DimKind::Rule || valueIn(R, P) == 1 || RulesOnceOn.count(R.key()))
          continue;
        Assignment Alone = Incumbent;
        Alone[R.key()] = 1;
        auto Lost = Tried.find(normal(Alone));
        if (Lost == Tried.end() || Lost->second.Won)
          continue; // not tried alone yet: the walk tries it first
        Assignment A = P;
        A[R.key()] = 1;
        if (!alternatives(R, 1, A).empty())
          continue; // it rewrites code a rule of the partial win rewrites
        Assignment N = normal(A);
        if (Tried.count(N))
          continue;
        return Candidate{N, R.key(), 1,
                         describe(R, 1, Incumbent) + ", together with " + rulesAdded(P) +
                             ", which won on some shapes and not on all"};
      }
    return std::nullopt;
  }

  /// Records the steps of the win from \p From to \p To.
  void noteStep(const Assignment &From, const Assignment &To) {
    for (const Dimension &D : S.Dims) {
      int64_t A = valueIn(D, From), B = valueIn(D, To);
      if (A == B)
        continue;
      if (D.Kind == DimKind::Rule) {
        if (B == 1)
          RulesOnceOn.insert(D.key());
        continue;
      }
      auto IA = std::find(D.Values.begin(), D.Values.end(), A), IB = std::find(D.Values.begin(), D.Values.end(), B);
      WonDirection[D.key()] = IB > IA ? +1 : -1;
    }
  }

  Assignment normal(const Assignment &A) const { return normalAssignment(S, A); }

  /// Whether the incumbent's win changed \p D (its value differs from the previous incumbent's).
  bool steppedLast(const Dimension &D) const { return valueIn(D, Incumbent) != valueIn(D, Previous); }

  /// The first untried step of \p D from the incumbent: upward, then downward, never against the
  /// direction in which \p D last won. A rule that is on stays on; one that an alternative replaced
  /// stays off.
  std::optional<Candidate> stepOf(const Dimension &D) const {
    const std::vector<int64_t> &Vals = D.Values;
    auto Cur = std::find(Vals.begin(), Vals.end(), valueIn(D, Incumbent));
    if (Cur == Vals.end())
      return std::nullopt;
    long Idx = Cur - Vals.begin();
    for (int Dir : {+1, -1}) {
      long J = Idx + Dir;
      if (J < 0 || J >= (long)Vals.size() || (D.Kind == DimKind::Rule && (Dir < 0 || RulesOnceOn.count(D.key()))))
        continue;
      if (auto W = WonDirection.find(D.key()); W != WonDirection.end() && W->second != Dir)
        continue;
      int64_t V = Vals[J];
      std::string Why;
      if (pruned(D, V, Incumbent, Why))
        continue;
      Assignment A = Incumbent;
      A[D.key()] = V;
      std::string Replaced = alternatives(D, V, A);
      if (rewrittenUnroll(D, A))
        continue; // a rule on in A rewrites this loop: its unroll is no longer there to set
      Assignment N = normal(A);
      if (N.empty() || Tried.count(N))
        continue; // the baseline, or tried (lost, or an earlier incumbent): this direction is done
      return Candidate{N, D.key(), V, describe(D, V, Incumbent) + Replaced};
    }
    return std::nullopt;
  }

  /// Rule \p D turned on in \p A turns off every other rule on in \p A that rewrites the same code
  /// (rewritesOverlap): the candidate tries \p D in place of them; and it sets every loop it rewrites
  /// (rewritesLoop) back to its unroll as written. Returns " (in place of R, ...)" or "".
  std::string alternatives(const Dimension &D, int64_t V, Assignment &A) const {
    std::string Out;
    if (D.Kind != DimKind::Rule || V != 1)
      return Out;
    for (const Dimension &E : S.Dims) {
      if (rewritesLoop(D, E))
        A[E.key()] = E.Baseline;
      if (&E != &D && E.Kind == DimKind::Rule && valueIn(E, A) == 1 && rewritesOverlap(D, E)) {
        A[E.key()] = 0;
        Out += (Out.empty() ? " (in place of " : ", ") + E.Target;
      }
    }
    return Out.empty() ? Out : Out + ")";
  }

  /// Whether \p D is an unroll dimension set away from its baseline in \p A while a rule on in \p A
  /// rewrites its loop (rewritesLoop): kloop apply would refuse the two overlapping edits.
  bool rewrittenUnroll(const Dimension &D, const Assignment &A) const {
    if (D.Kind != DimKind::Unroll || valueIn(D, A) == D.Baseline)
      return false;
    return llvm::any_of(S.Dims, [&](const Dimension &R) {
      return R.Kind == DimKind::Rule && valueIn(R, A) == 1 && rewritesLoop(R, D);
    });
  }

  /// The kinds in the order of the table, each shuffled with the seed; with a profile, the dimensions
  /// that address a limiter of their kernel first, strongest limiter first, and none that address
  /// none of them (leftOutByProfile).
  std::vector<const Dimension *> order() const {
    std::vector<const Dimension *> Out;
    std::mt19937_64 Gen(O.Seed);
    for (DimKind K : {DimKind::Rule, DimKind::BlockSize, DimKind::Tile, DimKind::Unroll, DimKind::MinBlocks,
                      DimKind::Qualifiers}) {
      std::vector<const Dimension *> Group;
      for (const Dimension &D : S.Dims)
        if (D.Kind == K)
          Group.push_back(&D);
      // Fisher-Yates with the raw generator output (portable, unlike std::shuffle).
      for (size_t I = Group.size(); I > 1; --I)
        std::swap(Group[I - 1], Group[Gen() % I]);
      Out.insert(Out.end(), Group.begin(), Group.end());
    }
    if (!G)
      return Out;
    std::vector<std::pair<Rank, const Dimension *>> Ranked;
    for (const Dimension *D : Out)
      if (Rank R = rankOf(*D, *G); !R.Guided || R.Index)
        Ranked.push_back({R, D});
    // Guided first, by the weight of the limiter addressed (heaviest first); unguided after, in kind order.
    std::stable_sort(Ranked.begin(), Ranked.end(), [](const auto &A, const auto &B) {
      if (A.first.Guided != B.first.Guided)
        return A.first.Guided;
      return A.first.Weight > B.first.Weight;
    });
    Out.clear();
    for (const auto &[_, D] : Ranked)
      Out.push_back(D);
    return Out;
  }

  const KernelResources *resOf(const std::string &Kernel) const {
    auto It = Res.find(Kernel);
    return It == Res.end() ? nullptr : &It->second;
  }

  int64_t blockOf(const Dimension &D, const Assignment &A) const {
    if (!D.MaxThreadsFrom.empty())
      for (const Dimension &B : S.Dims)
        if (B.key() == D.MaxThreadsFrom)
          return valueIn(B, A);
    return D.MaxThreads;
  }

  bool pruned(const Dimension &D, int64_t V, const Assignment &Best, std::string &Why) const {
    const KernelResources *R = resOf(D.Kernel);
    if (!R)
      return false;
    switch (D.Kind) {
    case DimKind::BlockSize:
      // A block that cannot be resident with the kernel's registers cannot launch.
      return estimateBlocksPerSM((unsigned)V, R->Registers, R->SmemBytes) == 0;
    case DimKind::Unroll:
      // A kernel that already spills gets no larger unroll.
      return R->SpillBytes > 0 && V != AsWritten && V > 1;
    case DimKind::MinBlocks: {
      // min_blocks the kernel already reaches is a no-op.
      int64_t T = blockOf(D, Best);
      return V != AsWritten && T > 0 &&
             estimateBlocksPerSM((unsigned)T, R->Registers, R->SmemBytes) >= (unsigned)V;
    }
    default:
      return false;
    }
  }

  std::string describe(const Dimension &D, int64_t V, const Assignment &Best) const {
    std::string From = std::to_string(valueIn(D, Best)), To = std::to_string(V);
    if (D.Kind == DimKind::Unroll) {
      if (valueIn(D, Best) == AsWritten) From = "as written";
      if (V == AsWritten) To = "as written";
    }
    switch (D.Kind) {
    case DimKind::Rule:
      return "structural rule " + D.Target.substr(0, D.Target.find('@')) + " at " +
             D.Target.substr(D.Target.find('@') + 1) + (V == 1 ? ": " + D.RuleWhy : ": off");
    case DimKind::BlockSize:
      return "block size " + D.Target + " " + From + " -> " + To + " (coordinate descent, block size first)";
    case DimKind::Tile:
      return "tile constant " + D.Target + " " + From + " -> " + To;
    case DimKind::Unroll:
      return "unroll factor of " + D.Target + " " + From + " -> " + To;
    case DimKind::MinBlocks:
      return "__launch_bounds__ min blocks of " + D.Target + " " + From + " -> " + To;
    case DimKind::Qualifiers:
      return "const/__restrict__ on the read-only pointers of " + D.Target;
    }
    return "";
  }
};
} // namespace

std::optional<Candidate> nextCandidate(const TunableSpace &S, const std::vector<Attempt> &History,
                                       const std::map<std::string, KernelResources> &Baseline,
                                       const SearchOptions &O, const ProfileGuide *Guide) {
  return Walk(S, History, Baseline, O, Guide).run();
}

std::vector<std::string> leftOutByProfile(const TunableSpace &S, const ProfileGuide &Guide) {
  std::vector<std::string> Out;
  for (const Dimension &D : S.Dims)
    if (Rank R = rankOf(D, Guide); R.Guided && !R.Index)
      Out.push_back(D.key());
  return Out;
}

std::map<std::string, KernelResources> resourcesByKernel(const TunableSpace &S, const json &Ptxas) {
  std::map<std::string, KernelResources> Out;
  Expected<std::vector<PtxasFunction>> Fs = ptxasFromJSON(Ptxas);
  if (!Fs) {
    consumeError(Fs.takeError()); // no resources: the search only loses its spill and occupancy hints
    return Out;
  }
  for (const PtxasFunction &F : *Fs) {
    if (!F.Entry)
      continue;
    for (const auto &[KID, Symbols] : S.Symbols)
      if (F.Name == KID ||
          std::any_of(Symbols.begin(), Symbols.end(), [&](const KernelSymbol &K) { return symbolNamesKernel(K, F.Name); }))
        Out[KID] = {F.Registers, F.SpillStoreBytes + F.SpillLoadBytes, F.SharedBytes};
  }
  return Out;
}

/// " (left out: <note>; <note>)", or "" without notes: why the space is what it is.
static std::string notesClause(const std::vector<std::string> &Notes) {
  std::string Out;
  for (const std::string &N : Notes)
    Out += (Out.empty() ? " (left out: " : "; ") + N;
  return Out.empty() ? Out : Out + ")";
}

namespace {
/// What the search reads of the context's history.
struct HistoryFacts {
  std::vector<Attempt> Attempts;
  /// Candidates whose verification and measurement were skipped (no GPU), and candidates measured at all.
  size_t Unmeasured = 0, Measured = 0;
};
} // namespace

bool partialWin(const json &Evidence) {
  if (!Evidence.is_array())
    return false;
  return llvm::any_of(Evidence, [](const json &Row) {
    return Row.is_object() && Row.contains("ci_low") && Row["ci_low"].is_number() &&
           Row["ci_low"].get<double>() > 1 + PartialWinGain;
  });
}

static HistoryFacts readHistory(const json &Context) {
  HistoryFacts F;
  if (!Context.contains("history") || !Context["history"].is_array())
    return F;
  for (const json &H : Context["history"]) {
    std::string Outcome = H.is_object() ? H.value("outcome", std::string()) : std::string();
    F.Unmeasured += Outcome == "unmeasured";
    F.Measured += Outcome == "accepted" || Outcome == "rejected" || Outcome == "failed_verification";
    const json *Prov = nullptr;
    if (H.contains("proposal") && H["proposal"].is_object() && H["proposal"].contains("provenance"))
      Prov = &H["proposal"]["provenance"];
    if (!Prov || !Prov->is_object() || !Prov->contains("assignment") || !(*Prov)["assignment"].is_object())
      continue;
    Attempt A;
    for (const auto &[K, V] : (*Prov)["assignment"].items())
      if (V.is_number_integer())
        A.A[K] = V.get<int64_t>();
    A.Won = H.value("accepted", false);
    A.Spilled = H.value("spilled", false);
    A.Partial = !A.Won && H.contains("evidence") && partialWin(H["evidence"]);
    F.Attempts.push_back(std::move(A));
  }
  return F;
}

/// "; " joined.
static std::string joined(const std::vector<std::string> &V, const char *Sep = "; ") {
  std::string Out;
  for (const std::string &X : V)
    Out += (Out.empty() ? "" : Sep) + X;
  return Out;
}

/// Why the walk over \p S is over, given \p H and the profile guide \p G (may be null).
static llvm::Error exhausted(const TunableSpace &S, const HistoryFacts &H, const ProfileGuide *G) {
  size_t Wins = 0;
  for (const Attempt &A : H.Attempts)
    Wins += A.Won;
  std::vector<std::string> Keys;
  for (const Dimension &D : S.Dims)
    Keys.push_back(D.key());
  std::string Tally = std::to_string(S.Dims.size()) + " dimensions: " + joined(Keys, ", ") + "; " +
                      std::to_string(H.Attempts.size()) + " candidates";
  // Without wins (or without measurements: nothing unmeasured is ever a win) each dimension ends at
  // its first step in each direction; ptxas pruning can end one before any step.
  if (H.Unmeasured > 0 && H.Measured == 0)
    return llvm::make_error<SearchExhaustedError>(
        "no candidate could be measured (verification and measurement skipped: no GPU), so none could win "
        "and each dimension ended at its first step in each direction (" +
        Tally + ", " + std::to_string(H.Unmeasured) + " not measured, none measured)");
  std::vector<std::string> Out = G ? leftOutByProfile(S, *G) : std::vector<std::string>{};
  if (!Out.empty())
    return llvm::make_error<SearchExhaustedError>(
        "the profile shows nothing left that a rule addresses: every dimension that addresses a limiter "
        "the incumbent's counters show was walked (" +
        joined(describeGuide(*G)) + "); not tried, as they address none of them: " + joined(Out, ", ") + " (" +
        Tally + ", " + std::to_string(Wins) + " accepted)");
  return llvm::make_error<SearchExhaustedError>(
      "every dimension was walked until a step did not win, or was pruned by the ptxas report (" + Tally +
      ", " + std::to_string(Wins) + " accepted)");
}

/// The profile guide of the context's "counters" (std::nullopt without counters or when not guided).
static Expected<std::optional<ProfileGuide>> guideOf(const TunableSpace &S, const json &Context, bool Guided) {
  if (!Guided || !Context.contains("counters"))
    return std::nullopt;
  Expected<ProfileGuide> G = profileGuide(S, Context["counters"], "builtin proposer: context: counters");
  if (!G)
    return G.takeError();
  if (G->ByKernel.empty())
    return std::nullopt;
  return std::optional<ProfileGuide>(std::move(*G));
}

Expected<ProposalReply> BuiltinProposer::propose(const json &Context) {
  auto Start = std::chrono::steady_clock::now();
  if (!Context.is_object() || !Context.contains("inventory"))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "builtin proposer: the context has no \"inventory\"");
  std::optional<WorkloadScope> Scope;
  if (Context.contains("workload")) {
    Expected<WorkloadScope> W = workloadScopeFromJSON(Context["workload"]);
    if (!W)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "builtin proposer: context: " + llvm::toString(W.takeError()));
    Scope = std::move(*W);
  }
  Expected<inv::Inventory> Inv = inv::inventoryFromJSON(Context["inventory"], "builtin proposer: context: inventory");
  if (!Inv)
    return Inv.takeError();
  const TunableSpace S = enumerateSpace(*Inv, Scope ? &*Scope : nullptr, Opts.StructuralRules);
  if (S.Dims.empty())
    return llvm::make_error<SearchExhaustedError>("the inventory has no tunable parameter" +
                                                  notesClause(S.Notes));
  Expected<std::optional<ProfileGuide>> G = guideOf(S, Context, Opts.ProfileGuided);
  if (!G)
    return G.takeError();
  const ProfileGuide *Guide = *G ? &**G : nullptr;
  HistoryFacts H = readHistory(Context);
  std::map<std::string, KernelResources> Res;
  if (Context.contains("ptxas_baseline"))
    Res = resourcesByKernel(S, Context["ptxas_baseline"]);
  std::optional<Candidate> C = nextCandidate(S, H.Attempts, Res, Opts, Guide);
  if (!C)
    return exhausted(S, H, Guide);
  ProposalReply R;
  json Assign = json::object();
  for (const auto &[K, V] : C->A)
    Assign[K] = V;
  json Prov = {{"proposer", "builtin"}, {"seed", Opts.Seed},   {"dimension", C->DimKey},
               {"value", C->Value},     {"assignment", Assign}, {"space_notes", S.Notes}};
  std::string Why = C->Why;
  if (Guide) {
    std::vector<std::string> Findings = describeGuide(*Guide);
    Prov["profile_findings"] = Findings;
    Prov["left_out_by_profile"] = leftOutByProfile(S, *Guide);
    Why += "; the profile: " + joined(Findings);
  }
  R.Proposal = {{"version", 1}, {"edits", editsFor(S, C->A)}, {"rationale", Why}, {"provenance", Prov}};
  R.RawText = dumpJSON(R.Proposal);
  R.Prov.ProposerKind = "builtin";
  R.Prov.Seed = (int64_t)Opts.Seed;
  R.Prov.Attempts = 1;
  R.Prov.WallMs = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - Start)
                      .count();
  return R;
}

} // namespace builtin
} // namespace kloop
