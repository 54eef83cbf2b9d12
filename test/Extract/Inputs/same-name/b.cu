#include "cuda.h"
template <int N> __global__ void k(float *o, int n) { o[n] = N; }
void run_b(float *o) { k<1><<<1, 1>>>(o, 4); }
