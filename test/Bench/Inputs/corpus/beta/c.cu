// Builds only with the database's -DVAL=3, which every side must receive; compiled with -rdc=true.
#include <cuda_runtime.h>
#ifndef VAL
#error "VAL is not defined"
#endif

namespace nb {
// With -rdc=true nvcc gives this device function a .text section of its own: not a kernel.
__device__ __noinline__ int bump(int v) { return v + VAL; }
__global__ void add(int *x) { x[threadIdx.x] = bump(x[threadIdx.x]); }
}

void run_add(int *x) { nb::add<<<1, 32>>>(x); }
