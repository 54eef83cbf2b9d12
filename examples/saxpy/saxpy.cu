// saxpy: out = a * x + y over n floats. Memory-bound: 12 bytes of DRAM traffic per 2 flops.
// The naive version: one element per thread per grid-stride step, no vectorized loads.
// Tunables: BLOCK_SIZE (threads per block, also the __launch_bounds__), MAX_BLOCKS (grid cap
// of the grid-stride loop).
#include "saxpy.h"

#define BLOCK_SIZE 256
#define MAX_BLOCKS 65535

__global__ void __launch_bounds__(BLOCK_SIZE)
    saxpy(int n, float a, const float* __restrict__ x, const float* __restrict__ y,
          float* __restrict__ out) {
  const int stride = blockDim.x * gridDim.x;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = a * x[i] + y[i];
  }
}

void saxpy_launch(int n, float a, const float* x, const float* y, float* out,
                  cudaStream_t stream) {
  int blocks = (n + BLOCK_SIZE - 1) / BLOCK_SIZE;
  if (blocks > MAX_BLOCKS) blocks = MAX_BLOCKS;
  dim3 grid(blocks);
  dim3 block(BLOCK_SIZE);
  saxpy<<<grid, block, 0, stream>>>(n, a, x, y, out);
}
