#include "cuda.h"
#define BLOCK 256
#define TILE 4

__global__ void scale(float *out, float *in, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int j = 0; j < TILE; ++j) {
    if (i * TILE + j < n)
      out[i * TILE + j] = a * in[i * TILE + j];
  }
}

__global__ void __launch_bounds__(256) accum(float *acc, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll 2
  for (int j = 0; j < 8; ++j)
    acc[i] += x[i + j];
}

int main() {
  float *a, *b;
  int n = 1 << 20;
  cudaMalloc((void **)&a, n * sizeof(float));
  cudaMalloc((void **)&b, n * sizeof(float));
  scale<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(a, b, 2.f, n);
  accum<<<n / 256, 256>>>(a, b, n);
  accum<<<n / 256, 128>>>(b, b + 8, n);
  cudaFree(a);
  return 0;
}
