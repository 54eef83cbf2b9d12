#include "cuda.h"
#define TB 4

__global__ void kb(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int j = 0; j < TB; ++j)
    if (i * TB + j < n)
      p[i * TB + j] = 0.f;
}
