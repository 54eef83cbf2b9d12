//===- ReplaceStmt.cpp - replace_stmt: one direct statement of a body -----===//
//
// docs/edits.md, "replace_stmt". Statement `stmt` (1-based) among the direct
// statements of a kernel's body or a loop's body (a loop body without braces is
// one statement; the code then goes in braces so that it stays inside the loop).
// The replaced text ends with the statement's `;`.
//
//===----------------------------------------------------------------------===//
#include "../EditKind.h"

#include "clang/AST/Decl.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"

using namespace clang;
using namespace llvm;

namespace kloop {
namespace edit {
namespace {

/// The body of a kernel or a loop, and how refusals name it ("the body of kernel 'k'").
const Stmt *bodyOf(const Edit &Ed, const Entity &E, std::string &What) {
  if (E.Kind == EntityKind::Kernel) {
    const auto *FD = dyn_cast_or_null<FunctionDecl>(E.D);
    What = "the body of kernel '" + Ed.ID + "'";
    return FD ? FD->getBody() : nullptr;
  }
  if (!E.S)
    return nullptr;
  What = "the body of loop '" + Ed.ID + "'";
  if (const auto *F = dyn_cast<ForStmt>(E.S))
    return F->getBody();
  if (const auto *Wh = dyn_cast<WhileStmt>(E.S))
    return Wh->getBody();
  if (const auto *D = dyn_cast<DoStmt>(E.S))
    return D->getBody();
  if (const auto *RF = dyn_cast<CXXForRangeStmt>(E.S))
    return RF->getBody();
  return nullptr;
}

class ReplaceStmt : public EditKindPlanner {
public:
  EditKind kind() const override { return EditKind::ReplaceStmt; }
  EntityKind target() const override { return EntityKind::Kernel; }
  bool accepts(EntityKind Have) const override { return Have == EntityKind::Kernel || Have == EntityKind::Loop; }
  std::string targetDescription() const override {
    return "a kernel or a loop (whose body holds the statement)";
  }
  /// Two replace_stmt of different statements of one body: their text ranges are disjoint.
  bool sharesEntityWith(const Edit &Mine, const Edit &Other) const override {
    return Other.Kind == EditKind::ReplaceStmt && Other.StmtIndex != Mine.StmtIndex;
  }

  std::optional<std::string> slotProblem(const Edit &Ed) const override {
    return codeSlotProblemOf(Ed, CodeSlot::Statements, "inside the enclosing body");
  }

  Outcome plan(const Edit &Ed, const Entity &E, PlanContext &C) const override {
    std::string What;
    const Stmt *Body = bodyOf(Ed, E, What);
    if (!Body)
      return refuse("no body for '" + Ed.ID + "' here");
    std::vector<const Stmt *> Stmts;
    bool Braced = isa<CompoundStmt>(Body);
    if (const auto *CS = dyn_cast<CompoundStmt>(Body))
      Stmts.assign(CS->body_begin(), CS->body_end());
    else
      Stmts.push_back(Body);
    if (Ed.StmtIndex < 1 || (size_t)Ed.StmtIndex > Stmts.size())
      return refuse("'stmt' " + std::to_string(Ed.StmtIndex) + " is out of range: " + What + " has " +
                    std::to_string(Stmts.size()) + " direct statement" + (Stmts.size() == 1 ? "" : "s") +
                    " (1-based)");
    const Stmt *S = Stmts[Ed.StmtIndex - 1];
    // Attributes and pragmas on the statement (#pragma unroll above a loop) stay.
    while (const auto *A = dyn_cast<AttributedStmt>(S))
      S = A->getSubStmt();
    auto R = C.rangeOf(S->getSourceRange());
    if (!R)
      return refuse("statement " + std::to_string(Ed.StmtIndex) + ": " + macroRefusal());
    if (!isa<CompoundStmt, DeclStmt, NullStmt, CXXTryStmt>(lastSubStmt(S))) {
      // The `;` that ends it lies after its source range: take it too.
      std::optional<size_t> Semi = semicolonAt(C.bufferOf(R->File), R->End);
      if (!Semi)
        return refuse("statement " + std::to_string(Ed.StmtIndex) + ": cannot find the ';' that ends it (" +
                      macroRefusal() + ")");
      R->End = *Semi + 1;
    }
    std::string Code = StringRef(Ed.Code).trim().str();
    if (!Braced)
      Code = "{ " + Code + " }";
    return accept({replaceRange(*R, Code)});
  }
};

} // namespace

void registerReplaceStmt(EditKindRegistry &R) { R.add<ReplaceStmt>(); }

} // namespace edit
} // namespace kloop
