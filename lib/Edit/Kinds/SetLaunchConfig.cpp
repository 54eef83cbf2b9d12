//===- SetLaunchConfig.cpp - set_launch_config: grid, block, shared memory -===//
//
// docs/edits.md, "set_launch_config". Replaces the grid, block and shared-memory
// arguments of a `<<<>>>` launch or of cudaLaunchKernel /
// cudaLaunchCooperativeKernel, and adds the shared-memory argument of a `<<<>>>`
// launch that has none. On the edited code the launch's constant grid, block
// and shared memory must stay within CUDA's limits (LaunchLimits.h), the block a
// multiple of the warp size unless allow_odd_block says why, and within the
// kernel's __launch_bounds__.
//
//===----------------------------------------------------------------------===//
#include "../EditKind.h"
#include "../LaunchLimits.h"

#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"

using namespace clang;
using namespace llvm;
using nlohmann::json;

namespace kloop {
namespace edit {
namespace {

/// The configuration arguments of one launch.
struct LaunchArgs {
  const Expr *Grid = nullptr, *Block = nullptr, *Smem = nullptr;
  const Expr *AfterBlock = nullptr; // insert ", smem" after this when there is none
};

class SetLaunchConfig : public EditKindPlanner {
public:
  EditKind kind() const override { return EditKind::SetLaunchConfig; }
  EntityKind target() const override { return EntityKind::LaunchSite; }
  Sides sides() const override { return Sides::Host; }
  bool writesExpression() const override { return true; }

  std::optional<std::string> slotProblem(const Edit &Ed) const override {
    for (auto [F, V] : {std::pair{"grid", &Ed.Grid}, {"block", &Ed.Block}, {"shared_memory", &Ed.SharedMemory}})
      if (*V)
        if (auto Why = expressionSlotProblem(F, **V))
          return Why;
    return std::nullopt;
  }

  Outcome plan(const Edit &Ed, const Entity &E, PlanContext &C) const override {
    LaunchArgs A;
    if (auto Why = launchArgs(E, A))
      return refuse(*Why);
    std::vector<TextEdit> Out;
    auto Set = [&](const Expr *X, const std::optional<std::string> &V, const char *What) -> std::optional<std::string> {
      if (!V)
        return std::nullopt;
      auto R = C.rangeOf(X->getSourceRange());
      if (!R)
        return std::string("its ") + What + " expression: " + macroRefusal();
      Out.push_back(replaceRange(*R, *V));
      return std::nullopt;
    };
    if (auto Err = Set(A.Grid, Ed.Grid, "grid"))
      return refuse(*Err);
    if (auto Err = Set(A.Block, Ed.Block, "block"))
      return refuse(*Err);
    if (!Ed.SharedMemory)
      return accept(std::move(Out));
    if (A.Smem) {
      if (auto Err = Set(A.Smem, Ed.SharedMemory, "shared-memory"))
        return refuse(*Err);
      return accept(std::move(Out));
    }
    if (!A.AfterBlock)
      return refuse("the launch has no shared-memory argument to set");
    auto R = C.rangeOf(A.AfterBlock->getSourceRange());
    if (!R)
      return refuse(std::string("its block expression: ") + macroRefusal());
    Out.push_back(replaceRange(FileRange{R->File, R->End, R->End}, ", " + *Ed.SharedMemory));
    return accept(std::move(Out));
  }

  /// Grids and sizes that are not compile-time constants cannot be checked here (docs/edits.md).
  std::vector<std::string> checkEdited(const Edit &Ed, const EditedInventory &Inv) const override {
    auto It = Inv.Sites.find(Ed.ID);
    if (It == Inv.Sites.end())
      return {};
    const Entity &Site = *It->second;
    std::vector<std::string> Why;
    if (auto W = Ed.Grid ? gridOutOfRange(member(Site.Data, "grid")) : std::nullopt)
      Why.push_back(*W);
    else if (auto W = Ed.SharedMemory ? sharedMemoryOutOfRange(member(Site.Data, "shared_memory")) : std::nullopt)
      Why.push_back(*W);
    if (!Ed.Block)
      return Why;
    const json &B = Site.Data["block"];
    auto T = blockThreads(B);
    if (!T)
      return Why;
    if (auto W = blockOutOfRange(B))
      Why.push_back(*W);
    else if (*T % 32 && !Ed.AllowOddBlock)
      Why.push_back("block " + dimsText(B) + " = " + std::to_string(*T) +
                    " threads is not a multiple of the warp size 32 (say why in \"allow_odd_block\" to allow it)");
    if (Site.Data["kernel"].is_string())
      if (auto W = launchBoundsProblem(Site.Data["kernel"].get<std::string>(), Inv, &Ed.ID))
        Why.push_back(*W);
    return Why;
  }

private:
  /// Finds the configuration arguments of the launch \p E, or says why it has none.
  static std::optional<std::string> launchArgs(const Entity &E, LaunchArgs &A) {
    if (const auto *K = dyn_cast_or_null<CUDAKernelCallExpr>(E.S)) {
      const CallExpr *C = K->getConfig();
      A.Grid = C->getArg(0);
      A.Block = C->getArg(1);
      if (C->getNumArgs() > 2 && !isa<CXXDefaultArgExpr>(C->getArg(2)))
        A.Smem = C->getArg(2);
      A.AfterBlock = A.Block;
      return std::nullopt;
    }
    const auto *C = dyn_cast_or_null<CallExpr>(E.S);
    if (!C)
      return "the launch site has no call expression";
    std::string Via = E.Data.value("via", "");
    if (Via != "cudaLaunchKernel" && Via != "cudaLaunchCooperativeKernel")
      return "launch sites via " + Via +
             " keep their configuration in a cudaLaunchConfig_t; set_launch_config supports <<<>>>, "
             "cudaLaunchKernel and cudaLaunchCooperativeKernel";
    if (C->getNumArgs() < 5)
      return "unexpected argument count of " + Via;
    A.Grid = C->getArg(1);
    A.Block = C->getArg(2);
    if (!isa<CXXDefaultArgExpr>(C->getArg(4)))
      A.Smem = C->getArg(4);
    return std::nullopt;
  }
};

} // namespace

void registerSetLaunchConfig(EditKindRegistry &R) { R.add<SetLaunchConfig>(); }

} // namespace edit
} // namespace kloop
