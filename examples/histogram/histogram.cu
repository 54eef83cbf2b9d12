// histogram: 256-bin byte histogram, one global atomicAdd per input byte (heavily contended
// on the popular bins), one byte loaded per thread per grid-stride step.
// Tunables: BLOCK_SIZE (threads per block, __launch_bounds__), MAX_BLOCKS (grid cap).
// Structural candidates: per-block privatized histograms in shared memory merged with one
// global atomic per bin and block, vectorized (uchar4 / uint4) loads.
#include "histogram.h"

#define BLOCK_SIZE 256
#define MAX_BLOCKS 2048

__global__ void __launch_bounds__(BLOCK_SIZE)
    histogram_global(const unsigned char* __restrict__ data, int n, unsigned int* __restrict__ bins) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    atomicAdd(&bins[data[i]], 1u);
  }
}

void histogram_launch(const unsigned char* data, int n, unsigned int* bins, cudaStream_t stream) {
  cudaMemsetAsync(bins, 0, kHistogramBins * sizeof(unsigned int), stream);
  int blocks = (n + BLOCK_SIZE - 1) / BLOCK_SIZE;
  if (blocks > MAX_BLOCKS) blocks = MAX_BLOCKS;
  histogram_global<<<blocks, BLOCK_SIZE, 0, stream>>>(data, n, bins);
}
