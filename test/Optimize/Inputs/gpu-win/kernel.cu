// The tunable source of test/Optimize/gpu-canary-recheck.test: a saxpy that is slow by design. Every
// thread sleeps 32768 / BLOCK ns before its element (__nanosleep, sm_70+), so raising BLOCK (the fixed
// proposal sets it to 256) makes a real, large win with outputs identical to the baseline's. Included by
// main.cu, which the test makes from test/Measure/Inputs/planted/base/main.cu.
#ifndef GPU_WIN_KERNEL_CU
#define GPU_WIN_KERNEL_CU

#include <cuda_runtime.h>

#define BLOCK 32

__global__ void saxpy(int n, float a, const float *x, const float *y, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  __nanosleep(32768 / BLOCK);
  if (i < n)
    out[i] = a * x[i] + y[i];
}

// Launches saxpy once over n elements; returns the launch error, if any.
inline cudaError_t launch_saxpy(int n, float a, const float *x, const float *y, float *out) {
  int grid = (n + 255) / 256;
  saxpy<<<grid, 256>>>(n, a, x, y, out);
  return cudaGetLastError();
}

#endif // GPU_WIN_KERNEL_CU
