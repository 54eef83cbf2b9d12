//===- ReplaceLoop.cpp - replace_loop: one loop statement -----------------===//
//
// docs/edits.md, "replace_loop". `code` replaces the loop statement; a pragma
// above the loop is not part of it and stays. A loop whose body is a single
// statement ends with that statement's `;`, outside its source range: it is
// replaced too when the code ends a statement itself (`;` or `}`), so that
// no stray `;` follows the new code. A loop that is the unbraced body of an
// `if`, `else`, loop or label gets its code in braces, so that every statement
// of the code stays under that statement.
//
//===----------------------------------------------------------------------===//
#include "../EditKind.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/ParentMapContext.h"
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
    if (inBlock(*E.S, C.astContext()))
      return accept({replaceRange(*R, Code)});
    const AttributedStmt *Hinted = hintOf(*E.S, C.astContext());
    if (!Hinted)
      return accept({replaceRange(*R, "{ " + Code + " }")});
    // The pragma above the loop goes inside the braces too, where it stays in front of the code.
    auto Pragma = C.pointOf(Hinted->getAttrs().front()->getLocation());
    if (!Pragma || Pragma->File != R->File)
      return refuse(std::string("its unroll pragma: ") + macroRefusal());
    unsigned LineStart = lineStart(C.bufferOf(R->File), Pragma->Begin);
    return accept({replaceRange(FileRange{R->File, LineStart, LineStart}, "{\n"), replaceRange(*R, Code + " }")});
  }

private:
  /// The `#pragma unroll` statement (AttributedStmt) whose loop is \p S, or null.
  static const AttributedStmt *hintOf(const Stmt &S, ASTContext &Ctx) {
    for (const DynTypedNode &P : Ctx.getParents(S))
      if (const auto *A = P.get<AttributedStmt>(); A && !A->getAttrs().empty())
        return A;
    return nullptr;
  }

  /// Whether \p S is a statement of a `{ }` block (or stands alone), not the single, unbraced
  /// statement under an `if`, `else`, loop, `case` or label, where code of several statements would
  /// leave all but the first outside it.
  static bool inBlock(const Stmt &S, ASTContext &Ctx) {
    for (const DynTypedNode &P : Ctx.getParents(S)) {
      if (const auto *A = P.get<AttributedStmt>())
        return inBlock(*A, Ctx);
      if (P.get<Stmt>() && !P.get<CompoundStmt>())
        return false;
    }
    return true;
  }
};

} // namespace

void registerReplaceLoop(EditKindRegistry &R) { R.add<ReplaceLoop>(); }

} // namespace edit
} // namespace kloop
