#include "cuda.h"
#include "../common.cuh"
__global__ void k(float *o, const float *x, int n) { for (int i = 0; i < n; ++i) o[i] = x[i]; }
void run_b(float *o, const float *x) { k<<<1, 1>>>(o, x, 4); shared_k<<<1, 1>>>(o, 4); }
