// The kernel, defined here and launched only from use.cu (relocatable device code).
#include "cuda.h"

__global__ void shift(float *dst, const float *src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    dst[i] = src[i] + 1.f;
}
