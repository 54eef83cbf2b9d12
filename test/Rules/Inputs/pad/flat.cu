// The tile is also read through a flat pointer: padding would change the offsets that code computes.
#include "cuda.h"
#define TILE 32

__device__ float sum(const float *p, int count) {
  float s = 0.0f;
  for (int i = 0; i < count; ++i)
    s += p[i];
  return s;
}

__global__ void transpose_flat(int n, const float *in, float *out) {
  __shared__ float tile[TILE][TILE];
  tile[threadIdx.y][threadIdx.x] = in[threadIdx.y * n + threadIdx.x];
  __syncthreads();
  const float *flat = (const float *)tile;
  out[threadIdx.y * n + threadIdx.x] = tile[threadIdx.x][threadIdx.y] + flat[threadIdx.x] + sum(&tile[0][0], TILE);
}
