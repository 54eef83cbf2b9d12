#include "cuda.h"
// Pointers that reach a launch through locals: dst derives from base through its initializer; other
// is set by cudaMalloc (its address taken), so it is not followed.
__global__ void shift(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] + 1.0f;
}
void run(float *base, int n) {
  float *dst = base + 8;
  float *view = dst;
  shift<<<(n + 255) / 256, 256>>>(base, view, n);
}
