// Launches shift, defined in def.cu, with overlapping pointers; its declaration names the
// parameters the other way round (dst is called src here, and src dst).
#include "cuda.h"

__global__ void shift(float *src, const float *dst, int n);

int main() {
  float *b, *c;
  int n = 1 << 20;
  cudaMalloc((void **)&b, (n + 8) * sizeof(float));
  shift<<<n / 256, 256>>>(b + 8, b, n);
  cudaFree(b);
  return 0;
}
