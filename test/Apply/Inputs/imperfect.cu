#include "cuda.h"
inline int host_helper(int n) { return n + not_declared_anywhere; }
__global__ void good(float *p) {
  for (int i = 0; i < 8; ++i)
    p[i] *= 2.0f;
}
__global__ void bad(float *p) { p[0] = missing_value; }
int main() {
  float *p = 0;
  good<<<1, 32>>>(p);
  return 0;
}
