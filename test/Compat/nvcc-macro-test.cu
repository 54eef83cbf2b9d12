// `__NVCC__`: nvcc defines it in both passes, kloop's clang parse does not (defining it would switch
// CCCL to nvcc's built-ins). A kernel under `#if defined(__NVCC__)` was missing from the inventory with
// the unit `ok` and no word (a break test's snippet); each condition that tests the macro is now a
// warning that says so. A name that only contains it is not one. nvcc-accepts.test builds this file.
// REQUIRES: nvcc
// RUN: kloop extract %s --root %S --cuda-path=%cuda_path -- -std=c++17 2> %t.err | python3 %inputs/summarize.py | FileCheck %s
// RUN: FileCheck %s --check-prefix=WARN < %t.err
#if defined(__NVCC__)
__global__ void nvcc_only(float *p) { p[threadIdx.x] = 1.0f; }
#endif
#ifdef __NVCC__
#define FROM_NVCC 1
#elif defined(MY__NVCC__X)
#define FROM_NVCC 2
#endif
#ifndef __NVCC__
#define CLANG_ONLY 1
#endif
#define IS_NVCC defined(__NVCC__)
#if IS_NVCC
#define THROUGH_MACRO 1
#endif
#if SOMETHING_ELSE /* not __NVCC__ */
#elif 1
#elif defined(__NVCC__)
#endif
__global__ void always(float *p) { p[threadIdx.x] = 2.0f; }
// CHECK: TU nvcc-macro-test.cu ok
// CHECK-NOT: KERNEL nvcc_only
// CHECK: KERNEL always editable=1
// WARN: nvcc-macro-test.cu:8:{{[0-9]+}}: warning: this condition tests __NVCC__, which nvcc defines and kloop's clang parse does not
// WARN: nvcc-macro-test.cu:11:{{[0-9]+}}: warning: this condition tests __NVCC__
// WARN-NOT: nvcc-macro-test.cu:13:
// WARN: nvcc-macro-test.cu:16:{{[0-9]+}}: warning: this condition tests __NVCC__
// A macro whose body tests it warns; a comment that mentions it and an #elif never evaluated do not.
// WARN: nvcc-macro-test.cu:20:{{[0-9]+}}: warning: this condition tests __NVCC__
// WARN-NOT: nvcc-macro-test.cu:23:
// WARN-NOT: nvcc-macro-test.cu:25:
