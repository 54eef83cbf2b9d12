//===- hash_bench.cpp - the capture hash against FNV-1a 64 -----------------===//
//
// libkloop-cupti.so hashes every captured argument after every target launch, on the launching thread.
// This prints, for one buffer, the throughput of FNV-1a 64 (one multiply per byte, the hash until
// 2026-12-01) and of kloop::BufferHash (one per 8-byte word), measured alternately in one run, and their
// ratio. Usage: kloop-hash-bench [--mib N] [--reps R]   (defaults 256 MiB, 5 repetitions)
//
//===----------------------------------------------------------------------===//
#include "kloop/Support/BufferHash.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

uint64_t fnv1a64(const unsigned char *P, size_t N) {
  uint64_t H = 0xcbf29ce484222325ULL; // FNV-1a 64 offset basis and prime (Fowler, Noll, Vo)
  for (size_t I = 0; I < N; ++I) {
    H ^= P[I];
    H *= 0x100000001b3ULL;
  }
  return H;
}

template <typename F> double seconds(F &&Fn, uint64_t &Sink) {
  auto T0 = std::chrono::steady_clock::now();
  Sink ^= Fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - T0).count();
}

double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  return V[V.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  size_t MiB = 256;
  int Reps = 5;
  for (int I = 1; I + 1 < argc; I += 2) {
    if (!std::strcmp(argv[I], "--mib"))
      MiB = std::strtoul(argv[I + 1], nullptr, 10);
    else if (!std::strcmp(argv[I], "--reps"))
      Reps = std::atoi(argv[I + 1]);
    else {
      std::fprintf(stderr, "kloop-hash-bench: error: unknown option '%s' (--mib N, --reps R)\n", argv[I]);
      return 2;
    }
  }
  if (MiB == 0 || Reps < 1) {
    std::fprintf(stderr, "kloop-hash-bench: error: --mib and --reps must be positive\n");
    return 2;
  }
  std::vector<unsigned char> Buf(MiB << 20);
  for (size_t I = 0; I < Buf.size(); ++I)
    Buf[I] = (unsigned char)(I * 2654435761u >> 13);
  std::vector<double> Fnv, Kloop;
  uint64_t Sink = 0;
  for (int R = 0; R < Reps; ++R) { // alternate, so drift hits both alike
    Fnv.push_back(seconds([&] { return fnv1a64(Buf.data(), Buf.size()); }, Sink));
    Kloop.push_back(seconds([&] { return kloop::bufferHash(Buf.data(), Buf.size()); }, Sink));
  }
  double GB = double(Buf.size()) / 1e9;
  std::printf("buffer: %zu MiB, %d repetitions each, alternated (checksum %016llx)\n", MiB, Reps,
              (unsigned long long)Sink);
  std::printf("fnv1a64:     median %.3f s, %.2f GB/s\n", median(Fnv), GB / median(Fnv));
  std::printf("BufferHash:  median %.3f s, %.2f GB/s\n", median(Kloop), GB / median(Kloop));
  std::printf("ratio (fnv1a64 time / BufferHash time): %.2fx\n", median(Fnv) / median(Kloop));
  return 0;
}
