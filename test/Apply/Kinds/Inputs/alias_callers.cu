#include "cuda.h"
// A launch inside a function of the program's own, whose callers pass its pointer parameters: each case
// calls it one way (-DCASE_...).
__global__ void accum(const float *a, float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] += a[i];
}
struct Acts {
  float *in, *out;
};
void run(const float *x, float *y, int n) { accum<<<1, 256>>>(x, y, n); }
// Two levels: step calls run with its own parameters.
void step(float *p, float *q, int n) { run(p, q, n); }
#ifdef CASE_IN_PLACE
void main1(float *buf, int n) { run(buf, buf, n); }
#endif
#ifdef CASE_OFFSET
void main2(float *buf, int n) { run(buf, buf + n / 2, n / 2); }
#endif
#ifdef CASE_TWO_LEVELS
void main3(float *buf, int n) { step(buf, buf, n); }
#endif
#ifdef CASE_DISTINCT
void main4(float *a, float *b, Acts acts, int n) {
  run(a, b, n);
  step(acts.in, acts.out, n);
}
#endif
#ifdef CASE_UNKNOWN
float *pick(float *p);
void main5(float *a, int n) { run(a, pick(a), n); }
#endif
