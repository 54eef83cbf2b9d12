//===- AntiCheat.cpp - Checks against planted cheats ----------------------===//
#include "kloop/Verify/AntiCheat.h"
#include "kloop/Support/BufferHash.h"
#include "Elements.h"
#include "KeyNames.h"
#include "kloop/Verify/Compare.h"
#include "llvm/Support/FormatVariadic.h"
#include <algorithm>
#include <cassert>
#include <map>
#include <set>
#include <tuple>

using namespace llvm;

namespace kloop {
namespace verify {

StringRef findingKindName(FindingKind K) {
  switch (K) {
  case FindingKind::UnwrittenOutput:
    return "unwritten-output";
  case FindingKind::NewNaN:
    return "new-nan";
  case FindingKind::MissingCapture:
    return "missing-capture";
  case FindingKind::ExtraCapture:
    return "extra-capture";
  case FindingKind::LaunchCountChanged:
    return "launch-count-changed";
  case FindingKind::NewKernel:
    return "new-kernel";
  case FindingKind::SizeChanged:
    return "size-changed";
  case FindingKind::OtherArgumentChanged:
    return "other-argument-changed";
  case FindingKind::StreamChanged:
    return "stream-changed";
  case FindingKind::MemoryLeak:
    return "memory-leak";
  }
  return "unknown";
}

bool isPoisonElement(ArrayRef<uint8_t> E) {
  if (E.empty())
    return false;
  uint8_t First = E.front();
  if (First != PoisonNaNByte && First != PoisonSentinelByte)
    return false;
  for (uint8_t B : E)
    if (B != First)
      return false;
  return true;
}

uint64_t countLeftPoison(ArrayRef<uint8_t> Candidate, ArrayRef<uint8_t> Baseline,
                         size_t ElementSize) {
  assert(ElementSize > 0);
  assert((Baseline.empty() || Baseline.size() == Candidate.size()) &&
         "buffer sizes differ");
  uint64_t N = Candidate.size() / ElementSize, Count = 0;
  for (uint64_t I = 0; I < N; ++I) {
    ArrayRef<uint8_t> C = Candidate.slice(I * ElementSize, ElementSize);
    if (!isPoisonElement(C))
      continue;
    if (!Baseline.empty() &&
        isPoisonElement(Baseline.slice(I * ElementSize, ElementSize)))
      continue; // the baseline leaves it unwritten too, or it is a real value
    ++Count;
  }
  return Count;
}

bool hashIsAllPoison(uint64_t Hash, uint64_t Size) {
  return Hash == bufferHashOfFill(PoisonNaNByte, Size) ||
         Hash == bufferHashOfFill(PoisonSentinelByte, Size);
}

VacuousOutput vacuousOutput(ArrayRef<uint8_t> Bytes, DType Type,
                            bool Poisoned) {
  size_t ES = dtypeSize(Type);
  uint64_t N = Bytes.size() / ES;
  if (N == 0)
    return VacuousOutput::No;
  auto All = [&](auto Pred) {
    for (uint64_t I = 0; I < N; ++I)
      if (!Pred(I))
        return false;
    return true;
  };
  if (Poisoned &&
      All([&](uint64_t I) { return isPoisonElement(Bytes.slice(I * ES, ES)); }))
    return VacuousOutput::AllPoison;
  if (detail::isFloat(Type) && All([&](uint64_t I) {
        return std::isnan(detail::valueAt(Bytes.data(), I, Type));
      }))
    return VacuousOutput::AllNaN;
  return VacuousOutput::No;
}

VacuousOutput vacuousOutputFromHash(uint64_t Hash, uint64_t Size, DType Type,
                                    bool Poisoned) {
  if (Size < dtypeSize(Type))
    return VacuousOutput::No;
  if (Poisoned && hashIsAllPoison(Hash, Size))
    return VacuousOutput::AllPoison;
  if (detail::isFloat(Type) && Hash == bufferHashOfFill(PoisonNaNByte, Size))
    return VacuousOutput::AllNaN;
  return VacuousOutput::No;
}

uint64_t countNewNaNs(ArrayRef<uint8_t> Candidate, ArrayRef<uint8_t> Baseline,
                      DType Type, bool SkipPoison) {
  if (!detail::isFloat(Type))
    return 0;
  assert(Baseline.size() == Candidate.size() && "buffer sizes differ");
  size_t ES = dtypeSize(Type);
  uint64_t N = Candidate.size() / ES, Count = 0;
  for (uint64_t I = 0; I < N; ++I) {
    if (!std::isnan(detail::valueAt(Candidate.data(), I, Type)) ||
        std::isnan(detail::valueAt(Baseline.data(), I, Type)))
      continue;
    if (SkipPoison && isPoisonElement(Candidate.slice(I * ES, ES)))
      continue;
    ++Count;
  }
  return Count;
}

/// True when the kernel (mangled, demangled) matches one of \p TargetKernels.
static bool isTarget(ArrayRef<std::string> TargetKernels, StringRef Mangled,
                     StringRef Demangled) {
  for (const std::string &T : TargetKernels)
    if (kernelMatches(T, Mangled, Demangled))
      return true;
  return false;
}

std::vector<Finding> checkStreams(const Profile &Baseline,
                                  const Profile &Candidate,
                                  ArrayRef<std::string> TargetKernels) {
  detail::KeyNamer Keys(Baseline, Candidate);
  // Key -> stream role per launch, in launch order. A role is the stream kind
  // the launch call named (default, per-thread default, created; "" in
  // profiles that do not say) and, for created or unknown streams, their
  // number in order of first use.
  auto Roles = [&](const Profile &P) {
    std::vector<const LaunchRecord *> Ordered;
    for (const LaunchRecord &L : P.Launches)
      Ordered.push_back(&L);
    std::stable_sort(Ordered.begin(), Ordered.end(),
                     [](const LaunchRecord *A, const LaunchRecord *B) {
                       return A->Seq < B->Seq;
                     });
    std::map<uint64_t, uint64_t> Number;
    std::map<std::string, std::vector<std::string>> M;
    for (const LaunchRecord *L : Ordered) {
      std::string Role = L->StreamKind;
      if (Role != "default" && Role != "per_thread_default") {
        uint64_t N = Number.emplace(L->Stream, Number.size()).first->second;
        Role = (Role.empty() ? "" : Role + " ") + "stream #" + std::to_string(N);
      }
      if (isTarget(TargetKernels, L->Kernel, L->Name))
        M[Keys.key(L->Kernel, L->Name)].push_back(Role);
    }
    return M;
  };
  auto B = Roles(Baseline), C = Roles(Candidate);
  std::vector<Finding> Out;
  for (const auto &[Key, BS] : B) {
    auto It = C.find(Key);
    if (It == C.end())
      continue;
    const std::vector<std::string> &CS = It->second;
    size_t N = std::min(BS.size(), CS.size()), Moved = 0, First = 0;
    for (size_t I = 0; I < N; ++I)
      if (BS[I] != CS[I] && Moved++ == 0)
        First = I;
    if (!Moved)
      continue;
    Finding F;
    F.Kind = FindingKind::StreamChanged;
    F.Kernel = Key;
    F.KernelOrdinal = First;
    F.Message =
        formatv("target kernel {0}: {1} of {2} launches launched on a different "
                "stream than the baseline's (first: launch #{3} on {4} in the "
                "candidate, {5} in the baseline; streams numbered by first "
                "use): work moved to another stream escapes timing on the "
                "original one",
                Key, Moved, N, First, CS[First], BS[First])
            .str();
    Out.push_back(std::move(F));
  }
  return Out;
}

std::vector<Finding> checkLeaks(const Profile &Baseline,
                                const Profile &Candidate) {
  std::vector<Finding> Out;
  if (!Baseline.Memory.Known || !Candidate.Memory.Known ||
      Candidate.Memory.LiveBytes <= Baseline.Memory.LiveBytes)
    return Out;
  Finding F;
  F.Kind = FindingKind::MemoryLeak;
  F.Message = formatv("the candidate leaks device memory: {0} bytes in {1} "
                      "allocation(s) still live at exit, against {2} bytes in "
                      "{3} for the baseline",
                      Candidate.Memory.LiveBytes,
                      Candidate.Memory.LiveAllocations,
                      Baseline.Memory.LiveBytes,
                      Baseline.Memory.LiveAllocations)
                  .str();
  Out.push_back(std::move(F));
  return Out;
}

std::vector<Finding> checkLaunchCounts(const Profile &Baseline,
                                       const Profile &Candidate,
                                       ArrayRef<std::string> TargetKernels) {
  detail::KeyNamer Keys(Baseline, Candidate);
  // Key -> (count, a mangled name, a demangled name) per side.
  struct Count {
    uint64_t N = 0;
    std::string Mangled, Demangled;
  };
  auto Tally = [&](const Profile &P) {
    std::map<std::string, Count> M;
    for (const LaunchRecord &L : P.Launches) {
      Count &C = M[Keys.key(L.Kernel, L.Name)];
      ++C.N;
      C.Mangled = L.Kernel;
      C.Demangled = L.Name;
    }
    return M;
  };
  auto B = Tally(Baseline), C = Tally(Candidate);
  std::vector<Finding> Out;
  for (const auto &[Key, BC] : B) {
    if (!isTarget(TargetKernels, BC.Mangled, BC.Demangled))
      continue;
    auto It = C.find(Key);
    uint64_t CN = It == C.end() ? 0 : It->second.N;
    if (CN == BC.N)
      continue;
    Finding F;
    F.Kind = FindingKind::LaunchCountChanged;
    F.Kernel = Key;
    F.Message =
        formatv("target kernel {0} launched {1} times in the candidate but {2} "
                "times in the baseline (work moved elsewhere or results "
                "reused between launches?)",
                Key, CN, BC.N)
            .str();
    Out.push_back(std::move(F));
  }
  for (const auto &[Key, CC] : C) {
    if (B.count(Key))
      continue;
    Finding F;
    F.Kind = FindingKind::NewKernel;
    F.Kernel = Key;
    F.Message = formatv("the candidate launches kernel {0} ({1} times) that "
                        "the baseline never launched: work outside the target "
                        "kernels is neither verified nor compared",
                        Key, CC.N)
                    .str();
    Out.push_back(std::move(F));
  }
  return Out;
}

namespace {

using LaunchKey = std::tuple<std::string, uint64_t>; // key name, ordinal

std::map<LaunchKey, uint64_t> hashesOf(const Profile &P,
                                       const detail::KeyNamer &Keys,
                                       const OutputSpec &S) {
  std::map<LaunchKey, uint64_t> M;
  for (const CaptureRecord &C : P.Captures)
    if (C.Arg == S.Arg && kernelMatches(S.Kernel, C.Kernel, C.Name))
      M[{Keys.key(C.Kernel, C.Name), C.KernelOrdinal}] = C.Hash;
  return M;
}

} // namespace

Expected<std::vector<OutputDeterminism>>
checkDeterminism(const Profile &RunA, const Profile &RunB,
                 ArrayRef<OutputSpec> Outputs) {
  detail::KeyNamer Keys(RunA, RunB);
  std::vector<OutputDeterminism> Out;
  for (const OutputSpec &S : Outputs) {
    OutputDeterminism D;
    D.Output = formatv("{0} arg {1}", S.Kernel, S.Arg).str();
    auto A = hashesOf(RunA, Keys, S), B = hashesOf(RunB, Keys, S);
    if (A.empty())
      return createStringError(
          inconvertibleErrorCode(),
          formatv("determinism check: output {0} has no capture in {1}",
                  D.Output, RunA.Path));
    D.Launches = A.size();
    for (const auto &[K, H] : A) {
      auto It = B.find(K);
      if (It == B.end() || It->second != H)
        ++D.DifferingLaunches;
    }
    for (const auto &[K, H] : B)
      if (!A.count(K))
        ++D.DifferingLaunches;
    D.Deterministic = D.DifferingLaunches == 0;
    Out.push_back(std::move(D));
  }
  return Out;
}

std::vector<DeterminismComparison>
compareDeterminism(ArrayRef<OutputDeterminism> Baseline,
                   ArrayRef<OutputDeterminism> Candidate) {
  std::vector<DeterminismComparison> Out;
  for (const OutputDeterminism &B : Baseline) {
    DeterminismComparison D;
    D.Output = B.Output;
    D.BaselineDeterministic = B.Deterministic;
    const OutputDeterminism *C = nullptr;
    for (const OutputDeterminism &X : Candidate)
      if (X.Output == B.Output)
        C = &X;
    D.CandidateDeterministic = C && C->Deterministic;
    D.Regressed = D.BaselineDeterministic && !D.CandidateDeterministic;
    std::string CandText =
        !C ? "candidate not checked"
        : C->Deterministic
            ? "candidate too"
            : formatv("candidate not ({0} of {1} launches differ)",
                      C->DifferingLaunches, C->Launches)
                  .str();
    D.Message = formatv("{0}: baseline {1}, {2}", B.Output,
                        B.Deterministic ? "bitwise deterministic"
                                        : "not bitwise deterministic",
                        CandText)
                    .str();
    Out.push_back(std::move(D));
  }
  return Out;
}

} // namespace verify
} // namespace kloop
