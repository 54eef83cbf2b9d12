// Code for an architecture-specific target only (sm_90a defines __CUDA_ARCH_FEAT_SM90_ALL; sm_90 does
// not): test/Apply/multi-arch.test.
#include "cuda.h"
#define TILE 32

__global__ void rotate(float *x) {
  __shared__ float s[TILE];
  s[threadIdx.x % TILE] = x[threadIdx.x];
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(TILE % 32 == 0, "TILE must be a multiple of 32 on sm_90a");
#endif
  x[threadIdx.x] = s[(threadIdx.x + 1) % TILE];
}
