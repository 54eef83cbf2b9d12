#include "cuda.h"
#define TC 4

__global__ void kc(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int j = 0; j < TC; ++j)
    if (i * TC + j < n)
      p[i * TC + j] = 0.f;
}
