//===- WarpShuffleReductions.cpp - Rule warp-shuffle-reductions -----------===//
//
// Match: a shared-memory tree `for (int s = START; s > 0; s >>= 1) { if (tid < s)
//        a[tid] op= a[tid + s]; __syncthreads(); }` with tid = threadIdx.x
//        (inventory "tree_reductions", form null), in a kernel or in a device
//        function the kernel calls.
// Legal: the last five steps (s = 16 .. 1) are replayed by warp 0 with
//        __shfl_down_sync on the same pairs in the same order, and every
//        a[t], t < 32, gets the value the tree left there, so the result and
//        the buffer are bit-identical (float + included: nothing is regrouped).
//        Guarded at run time (uniform over the block) by START a power of two
//        >= 32 and blockDim.x % 32 == 0; else the original loop runs.
// Edit:  replace_stmt of a loop in the kernel body; for a loop in a device
//        function, insert_device_function of a copy named <f>_warp_tail with
//        the loop rewritten, and replace_stmt of each statement that calls <f>.
// docs/rules/warp-shuffle-reductions.md.
//
//===----------------------------------------------------------------------===//
#include "kloop/Edit/Rules.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace kloop {

/// Suffix of the device function the rule inserts beside the one that holds the tree.
static const char *const WarpTailSuffix = "_warp_tail";

/// True when \p Text holds \p What at byte \p At (offsets come from the inventory, which may be stale).
static bool spells(const std::string &Text, size_t At, const std::string &What) {
  return At <= Text.size() && Text.compare(At, What.size(), What) == 0;
}

/// Types __shfl_down_sync moves (CUDA C Programming Guide, "Warp Shuffle Functions").
static bool shuffleType(const std::string &T) {
  static const char *const Types[] = {"int",       "unsigned int",       "long",  "unsigned long",
                                      "long long", "unsigned long long", "float", "double"};
  return std::find(std::begin(Types), std::end(Types), T) != std::end(Types);
}

/// `a op b`, or `f(a, b)` for a function.
static std::string combine(const std::string &Op, const std::string &A, const std::string &B) {
  if (Op.size() == 1)
    return A + " " + Op + " " + B;
  return Op + "(" + A + ", " + B + ")";
}

/// Warp 0's steps 16 .. 1: each lane combines its value with the one \p O lanes up, and the lanes below O
/// keep what the tree would have stored at a[lane] after that step.
static std::string shuffleSteps(const inv::TreeReduction &T) {
  std::string Out;
  for (const char *O : {"16", "8", "4", "2", "1"})
    Out += "kloop_v = " + combine(*T.Op, "kloop_v", std::string("__shfl_down_sync(0xffffffffu, kloop_v, ") + O + ")") +
           ";\nif (" + *T.ThreadIndex + " < " + O + ") kloop_keep = kloop_v;\n";
  return Out;
}

/// The rewrite of the tree loop: the loop as written, stopped at stride 32 when the guard holds, then
/// warp 0's shuffle steps. The loop's text appears once, so the rewrite adds no copy of its code.
static std::string rewrittenLoop(const inv::TreeReduction &T) {
  const std::string &Tid = *T.ThreadIndex, &A = *T.Array, &E = *T.ElementType, Start = "(" + T.Start->Expr + ")";
  std::string Loop = T.LoopText;
  Loop.replace(T.CondOffset, T.CondLength,
               "(" + T.LoopText.substr(T.CondOffset, T.CondLength) + ") && !(kloop_warp && " + *T.StrideVar +
                   " <= 32)");
  std::string At = A + "[" + Tid + "]";
  return "{\nconst bool kloop_warp = " + Start + " >= 32 && (" + Start + " & (" + Start +
         " - 1)) == 0 && blockDim.x % 32 == 0;\n" + Loop + "\nif (kloop_warp) {\nif (" + Tid + " < 32) {\n" + E +
         " kloop_v = " + combine(*T.Op, At, A + "[" + Tid + " + 32]") + ";\n" + E + " kloop_keep = kloop_v;\n" +
         shuffleSteps(T) + At + " = kloop_keep;\n}\n__syncthreads();\n}\n}";
}

static const inv::DeviceFunction *deviceFunction(const inv::Inventory &Inv, const std::string &ID) {
  for (const inv::DeviceFunction &F : Inv.DeviceFunctions)
    if (F.ID == ID)
      return &F;
  return nullptr;
}

