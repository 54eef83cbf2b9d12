// `__clang__` and `__CUDA__`: kloop's clang parse defines them, nvcc does not (its device pass never, its
// host pass only with a clang host compiler, and `__CUDA__` not even then). A kernel under
// `#if !defined(__clang__)` (code for nvcc with g++) was missing from the inventory with the unit `ok`
// and no word (a break test's snippet); each condition that tests one is now a warning naming it, as for
// `__NVCC__` (nvcc-macro-test.cu). A name that only contains one is not. nvcc-accepts.test builds this.
// REQUIRES: nvcc
// RUN: kloop extract %s --root %S --cuda-path=%cuda_path -- -std=c++17 2> %t.err | python3 %inputs/summarize.py | FileCheck %s
// RUN: FileCheck %s --check-prefix=WARN < %t.err
#if !defined(__clang__)
__global__ void gcc_only(float *p) { p[threadIdx.x] = 1.0f; }
#endif
#if defined(__CUDA__) && defined(__clang__)
#define CLANG_CUDA 1
#endif
#define USING_CLANG defined(__clang__)
#if USING_CLANG
#define THROUGH_MACRO 1
#endif
#if defined(MY__clang__X)
#endif
__global__ void always(float *p) { p[threadIdx.x] = 2.0f; }
// CHECK: TU clang-macro-test.cu ok
// CHECK-NOT: KERNEL gcc_only
// CHECK: KERNEL always editable=1
// WARN: clang-macro-test.cu:9:{{[0-9]+}}: warning: this condition tests __clang__, which kloop's clang parse defines and nvcc does not (but for its host pass with a clang host compiler): kloop reads the branch clang takes
// WARN: clang-macro-test.cu:12:{{[0-9]+}}: warning: this condition tests __CUDA__, which kloop's clang parse defines and nvcc does not: kloop reads
// WARN: clang-macro-test.cu:16:{{[0-9]+}}: warning: this condition tests __clang__
// WARN-NOT: clang-macro-test.cu:19:
