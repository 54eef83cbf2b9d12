// Loops that are the unbraced body of an `if` and of another loop.
#include "cuda.h"
__global__ void k(float *a, const float *b, int n) {
  float s = 0.f;
  if (n > 8)
    for (int j = 0; j < 8; ++j) s += b[j];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) s += b[i * 4 + j];
  a[threadIdx.x] = s;
}
__global__ void k2(float *a, const float *b, int n) {
  float s = 0.f;
  if (n > 8)
#pragma unroll 2
    for (int j = 0; j < 8; ++j) s += b[j];
  a[threadIdx.x] = s;
}
