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

std::vector<Edit> matchRestrictConstParams(const nlohmann::json &Inv) {
  std::vector<Edit> Out;
  if (!Inv.contains("kernels"))
    return Out;
  for (const nlohmann::json &K : Inv["kernels"]) {
    if (!K.value("editable", false) || !K.contains("params"))
      continue;
    for (const nlohmann::json &P : K["params"]) {
      if (!P.value("pointer", false) || !P.contains("id"))
        continue;
      if (!P.value("const_pointee", false) && P["written"] == false) {
        Edit E;
        E.Kind = EditKind::AddConst;
        E.ID = P["id"].get<std::string>();
        Out.push_back(E);
      }
      if (!P.value("restrict", false)) {
        Edit E;
        E.Kind = EditKind::AddRestrict;
        E.ID = P["id"].get<std::string>();
        Out.push_back(E);
      }
    }
  }
  return Out;
}

} // namespace kloop
