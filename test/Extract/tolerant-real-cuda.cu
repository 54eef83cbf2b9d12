// With the real CUDA 13 headers: host code calling an unqualified max(int, int), which nvcc makes
// visible and clang rejects, no longer hides the kernel and launch of the translation unit.
// REQUIRES: nvcc
// RUN: kloop extract %s --root %S --cuda-path %cuda_path -- -std=c++17 2> %t.err | python3 %S/Inputs/status.py | FileCheck %s
// RUN: FileCheck --check-prefix=ERR %s < %t.err
#include <cstdio>
__global__ void clamp_one(float *p) { p[threadIdx.x] = fmaxf(p[threadIdx.x], 1.0f); }
int host_max(int a, int b) { return max(a, b); }
void run(float *p) { clamp_one<<<1, 32>>>(p); }
// CHECK: TU tolerant-real-cuda.cu partial sides=error/error
// CHECK-NEXT: TUERR tolerant-real-cuda.cu:8:37: error: no matching function for call to 'max' [device, host]
// CHECK-NEXT: KERNEL clamp_one ok editable=1
// CHECK-NEXT: LAUNCH tolerant-real-cuda.cu:run/launch#1 ok editable=1 kernel=clamp_one
// ERR: kloop extract: warning: tolerant-real-cuda.cu: parsed with errors
