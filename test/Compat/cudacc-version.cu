// nvcc's version macros: nvcc defines __CUDACC_VER_MAJOR__, _MINOR__ and _BUILD__, clang none. Without
// them the kernel under `#if __CUDACC_VER_MAJOR__ >= 11` silently disappeared (status ok, no kernel)
// and the static_assert failed. nvcc-accepts.test compiles this file with nvcc.
// REQUIRES: nvcc
// RUN: kloop extract %s --root %S --cuda-path=%cuda_path -- -std=c++17 2> %t.err | python3 %inputs/summarize.py | FileCheck %s
// RUN: count 0 < %t.err
static_assert(__CUDACC_VER_MAJOR__ > 10 || (__CUDACC_VER_MAJOR__ == 10 && __CUDACC_VER_MINOR__ >= 2),
              "CUDA 10.2 or later");
static_assert(__CUDACC_VER_BUILD__ >= 0, "a number");
#if __CUDACC_VER_MAJOR__ >= 11
__global__ void newer(float *p) { p[threadIdx.x] = 1.f; }
#endif
// CHECK: TU cudacc-version.cu ok
// CHECK: KERNEL newer editable=1
