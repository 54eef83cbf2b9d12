// nvcc's device front end reads a macro that expands to `#pragma unroll` as the directive
// (moderngpu's PRAGMA_UNROLL in meta.hxx); clang 22 sees a `#` in an expression: "expected
// expression", and the kernel was an error with no loops. kloop's file system rewrites such a
// body to `__kloop_unroll` (same length; the compatibility header defines it as
// `_Pragma("unroll")`), so the loop is listed with its unroll pragma. A function-like macro and
// `#pragma unroll 4` in a macro are left alone (the second kernel keeps its own directive).
// nvcc-accepts.test compiles this file with nvcc.
// REQUIRES: nvcc
// RUN: kloop extract %s --root %S --cuda-path=%cuda_path -- -std=c++17 2> %t.err | python3 %inputs/summarize.py | FileCheck %s
// RUN: count 0 < %t.err
#ifdef __CUDA_ARCH__
  #define PRAGMA_UNROLL #pragma unroll
#else
  #define PRAGMA_UNROLL
#endif
__global__ void k(float *out, int n) {
  float s = 0.f;
  PRAGMA_UNROLL
  for (int i = 0; i < 8; ++i) s += out[i];
  out[threadIdx.x] = s;
}
__global__ void direct(float *out) {
  float s = 0.f;
#pragma unroll 4
  for (int i = 0; i < 8; ++i) s += out[i];
  out[threadIdx.x] = s;
}
// CHECK: TU pragma-unroll-macro.cu ok
// CHECK: KERNEL k editable=1
// CHECK: LOOP k/loop#1 kind=for depth=0 parent=- unroll=full trip=8
// CHECK: KERNEL direct editable=1
// CHECK: LOOP direct/loop#1 kind=for depth=0 parent=- unroll=4 trip=8
