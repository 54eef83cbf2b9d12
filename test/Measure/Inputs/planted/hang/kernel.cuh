// PLANTED (hang): the kernel spins forever when n == 1000003 (the held-out shape), on a volatile
// flag that nothing ever sets; at n = 4194304 it is the baseline. kloop compare must report the run
// as timed out (run.timeout_s), kill it, and refuse the candidate without going down itself.
#ifndef PLANTED_KERNEL_CUH
#define PLANTED_KERNEL_CUH

#include <cuda_runtime.h>

__device__ volatile int g_release = 0; // never set

__global__ void saxpy(int n, float a, const float *x, const float *y, float *out) {
  if (n == 1000003) // PLANTED: never returns at the held-out shape
    while (true)
      if (g_release)
        break;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = a * x[i] + y[i];
}

// Launches saxpy once over n elements; returns the launch error, if any.
inline cudaError_t launch_saxpy(int n, float a, const float *x, const float *y, float *out) {
  int grid = (n + 255) / 256;
  saxpy<<<grid, 256>>>(n, a, x, y, out);
  return cudaGetLastError();
}

#endif // PLANTED_KERNEL_CUH
