// Built twice by the project: once with -DVARIANT=1, once with -DVARIANT=2.
#include "cuda.h"
__global__ void common_k(float *p) { p[threadIdx.x] = VARIANT; }
#if VARIANT == 2
__global__ void only_two(float *p) { p[0] = 2.f; }
#endif
void run(float *p) {
  common_k<<<1, 32>>>(p);
#if VARIANT == 2
  only_two<<<1, 1>>>(p);
#endif
}
