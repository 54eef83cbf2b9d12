//===- SetConstant.cpp - set_constant: a macro body or an initializer -----===//
//
// docs/edits.md, "set_constant". The ID names a constant (`macro:N`, `const:N`,
// `K/const:N`); its macro body (parenthesized unless one token: asOperand) or
// its initializer becomes `value`. On the edited
// code every launch whose block, grid or shared memory clang evaluates, and every
// constant __launch_bounds__, must stay within CUDA's limits (LaunchLimits.h).
//
//===----------------------------------------------------------------------===//
#include "../EditKind.h"
#include "../LaunchLimits.h"

#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "kloop/Edit/Proposal.h"
#include "kloop/Support/Text.h"

using namespace clang;
using namespace llvm;

namespace kloop {
namespace edit {
namespace {

class SetConstant : public EditKindPlanner {
public:
  EditKind kind() const override { return EditKind::SetConstant; }
  EntityKind target() const override { return EntityKind::Constant; }
  Sides sides() const override { return Sides::Both; }
  bool writesExpression() const override { return true; }

  std::optional<std::string> slotProblem(const Edit &Ed) const override {
    return expressionSlotProblem("value", Ed.Value);
  }

  Outcome plan(const Edit &Ed, const Entity &E, PlanContext &C) const override {
    if (E.Data.value("constant_kind", "") == "macro")
      return macroBody(Ed, E, C);
    const auto *V = dyn_cast_or_null<VarDecl>(E.D);
    if (!V || !V->getInit())
      return refuse("'" + Ed.ID + "' has no initializer to replace");
    auto R = C.rangeOf(V->getInit()->getSourceRange());
    if (!R)
      return refuse(macroRefusal());
    return accept({replaceRange(*R, Ed.Value)});
  }

  /// A constant can change a block size or launch bounds without naming a launch (a macro that is
  /// one factor of a dim3, e.g. BLOCK_X with BLOCK_Y = 8).
  std::vector<std::string> checkEdited(const Edit &, const EditedInventory &Inv) const override {
    if (std::optional<std::string> Why = launchLimitProblem(Inv))
      return {*Why};
    return {};
  }

private:
  /// The text after the macro's name and the blanks that follow it.
  static Outcome macroBody(const Edit &Ed, const Entity &E, const PlanContext &C) {
    const std::string &File = C.fileOf(E);
    StringRef Buf = C.bufferOf(File);
    if (Buf.empty() || E.Span.EndOffset > Buf.size())
      return refuse("cannot read the definition of '" + Ed.ID + "'");
    StringRef Def = Buf.substr(E.Span.BeginOffset, E.Span.EndOffset - E.Span.BeginOffset);
    std::string Name = E.Data["name"].get<std::string>();
    if (!Def.starts_with(Name))
      return refuse("the definition of '" + Ed.ID + "' is not where the preprocessor recorded it");
    size_t Body = Name.size();
    while (Body < Def.size() && (Def[Body] == ' ' || Def[Body] == '\t'))
      ++Body;
    if (Body >= Def.size())
      return refuse("macro '" + Name + "' has an empty body");
    FileRange R{File, E.Span.BeginOffset + (unsigned)Body, E.Span.EndOffset};
    return accept({replaceRange(R, asOperand(Ed.Value))});
  }
};

} // namespace

void registerSetConstant(EditKindRegistry &R) { R.add<SetConstant>(); }

} // namespace edit
} // namespace kloop
