//===- compare_bench.cpp - throughput of compareBuffers --------------------===//
//
// The final check compares every captured output dump with the baseline's (kloop::verify::
// compareBuffers), each read first with readDump. This times compareBuffers on two f32 buffers in
// three cases: bitwise equal; every element different in its last mantissa bit, under rel 1e-5 (all
// within); the same pair under exact (all mismatched); and readDump on one dump of the baseline's
// bytes. It prints the median time and the throughput (bytes of one buffer / second) per case.
// Usage: kloop-compare-bench [--mib N] [--reps R]   (defaults 256 MiB, 5 repetitions)
//
//===----------------------------------------------------------------------===//
#include "kloop/Verify/Compare.h"
#include "kloop/Verify/Profile.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace kloop::verify;

namespace {

struct Case {
  const char *Name;
  const std::vector<uint8_t> *Candidate;
  Tolerance Tol;
  std::vector<double> Seconds;
  uint64_t Mismatched = 0;
};

/// Finite normal f32 values of both signs over 2^-20 .. 2^21, none zero: flipping the last mantissa
/// bit moves each by one ulp, a relative change below 2^-22.
std::vector<uint8_t> baselineBuffer(size_t Bytes) {
  std::vector<uint8_t> B(Bytes);
  uint32_t X = 0x2545F491u;
  for (size_t I = 0; I + 4 <= Bytes; I += 4) {
    X ^= X << 13, X ^= X >> 17, X ^= X << 5; // xorshift32 (Marsaglia 2003)
    uint32_t Exp = 107 + (X >> 8) % 41, Bits = (X & 0x80000000u) | (Exp << 23) | (X & 0x7FFFFFu);
    std::memcpy(&B[I], &Bits, 4);
  }
  return B;
}

std::vector<uint8_t> lastBitFlipped(const std::vector<uint8_t> &B) {
  std::vector<uint8_t> C = B;
  for (size_t I = 0; I + 4 <= C.size(); I += 4)
    C[I] ^= 1; // little-endian: the lowest mantissa bit
  return C;
}

double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  return V[V.size() / 2];
}

bool timeOnce(const std::vector<uint8_t> &B, Case &C) {
  auto T0 = std::chrono::steady_clock::now();
  // Poisoned, as kloop's declared outputs are (docs/cupti.md): the poison count is part of the work.
  auto R = compareBuffers(B, *C.Candidate, DType::F32, C.Tol, /*CandidatePoisoned=*/true);
  C.Seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - T0).count());
  if (!R) {
    std::fprintf(stderr, "kloop-compare-bench: error: %s\n", llvm::toString(R.takeError()).c_str());
    return false;
  }
  C.Mismatched = R->Mismatched;
  return true;
}

/// Writes \p B to a temporary dump file and times readDump() (which maps or reads it and checks its
/// hash) on it \p Reps times, the page cache warm; returns the median seconds, or a negative number.
double medianReadDump(const std::vector<uint8_t> &B, int Reps) {
  llvm::SmallString<128> Path;
  int FD;
  if (llvm::sys::fs::createTemporaryFile("kloop-compare-bench", "bin", FD, Path))
    return -1;
  {
    llvm::raw_fd_ostream OS(FD, /*shouldClose=*/true);
    OS.write(reinterpret_cast<const char *>(B.data()), B.size());
  }
  CaptureRecord C;
  C.DumpPath = std::string(Path);
  C.Bytes = B.size();
  C.Hash = bufferHashOf(B);
  std::vector<double> Seconds;
  for (int R = 0; R < Reps + 1; ++R) { // the first read fills the page cache; not counted
    auto T0 = std::chrono::steady_clock::now();
    auto Dump = readDump(C);
    double S = std::chrono::duration<double>(std::chrono::steady_clock::now() - T0).count();
    if (!Dump) {
      std::fprintf(stderr, "kloop-compare-bench: error: %s\n", llvm::toString(Dump.takeError()).c_str());
      break;
    }
    if (R > 0)
      Seconds.push_back(S);
  }
  llvm::sys::fs::remove(Path);
  return Seconds.size() == size_t(Reps) ? median(Seconds) : -1;
}

/// Reads --mib and --reps; prints the error and returns false on a bad option.
bool parseArgs(int argc, char **argv, size_t &MiB, int &Reps) {
  for (int I = 1; I < argc; I += 2) {
    bool Known = !std::strcmp(argv[I], "--mib") || !std::strcmp(argv[I], "--reps");
    if (!Known || I + 1 == argc) {
      std::fprintf(stderr, "kloop-compare-bench: error: %s '%s' (--mib N, --reps R)\n",
                   Known ? "missing value for" : "unknown option", argv[I]);
      return false;
    }
    if (!std::strcmp(argv[I], "--mib"))
      MiB = std::strtoul(argv[I + 1], nullptr, 10);
    else
      Reps = std::atoi(argv[I + 1]);
  }
  if (MiB == 0 || Reps < 1) {
    std::fprintf(stderr, "kloop-compare-bench: error: --mib and --reps must be positive\n");
    return false;
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  size_t MiB = 256;
  int Reps = 5;
  if (!parseArgs(argc, argv, MiB, Reps))
    return 2;
  std::vector<uint8_t> B = baselineBuffer(MiB << 20), Equal = B, Near = lastBitFlipped(B);
  Case Cases[] = {{"equal", &Equal, {ToleranceKind::Rel, 1e-5}, {}},
                  {"last-bit, rel 1e-5", &Near, {ToleranceKind::Rel, 1e-5}, {}},
                  {"last-bit, exact", &Near, {ToleranceKind::Exact, 0}, {}}};
  for (int R = 0; R < Reps; ++R) // alternate, so drift hits every case alike
    for (Case &C : Cases)
      if (!timeOnce(B, C))
        return 1;
  double ReadDump = medianReadDump(B, Reps);
  if (ReadDump < 0)
    return 1;
  uint64_t Elements = B.size() / 4;
  std::printf("buffers: %zu MiB f32 (%llu elements), %d repetitions per case, alternated\n", MiB,
              (unsigned long long)Elements, Reps);
  for (const Case &C : Cases)
    std::printf("%-19s median %.4f s, %.2f GB/s (%llu of %llu mismatched)\n",
                (std::string(C.Name) + ":").c_str(), median(C.Seconds),
                double(B.size()) / 1e9 / median(C.Seconds), (unsigned long long)C.Mismatched,
                (unsigned long long)Elements);
  std::printf("%-19s median %.4f s, %.2f GB/s (one dump of the baseline's bytes)\n", "readDump:",
              ReadDump, double(B.size()) / 1e9 / ReadDump);
  return 0;
}
