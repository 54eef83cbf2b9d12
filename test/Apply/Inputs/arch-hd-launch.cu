// A launcher written __host__ __device__, as CUB's dispatch layer is: its device body (sm_90 only)
// launches `scale` in place, which the host-side alias check never reads (test/Apply/multi-arch.test,
// HD-LAUNCH). A lambda in host code is __host__ __device__ implicitly and launches on the host side.
#include "cuda.h"
__global__ void scale(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = 2.0f * in[i];
}
#ifdef WITH_LAUNCHER
__host__ __device__ void launcher(float *a, float *b, int n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  scale<<<1, 32>>>(a, a, n);
#else
  scale<<<1, 32>>>(a, b, n);
#endif
}
__global__ void parent(float *a, float *b, int n) { launcher(a, b, n); }
#endif
void run(float *a, float *b, int n) {
  auto go = [&] { scale<<<1, 32>>>(a, b, n); };
  go();
}
