//===- AddKernelVariant.cpp - add_kernel_variant: a new kernel, retargeted launches ===//
//
// docs/edits.md, "add_kernel_variant". On the device side `code` (a whole
// __global__ definition of `name`) goes after the kernel `of`; on the host side
// each retargeted launch site of `of` gets the new kernel's name. The edited
// code must define a kernel named `name`.
//
//===----------------------------------------------------------------------===//
#include "../EditKind.h"

#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"

using namespace clang;
using namespace llvm;

namespace kloop {
namespace edit {
namespace {

/// Where the kernel's name is written at launch site \p S (invalid when not found).
SourceLocation kernelNameAt(const Entity &S) {
  const auto *C = dyn_cast_or_null<CallExpr>(S.S);
  const Expr *Callee = nullptr;
  if (const auto *K = dyn_cast_or_null<CUDAKernelCallExpr>(S.S))
    Callee = K->getCallee();
  else if (C && C->getNumArgs() > 0)
    Callee = C->getArg(S.Data.value("via", "") == "cudaLaunchKernelEx" ? 1 : 0);
  const Expr *X = Callee ? stripCasts(Callee) : nullptr;
  if (const auto *U = dyn_cast_or_null<UnaryOperator>(X))
    X = stripCasts(U->getSubExpr());
  if (const auto *DRE = dyn_cast_or_null<DeclRefExpr>(X))
    return DRE->getNameInfo().getLoc();
  if (const auto *ULE = dyn_cast_or_null<UnresolvedLookupExpr>(X))
    return ULE->getNameLoc();
  return SourceLocation();
}

class AddKernelVariant : public AddsBesideKernel {
public:
  EditKind kind() const override { return EditKind::AddKernelVariant; }

  Outcome plan(const Edit &Ed, const Entity &E, PlanContext &C) const override {
    StringRef Code = StringRef(Ed.Code).trim();
    if (!Code.contains("__global__"))
      return refuse("'code' must be a whole __global__ kernel definition");
    if (C.find(Ed.Name) || C.entities().count(Ed.Name))
      return refuse("a kernel named '" + Ed.Name + "' already exists");
    return accept({TextEdit{C.fileOf(E), E.Span.EndOffset, 0, "\n\n" + Code.str(), 0}});
  }

  /// The host side: rename the callee at each retargeted launch found in this parse.
  Outcome planOtherSide(const Edit &Ed, PlanContext &C) const override {
    Outcome O;
    for (const std::string &SiteID : Ed.Retarget) {
      const Entity *S = C.find(SiteID);
      if (!S)
        continue; // another TU may have it; checked after all parses
      if (auto Why = retargetProblem(Ed, SiteID, *S, C))
        return refuse("retarget: " + *Why);
      SourceLocation NameLoc = kernelNameAt(*S);
      if (NameLoc.isInvalid())
        return refuse("retarget: cannot find the kernel name at launch site " + SiteID);
      auto R = C.rangeOf(SourceRange(NameLoc, NameLoc));
      if (!R)
        return refuse("retarget: launch site " + SiteID + ": " + macroRefusal());
      O.Edits.push_back(replaceRange(*R, Ed.Name));
      O.Regions.push_back(C.regionOf(*S));
      O.St = Outcome::Ok;
      O.FoundSites.push_back(SiteID);
    }
    return O;
  }

  std::vector<std::string> checkEdited(const Edit &Ed, const EditedInventory &Inv) const override {
    for (auto &[ID, K] : Inv.Kernels)
      if (K->Data.value("name", "") == Ed.Name)
        return {};
    return {"'code' does not define a __global__ kernel named '" + Ed.Name + "'"};
  }

private:
  static std::optional<std::string> retargetProblem(const Edit &Ed, const std::string &SiteID, const Entity &S,
                                                    const PlanContext &C) {
    if (S.Kind != EntityKind::LaunchSite)
      return "'" + SiteID + "' is a " + entityKindName(S.Kind) + ", not a launch site";
    std::string Launched = S.Data["kernel"].is_string() ? S.Data["kernel"].get<std::string>() : "?";
    // A launch names the kernel plainly; `of` may be file-qualified (k@sub/b.cu) when files define kernels
    // of one name. Then the site must not launch its own file's kernel of that name.
    if (Launched != Ed.ID && !StringRef(Ed.ID).starts_with(Launched + "@"))
      return "launch site " + SiteID + " launches '" + Launched + "', not '" + Ed.ID + "'";
    if (const Entity *Local = C.find(Launched); Local && Local->Kind == EntityKind::Kernel && Launched != Ed.ID &&
                                                C.qualifiedID(*Local) != Ed.ID)
      return "launch site " + SiteID + " launches '" + C.qualifiedID(*Local) + "', not '" + Ed.ID + "'";
    if (!S.Editable)
      return "launch site " + SiteID + " " + S.NotEditableReason;
    return std::nullopt;
  }
};

} // namespace

void registerAddKernelVariant(EditKindRegistry &R) { R.add<AddKernelVariant>(); }

} // namespace edit
} // namespace kloop
