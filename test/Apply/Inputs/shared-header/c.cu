#include "cuda.h"
__global__ void kc(float *p) { p[threadIdx.x] += 1.0f; }
void runc(float *p) { kc<<<1, 64>>>(p); }
