// Shared-memory tree reductions the rule rewrites: one in a device function template whose thread
// index is a parameter the kernel passes `tid`, a const local initialised with threadIdx.x
// (block_max), and one in a kernel body indexed by threadIdx.x itself (sum).
#include "cuda.h"
#define BLOCK 256

template <int B>
__device__ void tree_max(float *a, int tid) {
  for (int s = B / 2; s > 0; s >>= 1) {
    if (tid < s) a[tid] = fmaxf(a[tid], a[tid + s]);
    __syncthreads();
  }
}

template <int B>
__global__ void block_max(const float *in, float *out) {
  __shared__ float a[B];
  const int tid = threadIdx.x;
  a[tid] = in[blockIdx.x * B + tid];
  __syncthreads();
  tree_max<B>(a, tid);
  if (tid == 0) out[blockIdx.x] = a[0];
}

__global__ void sum(const int *in, int *out) {
  __shared__ int a[BLOCK];
  a[threadIdx.x] = in[blockIdx.x * BLOCK + threadIdx.x];
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) a[threadIdx.x] += a[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = a[0];
}

void launch(const float *in, float *out, const int *iin, int *iout) {
  block_max<BLOCK><<<64, BLOCK>>>(in, out);
  sum<<<64, BLOCK>>>(iin, iout);
}
