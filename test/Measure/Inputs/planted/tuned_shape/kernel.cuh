// PLANTED (tuned_shape): tuned to the search shape only. Each thread handles one float4, and the
// grid is n / 1024 blocks of 256 threads with no tail: correct only when n is a multiple of 1024,
// as the search shape n = 4194304 is. On the held-out shape n = 1000003 the last 579 elements
// (n - (n / 1024) * 1024) are never written. kloop compare must refuse it on the held-out shape.
#ifndef PLANTED_KERNEL_CUH
#define PLANTED_KERNEL_CUH

#include <cuda_runtime.h>

__global__ void saxpy(int n, float a, const float *x, const float *y, float *out) {
  // PLANTED: assumes n % 1024 == 0; elements past (n / 1024) * 1024 are skipped.
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n / 4) {
    float4 xv = reinterpret_cast<const float4 *>(x)[i];
    float4 yv = reinterpret_cast<const float4 *>(y)[i];
    float4 r;
    r.x = a * xv.x + yv.x;
    r.y = a * xv.y + yv.y;
    r.z = a * xv.z + yv.z;
    r.w = a * xv.w + yv.w;
    reinterpret_cast<float4 *>(out)[i] = r;
  }
}

// Launches saxpy once over n elements; returns the launch error, if any.
inline cudaError_t launch_saxpy(int n, float a, const float *x, const float *y, float *out) {
  int grid = n / 1024; // PLANTED: no block for the tail
  saxpy<<<grid, 256>>>(n, a, x, y, out);
  return cudaGetLastError();
}

#endif // PLANTED_KERNEL_CUH
