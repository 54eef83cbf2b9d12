// `#if __CUDACC__`: nvcc defines __CUDACC__ as 1, clang's CUDA wrapper as empty ("expected value in
// expression"); the compatibility layer makes it 1. nvcc-accepts.test compiles this file with nvcc.
// REQUIRES: nvcc
// RUN: kloop extract %s --root %S --cuda-path=%cuda_path -- -std=c++17 2> %t.err | python3 %inputs/summarize.py | FileCheck %s
// RUN: count 0 < %t.err
#if __CUDACC__
#define SCALE 2
#endif
#if defined(__CUDACC__) && __CUDACC__ == 1
__global__ void scaled(float *p) { p[threadIdx.x] *= SCALE; }
#endif
// CHECK: TU cudacc-value.cu ok
// CHECK: KERNEL scaled editable=1
