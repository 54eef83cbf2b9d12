#include "cuda.h"
#include "no-such-header.cuh"
__global__ void lost(float *o, const float *x) { o[threadIdx.x] = x[threadIdx.x]; }
