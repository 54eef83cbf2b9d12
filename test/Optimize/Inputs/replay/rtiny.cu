#include "cuda.h"
#define BLOCK 128
#define SCALE 2

__global__ void saxpy(int n, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = SCALE * x[i];
}

void launch(int n, const float* x, float* y) {
  saxpy<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(n, x, y);
}
