#include "cuda.h"
__global__ void shift(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] + 1.0f;
}
void run(float *base, int n) {
  float *dst = nullptr;
  cudaMalloc((void **)&dst, n * sizeof(float));
  shift<<<(n + 255) / 256, 256>>>(base, dst, n);
}
