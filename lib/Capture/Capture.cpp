//===- Capture.cpp - kloop's side of a capture directory ------------------===//
#include "kloop/Capture/Capture.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace kloop {
namespace capture {

llvm::Expected<Manifest> readCapture(llvm::StringRef Dir, BlobCheck Check) {
  Manifest M;
  std::string Error;
  if (!readManifest(Dir.str(), M, Error))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), Error);
  if (Check == BlobCheck::Contents && !verifyBlobs(Dir.str(), M, Error))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), Error);
  return M;
}

std::map<std::string, KernelTotals> kernelTotals(const Manifest &M) {
  std::map<std::string, KernelTotals> Out;
  std::map<std::string, std::set<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint64_t>>>
      Configs;
  for (const Launch &L : M.Launches) {
    KernelTotals &T = Out[L.Kernel];
    T.Name = L.Name.empty() ? L.Kernel : L.Name;
    ++T.Launches;
    for (const Allocation &A : L.Allocations)
      T.Bytes += A.Bytes;
    Configs[L.Kernel].insert({L.Grid[0], L.Grid[1], L.Grid[2], L.Block[0], L.Block[1], L.Block[2], L.DynamicSmem});
  }
  for (const Refusal &R : M.Refusals) {
    KernelTotals &T = Out[R.Kernel];
    if (T.Name.empty())
      T.Name = R.Name.empty() ? R.Kernel : R.Name;
    ++T.Refused;
  }
  for (auto &[Kernel, T] : Out)
    T.Configs = static_cast<unsigned>(Configs[Kernel].size());
  return Out;
}

std::vector<std::pair<std::string, unsigned>> refusalReasons(const Manifest &M) {
  std::map<std::string, unsigned> Count;
  for (const Refusal &R : M.Refusals)
    ++Count[R.Reason];
  std::vector<std::pair<std::string, unsigned>> Out(Count.begin(), Count.end());
  std::stable_sort(Out.begin(), Out.end(), [](const auto &A, const auto &B) { return A.second > B.second; });
  return Out;
}

} // namespace capture
} // namespace kloop
