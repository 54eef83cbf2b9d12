#include "cuda.h"
#define TA 4

__global__ void ka(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int j = 0; j < TA; ++j)
    if (i * TA + j < n)
      p[i * TA + j] = 0.f;
}
