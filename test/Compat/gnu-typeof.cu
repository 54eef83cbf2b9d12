// GNU's `typeof` under -std=c++17: nvcc accepts it in device and host code (CUDA 13's nccl_device
// headers use it in WRITE_ONCE); clang knows it only in gnu++ modes, so kloop parses with
// -fgnu-keywords. nvcc-accepts.test compiles this file with nvcc.
// REQUIRES: nvcc
// RUN: kloop extract %s --root %S --cuda-path=%cuda_path -- -std=c++17 2> %t.err | python3 %inputs/summarize.py | FileCheck %s
// RUN: count 0 < %t.err
#define WRITE_ONCE(x, v) (*(volatile typeof(x) *)&(x) = (v))
__global__ void store(unsigned long long *p, unsigned long long v) {
  WRITE_ONCE(*p, v);
  typeof(v) w = v;
  p[1] = w;
}
void host_side(int *p) {
  typeof(*p) x = 1;
  *p = x;
}
// CHECK: TU gnu-typeof.cu ok
// CHECK: KERNEL store editable=1
