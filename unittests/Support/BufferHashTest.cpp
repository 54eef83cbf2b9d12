//===- BufferHashTest.cpp - the hash of captured device buffers -----------===//
#include "kloop/Support/BufferHash.h"
#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace kloop;

namespace {

uint64_t of(const std::string &S) { return bufferHash(S.data(), S.size()); }

// Values of the independent Python implementation (test/Inputs/buffer_hash.py, run as a script).
TEST(BufferHash, AgreesWithThePythonImplementation) {
  EXPECT_EQ(of(""), 0xb4a7ee98a78dbad5ULL);
  EXPECT_EQ(of("a"), 0x9f9071f2416c22d1ULL);
  EXPECT_EQ(of("foobar"), 0x60a7e207dbcbfd63ULL);
  EXPECT_EQ(of("0123456789abcdef!"), 0x2b2e939cb3f410a9ULL);
}

// libkloop-cupti.so hashes a buffer in 64 MiB pieces; any split gives the whole buffer's hash.
TEST(BufferHash, PiecesGiveTheWholeHash) {
  std::vector<unsigned char> Bytes(1000);
  for (size_t I = 0; I < Bytes.size(); ++I)
    Bytes[I] = (unsigned char)(I * 37 + 11);
  uint64_t Whole = bufferHash(Bytes.data(), Bytes.size());
  for (size_t Cut : {1u, 3u, 7u, 8u, 9u, 500u, 999u}) {
    BufferHash H;
    H.update(Bytes.data(), Cut);
    H.update(Bytes.data() + Cut, Bytes.size() - Cut);
    EXPECT_EQ(H.value(), Whole) << "cut at " << Cut;
  }
}

TEST(BufferHash, FillWithoutTheBytes) {
  for (uint64_t N : {0u, 1u, 8u, 13u, 4096u}) {
    std::vector<unsigned char> Nan(N, 0xFF);
    EXPECT_EQ(bufferHashOfFill(0xFF, N), bufferHash(Nan.data(), N)) << N;
  }
}

// What the verification relies on: a buffer and its length tell it apart. Sign flips of two floats (bit
// 31 of two words; a per-word multiply alone keeps a top-bit difference in the top bit), a trailing zero
// byte, and two swapped elements all change the hash.
TEST(BufferHash, TellsNearBuffersApart) {
  std::vector<float> A(64, 1.5f), B = A;
  B[3] = -B[3];
  B[40] = -B[40];
  EXPECT_NE(bufferHash(A.data(), A.size() * 4), bufferHash(B.data(), B.size() * 4));
  std::vector<uint64_t> W(16, 0), V = W;
  V[2] = 1ULL << 63;
  V[9] = 1ULL << 63;
  EXPECT_NE(bufferHash(W.data(), 128), bufferHash(V.data(), 128));
  EXPECT_NE(of("a"), of(std::string("a\0", 2)));
  std::vector<float> S = {1, 2, 3, 4}, T = {2, 1, 3, 4};
  EXPECT_NE(bufferHash(S.data(), 16), bufferHash(T.data(), 16));
}

} // namespace
