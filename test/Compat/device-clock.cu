// clock() and clock64() called from device code: nvcc accepts them, and so does clang 22 with
// the CUDA 13 headers (__clang_cuda_device_functions.h declares both), so the compatibility
// layer has no entry for them; this test keeps it that way. nvcc-accepts.test compiles this
// file with nvcc.
// REQUIRES: nvcc
// RUN: kloop extract %s --root %S --cuda-path=%cuda_path -- -std=c++17 2> %t.err | python3 %inputs/summarize.py | FileCheck %s
// RUN: count 0 < %t.err
#include <ctime>
__global__ void timed(long long *out) {
  clock_t t0 = clock();
  long long t1 = clock64();
  out[threadIdx.x] = (long long)(clock() - t0) + t1;
}
// CHECK: TU device-clock.cu ok
// CHECK: KERNEL timed editable=1
