// PLANTED (precision): precision lowered. The kernel converts a, x and y to __half, computes in
// half precision and converts back: relative errors around 1e-3, far beyond the 1e-6 relative
// tolerance of the output. kloop compare must refuse it: elements outside rel 1e-06.
#ifndef PLANTED_KERNEL_CUH
#define PLANTED_KERNEL_CUH

#include <cuda_fp16.h>
#include <cuda_runtime.h>

__global__ void saxpy(int n, float a, const float *x, const float *y, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) // PLANTED: computed in half precision
    out[i] = __half2float(__hfma(__float2half(a), __float2half(x[i]), __float2half(y[i])));
}

// Launches saxpy once over n elements; returns the launch error, if any.
inline cudaError_t launch_saxpy(int n, float a, const float *x, const float *y, float *out) {
  int grid = (n + 255) / 256;
  saxpy<<<grid, 256>>>(n, a, x, y, out);
  return cudaGetLastError();
}

#endif // PLANTED_KERNEL_CUH
