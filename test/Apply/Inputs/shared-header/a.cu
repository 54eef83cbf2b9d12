#include "cuda.h"
#include "common.h"
__global__ void ka(float *p) {
  __shared__ float t[TILE];
  t[threadIdx.x % TILE] = p[threadIdx.x];
  __syncthreads();
  p[threadIdx.x] = t[(threadIdx.x + 1) % TILE];
}
void runa(float *p) { ka<<<1, 128>>>(p); }
