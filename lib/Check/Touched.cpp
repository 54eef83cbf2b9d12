//===- Touched.cpp - The kernels a diff touches ----------------------------===//
#include "kloop/Check/Check.h"
#include "kloop/Support/Path.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include <set>

using namespace llvm;

namespace kloop {
namespace check {

/// True when a changed line of \p Changes lies in \p L (its file relative to \p Root).
static bool touches(const inv::Location &L, StringRef Root, const std::vector<FileChanges> &Changes) {
  std::string File = absolutePath(L.File, Root);
  for (const FileChanges &C : Changes)
    if (C.File == File && C.touches(L.Begin.Line, L.End.Line))
      return true;
  return false;
}

/// True when the kernel \p K, or a device function it reaches through calls, is touched.
static bool kernelTouched(const inv::Kernel &K, const inv::Inventory &Inv,
                          const StringMap<const inv::DeviceFunction *> &Device,
                          const std::vector<FileChanges> &Changes) {
  if (touches(K.Loc, Inv.Root, Changes))
    return true;
  std::vector<std::string> Work(K.Calls.begin(), K.Calls.end());
  std::set<std::string> Seen;
  while (!Work.empty()) {
    std::string ID = Work.back();
    Work.pop_back();
    auto It = Device.find(ID);
    if (!Seen.insert(ID).second || It == Device.end())
      continue;
    if (touches(It->second->Loc, Inv.Root, Changes))
      return true;
    Work.insert(Work.end(), It->second->Calls.begin(), It->second->Calls.end());
  }
  return false;
}

std::vector<std::string> touchedKernels(const inv::Inventory &Inv, const std::vector<FileChanges> &Changes) {
  StringMap<const inv::DeviceFunction *> Device;
  for (const inv::DeviceFunction &F : Inv.DeviceFunctions)
    Device[F.ID] = &F;
  std::vector<std::string> Out;
  for (const inv::Kernel &K : Inv.Kernels)
    if (!K.Library && kernelTouched(K, Inv, Device, Changes))
      Out.push_back(K.ID);
  return Out;
}

inv::Inventory onlyKernels(const inv::Inventory &Inv, const std::vector<std::string> &IDs) {
  inv::Inventory Out = Inv;
  llvm::erase_if(Out.Kernels, [&](const inv::Kernel &K) { return !llvm::is_contained(IDs, K.ID); });
  return Out;
}

} // namespace check
} // namespace kloop
