// Launches shift, defined in def.cu, with overlapping pointers.
#include "cuda.h"

__global__ void shift(float *dst, const float *src, int n);

int main() {
  float *b;
  int n = 1 << 20;
  cudaMalloc((void **)&b, (n + 8) * sizeof(float));
  shift<<<n / 256, 256>>>(b + 8, b, n);
  cudaFree(b);
  return 0;
}
