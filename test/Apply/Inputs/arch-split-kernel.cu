// A kernel defined once per architecture path: `#if __CUDA_ARCH__ == 800` around a whole definition
// gives sm_80 its own, and the host side (no __CUDA_ARCH__) the other. add_const in one definition alone
// changes one mangled name, and the launch then names a kernel some device code does not define: nvcc -c
// builds, the link fails (test/Apply/multi-arch.test, SPLIT).
#include "cuda.h"
#if __CUDA_ARCH__ == 800
__global__ void scale(float *out, const float *in, float *tmp, int n) {
  int i = threadIdx.x;
  out[i] = in[i] * tmp[i];
}
#else
__global__ void scale(float *out, const float *in, float *tmp, int n) {
  int i = threadIdx.x;
  out[i] = 2.0f * in[i] + tmp[i];
}
#endif
void run(float *o, const float *i, float *t, int n) { scale<<<1, 32>>>(o, i, t, n); }
