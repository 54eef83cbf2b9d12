#include "cuda.h"
template <int N> __global__ void k(float *o) { o[0] = N; }
void run_a(float *o) { k<1><<<1, 1>>>(o); }
