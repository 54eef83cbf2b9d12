// PLANTED (partial): the kernel writes only the first half of the output (i < n / 2).
// kloop compare must refuse it: the second half of the output is still poison after each launch.
#ifndef PLANTED_KERNEL_CUH
#define PLANTED_KERNEL_CUH

#include <cuda_runtime.h>

__global__ void saxpy(int n, float a, const float *x, const float *y, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n / 2) // PLANTED: half of the elements are never written
    out[i] = a * x[i] + y[i];
}

// Launches saxpy once over n elements; returns the launch error, if any.
inline cudaError_t launch_saxpy(int n, float a, const float *x, const float *y, float *out) {
  int grid = (n + 255) / 256;
  saxpy<<<grid, 256>>>(n, a, x, y, out);
  return cudaGetLastError();
}

#endif // PLANTED_KERNEL_CUH
