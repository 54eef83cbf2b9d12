//===- ReplaceBody.cpp - replace_body: a kernel's whole body --------------===//
//
// docs/edits.md, "replace_body". `code` is one `{ ... }` that replaces the
// kernel's body; the re-parse checks it.
//
//===----------------------------------------------------------------------===//
#include "../EditKind.h"

#include "clang/AST/Decl.h"
#include "clang/AST/Stmt.h"

using namespace clang;
using namespace llvm;

namespace kloop {
namespace edit {
namespace {

bool isBraced(StringRef Code) { return Code.starts_with("{") && Code.ends_with("}"); }

class ReplaceBody : public EditKindPlanner {
public:
  EditKind kind() const override { return EditKind::ReplaceBody; }
  EntityKind target() const override { return EntityKind::Kernel; }

  std::optional<std::string> slotProblem(const Edit &Ed) const override {
    if (!isBraced(StringRef(Ed.Code).trim()))
      return std::nullopt; // plan says so
    return codeSlotProblemOf(Ed, CodeSlot::Body, "one body in braces { ... }");
  }

  Outcome plan(const Edit &Ed, const Entity &E, PlanContext &C) const override {
    const auto *FD = dyn_cast_or_null<FunctionDecl>(E.D);
    if (!FD || !FD->getBody())
      return refuse("kernel '" + Ed.ID + "' has no body here");
    StringRef Code = StringRef(Ed.Code).trim();
    if (!isBraced(Code))
      return refuse("'code' must be a whole body in braces: { ... }");
    auto R = C.rangeOf(FD->getBody()->getSourceRange());
    if (!R)
      return refuse(std::string("its body: ") + macroRefusal());
    return accept({replaceRange(*R, Code.str())});
  }
};

} // namespace

void registerReplaceBody(EditKindRegistry &R) { R.add<ReplaceBody>(); }

} // namespace edit
} // namespace kloop
