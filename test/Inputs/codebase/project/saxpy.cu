#include "cuda.h"
#define BLOCK 128

__global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void saxpy_small(int n, float *y) {
  if (threadIdx.x < n) y[threadIdx.x] = 0.0f;
}

void run_saxpy(int n, float a, const float *x, float *y) {
  saxpy<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(n, a, x, y);
  saxpy_small<<<1, 32>>>(n, y);
}
