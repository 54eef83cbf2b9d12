// PLANTED (cached): results cached between launches. The last block of a launch to finish records
// its output pointer in a __device__ table; a later launch on a recorded buffer returns at once,
// trusting that out still holds the result. With rotated buffers, every launch after the first pass
// over the buffer sets is a no-op. kloop compare must refuse it: the poison written before each
// launch stays in the output of the cached launches.
#ifndef PLANTED_KERNEL_CUH
#define PLANTED_KERNEL_CUH

#include <cuda_runtime.h>

#define PLANTED_CACHE_SLOTS 64
__device__ const float *g_cached_out[PLANTED_CACHE_SLOTS]; // outputs already computed
__device__ unsigned g_cached_count;                         // entries used in g_cached_out
__device__ unsigned g_blocks_done;                          // blocks finished in this launch

__global__ void saxpy(int n, float a, const float *x, const float *y, float *out) {
  // PLANTED: skip the work when this output buffer was computed by an earlier launch. The table only
  // changes at the very end of a launch (after every block of it has looked), so all blocks of a
  // launch agree.
  __shared__ bool cached;
  if (threadIdx.x == 0) {
    cached = false;
    unsigned c = *(volatile unsigned *)&g_cached_count;
    for (unsigned k = 0; k < c && k < PLANTED_CACHE_SLOTS; ++k)
      if (((const float *volatile *)g_cached_out)[k] == out)
        cached = true;
  }
  __syncthreads();
  if (cached)
    return;

  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = a * x[i] + y[i];

  // PLANTED: the last block to finish records out as computed.
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    unsigned done = atomicAdd(&g_blocks_done, 1u);
    if (done == gridDim.x - 1) {
      g_blocks_done = 0;
      unsigned c = g_cached_count;
      if (c < PLANTED_CACHE_SLOTS) {
        g_cached_out[c] = out;
        __threadfence();
        g_cached_count = c + 1;
      }
    }
  }
}

// Launches saxpy once over n elements; returns the launch error, if any.
inline cudaError_t launch_saxpy(int n, float a, const float *x, const float *y, float *out) {
  int grid = (n + 255) / 256;
  saxpy<<<grid, 256>>>(n, a, x, y, out);
  return cudaGetLastError();
}

#endif // PLANTED_KERNEL_CUH
