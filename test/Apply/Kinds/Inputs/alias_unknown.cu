#include "cuda.h"
// Pointers whose target the launching function does not pin down: a conditional, a local assigned after
// its declaration, array elements, a call's result. Each launch passes one of them beside x; the test
// compiles one case at a time (-DCASE_...).
__global__ void accum(const float *a, float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] += a[i];
}
float *pick(float *p);
#ifdef CASE_TERNARY
void ternary(float *x, float *y, bool c, int n) {
  float *z = c ? x : y;
  accum<<<1, 256>>>(x, z, n);
}
#endif
#ifdef CASE_ASSIGNED
void assigned(float *x, int n) {
  float *z;
  z = x;
  accum<<<1, 256>>>(x, z, n);
}
#endif
#ifdef CASE_ELEMENTS
void elements(float *x, int n) {
  float *arr[2] = {x, x};
  accum<<<1, 256>>>(arr[0], arr[1], n);
}
#endif
#ifdef CASE_CALLED
void called(float *x, int n) { accum<<<1, 256>>>(x, pick(x), n); }
#endif
#ifdef CASE_DISTINCT
void distinct(float *x, float *y, bool c, int n) {
  float *z = c ? y : y + 4;
  accum<<<1, 256>>>(x, z, n);
}
#endif
#ifdef CASE_PARAM
void param(float *x, float *z, int n) {
  if (!z) z = x; // in place by default
  accum<<<1, 256>>>(x, z, n);
}
#endif
#ifdef CASE_MAYBE_FRESH
void maybeFresh(float *x, bool inPlace, int n) {
  float *z = x;
  if (!inPlace) cudaMalloc((void **)&z, n * sizeof(float));
  accum<<<1, 256>>>(x, z, n);
}
#endif
#ifdef CASE_REFERENCE
void reference(float *x, int n) {
  float *const &r = x;
  accum<<<1, 256>>>(x, r, n);
}
#endif
