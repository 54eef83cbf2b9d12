#include "cuda.h"
#define BLOCK 4
#define MAX_BLOCKS 65535

__global__ void saxpy(int n, float a, const float* x, float* y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    y[i] = a * x[i] + y[i];
}

void launch(int n, float a, const float* x, float* y) {
  int blocks = (n + BLOCK - 1) / BLOCK;
  if (blocks > MAX_BLOCKS)
    blocks = MAX_BLOCKS;
  saxpy<<<blocks, BLOCK>>>(n, a, x, y);
}
