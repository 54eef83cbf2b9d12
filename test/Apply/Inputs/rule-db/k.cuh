#pragma once
#include "cuda.h"
#define TILE 16
// x runs over rows: coalesce-thread-index swaps the roles of threadIdx.x and threadIdx.y, which is the
// same kernel only where every launch's block is square.
__global__ void naive(int M, int N, const float *A, float *C) {
  const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < M && y < N)
    C[x * N + y] = 2.0f * A[x * N + y];
}
// tile-shared-memory-rb4 makes each thread compute 4 rows and changes every launch's block to match.
__global__ void mm(int M, int N, int K, const float *__restrict__ A, const float *__restrict__ B,
                   float *__restrict__ C) {
  const int row = blockIdx.y * TILE + threadIdx.y;
  const int col = blockIdx.x * TILE + threadIdx.x;
  if (row >= M || col >= N)
    return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k)
    acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
  C[(size_t)row * N + col] = acc;
}
