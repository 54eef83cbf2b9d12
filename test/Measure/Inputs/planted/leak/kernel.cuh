// PLANTED (leak): a memory leak. launch_saxpy cudaMalloc()s a 1 MiB scratch buffer on every call and
// never frees it; the results are otherwise right. kloop compare must refuse it because it leaks
// device memory.
#ifndef PLANTED_KERNEL_CUH
#define PLANTED_KERNEL_CUH

#include <cuda_runtime.h>

__global__ void saxpy(int n, float a, const float *x, const float *y, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = a * x[i] + y[i];
}

// Launches saxpy once over n elements; returns the launch error, if any.
inline cudaError_t launch_saxpy(int n, float a, const float *x, const float *y, float *out) {
  // PLANTED: 1 MiB allocated per call, never freed.
  void *scratch = nullptr;
  cudaError_t e = cudaMalloc(&scratch, size_t(1) << 20);
  if (e != cudaSuccess)
    return e;
  int grid = (n + 255) / 256;
  saxpy<<<grid, 256>>>(n, a, x, y, out);
  return cudaGetLastError();
}

#endif // PLANTED_KERNEL_CUH
