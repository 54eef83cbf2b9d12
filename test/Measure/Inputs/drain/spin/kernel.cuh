// A kernel that never returns (test/Measure/gpu-drain.test): every thread spins on a volatile flag
// that nothing sets. kloop compare must kill the run at run.timeout_s and wait until NVML no longer
// lists the killed process and the GPU is idle before anything else runs (issue 17, item 1).
#ifndef PLANTED_KERNEL_CUH
#define PLANTED_KERNEL_CUH

#include <cuda_runtime.h>

__device__ volatile int g_release = 0; // never set

__global__ void saxpy(int n, float a, const float *x, const float *y, float *out) {
  while (!g_release)
    ;
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
