// TILE's sm_80 path holds code that no other architecture reads: a command building sm_75, sm_80 and
// sm_90 must check an edit under sm_80 too, though it is neither the lowest nor the highest.
#include "cuda.h"
#define TILE 32
__global__ void tiles(float *out) {
#if __CUDA_ARCH__ == 800
  static_assert(TILE != 48, "TILE 48 does not fit sm_80's shared memory split");
#endif
  out[threadIdx.x] = TILE;
}
void run(float *out) { tiles<<<1, TILE>>>(out); }
