#include "cuda.h"
#define TILE 4

__global__ void saxpy(float *out, const float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;  // guard
  float s = 0.f;
  for (int j = 0; j < TILE; ++j) {
    float v = x[i * TILE + j];
    s += a * v /* scaled */ ;
  }
  out[i] = s;
}

__global__ void inc(float *acc, int n) {
#pragma unroll 2
  for (int j = 0; j < 8; ++j)
    acc[j] += 1.f;
}

int main() {
  float *a, *b;
  cudaMalloc((void **)&a, 1024 * sizeof(float));
  cudaMalloc((void **)&b, 1024 * sizeof(float));
  saxpy<<<4, 256>>>(a, b, 2.f, 1024);
  inc<<<1, 32>>>(a, 8);
  return 0;
}
