//===- ReplaceLoop.cpp - replace_loop: one loop statement -----------------===//
//
// docs/edits.md, "replace_loop". `code` replaces the loop statement; a pragma
// above the loop is not part of it and stays. A loop whose body is a single
// statement ends with that statement's `;`, outside its source range: it is
// replaced too when the code ends a statement itself (`;` or `}`), so that
// no stray `;` follows the new code.
//
//===----------------------------------------------------------------------===//
#include "../EditKind.h"

#include "clang/AST/Stmt.h"

using namespace clang;
using namespace llvm;

namespace kloop {
namespace edit {
namespace {

class ReplaceLoop : public EditKindPlanner {
public:
  EditKind kind() const override { return EditKind::ReplaceLoop; }
  EntityKind target() const override { return EntityKind::Loop; }

  std::optional<std::string> slotProblem(const Edit &Ed) const override {
    return codeSlotProblemOf(Ed, CodeSlot::Statements, "inside the enclosing body");
  }

  Outcome plan(const Edit &Ed, const Entity &E, PlanContext &C) const override {
    if (!E.S)
      return refuse("no statement for '" + Ed.ID + "'");
    auto R = C.rangeOf(E.S->getSourceRange());
    if (!R)
      return refuse(macroRefusal());
    std::string Code = StringRef(Ed.Code).trim().str();
    bool EndsStatement = !Code.empty() && (Code.back() == ';' || Code.back() == '}');
    if (EndsStatement && !isa<CompoundStmt, DeclStmt, NullStmt>(lastSubStmt(E.S)))
      if (std::optional<size_t> Semi = semicolonAt(C.bufferOf(R->File), R->End))
        R->End = *Semi + 1;
    return accept({replaceRange(*R, Code)});
  }
};

} // namespace

void registerReplaceLoop(EditKindRegistry &R) { R.add<ReplaceLoop>(); }

} // namespace edit
} // namespace kloop
