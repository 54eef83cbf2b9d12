// Code that only one GPU architecture reads: under sm_80 the kernel stores through a __device__ pointer
// (indirect_pointer) and writes through `tmp` with a cast (written), neither of which breaks the build
// once out is __restrict__ or tmp is const (test/Apply/multi-arch.test, FACTS).
#include "cuda.h"

__device__ float *g_out;

__global__ void scale(float *out, const float *in, float *tmp, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
#if __CUDA_ARCH__ == 800
  g_out[i] = in[i];
  ((float *)tmp)[i] = 1.0f;
#endif
  out[i] = 2.0f * in[i] + tmp[i];
}

#ifdef WITH_PARENT
// Dynamic parallelism under sm_90 only: the launch's arguments exist in that parse alone.
__global__ void parent(float *a, int n) {
#if __CUDA_ARCH__ >= 900
  scale<<<1, 32>>>(a, a, a, n);
#endif
}
#endif
