//===- SetLaunchBounds.cpp - set_launch_bounds: __launch_bounds__(...) ----===//
//
// docs/edits.md, "set_launch_bounds". Inserts `__launch_bounds__(M[, B])` before
// the kernel's name or rewrites the arguments of the one it has. On the edited
// code, no visible launch with a constant block may exceed max_threads.
//
//===----------------------------------------------------------------------===//
#include "../EditKind.h"
#include "../LaunchLimits.h"
#include "kloop/Inventory/Inventory.h"

#include "clang/AST/Attr.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/Support/Path.h"

using namespace clang;
using namespace llvm;

namespace kloop {
namespace edit {
namespace {

class SetLaunchBounds : public EditKindPlanner {
public:
  EditKind kind() const override { return EditKind::SetLaunchBounds; }
  EntityKind target() const override { return EntityKind::Kernel; }

  Outcome plan(const Edit &Ed, const Entity &E, PlanContext &C) const override {
    const auto *FD = dyn_cast_or_null<FunctionDecl>(E.D);
    if (!FD)
      return refuse("no declaration for '" + Ed.ID + "'");
    if (const CUDALaunchBoundsAttr *Other = boundsElsewhere(*FD)) {
      PresumedLoc At = C.sourceManager().getPresumedLoc(C.sourceManager().getExpansionLoc(Other->getLocation()));
      return refuse("its __launch_bounds__ is written on another declaration (" +
                    sys::path::filename(At.getFilename()).str() + ":" + std::to_string(At.getLine()) +
                    "), not on its definition, which kloop edits: move the attribute to the definition");
    }
    if (const auto *LB = FD->getAttr<CUDALaunchBoundsAttr>())
      return rewriteArguments(Ed, *LB, C);
    std::string Args = std::to_string(Ed.MaxThreads) + (Ed.MinBlocks ? ", " + std::to_string(*Ed.MinBlocks) : "");
    SourceLocation At = FD->getQualifierLoc() ? FD->getQualifierLoc().getBeginLoc() : FD->getLocation();
    auto R = C.pointOf(At);
    if (!R)
      return refuse(std::string("its name: ") + macroRefusal());
    return accept({replaceRange(*R, "__launch_bounds__(" + Args + ") ")});
  }

  /// The __launch_bounds__ written on a declaration of \p FD other than \p FD (the definition), before or
  /// after it, or null: an edit of the definition would not change the bounds nvcc compiles with.
  static const CUDALaunchBoundsAttr *boundsElsewhere(const FunctionDecl &FD) {
    for (const FunctionDecl *R : FD.redecls())
      if (R != &FD)
        for (const auto *A : R->specific_attrs<CUDALaunchBoundsAttr>())
          if (!A->isInherited())
            return A;
    return nullptr;
  }

  /// Rewrites the arguments of \p LB: max_threads always; min_blocks when the edit gives it, else the
  /// one written stays; the third argument (max blocks per cluster, sm_90) always stays, so a kernel's
  /// cluster bound never becomes its min blocks.
  Outcome rewriteArguments(const Edit &Ed, const CUDALaunchBoundsAttr &LB, PlanContext &C) const {
    if (std::optional<std::string> Why = dependentArgument(Ed, LB, C))
      return refuse(*Why);
    auto R = C.rangeOf(launchBoundsArguments(LB));
    if (!R)
      return refuse(std::string("its __launch_bounds__ arguments: ") + macroRefusal());
    std::string Args = std::to_string(Ed.MaxThreads);
    if (Ed.MinBlocks)
      Args += ", " + std::to_string(*Ed.MinBlocks);
    else if (LB.getMinBlocks())
      Args += ", " + C.textOf(LB.getMinBlocks()->getSourceRange());
    if (LB.getMaxBlocks())
      Args += ", " + C.textOf(LB.getMaxBlocks()->getSourceRange());
    return accept({replaceRange(*R, Args)});
  }

  /// Why an argument the edit replaces depends on a template parameter (max_threads always, min_blocks
  /// when the edit gives one), or nothing: a number in its place would bound every instantiation of the
  /// kernel alike.
  static std::optional<std::string> dependentArgument(const Edit &Ed, const CUDALaunchBoundsAttr &LB,
                                                      PlanContext &C) {
    std::pair<const char *, const Expr *> Replaced[] = {{"max_threads", LB.getMaxThreads()},
                                                        {"min_blocks", Ed.MinBlocks ? LB.getMinBlocks() : nullptr}};
    for (auto [Name, Arg] : Replaced)
      if (Arg && Arg->isValueDependent())
        return "its __launch_bounds__ " + std::string(Name) + " '" + C.textOf(Arg->getSourceRange()) +
               "' depends on a template parameter: a number there would bound every instantiation alike; "
               "change the template arguments at the launches instead";
    return std::nullopt;
  }

  std::vector<std::string> checkEdited(const Edit &Ed, const EditedInventory &Inv) const override {
    if (auto Why = launchBoundsProblem(splitAt(Ed.ID).first, Inv, nullptr))
      return {*Why};
    return {};
  }
};

} // namespace

void registerSetLaunchBounds(EditKindRegistry &R) { R.add<SetLaunchBounds>(); }

} // namespace edit
} // namespace kloop
