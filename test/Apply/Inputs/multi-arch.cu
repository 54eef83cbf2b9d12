// A kernel whose code differs by GPU architecture: an edit of TILE can break one architecture's path
// and not another's (test/Apply/multi-arch.test).
#include "cuda.h"
#define TILE 32

__global__ void rotate(float *x) {
  __shared__ float s[TILE];
  s[threadIdx.x % TILE] = x[threadIdx.x];
  __syncthreads();
#if __CUDA_ARCH__ >= 900
  static_assert(TILE % 32 == 0, "TILE must be a multiple of 32 on sm_90");
#elif defined(__CUDA_ARCH__)
  static_assert(TILE <= 64, "TILE must be at most 64 before sm_90");
#endif
  x[threadIdx.x] = s[(threadIdx.x + 1) % TILE];
}
