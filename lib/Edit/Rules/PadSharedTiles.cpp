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

using json = nlohmann::json;

namespace kloop {

namespace {
/// One candidate and the kernel that declares it.
struct Tile {
  const json &Kernel;
  const json &Array;
};
} // namespace

static std::string str(const json &J, const char *Key) {
  return J.contains(Key) && J[Key].is_string() ? J[Key].get<std::string>() : std::string();
}

static long long staticSharedBytes(const json &Kernel) {
  long long Sum = 0;
  for (const json &A : Kernel["shared_arrays"])
    if (A.contains("bytes") && A["bytes"].is_number_integer())
      Sum += A["bytes"].get<long long>();
  return Sum;
}

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
  const json &A = T.Array;
  if (!T.Kernel.value("editable", false))
    return "its kernel is not editable: " + str(T.Kernel, "not_editable_reason");
  if (!A.value("editable", false))
    return "not editable: " + str(A, "not_editable_reason");
  if (A.value("dynamic", false) || A.value("extern", false))
    return std::string("a dynamic (extern) shared array: its shape is set by the launch, not the declaration");
  const json &Dims = A["dims"];
  if (!Dims.is_array() || Dims.size() != 2)
    return "has " + std::to_string(Dims.is_array() ? Dims.size() : 0) + " dimension(s); the rule pads 2-D tiles";
  if (!Dims[0]["value"].is_number_integer() || !Dims[1]["value"].is_number_integer() ||
      !A["bytes"].is_number_integer())
    return std::string("a dimension is not a constant clang could evaluate (dependent on a template parameter?)");
  long long Rows = Dims[0]["value"], Cols = Dims[1]["value"], Bytes = A["bytes"];
  if (Rows <= 0 || Cols <= 0 || Cols % 32 != 0)
    return "rows of " + std::to_string(Cols) + " elements are not a multiple of 32 banks apart: columns already "
           "spread over the banks";
  long long Elem = Bytes / (Rows * Cols);
  if (Elem != 4 && Elem != 8)
    return "elements of " + std::to_string(Elem) + " bytes: the rule pads 4- and 8-byte elements";
  if (A["column_access"].is_null())
    return std::string("no access reads a column (threadIdx.x indexes only the last dimension): no bank conflict "
                       "to remove");
  if (!A["escapes"].is_null())
    return "the array is " + str(A, "escapes") + ": code that sees it as flat memory would read the padding";
  if (!A["stmt"].is_number_integer() || !A["decl_text"].is_string())
    return std::string("its declaration is not a statement of its own in the kernel body (it is nested, or "
                       "declares other names too)");
  long long Padded = staticSharedBytes(T.Kernel) + Rows * Elem;
  if (Padded > StaticSharedLimit)
    return "padded, the kernel's static shared memory would be " + std::to_string(Padded) + " bytes, over the " +
           std::to_string(StaticSharedLimit) + "-byte static limit per block";
  std::optional<std::string> New = paddedDeclaration(str(A, "decl_text"), str(Dims[1], "expr"));
  if (!New)
    return "the last dimension '" + str(Dims[1], "expr") + "' is not written as such in the declaration";
  Code = *New;
  return std::nullopt;
}

std::vector<RuleSite> explainPadSharedTiles(const json &Inv) {
  std::vector<RuleSite> Out;
  if (!Inv.contains("kernels"))
    return Out;
  for (const json &K : Inv["kernels"]) {
    if (!K.contains("shared_arrays") || !K["shared_arrays"].is_array())
      continue;
    for (const json &A : K["shared_arrays"]) {
      RuleSite S;
      S.Site = str(A, "id");
      std::string Code;
      if (std::optional<std::string> Why = refusal({K, A}, Code)) {
        S.Why = *Why;
      } else {
        Edit E;
        E.Kind = EditKind::ReplaceStmt;
        E.ID = str(K, "id");
        E.StmtIndex = A["stmt"].get<long long>();
        E.Code = Code;
        S.Edits.push_back(E);
        S.Why = "reads by columns (" + str(A, "column_access") + "); padded to `" + Code + "`";
      }
      Out.push_back(std::move(S));
    }
  }
  return Out;
}

std::vector<Edit> matchPadSharedTiles(const json &Inv) { return editsOf(explainPadSharedTiles(Inv)); }

} // namespace kloop
