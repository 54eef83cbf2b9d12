// Two overloads of one kernel, the double one under sm_80 and later only: the inventory's IDs of the
// overloads differ between the architectures' parses, so their facts are matched by mangled name
// (test/Apply/multi-arch.test, OVERLOAD). Under sm_80 the float kernel writes through tmp by a cast.
#include "cuda.h"
#if __CUDA_ARCH__ >= 800
__global__ void scale(double *out, const double *in, double *tmp) { out[threadIdx.x] = in[threadIdx.x] + tmp[threadIdx.x]; }
#endif
__global__ void scale(float *out, const float *in, float *tmp) {
  int i = threadIdx.x;
#if __CUDA_ARCH__ >= 800
  ((float *)tmp)[i] = 1.0f;
#endif
  out[i] = 2.0f * in[i] + tmp[i];
}
