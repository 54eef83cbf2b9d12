// layernorm: one block per row, two-pass statistics (mean, then the mean of squared
// deviations) with naive shared-memory tree reductions, then the normalized, scaled write.
// Reads the row three times from global memory as written. Memory-bound at large rows.
// Tunables: BLOCK_SIZE (template argument, __launch_bounds__, shared array size), unrolling
// of the strided loops and the tree. Structural candidates: warp-shuffle reductions, a
// one-pass Welford mean/variance, caching the row in shared memory.
#include "layernorm.h"

#define BLOCK_SIZE 128

template <int BLOCK>
__device__ float block_sum(float v, float* red) {
  const int tid = threadIdx.x;
  red[tid] = v;
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (tid < s) red[tid] += red[tid + s];
    __syncthreads();
  }
  float r = red[0];
  __syncthreads();
  return r;
}

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    layernorm_rows(int cols, float eps, const float* __restrict__ in,
                   const float* __restrict__ gamma, const float* __restrict__ beta,
                   float* __restrict__ out) {
  __shared__ float red[BLOCK];
  const float* x = in + (size_t)blockIdx.x * cols;
  float* y = out + (size_t)blockIdx.x * cols;

  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) s += x[c];
  const float mean = block_sum<BLOCK>(s, red) / cols;

  float q = 0.f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) {
    float d = x[c] - mean;
    q += d * d;
  }
  const float rstd = rsqrtf(block_sum<BLOCK>(q, red) / cols + eps);

  for (int c = threadIdx.x; c < cols; c += BLOCK) y[c] = (x[c] - mean) * rstd * gamma[c] + beta[c];
}

void layernorm_launch(int rows, int cols, float eps, const float* in, const float* gamma,
                      const float* beta, float* out, cudaStream_t stream) {
  layernorm_rows<BLOCK_SIZE><<<rows, BLOCK_SIZE, 0, stream>>>(cols, eps, in, gamma, beta, out);
}
