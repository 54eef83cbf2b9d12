// Listed twice with commands that differ only in the output file.
#include "cuda.h"
__global__ void same_k(float *p) { p[threadIdx.x] = 1.f; }
