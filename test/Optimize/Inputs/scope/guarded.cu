// PROTECTED_TILE comes from a protected header; LOCAL_BLOCK is this source's own.
#include "cuda.h"
#include "tile.h"
#define LOCAL_BLOCK 128

__global__ void stage(int n, const float *x, float *y) {
  __shared__ float t[PROTECTED_TILE];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x < PROTECTED_TILE) t[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (i < n) y[i] = t[0];
}

void launch(int n, const float *x, float *y) {
  stage<<<(n + LOCAL_BLOCK - 1) / LOCAL_BLOCK, LOCAL_BLOCK>>>(n, x, y);
}
