#include "cuda.h"

#define DEFINE_ZERO(name) \
  __global__ void name(float *p) { p[threadIdx.x] = 0.0f; }
DEFINE_ZERO(zero)

void run_zero(float *p) { zero<<<1, 32>>>(p); }
