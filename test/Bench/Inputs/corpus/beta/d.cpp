// A .cpp file compiled as CUDA (nvcc -x cu): a CUDA translation unit.
#include <cuda_runtime.h>

__global__ void twice(double *x) { x[threadIdx.x] *= 2.0; }

void run_twice(double *x) { twice<<<1, 32>>>(x); }
