// softmax: row-wise softmax, one block per row, three passes over the row in global memory
// (maximum, sum of exponentials, normalized write), each block reduction a naive shared-memory
// tree. Memory-bound at large rows (reads the row three times as written).
// Tunables: BLOCK_SIZE (template argument, __launch_bounds__, shared array size), unrolling
// of the strided loops and of the tree. Structural candidates: warp-shuffle reductions, an
// online (single-pass) max-and-sum, keeping the row in registers or shared memory.
#include "softmax.h"

#define BLOCK_SIZE 256

template <int BLOCK>
__device__ float block_max(float v, float* red) {
  const int tid = threadIdx.x;
  red[tid] = v;
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (tid < s) red[tid] = fmaxf(red[tid], red[tid + s]);
    __syncthreads();
  }
  float r = red[0];
  __syncthreads();  // red is reused by the next reduction
  return r;
}

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
    softmax_rows(int cols, const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float red[BLOCK];
  const float* x = in + (size_t)blockIdx.x * cols;
  float* y = out + (size_t)blockIdx.x * cols;

  float m = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += BLOCK) m = fmaxf(m, x[c]);
  m = block_max<BLOCK>(m, red);

  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) s += expf(x[c] - m);
  s = block_sum<BLOCK>(s, red);

  const float inv = 1.f / s;
  for (int c = threadIdx.x; c < cols; c += BLOCK) y[c] = expf(x[c] - m) * inv;
}

void softmax_launch(int rows, int cols, const float* in, float* out, cudaStream_t stream) {
  softmax_rows<BLOCK_SIZE><<<rows, BLOCK_SIZE, 0, stream>>>(cols, in, out);
}
