// matmul: naive f32 SGEMM, C = A * B (row-major). One thread per element of C, each reading
// a row of A and a column of B straight from global memory (no data reuse through shared
// memory). Compute-bound in principle, bandwidth/latency-bound as written.
// Tunables: TILE (template argument: the block is TILE x TILE threads; __launch_bounds__),
// the unroll factor of the k loop. Structural candidate: shared-memory tiling of A and B
// (each block stages TILE x TILE tiles), register blocking.
#include "matmul.h"

constexpr int TILE = 16;

template <int TILE_DIM>
__global__ void __launch_bounds__(TILE_DIM * TILE_DIM)
    sgemm_naive(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                float* __restrict__ C) {
  const int row = blockIdx.y * TILE_DIM + threadIdx.y;
  const int col = blockIdx.x * TILE_DIM + threadIdx.x;
  if (row >= M || col >= N) return;
  const float* a = A + (size_t)row * K;
  float acc = 0.f;
#pragma unroll 4
  for (int k = 0; k < K; ++k) {
    acc += a[k] * B[(size_t)k * N + col];
  }
  C[(size_t)row * N + col] = acc;
}

void sgemm_launch(int M, int N, int K, const float* A, const float* B, float* C,
                  cudaStream_t stream) {
  dim3 block(TILE, TILE);
  dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
  sgemm_naive<TILE><<<grid, block, 0, stream>>>(M, N, K, A, B, C);
}
