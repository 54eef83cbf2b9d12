// Unroll pragmas nvcc reads differently from how they look: one continued onto a second line with a
// backslash (one directive), and a GCC spelling nvcc ignores ("unrecognized GCC pragma").
#include "cuda.h"
__global__ void continued(float *x, int n) {
#pragma unroll \
  4
  for (int i = 0; i < n; ++i) x[i] += 1.0f;
}
__global__ void gcc(float *x, int n) {
#pragma GCC unroll 4
  for (int i = 0; i < n; ++i) x[i] += 1.0f;
}
__global__ void nounrolled(float *x) {
#pragma nounroll
  for (int i = 0; i < 16; ++i) x[i] += 1.0f;
}
__global__ void commented(float *x, int n) {
#pragma unroll 4 /* the first
  half */
  for (int i = 0; i < n; ++i) x[i] += 1.0f;
}
__global__ void trailing(float *x, int n) {
  #pragma unroll 4 // keep four
  for (int i = 0; i < n; ++i) x[i] += 1.0f;
}
__global__ void spaced(float *x, int n) {
# pragma unroll 4
  for (int i = 0; i < n; ++i) x[i] += 1.0f;
}
__global__ void inner(float *x, int n) {
#pragma unroll /* tuned */ 4
  for (int i = 0; i < n; ++i) x[i] += 1.0f;
}
__global__ void viaPragmaOperator(float *x, int n) {
  _Pragma("GCC unroll 4")
  for (int i = 0; i < n; ++i) x[i] += 1.0f;
}
__global__ void clangLoop(float *x, int n) {
#pragma clang loop unroll_count(4)
  for (int i = 0; i < n; ++i) x[i] += 1.0f;
}
