// A class local to a static function, with a constructor of its own, settles nvcc's
// module id from the time even when the function is never called and an external
// definition follows (read off nvcc 13).
// REQUIRES: nvcc
// RUN: %cuda_path/bin/nvcc -arch=sm_90 -cubin -o %t.cubin %s
// RUN: readelf -sW %t.cubin > %t.syms
// RUN: kloop extract --no-cache %s --root %S --cuda-path=%cuda_path -- -std=c++17 > %t.json
// RUN: python3 %inputs/cubin_names.py %t.json %t.syms | FileCheck %s --implicit-check-not=EXTRA
static int unused_helper() {
  struct Counter { int n; Counter() : n(1) {} };
  return sizeof(Counter);
}
static __device__ void twice(float &x) { x *= 2; }
template <void (*F)(float &)> __global__ void apply(float *x) { F(x[0]); }
void launch(float *x) { apply<twice><<<1, 1>>>(x); }
// CHECK: MISSING apply linkage=internal nvcc_known=0
// CHECK: KEYMATCH apply void apply<&twice(float&)>(float*)
