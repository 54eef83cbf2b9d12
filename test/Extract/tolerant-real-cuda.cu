// With the real CUDA 13 headers: an error in host code (a call to an undeclared function) does not
// hide the kernel and launch of the translation unit. (Before the nvcc compatibility layer, host
// max(int, int) was such an error; test/Compat/host-max-min.cu holds that case now.)
// REQUIRES: nvcc
// RUN: kloop extract %s --root %S --cuda-path %cuda_path -- -std=c++17 2> %t.err | python3 %S/Inputs/status.py | FileCheck %s
// RUN: FileCheck --check-prefix=ERR %s < %t.err
#include <cstdio>
__global__ void clamp_one(float *p) { p[threadIdx.x] = fmaxf(p[threadIdx.x], 1.0f); }
int host_max(int a, int b) { return undeclared_max(a, b); }
void run(float *p) { clamp_one<<<1, 32>>>(p); }
// CHECK: TU tolerant-real-cuda.cu partial sides=error/error
// CHECK-NEXT: TUERR tolerant-real-cuda.cu:9:37: error: use of undeclared identifier 'undeclared_max' [device, host]
// CHECK-NEXT: KERNEL clamp_one ok editable=1
// CHECK-NEXT: LAUNCH tolerant-real-cuda.cu:run/launch#1 ok editable=1 kernel=clamp_one
// ERR: kloop extract: warning: tolerant-real-cuda.cu: parsed with errors
