//===- KeyNames.h - Kernel key names shared by two profiles (private) -----===//
#ifndef KLOOP_LIB_VERIFY_KEYNAMES_H
#define KLOOP_LIB_VERIFY_KEYNAMES_H

#include "kloop/Verify/Compare.h"
#include <map>
#include <set>
#include <string>

namespace kloop {
namespace verify {
namespace detail {

/// Names kernels for matching across two profiles: kernelBaseName() of the
/// demangled name (so foo<128> in the baseline matches foo<256> in the
/// candidate), unless that base name belongs to more than one mangled kernel
/// within one profile, in which case the mangled name.
class KeyNamer {
public:
  KeyNamer(const Profile &A, const Profile &B) {
    for (const Profile *P : {&A, &B}) {
      std::map<std::string, std::set<std::string>> PerBase;
      for (const LaunchRecord &L : P->Launches)
        PerBase[base(L.Kernel, L.Name)].insert(L.Kernel);
      for (const CaptureRecord &C : P->Captures)
        PerBase[base(C.Kernel, C.Name)].insert(C.Kernel);
      for (const auto &[Base, Mangled] : PerBase)
        if (Mangled.size() > 1)
          Ambiguous.insert(Base);
    }
  }

  std::string key(const std::string &Mangled,
                  const std::string &Demangled) const {
    std::string Base = base(Mangled, Demangled);
    if (Ambiguous.count(Base))
      return Mangled;
    return Base;
  }

private:
  static std::string base(const std::string &Mangled,
                          const std::string &Demangled) {
    return Demangled.empty() ? Mangled : kernelBaseName(Demangled);
  }
  /// Base names held by several mangled kernels within one profile.
  std::set<std::string> Ambiguous;
};

} // namespace detail
} // namespace verify
} // namespace kloop

#endif
