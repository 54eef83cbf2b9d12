//===- kloop/Support/BufferHash.h - The hash of a captured device buffer --===//
///
/// \file
/// The 64-bit hash libkloop-cupti.so writes for every captured kernel
/// argument ("captures[].hash", docs/cupti.md) and kloopVerify checks dumps
/// and poison patterns against (docs/verify.md). Header-only and free of
/// LLVM, so the CUPTI library, kloop and CUDA test programs share this one
/// definition.
///
/// It replaced FNV-1a 64, which takes one multiply per byte: on the H200
/// machine a capture run of the bundled transpose (22 launches, 2 x 64 MiB
/// arguments each) spent 5.1 s of CPU hashing against a 1.36 s run without
/// capture (docs/results.md, ninth session). This one takes a multiply per
/// 8-byte word: 6.4x FNV-1a's throughput in a Release build, 2.0x at -O0
/// (bench/hash, docs/results.md).
///
/// Definition (kloop's own; the multipliers are 2^64 / golden ratio and the
/// two constants of splitmix64's finalizer, Steele, Lea and Flood, "Fast
/// splittable pseudorandom number generators", OOPSLA 2014):
///   h = Seed
///   for each little-endian 8-byte word w of the bytes, the last one
///   zero-padded: h = (rotl(h, 23) ^ (w * M2)) * M1
///   h ^= number of bytes
///   h ^= h >> 30; h *= M2; h ^= h >> 27; h *= M3; h ^= h >> 31
/// Not cryptographic: it tells buffers apart, it does not resist a forger.
/// test/Measure/Inputs/cmp/fake_capture_workload.py has a second, independent
/// implementation; unittests/Support/BufferHashTest.cpp checks both agree.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_SUPPORT_BUFFERHASH_H
#define KLOOP_SUPPORT_BUFFERHASH_H

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace kloop {

/// Streaming BufferHash: update() with the bytes in any number of pieces,
/// then value(). The pieces need not be multiples of 8 bytes.
class BufferHash {
public:
  static constexpr uint64_t Seed = 0x6b6c6f6f70686173ULL; // "kloophas"
  static constexpr uint64_t M1 = 0x9E3779B97F4A7C15ULL;
  static constexpr uint64_t M2 = 0xBF58476D1CE4E5B9ULL;
  static constexpr uint64_t M3 = 0x94D049BB133111EBULL;

  /// Hashes \p Size more bytes at \p Data.
  void update(const void *Data, size_t Size) {
    const unsigned char *P = static_cast<const unsigned char *>(Data);
    Total += Size;
    while (Size > 0 && Pending > 0) { // complete a word begun by the previous piece
      Partial[Pending++] = *P++;
      --Size;
      if (Pending == 8) {
        word(load(Partial));
        Pending = 0;
      }
    }
    for (; Size >= 8; P += 8, Size -= 8)
      word(load(P));
    for (; Size > 0; --Size)
      Partial[Pending++] = *P++;
  }

  /// The hash of every byte given so far (the object can go on being updated).
  uint64_t value() const {
    uint64_t X = H;
    if (Pending) {
      unsigned char Last[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      std::memcpy(Last, Partial, Pending);
      X = step(X, load(Last));
    }
    X ^= Total;
    X ^= X >> 30;
    X *= M2;
    X ^= X >> 27;
    X *= M3;
    X ^= X >> 31;
    return X;
  }

private:
  uint64_t H = Seed;
  uint64_t Total = 0;
  unsigned char Partial[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  unsigned Pending = 0;

  /// The little-endian word at \p P, on any host.
  static uint64_t load(const unsigned char *P) {
    uint64_t W = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    std::memcpy(&W, P, 8); // one load, also without optimization
#else
    for (int I = 7; I >= 0; --I)
      W = (W << 8) | P[I];
#endif
    return W;
  }
  static uint64_t step(uint64_t X, uint64_t W) { return (((X << 23) | (X >> 41)) ^ (W * M2)) * M1; }
  void word(uint64_t W) { H = step(H, W); }
};

/// The BufferHash of \p Size bytes at \p Data.
inline uint64_t bufferHash(const void *Data, size_t Size) {
  BufferHash B;
  B.update(Data, Size);
  return B.value();
}

/// The BufferHash of \p Size bytes all equal to \p Byte (a poisoned buffer), without the bytes.
inline uint64_t bufferHashOfFill(unsigned char Byte, uint64_t Size) {
  unsigned char Word[8];
  std::memset(Word, Byte, 8);
  BufferHash B;
  for (uint64_t Left = Size; Left > 0;) {
    size_t N = Left < 8 ? size_t(Left) : 8;
    B.update(Word, N);
    Left -= N;
  }
  return B.value();
}

} // namespace kloop

#endif
