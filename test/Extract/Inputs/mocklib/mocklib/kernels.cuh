// A stand-in for a CUDA library header (CUB/Thrust-like), found through -isystem: kernels
// that are not templates, one static and one in a namespace, beside a kernel template.
#pragma once
namespace mocklib {
__global__ void fill_kernel(float *p, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] = v;
}
template <int Items> __global__ void copy_kernel(const float *in, float *out) {
  for (int k = 0; k < Items; ++k)
    out[threadIdx.x * Items + k] = in[threadIdx.x * Items + k];
}
inline void fill(float *p, float v, int n) { fill_kernel<<<(n + 255) / 256, 256>>>(p, v, n); }
} // namespace mocklib
static __global__ void mocklib_reset(int *flag) { *flag = 0; }
