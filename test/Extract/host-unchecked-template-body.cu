// nvcc's host pass never instantiates the body of a device-only template (a __global__ or __device__
// function template): a template that calls an overload declared only under __CUDA_ARCH__ compiles
// with nvcc 13.0, while clang's host side reports "no matching function". Such a host-side error does
// not mark the kernel or the device function (found in tiny-cuda-nn's grid encodings, whose backward
// kernels could not be edited). A non-template body is checked by nvcc's host pass too, and its error
// still marks it.
// RUN: kloop extract %s --root %S -- %mockcuda | python3 %S/Inputs/status.py | FileCheck %s
#include "cuda.h"
struct Half { unsigned short x; };
#if defined(__CUDA_ARCH__)
__device__ void add(Half *d, Half v) { d->x += v.x; }
__device__ void only_dev(float *d) { *d = 0.f; }
#endif
__device__ void add(float *d, float v) { *d += v; }
template <typename T> __device__ void helper(T *g, T v) { add(g, v); }
template <typename T> __global__ void k(T *g, T v) { helper(g + threadIdx.x, v); }
__global__ void plain(float *g) { only_dev(g); }
void launch(Half *g, float *f) {
  k<Half><<<1, 32>>>(g, Half{1});
  plain<<<1, 32>>>(f);
}
// CHECK: KERNEL k ok editable=1
// CHECK: KERNEL plain error editable=0
// CHECK-NEXT: KERNELERR plain host-unchecked-template-body.cu:17:{{[0-9]+}}: error: use of undeclared identifier 'only_dev' [host]
// CHECK: DEVFN device:helper ok editable=1
