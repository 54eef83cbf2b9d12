// nvcc's host pass never instantiates the body of a device-only function: a __global__ or __device__
// (not __host__) function template, or such a member of a class template. A body that uses an
// overload or a specialization declared only under __CUDA_ARCH__ compiles with nvcc 13.0
// (nvcc-accepts.test), while clang's host side instantiates it and reports an error, here or in a
// header the instantiation reaches (tiny-cuda-nn's grid encodings; CUTLASS's architecture-specific
// Mma specializations in flash_attention_inference). kloop reads clang's instantiation stack at the
// error and reports it as a warning: the unit is ok and nothing is marked. A non-template body is
// checked by nvcc's host pass too, and its error still marks it (-DPLAIN); so is a __host__ __device__
// template that host code instantiates (-DHOST_USE). A __host__ __device__ template that only device code
// asks for (its point of instantiation lies in a device-only body) is not instantiated by nvcc's host
// pass either (uses_both, and through another such template, uses_chain), nor is a kernel template
// that a host function template launches (from_host_template: clang's stack starts at the host
// template). clang instantiates a template once, at its first use: a host use after a device one is
// not seen (docs/nvcc-compat.md).
// RUN: kloop extract %s --root %S -- %mockcuda 2> %t.err | python3 %S/Inputs/status.py | FileCheck %s
// RUN: count 0 < %t.err
// RUN: kloop extract %s --root %S -- %mockcuda -DPLAIN | python3 %S/Inputs/status.py | FileCheck --check-prefix=PLAIN %s
// RUN: kloop extract %s --root %S -- %mockcuda -DHOST_USE | python3 %S/Inputs/status.py | FileCheck --check-prefix=HOST %s
#include "cuda.h"
#include "Inputs/arch-only-ops.h"
struct Half { unsigned short x; };
#if defined(__CUDA_ARCH__)
__device__ void add(Half *d, Half v) { d->x += v.x; }
__device__ void only_dev(float *d) { *d = 0.f; }
#endif
__device__ void add(float *d, float v) { *d += v; }
template <typename T> __device__ void helper(T *g, T v) { add(g, v); }
template <typename T> __global__ void k(T *g, T v) { helper(g + threadIdx.x, v); }
template <int N> __device__ int via_header(int x) { return Tile<N>().get(x); }
template <int N> __global__ void tiles(int *o) { o[threadIdx.x] = via_header<N>(o[threadIdx.x]) + Op<N>::f(1); }
template <int N> struct Member {
  __device__ int run(int x) const { return Op<N>::f(x); }
};
__global__ void members(int *o) { o[threadIdx.x] = Member<4>().run(o[threadIdx.x]); }
#if defined(PLAIN)
__global__ void plain(float *g) { only_dev(g); }
#endif
template <int N> __host__ __device__ int both(int x) { return Op<N>::f(x); }
#if defined(HOST_USE)
int host_value() { return both<4>(2); }
#endif
template <int N> __host__ __device__ int chain(int x) { return both<N>(x) + 1; }
__global__ void uses_both(int *o) { o[threadIdx.x] = both<4>(o[threadIdx.x]); }
__global__ void uses_chain(int *o) { o[threadIdx.x] = chain<4>(o[threadIdx.x]); }
template <int N> __global__ void from_host_template(int *o) { o[threadIdx.x] = Op<N>::f(o[threadIdx.x]); }
template <int N> void launch_from_template(int *o) { from_host_template<N><<<1, 32>>>(o); }
void launch(Half *g, int *o) {
  k<Half><<<1, 32>>>(g, Half{1});
  tiles<4><<<1, 32>>>(o);
  members<<<1, 32>>>(o);
  launch_from_template<4>(o);
}
// CHECK: TU host-unchecked-template-body.cu ok sides=ok/ok
// CHECK: KERNEL k ok editable=1
// CHECK: KERNEL tiles ok editable=1
// CHECK: KERNEL members ok editable=1
// CHECK: KERNEL uses_both ok editable=1
// CHECK: KERNEL uses_chain ok editable=1
// CHECK: KERNEL from_host_template ok editable=1
// CHECK: DEVFN device:helper ok editable=1
// CHECK: DEVFN device:via_header ok editable=1
// PLAIN: TU host-unchecked-template-body.cu partial
// PLAIN: KERNEL plain error editable=0
// PLAIN-NEXT: KERNELERR plain host-unchecked-template-body.cu:{{[0-9]+}}:{{[0-9]+}}: error: use of undeclared identifier 'only_dev' [host]
// HOST: TU host-unchecked-template-body.cu partial
// HOST: TUERR {{.*}}error: implicit instantiation of undefined template 'Op<4>' [host]
