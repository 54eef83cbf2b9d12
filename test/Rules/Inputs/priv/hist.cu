// A byte histogram with one global atomicAdd per input byte: the index is an unsigned char, so
// below 256, and nothing else uses bins.
#include "cuda.h"

__global__ void hist(const unsigned char *__restrict__ data, int n, unsigned *__restrict__ bins) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    atomicAdd(&bins[data[i]], 1u);
  }
}

// The largest of each key's values: atomicMax on int, index `k & 63`.
__global__ void maxima(const int *__restrict__ keys, const int *__restrict__ vals, int n, int *__restrict__ best) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicMax(best + (keys[i] & 63), vals[i]);
}

void launch(const unsigned char *data, int n, unsigned *bins, const int *k, const int *v, int *best) {
  hist<<<128, 256>>>(data, n, bins);
  maxima<<<128, 256>>>(k, v, n, best);
}
