// A kernel in a header that two units read.
#include "cuda.h"
__global__ void copy(float *out, float *in, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = in[i];
}
