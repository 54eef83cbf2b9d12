#include "cuda.h"
__global__ void scale(float *out, float *in, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = 2.0f * in[i];
}
