// Nothing here for the elementwise rules: the loop steps by 2 elements per thread (a non-unit stride).
#include <cuda.h>

__global__ void pairs(int n, const float *__restrict__ x, float *__restrict__ out) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    out[i] = x[2 * i] + x[2 * i + 1];
  }
}

void run(int n, const float *x, float *out) { pairs<<<(n + 255) / 256, 256>>>(n, x, out); }