/// Why the tree \p T itself cannot be rewritten (wherever it is), or nullopt.
static std::optional<std::string> treeRefusal(const inv::TreeReduction &T) {
  if (T.Form)
    return "not the halving tree the rule recognises: " + *T.Form;
  if (!shuffleType(T.ElementType.value_or("")))
    return "elements of type '" + T.ElementType.value_or("") + "': __shfl_down_sync moves int, unsigned, long, "
           "long long, float and double values";
  if (T.ThreadIndexUnproved)
    return "the thread index is not proved to be threadIdx.x: " + *T.ThreadIndexUnproved +
           " (the shuffle's lanes are threadIdx.x % 32)";
  if (T.CondOffset + T.CondLength > T.LoopText.size())
    return std::string("the loop's condition is not where the inventory says (a stale inventory?)");
  if (T.Pragma)
    return std::string("an unroll pragma stands in front of the loop; the rewrite puts a guarded block there");
  if (std::optional<int64_t> S = T.Start ? T.Start->Value : std::nullopt; S && (*S < 32 || (*S & (*S - 1))))
    return "the first stride is " + std::to_string(*S) + ", not a power of two of at least 32: the tree never hands "
           "exactly 32 elements to one warp";
  return std::nullopt;
}

/// Where each statement of the kernel body that calls the tree's function gets the new name:
/// statement index -> its rewritten text. Sets \p Why when a call cannot be renamed.
static std::map<unsigned, std::string> renamedCalls(const inv::TreeReduction &T, std::optional<std::string> &Why) {
  std::map<unsigned, std::pair<std::string, std::set<unsigned>>> ByStmt;
  const std::string &Name = *T.FunctionName;
  for (const inv::TreeCall &C : T.Calls) {
    if (!C.Stmt || !C.Text || !C.NameOffset || !spells(*C.Text, *C.NameOffset, Name)) {
      Why = "the call at line " + std::to_string(C.Line) + " is written through a macro: it cannot be renamed";
      return {};
    }
    ByStmt[*C.Stmt].first = *C.Text;
    ByStmt[*C.Stmt].second.insert(*C.NameOffset);
  }
  std::map<unsigned, std::string> Out;
  for (auto &[Stmt, TextAndOffsets] : ByStmt) {
    std::string Text = TextAndOffsets.first;
    for (auto It = TextAndOffsets.second.rbegin(); It != TextAndOffsets.second.rend(); ++It)
      Text.insert(*It + Name.size(), WarpTailSuffix);
    Out[Stmt] = Text;
  }
  return Out;
}

/// The copy of the device function with its name suffixed and its tree loop rewritten.
static std::string warpTailFunction(const inv::TreeReduction &T) {
  std::string Text = *T.FunctionText;
  Text.replace(*T.LoopOffset, T.LoopText.size(), rewrittenLoop(T));
  Text.insert(*T.NameOffset + T.FunctionName->size(), WarpTailSuffix);
  return Text;
}

static Edit replaceStmt(const std::string &Kernel, unsigned Stmt, const std::string &Code) {
  Edit E;
  E.Kind = EditKind::ReplaceStmt;
  E.ID = Kernel;
  E.StmtIndex = Stmt;
  E.Code = Code;
  return E;
}

/// The edits of a tree in a device function called by kernel \p K, or why there are none.
/// \p Inserted: device functions whose copy an earlier site inserted already.
static std::optional<std::string> deviceEdits(const inv::Inventory &Inv, const inv::Kernel &K,
                                              const inv::TreeReduction &T, std::set<std::string> &Inserted,
                                              std::vector<Edit> &Out) {
  const inv::DeviceFunction *F = deviceFunction(Inv, T.Function);
  if (!F || !F->Edit.Editable)
    return "the function " + T.Function + " is not editable: " +
           (F ? F->Edit.NotEditableReason.value_or("") : std::string("not in the inventory"));
  if (!T.FunctionText || !T.NameOffset || !T.LoopOffset || !spells(*T.FunctionText, *T.LoopOffset, T.LoopText) ||
      !spells(*T.FunctionText, *T.NameOffset, *T.FunctionName))
    return "the function " + T.Function + " is written through a macro: its text cannot be copied";
  if (deviceFunction(Inv, "device:" + *T.FunctionName + WarpTailSuffix) && !Inserted.count(T.Function))
    return "a device function " + *T.FunctionName + WarpTailSuffix + " exists already";
  std::optional<std::string> Why;
  std::map<unsigned, std::string> Calls = renamedCalls(T, Why);
  if (Why)
    return Why;
  if (Inserted.insert(T.Function).second) {
    Edit E;
    E.Kind = EditKind::InsertDeviceFunction;
    E.ID = K.ID;
    E.Code = warpTailFunction(T);
    Out.push_back(E);
  }
  for (const auto &[Stmt, Text] : Calls)
    Out.push_back(replaceStmt(K.ID, Stmt, Text));
  return std::nullopt;
}

