//===- AddConst.cpp - add_const: float *p -> const float *p ---------------===//
//
// docs/edits.md, "add_const". Refused when the kernel writes through the
// parameter (the inventory's write evidence), when it already points to const,
// and when the kernel has a separate declaration (the definition alone would
// become an overload).
//
//===----------------------------------------------------------------------===//
#include "../Plan.h"
#include "kloop/Support/JSON.h"

#include "clang/AST/Decl.h"
#include "clang/AST/TypeLoc.h"

using namespace clang;
using namespace llvm;

namespace kloop {
namespace edit {

namespace {

class AddConst : public EditKindPlanner {
public:
  EditKind kind() const override { return EditKind::AddConst; }
  EntityKind target() const override { return EntityKind::Param; }
  bool sharesEntityWith(const Edit &, const Edit &Other) const override {
    return Other.Kind == EditKind::AddRestrict;
  }

  Outcome plan(const Edit &Ed, const Entity &E, PlanContext &C) const override {
    const auto *P = dyn_cast_or_null<ParmVarDecl>(E.D);
    if (!P || !P->getType()->isPointerType())
      return refuse("parameter '" + E.Data.value("name", "") + "' is not a pointer");
    if (auto Why = constProblem(*P, E, C))
      return refuse(*Why);
    auto PTL = unqualifiedTypeLoc(*P).getAs<PointerTypeLoc>();
    if (!PTL)
      return refuse("the pointer type of '" + P->getNameAsString() + "' is spelled through a typedef");
    auto R = C.pointOf(PTL.getPointeeLoc().getBeginLoc());
    if (!R)
      return refuse(std::string("its type: ") + macroRefusal());
    return accept({replaceRange(*R, "const ")});
  }

private:
  static std::optional<std::string> constProblem(const ParmVarDecl &P, const Entity &E, const PlanContext &C) {
    if (P.getType()->getPointeeType().isConstQualified())
      return "parameter '" + P.getNameAsString() + "' already points to const";
    for (const ArchFact &F : C.factsUnderEveryArch(E)) // and code of another architecture the command builds
      if (F.Data.value("written", false)) {
        nlohmann::json Ev = F.Data.value("write_evidence", nlohmann::json());
        return "the kernel writes through parameter '" + P.getNameAsString() + "'" +
               (F.Arch.empty() ? "" : " under " + F.Arch) + (Ev.is_null() ? "" : " (" + dumpJSON(Ev) + ")");
      }
    const auto *FD = dyn_cast<FunctionDecl>(P.getDeclContext());
    if (const Entity *K = C.kernelOfParam(E))
      if (std::optional<std::string> Where = C.otherDefinition(*K))
        return *Where + (*Where == "the host side" ? "" : "'s device side") +
               " compiles another definition of the kernel (a preprocessor condition such as `#if __CUDA_ARCH__` "
               "around it): const in this one's parameter alone would change its mangled name, and the launch "
               "would name a kernel that device code no longer defines";
    if (FD && FD->getPreviousDecl())
      return "the kernel is also declared at " + FD->getPreviousDecl()->getLocation().printToString(C.sourceManager()) +
             "; adding const to the definition alone would declare a different overload";
    return std::nullopt;
  }
};

} // namespace

void registerAddConst(EditKindRegistry &R) { R.add<AddConst>(); }

} // namespace edit
} // namespace kloop
