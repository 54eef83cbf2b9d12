// Macros named N and X on the command line (-DN=64 -DX=64): nvcc builds this file, but clang's
// CUDA wrapper includes cuda.h and curand_mtgp32_kernel.h (nvcc's cuda_runtime.h includes
// neither), which use N and X as parameter and variable names: "expected ')'" in cuda.h and
// "expected unqualified-id" in curand_mtgp32_kernel.h on both sides. kloop defines such
// command-line macros right after the wrapper and the compatibility header, before any code of
// the translation unit; macros that configure the headers (reserved names such as
// _GNU_SOURCE, NDEBUG, CUDA_API_PER_THREAD_DEFAULT_STREAM) keep their place before them.
// nvcc-accepts.test compiles this file with nvcc and the same flags.
// REQUIRES: nvcc
// RUN: kloop extract %s --root %S --cuda-path=%cuda_path -- -std=c++17 -DN=64 -DX=64 -DCUDA_API_PER_THREAD_DEFAULT_STREAM -UUNUSED_NAME 2> %t.err | python3 %inputs/summarize.py | FileCheck %s
// RUN: count 0 < %t.err
#ifndef cudaMemcpy
#error "CUDA_API_PER_THREAD_DEFAULT_STREAM did not reach cuda_runtime_api.h"
#endif
#if N != 64 || X != 64
#error "N and X are not the command line's"
#endif
__global__ void axpy(float *y, const float *x, float a) {
  float tile[N];
  for (int i = 0; i < N; ++i)
    tile[i] = a * x[blockIdx.x * N + i];
  for (int i = 0; i < N; ++i)
    y[blockIdx.x * N + i] += tile[i] * X;
}
void run(float *y, const float *x) { axpy<<<N, 1>>>(y, x, 2.f); }
// CHECK: TU command-line-macro-names.cu ok
// CHECK: KERNEL axpy editable=1
// CHECK: LOOP axpy/loop#1 kind=for depth=0 parent=- unroll=- trip=64 editable=1
// CHECK: LOOP axpy/loop#2 kind=for depth=0 parent=- unroll=- trip=64 editable=1
// CHECK: LAUNCH command-line-macro-names.cu:run/launch#1 kernel=axpy via=<<<>>> grid=N=64x1x1 block=1=1x1x1
// CHECK: CONST macro:N kind=macro value=64 editable=0
