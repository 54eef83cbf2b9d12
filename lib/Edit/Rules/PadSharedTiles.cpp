//===- PadSharedTiles.cpp - Rule pad-shared-tiles --------------------------===//
//
// Match: a 2-D __shared__ tile T[R][C] with C a multiple of 32 that some access
//        reads by columns (threadIdx.x in the first index, not the last).
// Legal: the array is only ever used through a subscript of both dimensions
//        (no pointer cast, no call argument, no sizeof, no element address), its
//        declaration is a statement of its own in the kernel body, and the
//        kernel's static shared memory stays within 48 KiB once padded.
// Edit:  replace_stmt of that declaration with the last dimension `C + 1`.
// docs/rules/pad-shared-tiles.md.
//
//===----------------------------------------------------------------------===//
#include "kloop/Edit/Rules.h"

#include <optional>

namespace kloop {

namespace {
/// One candidate and the kernel that declares it.
struct Tile {
  const inv::Kernel &Kernel;
  const inv::SharedArray &Array;
};
} // namespace

/// The declaration with its last dimension `[C]` written `[C + 1]`, or nullopt when `[C]` is not in it.
static std::optional<std::string> paddedDeclaration(const std::string &Decl, const std::string &LastDim) {
  std::string Old = "[" + LastDim + "]";
  size_t At = Decl.rfind(Old);
  if (At == std::string::npos)
    return std::nullopt;
  return Decl.substr(0, At) + "[" + LastDim + " + 1]" + Decl.substr(At + Old.size());
}

/// Why \p T cannot be padded, or nullopt when the rule fires; \p Code gets the new declaration.
static std::optional<std::string> refusal(const Tile &T, std::string &Code) {
  const inv::SharedArray &A = T.Array;
  if (!T.Kernel.Edit.Editable)
    return "its kernel is not editable: " + T.Kernel.Edit.NotEditableReason.value_or("");
  if (!A.Edit.Editable)
    return "not editable: " + A.Edit.NotEditableReason.value_or("");
  if (A.Dynamic || A.Extern)
    return std::string("a dynamic (extern) shared array: its shape is set by the launch, not the declaration");
  if (A.Dims.size() != 2)
    return "has " + std::to_string(A.Dims.size()) + " dimension(s); the rule pads 2-D tiles";
  if (!A.Dims[0].Value || !A.Dims[1].Value || !A.Bytes)
    return std::string("a dimension is not a constant clang could evaluate (dependent on a template parameter?)");
  long long Rows = *A.Dims[0].Value, Cols = *A.Dims[1].Value, Bytes = *A.Bytes;
  if (Rows <= 0 || Cols <= 0 || Cols % 32 != 0)
    return "rows of " + std::to_string(Cols) + " elements are not a multiple of 32 banks apart: columns already "
           "spread over the banks";
  long long Elem = Bytes / (Rows * Cols);
  if (Elem != 4 && Elem != 8)
    return "elements of " + std::to_string(Elem) + " bytes: the rule pads 4- and 8-byte elements";
  if (!A.ColumnAccess)
    return std::string("no access reads a column (threadIdx.x indexes only the last dimension): no bank conflict "
                       "to remove");
  if (A.Escapes)
    return "the array is " + *A.Escapes + ": code that sees it as flat memory would read the padding";
  if (!A.Stmt || !A.DeclText)
    return std::string("its declaration is not a statement of its own in the kernel body (it is nested, or "
                       "declares other names too)");
  long long Padded = staticSharedBytes(T.Kernel) + Rows * Elem;
  if (Padded > StaticSharedLimit)
    return "padded, the kernel's static shared memory would be " + std::to_string(Padded) + " bytes, over the " +
           std::to_string(StaticSharedLimit) + "-byte static limit per block";
  std::optional<std::string> New = paddedDeclaration(*A.DeclText, A.Dims[1].Expr);
  if (!New)
    return "the last dimension '" + A.Dims[1].Expr + "' is not written as such in the declaration";
  Code = *New;
  return std::nullopt;
}

std::vector<RuleSite> explainPadSharedTiles(const inv::Inventory &Inv) {
  std::vector<RuleSite> Out;
  for (const inv::Kernel &K : Inv.Kernels) {
    for (const inv::SharedArray &A : K.SharedArrays) {
      RuleSite S;
      S.Site = A.ID;
      std::string Code;
      if (std::optional<std::string> Why = refusal({K, A}, Code)) {
        S.Why = *Why;
      } else {
        Edit E;
        E.Kind = EditKind::ReplaceStmt;
        E.ID = K.ID;
        E.StmtIndex = *A.Stmt;
        E.Code = Code;
        S.Edits.push_back(E);
        S.Why = "reads by columns (" + *A.ColumnAccess + "); padded to `" + Code + "`";
      }
      Out.push_back(std::move(S));
    }
  }
  return Out;
}

std::vector<Edit> matchPadSharedTiles(const inv::Inventory &Inv) { return editsOf(explainPadSharedTiles(Inv)); }

} // namespace kloop
