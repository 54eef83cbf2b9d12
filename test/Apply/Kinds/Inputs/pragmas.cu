// Unroll pragmas nvcc reads differently from how they look: one continued onto a second line with a
// backslash (one directive), and a GCC spelling nvcc ignores ("unrecognized GCC pragma").
#include "cuda.h"
__global__ void continued(float *x, int n) {
#pragma unroll \
  4
  for (int i = 0; i < n; ++i) x[i] += 1.0f;
}
__global__ void gcc(float *x, int n) {
#pragma GCC unroll 4
  for (int i = 0; i < n; ++i) x[i] += 1.0f;
}
