// Two kernels (one a template instantiated by its launch) and two launch sites.
#include <cuda_runtime.h>
#include "alpha_scale.h"

__global__ void scale(float *x, float a) { x[threadIdx.x] *= a; }

template <int B> __global__ void fill(float *x) { x[blockIdx.x * B + threadIdx.x] = 0.0f; }

void run(float *x) {
  scale<<<1, 32>>>(x, ALPHA_SCALE);
  fill<64><<<4, 64>>>(x);
}
