// A header that only the sm_75 device compilation reads, and that does not exist: that architecture
// cannot be parsed, before or after any edit (test/Apply/multi-arch.test).
#include "cuda.h"
#define TILE 32
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#include "no-such-sm75-header.h"
#endif

__global__ void rotate(float *x) {
  __shared__ float s[TILE];
  s[threadIdx.x % TILE] = x[threadIdx.x];
  __syncthreads();
  x[threadIdx.x] = s[(threadIdx.x + 1) % TILE];
}
