//===- UnrollConstantLoops.cpp - Rule unroll-constant-loops ----------------===//
//
// Match: editable loops of editable kernels with no unroll hint and a constant
//        trip count N (inventory "trip_count") with 2 <= N <= MaxFullUnroll.
// Edit:  set_unroll with count N.
//
//===----------------------------------------------------------------------===//
#include "kloop/Edit/Rules.h"

namespace kloop {

std::vector<Edit> matchUnrollConstantLoops(const nlohmann::json &Inv) {
  std::vector<Edit> Out;
  if (!Inv.contains("kernels"))
    return Out;
  for (const nlohmann::json &K : Inv["kernels"]) {
    if (!K.value("editable", false) || !K.contains("loops"))
      continue;
    for (const nlohmann::json &L : K["loops"]) {
      if (!L.value("editable", false) || !L["unroll"].is_null() || !L["trip_count"].is_number_integer())
        continue;
      long long N = L["trip_count"].get<long long>();
      if (N < 2 || N > MaxFullUnroll)
        continue;
      Edit E;
      E.Kind = EditKind::SetUnroll;
      E.ID = L["id"].get<std::string>();
      E.Count = N;
      Out.push_back(E);
    }
  }
  return Out;
}

} // namespace kloop
