// reduction: the sum of n floats in one launch. Each thread accumulates a grid-stride slice,
// each block reduces its threads' sums with a naive shared-memory tree (a __syncthreads()
// after every step, down to one element), writes one partial, and the last block to finish
// (found with a ticket counter) sums the partials in a fixed order. Deterministic.
// Memory-bound: 4 bytes read per add.
// Tunables: BLOCK_SIZE (template argument, __launch_bounds__, shared array size),
// MAX_BLOCKS (grid cap), the unrolling of the grid-stride and tree loops. Structural
// candidates: a warp-shuffle tail (__shfl_down_sync) instead of the last five tree steps,
// vectorized float4 loads.
#include "reduction.h"

#define BLOCK_SIZE 256
#define MAX_BLOCKS 1024

// Sums sdata[0..BLOCK) into sdata[0]. Every thread of the block must call it.
template <int BLOCK>
__device__ void block_tree_sum(float* sdata, int tid) {
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
}

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    reduce_sum(const float* __restrict__ in, int n, float* __restrict__ partials,
               unsigned int* __restrict__ done_count, float* __restrict__ out) {
  __shared__ float sdata[BLOCK];
  __shared__ bool is_last_block;
  const int tid = threadIdx.x;

  float sum = 0.f;
  for (int i = blockIdx.x * BLOCK + tid; i < n; i += BLOCK * gridDim.x) {
    sum += in[i];
  }
  sdata[tid] = sum;
  __syncthreads();
  block_tree_sum<BLOCK>(sdata, tid);

  if (tid == 0) {
    partials[blockIdx.x] = sdata[0];
    __threadfence();  // make the partial visible before taking a ticket
    // atomicInc wraps to 0 after gridDim.x - 1: the counter is ready for the next launch.
    unsigned int ticket = atomicInc(done_count, gridDim.x - 1);
    is_last_block = (ticket == gridDim.x - 1);
  }
  __syncthreads();
  if (!is_last_block) return;

  // The last block: sum the partials in a fixed order (volatile: written by other blocks).
  const volatile float* vpartials = partials;
  float total = 0.f;
  for (int i = tid; i < (int)gridDim.x; i += BLOCK) {
    total += vpartials[i];
  }
  sdata[tid] = total;
  __syncthreads();
  block_tree_sum<BLOCK>(sdata, tid);
  if (tid == 0) *out = sdata[0];
}

static int reduce_sum_blocks(int n) {
  int blocks = (n + BLOCK_SIZE - 1) / BLOCK_SIZE;
  return blocks < MAX_BLOCKS ? blocks : MAX_BLOCKS;
}

int reduce_sum_scratch_floats(int n) { return reduce_sum_blocks(n); }

void reduce_sum_launch(const float* in, int n, float* partials, unsigned int* done_count,
                       float* out, cudaStream_t stream) {
  const int blocks = reduce_sum_blocks(n);
  reduce_sum<BLOCK_SIZE><<<blocks, BLOCK_SIZE, 0, stream>>>(in, n, partials, done_count, out);
}
