// Template kernels: the pattern is one kernel; each instantiation is listed with its mangled name.
// RUN: kloop extract %s --root %S -- %mockcuda | python3 %inputs/summarize.py | FileCheck %s
#include "cuda.h"

template <typename T, int BS>
__global__ void fill(T *out, T v) {
  __shared__ T buf[BS];
  buf[threadIdx.x] = v;
  out[threadIdx.x] = buf[threadIdx.x];
}

void host(float *f, int *i) {
  fill<float, 128><<<1, 128>>>(f, 1.f);
  fill<int, 64><<<1, 64>>>(i, 2);
}
// CHECK: KERNEL fill editable=1
// CHECK-SAME: mangled=_Z4fillIfLi128EEvPT_S0_,_Z4fillIiLi64EEvPT_S0_
// CHECK: TPARAM fill/tparam:T kind=type
// CHECK: TPARAM fill/tparam:BS kind=value
// CHECK: INST fill<float, 128> _Z4fillIfLi128EEvPT_S0_
// CHECK: INST fill<int, 64> _Z4fillIiLi64EEvPT_S0_
// CHECK: SHARED fill/shared:buf dims=BS=- bytes=- dynamic=0
// CHECK: SITES fill template-kernel.cu:host/launch#1,template-kernel.cu:host/launch#2
// CHECK: LAUNCH template-kernel.cu:host/launch#1 kernel=fill via=<<<>>> grid=1=1x1x1 block=128=128x1x1 smem=- stream=- targs=float=-,128=128
// CHECK: CONST fill/tparam:BS kind=template_param
// CHECK: USE fill/tparam:BS array_size fill
