#include <cuda_runtime.h>
__global__ void add(float *o, const float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < 4; ++k)
    if (i * 4 + k < n)
      o[i * 4 + k] += a[i * 4 + k];
}
void run(float *o, const float *a, int n) { add<<<(n + 1023) / 1024, 256>>>(o, a, n); }
