// kloop's nvcc compatibility layer (docs/nvcc-compat.md).
//
// Force-included (-include) into kloop's own clang parses only; the user's build never sees
// it. The text is compiled into the kloop binary and handed to clang as an in-memory file, so
// an installed or copied kloop finds it. Each entry names the nvcc 13 behaviour it mirrors and
// applies only where nvcc provides it; nothing here redeclares what clang 22's CUDA wrapper
// headers (__clang_cuda_*.h) or the CUDA headers already declare. One lit test per entry in
// test/Compat/; test/Compat/nvcc-accepts.test compiles the same snippets with nvcc.
#ifndef KLOOP_NVCC_COMPAT_CUH
#define KLOOP_NVCC_COMPAT_CUH
// Like the CUDA headers it stands in for: no warnings from here, and kloop's inventory skips
// its code (it lists the user's kernels and launches, not the toolkit's).
#pragma clang system_header

// --- `#define NAME #pragma unroll` ----------------------------------------------------------------
// nvcc's device front end reads a macro that expands to `#pragma unroll` as the directive
// (moderngpu's PRAGMA_UNROLL); clang sees a `#` in an expression. kloop's file system rewrites such a
// body to this name, the same length (normalizePragmaMacros), on every parse and with any headers.
#define __kloop_unroll _Pragma("unroll")

// Only with the real CUDA headers (clang's runtime wrapper), never with -nocudainc.
#if defined(__CUDA__) && defined(__CUDACC__) && defined(__cplusplus) &&                        \
    defined(__CLANG_CUDA_RUNTIME_WRAPPER_H__)

// --- __CUDACC__ is 1 -------------------------------------------------------------------------
// nvcc defines __CUDACC__ as 1 (`nvcc -x cu -E -Xcompiler -dM`), so `#if __CUDACC__` holds (CUDA 13's
// nccl_device headers test it that way). clang's wrapper defines it empty, and `#if __CUDACC__` is
// "expected value in expression".
#undef __CUDACC__
#define __CUDACC__ 1

// --- __CUDACC_VER_MAJOR__, __CUDACC_VER_MINOR__, __CUDACC_VER_BUILD__ ------------------------
// nvcc defines its version (13, 0 and 88 for nvcc 13.0.88); clang defines none of the three, so
// `#if __CUDACC_VER_MAJOR__ >= 11` is false and a kernel under it silently disappears, and
// `static_assert(__CUDACC_VER_MAJOR__ > 10)` is an undeclared identifier (tiny-cuda-nn). The major
// and minor come from the toolkit's cuda.h (CUDA_VERSION is 1000 x major + 10 x minor), as
// expressions that #if and C++ both evaluate; no header holds the build number, so it is 0.
#if !defined(__CUDACC_VER_MAJOR__) && defined(CUDA_VERSION)
#define __CUDACC_VER_MAJOR__ (CUDA_VERSION / 1000)
#define __CUDACC_VER_MINOR__ (CUDA_VERSION % 1000 / 10)
#define __CUDACC_VER_BUILD__ 0
#endif

// --- cooperative groups' thread block clusters ----------------------------------------------
// CUDA 13's cooperative_groups/details/info.h declares cg::cluster_group and cg::this_cluster() (sm_90
// and up, and the host pass) only under __NVCC__, __CUDACC_RTC__ or _CG_CLUSTER_INTRINSICS_AVAILABLE;
// clang defines none, so "no type named 'cluster_group'". kloop does not define __NVCC__ (CCCL would
// take nvcc's built-ins); this is the header's own opt-in, and clang 22 has the cluster intrinsics.
#if !defined(_CG_CLUSTER_INTRINSICS_AVAILABLE)
#define _CG_CLUSTER_INTRINSICS_AVAILABLE
#endif

// --- <math.h> in every CUDA translation unit ------------------------------------------------
// nvcc: crt/math_functions.h (included by cuda_runtime.h) includes <math.h> (unless NVRTC), so
// isfinite, isnan, isinf, signbit, isnormal, fpclassify, isgreater, ... are visible in the
// global namespace of host templates, which clang's device pass parses too. clang's wrapper
// includes <cmath> but not <math.h>, and its global ::isfinite etc. are __device__ only.
#if !defined(__CUDACC_RTC__)
#include <math.h>
#endif

