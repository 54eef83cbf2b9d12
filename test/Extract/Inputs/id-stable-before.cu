#include "cuda.h"
#define BLOCK 128
__global__ void other(float *p) { for (int i = 0; i < 4; ++i) p[i] = 0.f; }
__global__ void target(float *out, const float *in) {
  __shared__ float s[BLOCK];
  for (int i = 0; i < 8; ++i) {
    s[i] = in[i];
    for (int j = 0; j < 2; ++j) out[j] = s[j];
  }
}
void host(float *o, const float *i) { target<<<1, BLOCK>>>(o, i); }
