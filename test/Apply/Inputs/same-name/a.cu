#include "cuda.h"
#include "common.cuh"
__global__ void k(float *o, int n) { for (int i = 0; i < n; ++i) o[i] = 1.f; }
void run_a(float *o) { k<<<1, 1>>>(o, 4); shared_k<<<1, 1>>>(o, 4); }
