// Launches whose grid and dynamic shared-memory size are compile-time constants, for the range
// checks of set_launch_config and set_constant (test/Apply/launch-limits.test).
#include "cuda.h"
#define GRID_Y 4
#define SMEM 1024
#define STRIDE 2

__global__ void fill(float *out, int n) {
  int i = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
  if (i * STRIDE < n)
    out[i * STRIDE] = 1.f;
}

int main() {
  float *a;
  int n = 1 << 20;
  cudaMalloc((void **)&a, n * sizeof(float));
  fill<<<dim3(8, GRID_Y), 256, SMEM>>>(a, n);
  void *args[] = {&a, &n};
  cudaLaunchKernel((const void *)fill, dim3(16), dim3(256), args, 0, 0);
  cudaFree(a);
  return 0;
}
