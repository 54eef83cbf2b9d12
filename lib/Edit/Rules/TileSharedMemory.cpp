//===- TileSharedMemory.cpp - Rules tile-shared-memory{,-rb4} -------------===//
//
// Match: a dot-product loop (inventory "dot_product", DotProducts.cpp): the
//        kernel body is declarations and early returns, then
//        `for (k = A; k < B; ++k) acc += X * Y;` with X read by (row, k) only
//        and Y by (k, col) only, then the statements that store acc.
// Legal: every launch site of the kernel has the constant block (T, T, 1),
//        T the value of the tile constant there, so thread (ty, tx) of a block
//        can load X at (its row, k0 + tx) and Y at (k0 + ty, its column) into
//        T x T tiles that every thread of the block then reads: the values the
//        original thread read itself (X and Y depend on nothing else, and
//        nothing writes what they read). No thread returns early: the row
//        terms of the early return guard X's loads, the column terms Y's, the
//        whole condition the store, and k >= B loads a zero (a product that
//        adds nothing), so every thread reaches both __syncthreads(). The
//        tiles must fit in StaticSharedLimit beside the kernel's own.
//        Register blocking (Strip R > 1): the block gets T / R rows (T % R
//        == 0, every launch site's block a name or a literal), and each
//        thread plays the R rows ty + r * T / R of the original block, with
//        threadIdx.y and blockDim.y renamed in every text it replays.
// Edit:  replace_body of the kernel; set_launch_config of every launch site
//        with R > 1. docs/rules/tile-shared-memory.md.
//
//===----------------------------------------------------------------------===//
#include "kloop/Edit/Rules.h"

