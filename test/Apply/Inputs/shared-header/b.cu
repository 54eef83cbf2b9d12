#include "cuda.h"
#include "common.h"
static_assert(TILE <= 32, "TILE must fit a warp");
__global__ void kb(float *p) { p[threadIdx.x] *= TILE; }
void runb(float *p) { kb<<<1, 64>>>(p); }
