//===- UnrollConstantLoops.cpp - Rule unroll-constant-loops ----------------===//
//
// Match: editable loops of editable kernels with no unroll hint and a constant
//        trip count N (inventory "trip_count") with 2 <= N <= MaxFullUnroll.
// Edit:  set_unroll with count N.
//
//===----------------------------------------------------------------------===//
#include "kloop/Edit/Rules.h"

namespace kloop {

std::vector<Edit> matchUnrollConstantLoops(const inv::Inventory &Inv) {
  std::vector<Edit> Out;
  for (const inv::Kernel &K : Inv.Kernels) {
    if (!K.Edit.Editable)
      continue;
    for (const inv::Loop &L : K.Loops) {
      if (!L.Edit.Editable || L.UnrollPragma || !L.TripCount)
        continue;
      long long N = *L.TripCount;
      if (N < 2 || N > MaxFullUnroll)
        continue;
      Edit E;
      E.Kind = EditKind::SetUnroll;
      E.ID = L.ID;
      E.Count = N;
      Out.push_back(E);
    }
  }
  return Out;
}

} // namespace kloop