namespace kloop {

static std::string joined(const std::vector<std::string> &Parts, const std::string &Sep) {
  std::string Out;
  for (const std::string &P : Parts)
    Out += (Out.empty() ? "" : Sep) + P;
  return Out;
}

/// `!(t1 || t2 ...)`, or `true` without terms.
static std::string inRange(const std::vector<std::string> &Terms) {
  return Terms.empty() ? "true" : "!((" + joined(Terms, ") || (") + "))";
}

/// The kernel body: tiles, one replay of the declarations per output row of the thread (\p R of them).
static std::string tiledBody(const inv::DotProduct &D, unsigned R) {
  const std::string T = "(" + D.Tile->Expr + ")", S = std::to_string(R), Prelude = joined(D.Prelude, "\n");
  const std::string ForRows = "#pragma unroll\nfor (int kloop_r = 0; kloop_r < " + S +
                              "; ++kloop_r) {\nconst unsigned kloop_ty = threadIdx.y + kloop_r * blockDim.y;\n" +
                              Prelude + "\n";
  std::vector<std::string> All = D.RowTerms;
  All.insert(All.end(), D.ColTerms.begin(), D.ColTerms.end());
  auto Load = [&](const char *Tile, const std::string &K, const std::string &Type, const std::string &Terms,
                  const std::string &Operand) {
    return "{\nconst " + D.VarType + " " + D.Var + " = (" + D.VarType + ")(kloop_k0 + " + K + ");\n" + Tile +
           "[kloop_ty][threadIdx.x] = (" + Terms + " && kloop_k0 + " + K + " < kloop_end) ? (" + Type + ")(" +
           Operand + ") : (" + Type + ")0;\n}\n";
  };
  return "{\n__shared__ " + D.RowType + " kloop_tile_row[" + T + "][" + T + "];\n__shared__ " + D.ColType +
         " kloop_tile_col[" + T + "][" + T + "];\nconst unsigned kloop_bdy = blockDim.y * " + S + ";\n(void)kloop_bdy;\n" +
         "long long kloop_begin, kloop_end;\n{\nconst unsigned kloop_ty = threadIdx.y;\n" + Prelude +
         "\nkloop_begin = (" + D.Init + ");\nkloop_end = (" + D.Bound + ");\n}\n" + D.AccType + " kloop_acc[" + S +
         "];\n" + ForRows + "kloop_acc[kloop_r] = " + D.Acc + ";\n}\n" +
         "for (long long kloop_k0 = kloop_begin; kloop_k0 < kloop_end; kloop_k0 += " + T + ") {\n" + ForRows +
         Load("kloop_tile_row", "threadIdx.x", D.RowType, inRange(D.RowTerms), D.RowOperand) +
         Load("kloop_tile_col", "kloop_ty", D.ColType, inRange(D.ColTerms), D.ColOperand) + "}\n" +
         "__syncthreads();\n#pragma unroll\nfor (int kloop_kk = 0; kloop_kk < " + T + "; ++kloop_kk) {\nconst " +
         D.ColType + " kloop_b = kloop_tile_col[kloop_kk][threadIdx.x];\n#pragma unroll\n" +
         "for (int kloop_r = 0; kloop_r < " + S + "; ++kloop_r)\nkloop_acc[kloop_r] += " +
         "kloop_tile_row[threadIdx.y + kloop_r * blockDim.y][kloop_kk] * kloop_b;\n}\n__syncthreads();\n}\n" +
         ForRows + "if (" + inRange(All) + ") {\n" + D.Acc + " = kloop_acc[kloop_r];\n" + joined(D.After, "\n") +
         "\n}\n}\n}";
}

/// The tile's value at launch site \p L: the template argument it names there, or its constant value.
static std::optional<int64_t> tileAt(const inv::DotProduct &D, const inv::LaunchSite &L) {
  if (!D.TileParam)
    return D.Tile->Value;
  return *D.TileParam < L.TemplateArgs.size() ? L.TemplateArgs[*D.TileParam].Value : std::nullopt;
}

/// Why launch site \p ID does not prove the block (T, T, 1) for strip \p R, or nullopt; the tile's value
/// there goes to \p Tile.
static std::optional<std::string> blockRefusal(const inv::Inventory &Inv, const inv::DotProduct &D,
                                               const std::string &ID, unsigned R, int64_t &Tile) {
  const inv::LaunchSite *L = Inv.launchSite(ID);
  if (!L)
    return "its launch site " + ID + " is not in the inventory";
  std::optional<int64_t> T = tileAt(D, *L);
  if (!T || *T <= 0)
    return "the tile '" + D.Tile->Expr + "' has no constant value at launch site " + ID;
  const auto &V = L->Block ? L->Block->Value : std::nullopt;
  std::string Want = "(" + std::to_string(*T) + ", " + std::to_string(*T) + ", 1)";
  if (!V || V->size() != 3 || (*V)[0] != *T || (*V)[1] != *T || (*V)[2] != 1)
    return "the block of launch site " + ID + " ('" + (L->Block ? L->Block->Expr : std::string("?")) +
           "') is not the constant " + Want + " that the tile '" + D.Tile->Expr + "' = " + std::to_string(*T) +
           " needs: the tiles would not match the block's threads";
  if (R > 1 && *T % R != 0)
    return "the tile " + std::to_string(*T) + " at launch site " + ID + " is not a multiple of " + std::to_string(R);
  if (R > 1)
    if (std::optional<std::string> Why = launchDimRefusal(*L, /*Grid=*/false))
      return Why;
  Tile = *T;
  return std::nullopt;
}

/// The block \p B with \p R times fewer rows.
static std::string fewerRows(const std::string &B, unsigned R) {
  std::string D = "dim3(" + B + ")";
  return "dim3(" + D + ".x, " + D + ".y / " + std::to_string(R) + ", " + D + ".z)";
}

/// Why loop \p L of kernel \p K cannot be tiled with strip \p R, or nullopt; fills the launch edits and
/// the largest tile.
static std::optional<std::string> refusal(const inv::Inventory &Inv, const inv::Kernel &K, const inv::Loop &L,
                                          unsigned R, std::vector<Edit> &Launches, int64_t &Tile) {
  if (!K.Edit.Editable)
    return "its kernel is not editable: " + K.Edit.NotEditableReason.value_or("");
  if (!L.Edit.Editable)
    return "not editable: " + L.Edit.NotEditableReason.value_or("");
  if (!L.DotProductFacts)
    return "a " + L.LoopKind + " loop: the rule rewrites `for` loops";
  const inv::DotProduct &D = *L.DotProductFacts;
  if (D.Refusal)
    return "not a dot-product loop the rule tiles: " + *D.Refusal;
  if (K.LaunchSites.empty())
    return std::string("the kernel has no launch site kloop sees: its block's dimensions cannot be proved");
  Tile = 0;
  for (const std::string &ID : K.LaunchSites) {
    int64_t T = 0;
    if (std::optional<std::string> Why = blockRefusal(Inv, D, ID, R, T))
      return Why;
    Tile = std::max(Tile, T);
    if (R > 1) {
      Edit E;
      E.Kind = EditKind::SetLaunchConfig;
      E.ID = ID;
      E.Block = fewerRows(Inv.launchSite(ID)->Block->Expr, R);
      Launches.push_back(E);
    }
  }
  long long Bytes = staticSharedBytes(K) + Tile * Tile * (long long)(D.RowBytes + D.ColBytes);
  if (Bytes > StaticSharedLimit)
    return "two " + std::to_string(Tile) + " x " + std::to_string(Tile) + " tiles would bring the kernel's static "
           "shared memory to " + std::to_string(Bytes) + " bytes, over the " + std::to_string(StaticSharedLimit) +
           "-byte static limit per block";
  return std::nullopt;
}

/// Rule tile-shared-memory(-rbR) on loop \p L of kernel \p K.
static RuleSite tileSite(const inv::Inventory &Inv, const inv::Kernel &K, const inv::Loop &L, unsigned R) {
  RuleSite S;
  S.Site = L.ID;
  std::vector<Edit> Launches;
  int64_t Tile = 0;
  if (std::optional<std::string> Why = refusal(Inv, K, L, R, Launches, Tile)) {
    S.Why = *Why;
    return S;
  }
  const inv::DotProduct &D = *L.DotProductFacts;
  Edit E;
  E.Kind = EditKind::ReplaceBody;
  E.ID = K.ID;
  E.Code = tiledBody(D, R);
  S.Edits.push_back(E);
  S.Edits.insert(S.Edits.end(), Launches.begin(), Launches.end());
  std::string T = std::to_string(Tile);
  S.Why = "'" + D.RowOperand + "' and '" + D.ColOperand + "' staged in two " + T + " x " + T +
          " __shared__ tiles per k step (block (" + T + ", " + T + ", 1) proved at " +
          std::to_string(K.LaunchSites.size()) + " launch site(s)), the early return turned into guarded loads and "
          "a guarded store";
  if (R > 1)
    S.Why += "; " + std::to_string(R) + " outputs per thread, " + T + " / " + std::to_string(R) +
             " rows apart, the block's rows divided by " + std::to_string(R);
  return S;
}

std::vector<RuleSite> explainTileSharedMemory(const inv::Inventory &Inv, unsigned Strip) {
  std::vector<RuleSite> Out;
  for (const inv::Kernel &K : Inv.Kernels)
    for (const inv::Loop &L : K.Loops)
      if (L.Depth == 0 && L.LoopKind == "for")
        Out.push_back(tileSite(Inv, K, L, Strip));
  return Out;
}

} // namespace kloop
