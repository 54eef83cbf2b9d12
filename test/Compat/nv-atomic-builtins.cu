// nvcc's __nv_atomic_* built-ins (CUDA 12.8 and later) with their memory orders and scopes: nvcc's front
// end knows them and no header declares them, so in clang each call was "use of undeclared identifier"
// and the kernel not editable. The compatibility layer declares them (and the order and scope names,
// which are not macros and hold in host code too). nvcc-accepts.test compiles this file with nvcc.
// REQUIRES: nvcc
// RUN: kloop extract %s --root %S --cuda-path=%cuda_path -- -std=c++17 2> %t.err | python3 %inputs/summarize.py | FileCheck %s
// RUN: count 0 < %t.err
struct Pair {
  int a, b;
};
__global__ void orders(int *p, unsigned long long *q, float *f, Pair *pairs) {
  int old = __nv_atomic_fetch_add(p, 1, __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_DEVICE);
  int seen = __nv_atomic_load_n(p, __NV_ATOMIC_ACQUIRE);
  __nv_atomic_store_n(p + 1, old + seen, __NV_ATOMIC_RELEASE, __NV_THREAD_SCOPE_BLOCK);
  int expected = 0;
  bool swapped = __nv_atomic_compare_exchange_n(p, &expected, 5, false, __NV_ATOMIC_ACQ_REL, __NV_ATOMIC_RELAXED,
                                                __NV_THREAD_SCOPE_DEVICE);
  int loaded;
  __nv_atomic_load(p, &loaded, __NV_ATOMIC_SEQ_CST, __NV_THREAD_SCOPE_CLUSTER);
  unsigned long long was = __nv_atomic_exchange_n(q, 3ull, __NV_ATOMIC_CONSUME, __NV_THREAD_SCOPE_SYSTEM);
  __nv_atomic_max(p, loaded, __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_THREAD);
  float sum = __nv_atomic_fetch_add(f, 1.0f, __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_DEVICE);
  __nv_atomic_fetch_or(p + 2, 8u, __NV_ATOMIC_RELAXED);
  Pair want = {0, 0}, put = {1, 2}, got;
  __nv_atomic_compare_exchange(pairs, &want, &put, true, __NV_ATOMIC_SEQ_CST, __NV_ATOMIC_ACQUIRE,
                               __NV_THREAD_SCOPE_DEVICE);
  __nv_atomic_exchange(pairs + 1, &put, &got, __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_DEVICE);
  __nv_atomic_thread_fence(__NV_ATOMIC_SEQ_CST);
  if (swapped)
    p[3] = static_cast<int>(was) + static_cast<int>(sum) + got.a;
}
// A const source, value or desired value, and an expected of another integer type, as nvcc takes them.
__global__ void const_operands(const int *src, int *dst, const int *val, int *ret, long long *expected) {
  __nv_atomic_load(src, dst, __NV_ATOMIC_ACQUIRE, __NV_THREAD_SCOPE_DEVICE);
  __nv_atomic_store(dst, val, __NV_ATOMIC_RELEASE);
  __nv_atomic_exchange(dst, val, ret, __NV_ATOMIC_RELAXED);
  int e = 0;
  __nv_atomic_compare_exchange(dst, &e, val, false, __NV_ATOMIC_RELAXED, __NV_ATOMIC_RELAXED);
  __nv_atomic_compare_exchange_n(dst, expected, 1, false, __NV_ATOMIC_RELAXED, __NV_ATOMIC_RELAXED);
}
// The names are constants of the host pass too, and not macros.
static_assert(__NV_ATOMIC_SEQ_CST == 5 && __NV_THREAD_SCOPE_SYSTEM == 4, "nvcc 13.0's values");
#ifdef __NV_ATOMIC_RELAXED
#error "nvcc does not define the memory orders as macros"
#endif
void run(int *p, unsigned long long *q, float *f, Pair *pairs) { orders<<<1, 32>>>(p, q, f, pairs); }
// CHECK: TU nv-atomic-builtins.cu ok
// CHECK: KERNEL orders editable=1
// CHECK: KERNEL const_operands editable=1
