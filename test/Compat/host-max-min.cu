// nvcc makes max/min (and umax, llmax, ...) callable from host code of .cu files
// (crt/math_functions.hpp); clang 22 has only __device__ ones, and its device pass parses host
// functions too. Without the compatibility layer both sides fail: "no matching function for
// call to 'min'". nvcc-accepts.test compiles this file with nvcc.
// REQUIRES: nvcc
// RUN: kloop extract %s --root %S --cuda-path=%cuda_path -- -std=c++17 2> %t.err | python3 %inputs/summarize.py | FileCheck %s
// RUN: count 0 < %t.err
int host_clamp(int a, int lo, int hi) { return max(lo, min(a, hi)); }
float host_fmax(float a, float b) { return max(a, b); }
unsigned long long host_wide(long long a, unsigned long long b) { return max(a, b) + ullmin(b, 1ull); }
__global__ void clamp_kernel(int *p, int hi) { p[threadIdx.x] = min(p[threadIdx.x], hi); }
void launch(int *p) { clamp_kernel<<<1, 32>>>(p, host_clamp(7, 0, 5)); }
// CHECK: TU host-max-min.cu ok
// CHECK: KERNEL clamp_kernel editable=1
// CHECK: LAUNCH host-max-min.cu:launch/launch#1 kernel=clamp_kernel via=<<<>>>
