// Baseline kernel of the read-write planted fixture (test/Measure/gpu-readwrite.test): a plain
// gemm, C = alpha * A * B + beta * C, one thread per element of C, summing over k in ascending
// order with fused multiply-adds. It reads C (beta != 0) before writing it. The tunable source.
#ifndef RW_KERNEL_CUH
#define RW_KERNEL_CUH

#include <cuda_runtime.h>

__global__ void gemm(int n, float alpha, const float *a, const float *b, float beta, float *c) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= n || col >= n)
    return;
  float acc = 0.0f;
  for (int k = 0; k < n; ++k)
    acc = fmaf(a[row * n + k], b[k * n + col], acc);
  c[row * n + col] = fmaf(alpha, acc, beta * c[row * n + col]);
}

// Launches gemm once over n x n elements; returns the launch error, if any.
inline cudaError_t launch_gemm(int n, float alpha, const float *a, const float *b, float beta, float *c) {
  dim3 block(16, 16), grid((n + 15) / 16, (n + 15) / 16);
  gemm<<<grid, block>>>(n, alpha, a, b, beta, c);
  return cudaGetLastError();
}

#endif // RW_KERNEL_CUH
