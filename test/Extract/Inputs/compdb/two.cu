#include "cuda.h"
__global__ void xc_kernel(int *p) { auto f = [] __device__ (int x) { return x; }; p[0] = f(1); }
