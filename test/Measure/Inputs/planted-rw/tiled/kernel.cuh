// A correct candidate written differently (test/Measure/gpu-readwrite.test): gemm with 16 x 16 tiles
// of A and B staged in shared memory. Each thread still sums over k in ascending order with fused
// multiply-adds (the zero padding past n adds fmaf(0, 0, acc) = acc), so its C equals the baseline's.
// kloop compare must not refuse it for its outputs.
#ifndef RW_KERNEL_CUH
#define RW_KERNEL_CUH

#include <cuda_runtime.h>

constexpr int Tile = 16;

__global__ void gemm(int n, float alpha, const float *a, const float *b, float beta, float *c) {
  __shared__ float as[Tile][Tile], bs[Tile][Tile];
  int ty = threadIdx.y, tx = threadIdx.x;
  int row = blockIdx.y * Tile + ty, col = blockIdx.x * Tile + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < n; k0 += Tile) {
    as[ty][tx] = row < n && k0 + tx < n ? a[row * n + k0 + tx] : 0.0f;
    bs[ty][tx] = k0 + ty < n && col < n ? b[(k0 + ty) * n + col] : 0.0f;
    __syncthreads();
    for (int kk = 0; kk < Tile; ++kk)
      acc = fmaf(as[ty][kk], bs[kk][tx], acc);
    __syncthreads();
  }
  if (row < n && col < n)
    c[row * n + col] = fmaf(alpha, acc, beta * c[row * n + col]);
}

// Launches gemm once over n x n elements; returns the launch error, if any.
inline cudaError_t launch_gemm(int n, float alpha, const float *a, const float *b, float beta, float *c) {
  dim3 block(Tile, Tile), grid((n + Tile - 1) / Tile, (n + Tile - 1) / Tile);
  gemm<<<grid, block>>>(n, alpha, a, b, beta, c);
  return cudaGetLastError();
}

#endif // RW_KERNEL_CUH
