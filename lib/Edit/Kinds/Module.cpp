//===- Module.cpp - The built-in edit kinds, registered in one module -----===//
//
// Like a clang-tidy module's addCheckFactories: one line per kind, each kind
// in its own file of lib/Edit/Kinds/ with its section in docs/edits.md and its
// tests in test/Apply/Kinds/.
//
//===----------------------------------------------------------------------===//
#include "../EditKind.h"

namespace kloop {
namespace edit {

void registerSetConstant(EditKindRegistry &R);
void registerSetUnroll(EditKindRegistry &R);
void registerSetLaunchBounds(EditKindRegistry &R);
void registerSetLaunchConfig(EditKindRegistry &R);
void registerAddRestrict(EditKindRegistry &R);
void registerAddConst(EditKindRegistry &R);
void registerReplaceBody(EditKindRegistry &R);
void registerReplaceLoop(EditKindRegistry &R);
void registerReplaceStmt(EditKindRegistry &R);
void registerInsertDeviceFunction(EditKindRegistry &R);
void registerAddKernelVariant(EditKindRegistry &R);

void addBuiltinEditKinds(EditKindRegistry &R) {
  registerSetConstant(R);
  registerSetUnroll(R);
  registerSetLaunchBounds(R);
  registerSetLaunchConfig(R);
  registerAddRestrict(R);
  registerAddConst(R);
  registerReplaceBody(R);
  registerReplaceLoop(R);
  registerReplaceStmt(R);
  registerInsertDeviceFunction(R);
  registerAddKernelVariant(R);
}

void EditKindRegistry::add(std::unique_ptr<EditKindPlanner> K) { Kinds.push_back(std::move(K)); }

const EditKindPlanner *EditKindRegistry::find(EditKind K) const {
  for (const auto &P : Kinds)
    if (P->kind() == K)
      return P.get();
  return nullptr;
}

const EditKindPlanner &editKindPlanner(EditKind K) {
  static const EditKindRegistry Registry = [] {
    EditKindRegistry R;
    addBuiltinEditKinds(R);
    return R;
  }();
  const EditKindPlanner *P = Registry.find(K);
  assert(P && "every EditKind is registered in addBuiltinEditKinds");
  return *P;
}

} // namespace edit
} // namespace kloop
