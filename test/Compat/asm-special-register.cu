// PTX special registers in inline asm (`%laneid`, `%tid.x`): nvcc hands the asm text to ptxas as it
// is; clang refuses it ("invalid % escape in inline assembly string", 11 of tiny-cuda-nn's 14 CUDA
// files through its common_device.h). kloop reports that error as a warning, and the asm statement
// stays in the AST: a pointer handed to it still counts as written. nvcc-accepts.test compiles this
// file with nvcc.
// REQUIRES: nvcc
// RUN: kloop extract %s --root %S --cuda-path=%cuda_path -- -std=c++17 2> %t.err | python3 %inputs/summarize.py | FileCheck %s
// RUN: count 0 < %t.err
// RUN: kloop extract %s --root %S --cuda-path=%cuda_path -- -std=c++17 | python3 %S/../Extract/Inputs/status.py | FileCheck --check-prefix=STATUS %s
__device__ unsigned lane_id() {
  unsigned r;
  asm volatile("mov.u32 %0, %laneid;" : "=r"(r));
  return r;
}
__global__ void lanes(unsigned *o, unsigned *stamp) {
  o[threadIdx.x] = lane_id();
  asm volatile("{ .reg .u32 t; mov.u32 t, %tid.x; st.global.u32 [%0], t; }" ::"l"(stamp + 1) : "memory");
}
// CHECK: TU asm-special-register.cu ok
// CHECK: KERNEL lanes editable=1
// CHECK: PARAM lanes/param:stamp {{.*}} written=1
// STATUS: KERNEL lanes ok editable=1
// STATUS: DEVFN device:lane_id ok editable=1
