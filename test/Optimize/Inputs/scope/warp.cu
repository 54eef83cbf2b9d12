// A warp reduction: WARP_SIZE is the warp size (a lane index `% WARP_SIZE`, a shuffle width), not a
// tile; it also sizes a shared array, which is a tunable context, so a search by context alone tunes it.
#include "cuda.h"
#define WARP_SIZE 32
#define BLOCK 256

__global__ void reduce(int n, const float *x, float *out) {
  __shared__ float partial[WARP_SIZE];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x % WARP_SIZE;
  float v = i < n ? x[i] : 0.0f;
  for (int off = 16; off > 0; off /= 2)
    v += __shfl_down_sync(0xffffffffu, v, off, WARP_SIZE);
  if (lane == 0) partial[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x == 0) atomicAdd(out, partial[0]);
}

void launch(int n, const float *x, float *out) {
  reduce<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(n, x, out);
}
