// Three kernels; the workload (.kloop.yaml) targets only `hot`. Each kernel has its own block-size
// constant, tile constant and constant-trip loop, so a search over the whole file would tune all three.
#include "cuda.h"
#define HOT_BLOCK 128
#define COLD_BLOCK 128
#define SPARE_BLOCK 128
#define HOT_TILE 16
#define COLD_TILE 16
#define SPARE_TILE 16
#define HELPER_STEPS 4

__device__ float helper(const float *x, int i) {
  float s = 0.0f;
  for (int k = 0; k < HELPER_STEPS; ++k)
    s += x[i + k];
  return s;
}

__global__ void hot(int n, float *x, float *y) {
  __shared__ float t[HOT_TILE];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < 4; ++k)
    t[k] = 0.0f;
  if (i < n) y[i] = helper(x, i) + t[0];
}

__global__ void cold(int n, float *x, float *y) {
  __shared__ float t[COLD_TILE];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < 4; ++k)
    t[k] = 1.0f;
  if (i < n) y[i] = x[i] + t[0];
}

__global__ void spare(int n, float *x, float *y) {
  __shared__ float t[SPARE_TILE];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < 8; ++k)
    t[k] = 2.0f;
  if (i < n) y[i] = x[i] * t[0];
}

void launch(int n, float *x, float *y) {
  hot<<<(n + HOT_BLOCK - 1) / HOT_BLOCK, HOT_BLOCK>>>(n, x, y);
  cold<<<(n + COLD_BLOCK - 1) / COLD_BLOCK, COLD_BLOCK>>>(n, x, y);
  spare<<<(n + SPARE_BLOCK - 1) / SPARE_BLOCK, SPARE_BLOCK>>>(n, x, y);
}
