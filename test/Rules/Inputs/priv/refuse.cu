// Global atomics the rule must not privatize, one legality failure each.
#include "cuda.h"

// float additions: per-block partial sums change rounding.
__global__ void float_sums(const float *__restrict__ v, int n, float *__restrict__ sums) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&sums[i & 63], v[i]);
}

// An int key has no bound.
__global__ void unbounded(const int *__restrict__ keys, int n, unsigned *__restrict__ bins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[keys[i]], 1u);
}

// bins is also written directly.
__global__ void other_use(const unsigned char *__restrict__ data, int n, unsigned *__restrict__ bins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) bins[0] = 0;
  if (i < n) atomicAdd(&bins[data[i]], 1u);
}

// A thread that returns early would skip the barrier before the merge.
__global__ void early_return(const unsigned char *__restrict__ data, int n, unsigned *__restrict__ bins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomicAdd(&bins[data[i]], 1u);
}

// The old value is used.
__global__ void ticket(const unsigned char *__restrict__ data, int n, unsigned *__restrict__ bins,
                       unsigned *__restrict__ slot) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) slot[i] = atomicAdd(&bins[data[i] & 15], 1u);
}

// 65536 bins of 4 bytes do not fit in static shared memory.
__global__ void wide(const unsigned short *__restrict__ keys, int n, unsigned *__restrict__ bins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[keys[i]], 1u);
}

// bins is not __restrict__ and data is another pointer.
__global__ void aliased(const unsigned char *data, int n, unsigned *bins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[data[i]], 1u);
}

// atomicExch cannot be merged.
__global__ void exchange(const int *__restrict__ v, int n, int *__restrict__ last) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicExch(&last[i & 7], v[i]);
}

// The only pointer parameter, but the data comes through a pointer of a struct argument, which may
// point into `bins`.
struct Src {
  const unsigned char *data;
  int n;
};
__global__ void carried(Src s, unsigned *bins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < s.n) atomicAdd(&bins[s.data[i]], 1u);
}