// --- <time.h>; and <new>, <stdio.h>, <assert.h> in the device pass ---------------------------
// nvcc: cuda_runtime.h reaches crt/common_functions.h, which includes <string.h> and <time.h>
// (unless NVRTC) in every pass, and, when __CUDA_ARCH__ is defined, <new> (unless
// __CUDA_INTERNAL_SKIP_CPP_HEADERS__), <stdio.h>, <stdlib.h> and <assert.h>. So host code calls
// clock() and time() without including <time.h>, and code under #ifdef __CUDA_ARCH__ uses
// placement new and assert without their headers. clang's wrapper includes <string.h> and
// <stdlib.h> but none of the others; host code calling clock() finds only the __device__ clock()
// of __clang_cuda_device_functions.h ("no matching function for call to 'clock'").
#if !defined(__CUDACC_RTC__)
#include <time.h>
#if defined(__CUDA_ARCH__)
#if !defined(__CUDA_INTERNAL_SKIP_CPP_HEADERS__)
#include <new>
#endif
#include <stdio.h>
#include <assert.h>
#endif
#endif

// --- host max/min ----------------------------------------------------------------------------
// nvcc: crt/math_functions.hpp defines max/min as __host__ __device__ for the mixed and wide
// integer and floating-point signatures, and on the host side int max/min(int, int) and
// umax/umin, llmax/llmin, ullmax/ullmin. clang's wrapper includes that header in a way that
// makes all of them __device__ only, so host code (which clang's device pass parses too) finds
// no viable max/min. The host overloads are added here on both passes, as __host__ only: clang
// refuses a __host__ __device__ overload of a __device__ function with the same signature.
#define KLOOP_COMPAT_MINMAX(R, A, B, MAX, MIN)                                                \
  static inline __host__ R MAX(const A __a, const B __b) {                                    \
    return static_cast<R>(__a) > static_cast<R>(__b) ? static_cast<R>(__a)                    \
                                                     : static_cast<R>(__b);                   \
  }                                                                                           \
  static inline __host__ R MIN(const A __a, const B __b) {                                    \
    return static_cast<R>(__a) < static_cast<R>(__b) ? static_cast<R>(__a)                    \
                                                     : static_cast<R>(__b);                   \
  }
KLOOP_COMPAT_MINMAX(int, int, int, max, min)
KLOOP_COMPAT_MINMAX(unsigned int, unsigned int, unsigned int, max, min)
KLOOP_COMPAT_MINMAX(unsigned int, int, unsigned int, max, min)
KLOOP_COMPAT_MINMAX(unsigned int, unsigned int, int, max, min)
KLOOP_COMPAT_MINMAX(long int, long int, long int, max, min)
KLOOP_COMPAT_MINMAX(unsigned long int, unsigned long int, unsigned long int, max, min)
KLOOP_COMPAT_MINMAX(unsigned long int, long int, unsigned long int, max, min)
KLOOP_COMPAT_MINMAX(unsigned long int, unsigned long int, long int, max, min)
KLOOP_COMPAT_MINMAX(long long int, long long int, long long int, max, min)
KLOOP_COMPAT_MINMAX(unsigned long long int, unsigned long long int, unsigned long long int, max, min)
KLOOP_COMPAT_MINMAX(unsigned long long int, long long int, unsigned long long int, max, min)
KLOOP_COMPAT_MINMAX(unsigned long long int, unsigned long long int, long long int, max, min)
KLOOP_COMPAT_MINMAX(float, float, float, max, min)
KLOOP_COMPAT_MINMAX(double, double, double, max, min)
KLOOP_COMPAT_MINMAX(double, float, double, max, min)
KLOOP_COMPAT_MINMAX(double, double, float, max, min)
KLOOP_COMPAT_MINMAX(unsigned int, unsigned int, unsigned int, umax, umin)
KLOOP_COMPAT_MINMAX(long long int, long long int, long long int, llmax, llmin)
KLOOP_COMPAT_MINMAX(unsigned long long int, unsigned long long int, unsigned long long int, ullmax, ullmin)
#undef KLOOP_COMPAT_MINMAX

// --- cache-hinted loads and stores ----------------------------------------------------------
// nvcc: sm_32_intrinsics.h declares __ldca, __ldlu, __stcg, __stcs, __stwb for every scalar and
// vector type below (and __ldcg/__ldcs/__ldcv/__stwt too), for sm_32 and later. clang 22's
// __clang_cuda_intrinsics.h has __ldcg, __ldcs, __ldcv and __stwt only, and none of them for
// unsigned long (__stwt not for long either). For analysis a load reads its pointer argument
// and a store writes through it; the cache hint does not change what the code means.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 320
#define KLOOP_COMPAT_LOAD(NAME, T)                                                            \
  inline __device__ T NAME(const T *__ptr) { return *__ptr; }
