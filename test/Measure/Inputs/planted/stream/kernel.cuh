// PLANTED (stream): work moved to another stream. Every call launches the kernel on a non-blocking
// stream that launch_saxpy creates once, and does not wait for it, so the work is not ordered with
// anything on the default stream (where the usual CUDA-event timing looks). The outputs are still right (the harness
// synchronises the device before reading them); kloop compare must refuse it because the target is
// launched on a different stream than in the baseline.
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
  // PLANTED: a side stream, created once, never synchronised here.
  static cudaStream_t side = nullptr;
  if (!side) {
    cudaError_t e = cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
    if (e != cudaSuccess)
      return e;
  }
  cudaStream_t stream = side;
  int grid = (n + 255) / 256;
  saxpy<<<grid, 256, 0, stream>>>(n, a, x, y, out);
  return cudaGetLastError();
}

#endif // PLANTED_KERNEL_CUH
