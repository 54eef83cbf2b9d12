#include "cuda.h"
#define N 4
#define BODY(name) __global__ void name(float *o, float *i) { for (int k = 0; k < 4; ++k) o[k] = i[k]; }
BODY(inmacro)
__global__ void small(float *o, float *i, float *w) {
  for (int k = 0; k < N; ++k)
    o[k] = i[k];
  for (int k = 0; k < 1000; ++k)
    w[k] = 0;
#pragma unroll 2
  for (int k = 0; k < 8; ++k)
    o[k] += 1;
}
void host(float *a, float *b) {
  small<<<1, 32>>>(a, b, a + 64);
  inmacro<<<1, 32>>>(a, b);
}
