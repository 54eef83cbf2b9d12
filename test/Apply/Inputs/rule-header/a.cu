#include "copy.cuh"
void run(float *out, float *in, int n) { copy<<<1, 256>>>(out, in, n); }
