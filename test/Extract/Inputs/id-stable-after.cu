// A comment added at the top, the file reformatted, another kernel edited
// (its loop unrolled and a new loop added), and a new host function before.
#include "cuda.h"

#define BLOCK 128

__global__ void other(float *p) {
#pragma unroll 2
  for (int i = 0; i < 4; ++i) { p[i] = 0.f; }
  for (int k = 0; k < 2; ++k) p[k] += 1.f;
}

void unrelated() {}

/* the kernel under study */
__global__ void target(float *out,
                       const float *in) {
  __shared__ float s[BLOCK];   // staging
  for (int i = 0; i < 8; ++i)
  {
    s[i] = in[i];
    for (int j = 0; j < 2; ++j)
      out[j] = s[j];
  }
}

void host(float *o, const float *i) {
  target<<<1, BLOCK>>>(o, i);
}
