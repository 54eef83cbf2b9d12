// The kernels of the alias check's tests (alias_unseen.cu, alias_launchers.cu).
#include "cuda.h"
__global__ void accum(const float *a, float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] += a[i];
}
template <int B> __global__ void taccum(const float *a, float *b, int n) {
  int i = blockIdx.x * B + threadIdx.x;
  if (i < n) b[i] += a[i];
}