#define KLOOP_COMPAT_STORE(NAME, T)                                                           \
  inline __device__ void NAME(T *__ptr, T __value) { *__ptr = __value; }
#define KLOOP_COMPAT_FOR_EACH_TYPE(X, NAME)                                                   \
  X(NAME, long) X(NAME, unsigned long) X(NAME, char) X(NAME, signed char) X(NAME, short)      \
  X(NAME, int) X(NAME, long long) X(NAME, char2) X(NAME, char4) X(NAME, short2)               \
  X(NAME, short4) X(NAME, int2) X(NAME, int4) X(NAME, longlong2) X(NAME, unsigned char)       \
  X(NAME, unsigned short) X(NAME, unsigned int) X(NAME, unsigned long long) X(NAME, uchar2)   \
  X(NAME, uchar4) X(NAME, ushort2) X(NAME, ushort4) X(NAME, uint2) X(NAME, uint4)             \
  X(NAME, ulonglong2) X(NAME, float) X(NAME, double) X(NAME, float2) X(NAME, float4)          \
  X(NAME, double2)
KLOOP_COMPAT_FOR_EACH_TYPE(KLOOP_COMPAT_LOAD, __ldca)
KLOOP_COMPAT_FOR_EACH_TYPE(KLOOP_COMPAT_LOAD, __ldlu)
KLOOP_COMPAT_FOR_EACH_TYPE(KLOOP_COMPAT_STORE, __stcg)
KLOOP_COMPAT_FOR_EACH_TYPE(KLOOP_COMPAT_STORE, __stcs)
KLOOP_COMPAT_FOR_EACH_TYPE(KLOOP_COMPAT_STORE, __stwb)
KLOOP_COMPAT_LOAD(__ldcg, unsigned long)
KLOOP_COMPAT_LOAD(__ldcs, unsigned long)
KLOOP_COMPAT_LOAD(__ldcv, unsigned long)
KLOOP_COMPAT_STORE(__stwt, long)
KLOOP_COMPAT_STORE(__stwt, unsigned long)
#undef KLOOP_COMPAT_FOR_EACH_TYPE
#undef KLOOP_COMPAT_STORE
#undef KLOOP_COMPAT_LOAD
#endif

// --- __managed__ variables ------------------------------------------------------------------------
// nvcc: a __managed__ variable is a __device__ variable in unified memory (CUDA Programming Guide,
// "Managed memory"): kernels use it, and host code too. CUDA's host_defines.h spells it
// __location__(managed); clang 22 knows the `managed` attribute only for HIP and drops it in CUDA
// ("'managed' attribute ignored"), so the variable is a host variable and every kernel that uses it is
// an error ("reference to __host__ variable in __global__ function"). Here it is a __device__ variable,
// which clang also lets host code read and write.
#undef __managed__
#define __managed__ __attribute__((device))

// --- nvcc's __nv_atomic_* built-ins (CUDA 12.8 and later) ---------------------------------------------
// nvcc's front end knows __nv_atomic_fetch_add, _load_n, _compare_exchange, ... with a memory order
// (__NV_ATOMIC_RELAXED 0, CONSUME 1, ACQUIRE 2, RELEASE 3, ACQ_REL 4, SEQ_CST 5) and a scope
// (__NV_THREAD_SCOPE_THREAD 0, BLOCK 1, CLUSTER 2, DEVICE 3, SYSTEM 4, the default), names that are
// not macros (#ifdef does not see them) and hold in host code too; the values are nvcc 13.0's
// (static_assert with nvcc). No header declares any of them and clang has none. For analysis each is a
// device function template that reads (and, but for the loads, writes) through its pointer; nvcc's
// finer type rules (no 64-bit signed add, no floating-point min/max, integral-only _n forms) are not
// repeated, so kloop accepts a little more than nvcc, whose build then decides; the value, result and
// expected pointers are templates of their own, since nvcc takes a const source or desired value and
// an expected of another integer type (a break test's snippets).
#if !__has_builtin(__nv_atomic_fetch_add)
enum {
  __NV_ATOMIC_RELAXED = 0, __NV_ATOMIC_CONSUME = 1, __NV_ATOMIC_ACQUIRE = 2, __NV_ATOMIC_RELEASE = 3,
  __NV_ATOMIC_ACQ_REL = 4, __NV_ATOMIC_SEQ_CST = 5
};
enum {
  __NV_THREAD_SCOPE_THREAD = 0, __NV_THREAD_SCOPE_BLOCK = 1, __NV_THREAD_SCOPE_CLUSTER = 2,
  __NV_THREAD_SCOPE_DEVICE = 3, __NV_THREAD_SCOPE_SYSTEM = 4
};
#define KLOOP_COMPAT_NV_ATOMIC_OP(NAME, EXPR)                                                   \
  template <class __T, class __U>                                                               \
  inline __device__ __T __nv_atomic_fetch_##NAME(__T *__ptr, __U __val, int __order,            \
                                                 int __scope = __NV_THREAD_SCOPE_SYSTEM) {      \
    __T __old = *__ptr;                                                                         \
    *__ptr = EXPR;                                                                              \
    return __old;                                                                               \
  }                                                                                             \
  template <class __T, class __U>                                                               \
  inline __device__ void __nv_atomic_##NAME(__T *__ptr, __U __val, int __order,                 \
                                            int __scope = __NV_THREAD_SCOPE_SYSTEM) {           \
    (void)__nv_atomic_fetch_##NAME(__ptr, __val, __order, __scope);                             \
  }