/// The edits of tree \p T reached from kernel \p K, or why there are none.
static std::optional<std::string> siteEdits(const inv::Inventory &Inv, const inv::Kernel &K,
                                            const inv::TreeReduction &T, std::set<std::string> &Inserted,
                                            std::vector<Edit> &Out) {
  if (!K.Edit.Editable)
    return "its kernel is not editable: " + K.Edit.NotEditableReason.value_or("");
  if (std::optional<std::string> Why = treeRefusal(T))
    return Why;
  if (T.Function != K.ID)
    return deviceEdits(Inv, K, T, Inserted, Out);
  if (!T.Stmt)
    return std::string("the loop is not a direct statement of the kernel body (replace_stmt reaches those only)");
  Out.push_back(replaceStmt(K.ID, *T.Stmt, rewrittenLoop(T)));
  return std::nullopt;
}

/// The site of tree \p T reached from kernel \p K.
static RuleSite treeSite(const inv::Inventory &Inv, const inv::Kernel &K, const inv::TreeReduction &T,
                         std::set<std::string> &Inserted) {
  RuleSite S;
  bool InKernel = T.Function == K.ID;
  S.Site = K.ID + "/tree" + (InKernel ? std::string() : ":" + T.FunctionName.value_or("")) + "#" + std::to_string(T.Line);
  if (std::optional<std::string> Why = siteEdits(Inv, K, T, Inserted, S.Edits)) {
    S.Edits.clear();
    S.Why = *Why;
    return S;
  }
  S.Why = "the tree on `" + *T.Array + "` with " + *T.Op + " (thread index " + *T.ThreadIndexProof +
          ") ends with warp 0's __shfl_down_sync steps, the same pairs in the same order (bit-identical), guarded "
          "by a first stride that is a power of two >= 32 and blockDim.x % 32 == 0";
  return S;
}

/// Adds fired site \p S to \p Into: the copies of both go into one insert_device_function (two insertions
/// before one kernel would overlap), the other edits side by side, the sites and reasons joined.
static void mergeSite(RuleSite &Into, RuleSite S) {
  if (Into.Edits.empty()) {
    Into = std::move(S);
    return;
  }
  Into.Site += "+" + S.Site;
  Into.Why += "; " + S.Why;
  for (Edit &E : S.Edits) {
    auto Insert = std::find_if(Into.Edits.begin(), Into.Edits.end(),
                               [](const Edit &X) { return X.Kind == EditKind::InsertDeviceFunction; });
    if (E.Kind == EditKind::InsertDeviceFunction && Insert != Into.Edits.end())
      Insert->Code += "\n\n" + E.Code;
    else
      Into.Edits.push_back(std::move(E));
  }
}

std::vector<RuleSite> explainWarpShuffleReductions(const inv::Inventory &Inv) {
  std::vector<RuleSite> Out;
  std::set<std::string> Inserted;
  for (const inv::Kernel &K : Inv.Kernels) {
    RuleSite Copies; // the fired trees in device functions: one site, since their copies share a place
    for (const inv::TreeReduction &T : K.TreeReductions) {
      RuleSite S = treeSite(Inv, K, T, Inserted);
      if (T.Function != K.ID && !S.Edits.empty())
        mergeSite(Copies, std::move(S));
      else
        Out.push_back(std::move(S));
    }
    if (!Copies.Edits.empty())
      Out.push_back(std::move(Copies));
  }
  return Out;
}

std::vector<Edit> matchWarpShuffleReductions(const inv::Inventory &Inv) {
  return editsOf(explainWarpShuffleReductions(Inv));
}

} // namespace kloop
