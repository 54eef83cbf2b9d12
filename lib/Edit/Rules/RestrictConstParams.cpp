//===- RestrictConstParams.cpp - Rule restrict-const-params ----------------===//
//
// Match: pointer parameters of editable kernels.
// Edit:  add_const when the kernel never writes through the pointer and the
//        pointee is not const yet; add_restrict when not restrict yet.
// Safety comes from kloop apply's checks (writes, aliasing launches), which
// drop the edits they refuse (ApplyOptions::DropRefused).
//
//===----------------------------------------------------------------------===//
#include "kloop/Edit/Rules.h"

namespace kloop {

std::vector<Edit> matchRestrictConstParams(const inv::Inventory &Inv) {
  std::vector<Edit> Out;
  for (const inv::Kernel &K : Inv.Kernels) {
    if (!K.Edit.Editable)
      continue;
    for (const inv::Param &P : K.Params) {
      if (!P.Pointer || P.ID.empty())
        continue;
      if (!P.ConstPointee && P.Written == false) {
        Edit E;
        E.Kind = EditKind::AddConst;
        E.ID = P.ID;
        Out.push_back(E);
      }
      if (!P.Restrict) {
        Edit E;
        E.Kind = EditKind::AddRestrict;
        E.ID = P.ID;
        Out.push_back(E);
      }
    }
  }
  return Out;
}

} // namespace kloop
