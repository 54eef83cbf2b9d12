// Dot-product loop nests for tile-shared-memory and tile-shared-memory-rb4.
#include <cuda.h>

#define TILE 16

// Fires: the naive matmul, a TILE x TILE block, an early return, a pure dot product over k.
__global__ void naive(int M, int N, int K, const float *__restrict__ A, const float *__restrict__ B,
                      float *__restrict__ C) {
  const int row = blockIdx.y * TILE + threadIdx.y;
  const int col = blockIdx.x * TILE + threadIdx.x;
  if (row >= M || col >= N) return;
  const float *a = A + (size_t)row * K;
  float acc = 0.f;
#pragma unroll 4
  for (int k = 0; k < K; ++k) {
    acc += a[k] * B[(size_t)k * N + col];
  }
  C[(size_t)row * N + col] = acc;
}

// Fires: a template tile, operands in column-then-row order, and a scaled store.
template <int T>
__global__ void templated(int M, int N, int K, float alpha, const float *A, const float *B, float *C) {
  int col = T * blockIdx.x + threadIdx.x;
  int row = T * blockIdx.y + threadIdx.y;
  if (col >= N) return;
  if (row >= M) return;
  float sum = 0;
  for (int k = 0; k < K; k++)
    sum += B[k * N + col] * A[row * K + k];
  C[row * N + col] = alpha * sum;
}

void launch(int M, int N, int K, const float *A, const float *B, float *C) {
  dim3 block(TILE, TILE);
  dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
  naive<<<grid, block>>>(M, N, K, A, B, C);
  templated<TILE><<<grid, block>>>(M, N, K, 2.f, A, B, C);
}
