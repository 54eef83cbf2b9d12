//===- SetLaunchBounds.cpp - set_launch_bounds: __launch_bounds__(...) ----===//
//
// docs/edits.md, "set_launch_bounds". Inserts `__launch_bounds__(M[, B])` before
// the kernel's name or rewrites the arguments of the one it has. On the edited
// code, no visible launch with a constant block may exceed max_threads.
//
//===----------------------------------------------------------------------===//
#include "../EditKind.h"
#include "../LaunchLimits.h"

#include "clang/AST/Attr.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"

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
    std::string Args = std::to_string(Ed.MaxThreads) + (Ed.MinBlocks ? ", " + std::to_string(*Ed.MinBlocks) : "");
    if (const auto *LB = FD->getAttr<CUDALaunchBoundsAttr>()) {
      SourceRange AR(LB->getMaxThreads()->getBeginLoc(),
                     (LB->getMinBlocks() ? LB->getMinBlocks() : LB->getMaxThreads())->getEndLoc());
      auto R = C.rangeOf(AR);
      if (!R)
        return refuse(std::string("its __launch_bounds__ arguments: ") + macroRefusal());
      return accept({replaceRange(*R, Args)});
    }
    SourceLocation At = FD->getQualifierLoc() ? FD->getQualifierLoc().getBeginLoc() : FD->getLocation();
    auto R = C.pointOf(At);
    if (!R)
      return refuse(std::string("its name: ") + macroRefusal());
    return accept({replaceRange(*R, "__launch_bounds__(" + Args + ") ")});
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
