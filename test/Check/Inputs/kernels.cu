#include "cuda.h"

__device__ float twice(float x) { return 2.0f * x; }

__global__ void scale(float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = twice(out[i]);
}

__global__ void sum8(const float *in, float *out) {
  float s = 0.0f;
  for (int k = 0; k < 8; ++k)
    s += in[threadIdx.x * 8 + k];
  out[threadIdx.x] = s;
}

void launch(float *a, float *b, int n) {
  scale<<<n / 256, 256>>>(a, n);
  sum8<<<1, 32>>>(a, b);
}
