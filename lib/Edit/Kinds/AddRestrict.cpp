//===- AddRestrict.cpp - add_restrict: float *p -> float *__restrict__ p --===//
//
// docs/edits.md, "add_restrict". Refused when a visible `<<<>>>` launch passes
// the parameter a pointer that another pointer parameter's argument derives
// from too (both could overlap), or when the kernel reaches memory through a
// pointer that is none of its parameters (the inventory's "indirect_pointer").
//
//===----------------------------------------------------------------------===//
#include "../Plan.h"

#include "clang/AST/Decl.h"
#include "clang/AST/TypeLoc.h"

using namespace clang;
using namespace llvm;

namespace kloop {
namespace edit {

namespace {

/// The name of parameter \p I of the kernel that \p P belongs to, as its definition spells it
/// ("#N", 1-based, when it has none).
std::string paramName(const ParmVarDecl &P, unsigned I) {
  const auto *F = dyn_cast<FunctionDecl>(P.getDeclContext());
  if (F && I < F->getNumParams() && !F->getParamDecl(I)->getName().empty())
    return F->getParamDecl(I)->getNameAsString();
  return "#" + std::to_string(I + 1);
}

/// Why no parameter of kernel \p K may be __restrict__, under this parse's architecture or any other
/// the command builds (PlanContext::archFacts): it reaches memory through a pointer that is none of its
/// parameters, or device code launches it.
std::optional<std::string> kernelProblem(const Entity &K, const PlanContext &C) {
  std::vector<ArchFact> Views = C.factsUnderEveryArch(K);
  auto under = [](const ArchFact &F) { return F.Arch.empty() ? std::string() : " under " + F.Arch; };
  for (const ArchFact &F : Views)
    if (F.Data.contains("indirect_pointer") && F.Data["indirect_pointer"].is_string())
      return "kernel '" + K.ID + "' reaches memory other than through its pointer parameters" + under(F) +
             ", where no launch shows what it points to: " + F.Data["indirect_pointer"].get<std::string>();
  for (const ArchFact &F : Views)
    if (F.DeviceLaunch)
      return "kernel '" + K.ID + "' is launched from device code" + under(F) + " at " + *F.DeviceLaunch +
             " (dynamic parallelism), whose arguments the alias check does not read";
  return std::nullopt;
}

class AddRestrict : public EditKindPlanner {
public:
  EditKind kind() const override { return EditKind::AddRestrict; }
  EntityKind target() const override { return EntityKind::Param; }
  bool sharesEntityWith(const Edit &, const Edit &Other) const override { return Other.Kind == EditKind::AddConst; }

  Outcome plan(const Edit &Ed, const Entity &E, PlanContext &C) const override {
    const auto *P = dyn_cast_or_null<ParmVarDecl>(E.D);
    if (!P || !P->getType()->isPointerType())
      return refuse("parameter '" + E.Data.value("name", "") + "' is not a pointer");
    if (P->getType().isRestrictQualified())
      return refuse("parameter '" + P->getNameAsString() + "' is already __restrict__");
    if (const Entity *K = C.find(E.Owner))
      if (auto Why = kernelProblem(*K, C))
        return refuse(*Why);
    std::string Site;
    if (auto A = C.aliasFor(E.Owner, P->getFunctionScopeIndex(), Site); A && A->I1 == A->I2)
      return refuse("kernel '" + E.Owner + "' is used at " + Site + " where the alias check cannot see what its pointer "
                    "parameters receive: " + A->Why);
    else if (A)
      return refuse("launch site " + Site + " passes '" + A->A1 + "' and '" + A->A2 + "' (" + A->Why +
                    ") to parameters '" + paramName(*P, A->I1) + "' and '" + paramName(*P, A->I2) +
                    "', which may overlap");
    if (auto PTL = unqualifiedTypeLoc(*P).getAs<PointerTypeLoc>()) {
      auto R = C.pointOf(PTL.getStarLoc());
      if (!R)
        return refuse(std::string("its type: ") + macroRefusal());
      StringRef Buf = C.bufferOf(R->File);
      unsigned After = R->Begin + 1;
      bool Space = After < Buf.size() && (Buf[After] == ' ' || Buf[After] == '\t');
      return accept({replaceRange(FileRange{R->File, After, After}, Space ? " __restrict__" : "__restrict__ ")});
    }
    // A pointer typedef: `fptr __restrict__ p`.
    auto R = C.pointOf(P->getLocation());
    if (!R || P->getName().empty())
      return refuse(std::string("its name: ") + macroRefusal());
    return accept({replaceRange(*R, "__restrict__ ")});
  }
};

} // namespace

void registerAddRestrict(EditKindRegistry &R) { R.add<AddRestrict>(); }

} // namespace edit
} // namespace kloop