KLOOP_COMPAT_NV_ATOMIC_OP(add, __old + __val)
KLOOP_COMPAT_NV_ATOMIC_OP(sub, __old - __val)
KLOOP_COMPAT_NV_ATOMIC_OP(and, __old & __val)
KLOOP_COMPAT_NV_ATOMIC_OP(or, __old | __val)
KLOOP_COMPAT_NV_ATOMIC_OP(xor, __old ^ __val)
KLOOP_COMPAT_NV_ATOMIC_OP(min, __val < __old ? __T(__val) : __old)
KLOOP_COMPAT_NV_ATOMIC_OP(max, __old < __val ? __T(__val) : __old)
#undef KLOOP_COMPAT_NV_ATOMIC_OP
template <class __T>
inline __device__ __T __nv_atomic_load_n(__T *__ptr, int __order, int __scope = __NV_THREAD_SCOPE_SYSTEM) {
  return *__ptr;
}
template <class __T, class __R>
inline __device__ void __nv_atomic_load(__T *__ptr, __R *__ret, int __order,
                                        int __scope = __NV_THREAD_SCOPE_SYSTEM) {
  *__ret = *__ptr;
}
template <class __T, class __U>
inline __device__ void __nv_atomic_store_n(__T *__ptr, __U __val, int __order,
                                           int __scope = __NV_THREAD_SCOPE_SYSTEM) {
  *__ptr = __val;
}
template <class __T, class __V>
inline __device__ void __nv_atomic_store(__T *__ptr, __V *__val, int __order,
                                         int __scope = __NV_THREAD_SCOPE_SYSTEM) {
  *__ptr = *__val;
}
template <class __T, class __U>
inline __device__ __T __nv_atomic_exchange_n(__T *__ptr, __U __val, int __order,
                                             int __scope = __NV_THREAD_SCOPE_SYSTEM) {
  __T __old = *__ptr;
  *__ptr = __val;
  return __old;
}
template <class __T, class __V, class __R>
inline __device__ void __nv_atomic_exchange(__T *__ptr, __V *__val, __R *__ret, int __order,
                                            int __scope = __NV_THREAD_SCOPE_SYSTEM) {
  *__ret = *__ptr;
  *__ptr = *__val;
}
template <class __T, class __E, class __U>
inline __device__ bool __nv_atomic_compare_exchange_n(__T *__ptr, __E *__expected, __U __desired, bool __weak,
                                                      int __success, int __failure,
                                                      int __scope = __NV_THREAD_SCOPE_SYSTEM) {
  if (*__ptr == *__expected) {
    *__ptr = __desired;
    return true;
  }
  *__expected = *__ptr;
  return false;
}
template <class __T, class __E, class __D>
inline __device__ bool __nv_atomic_compare_exchange(__T *__ptr, __E *__expected, __D *__desired, bool __weak,
                                                    int __success, int __failure,
                                                    int __scope = __NV_THREAD_SCOPE_SYSTEM) {
  const unsigned char *__now = (const unsigned char *)__ptr, *__was = (const unsigned char *)__expected;
  for (unsigned __i = 0; __i < sizeof(__T); ++__i) // bitwise, as nvcc's generic form (any trivially copyable type)
    if (__now[__i] != __was[__i]) {
      *__expected = *__ptr;
      return false;
    }
  *__ptr = *__desired;
  return true;
}
inline __device__ void __nv_atomic_thread_fence(int __order, int __scope = __NV_THREAD_SCOPE_SYSTEM) {}
#endif

#endif // real CUDA headers
#endif // KLOOP_NVCC_COMPAT_CUH
