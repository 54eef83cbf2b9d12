#include "cuda.h"
// Launchers the alias check follows to their callers, or cannot: templates, lambdas, functors,
// constructors, virtual functions, and ways a pointer parameter is set before the launch. The test
// compiles one case at a time (-DCASE_...). From a break test of the caller following.
#include "alias_kernels.h"
#ifdef CASE_TEMPLATE_LAUNCHER
template <int N> void run(float *x, float *y, int n) { accum<<<1, N>>>(x, y, n); }
void top(float *buf, int n) { run<256>(buf, buf, n); }
#endif
#ifdef CASE_VARIADIC
template <class... A> void run(A... a) { accum<<<1, 256>>>(a...); }
void top(float *buf, int n) { run(buf, buf, n); }
#endif
#ifdef CASE_CLASS_TEMPLATE
template <class C> struct Op {
  void run(const float *x, float *y, int n) { accum<<<1, 256>>>(x, y, n); }
};
void top(float *buf, int n) { Op<int> op; op.run(buf, buf, n); }
#endif
#ifdef CASE_FRIEND
template <class C> struct W {
  template <int N> friend void run(W, float *x, int n) { taccum<N><<<1, N>>>(x, x, n); }
};
void top(float *buf, int n) { run<64>(W<int>(), buf, n); }
#endif
#ifdef CASE_LAMBDA
void top(float *buf, int n) {
  auto launch = [](float *x, float *y, int n) { accum<<<1, 256>>>(x, y, n); };
  launch(buf, buf, n);
}
#endif
#ifdef CASE_FUNCTOR
struct Launch {
  void operator()(float *x, const float *y, float *z, int n) const { accum<<<1, 256>>>(y, z, n); }
};
#ifdef ALIASED
void top(float *a, float *b, int n) { Launch l; l(a, b, b, n); }
#else
void top(float *a, float *b, int n) { Launch l; l(a, a, b, n); }
#endif
#endif
#ifdef CASE_CONSTRUCTOR
struct Launch {
  Launch(float *x, float *y, int n) { accum<<<1, 256>>>(x, y, n); }
};
void top(float *buf, int n) { Launch l(buf, buf, n); }
#endif
#ifdef CASE_VIRTUAL
struct Base {
  virtual void run(const float *x, float *y, int n) = 0;
};
struct Impl : Base {
  void run(const float *x, float *y, int n) override { accum<<<1, 256>>>(x, y, n); }
};
void top(Base &b, float *buf, int n) { b.run(buf, buf, n); }
#endif
#ifdef CASE_DEPENDENT_SET
template <class T> void assign(float *&dst, float *src, T) { dst = src; }
template <class T> void run(float *x, float *y, T tag) {
  assign(y, x, tag);
  accum<<<1, 256>>>(x, y, 0);
}
void top(float *a, float *b) { run(a, b, 0); }
#endif
#ifdef CASE_REFERENCE_MEMBER
struct Ref {
  float *&r;
};
void run(float *x, float *y, int n) {
  Ref t{y};
  t.r = x;
  accum<<<1, 256>>>(x, y, n);
}
#endif
#ifdef CASE_STATIC_LOCAL
void run(float *x, float *y, int n) {
  static float *first = x;
  accum<<<1, 256>>>(first, y, n);
}
#endif
#ifdef CASE_GLOBAL_INIT
float *gbuf;
float *galias = gbuf;
void top(int n) { accum<<<1, 256>>>(gbuf, galias, n); }
#endif
#ifdef CASE_DEPENDENT_ARRAY
template <class T> void run(T *x, T *y, int n) {
  void *args[] = {&x, &y, &n};
  cudaLaunchKernel((const void *)accum, 1, 256, args, 0, 0);
}
void top(float *a, float *b, int n) { run(a, b, n); }
#endif
#ifdef CASE_IF_CONSTEXPR
template <int N> void run(float *x, float *y, int n) {
  if constexpr (N == 64)
    taccum<N><<<1, N>>>(x, x, n);
  else
    taccum<N><<<1, N>>>(x, y, n);
}
void top(float *a, float *b, int n) { run<32>(a, b, n); }
#endif
#ifdef CASE_FANOUT
// Three levels, each calling the one below 8 x 8 = 64 times: 64^2 calls reach run, over the budget.
#define C8(s) s s s s s s s s
void run(const float *x, float *y, int n) { accum<<<1, 256>>>(x, y, n); }
void step(float *p, float *q, int n) { C8(C8(run(p, q, n);)) }
void top(float *a, float *b, int n) { C8(C8(step(a, b, n);)) }
#endif
