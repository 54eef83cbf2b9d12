// Loops with a __syncthreads() that the rule must not rewrite, one legality failure each.
#include "cuda.h"
#define BLOCK 256

// The stride doubles (an interleaved tree): its pairs are not those of a shuffle down.
__global__ void doubling(int *a) {
  for (int s = 1; s < BLOCK; s *= 2) {
    if (threadIdx.x % (2 * s) == 0) a[threadIdx.x] += a[threadIdx.x + s];
    __syncthreads();
  }
}

// The barrier is inside the if: not every thread reaches it.
__global__ void barrier_in_if(int *a) {
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      a[threadIdx.x] += a[threadIdx.x + s];
      __syncthreads();
    }
  }
}

// Subtraction is not a reduction.
__global__ void minus(int *a) {
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) a[threadIdx.x] -= a[threadIdx.x + s];
    __syncthreads();
  }
}

// The index is threadIdx.y, not threadIdx.x: its lanes are not the shuffle's.
__global__ void by_y(int *a) {
  int t = threadIdx.y;
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (t < s) a[t] += a[t + s];
    __syncthreads();
  }
}

// A device function whose thread index parameter is passed threadIdx.y.
__device__ void tree(int *a, int tid) {
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (tid < s) a[tid] += a[tid + s];
    __syncthreads();
  }
}
__global__ void calls_with_y(int *a) {
  const int y = threadIdx.y;
  tree(a, y);
}

// A tree of 16 elements never spans a warp.
__global__ void small(int *a) {
  for (int s = 16; s > 0; s >>= 1) {
    if (threadIdx.x < s) a[threadIdx.x] += a[threadIdx.x + s];
    __syncthreads();
  }
}

// short elements: __shfl_down_sync has no short overload.
__global__ void shorts(short *a) {
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) a[threadIdx.x] += a[threadIdx.x + s];
    __syncthreads();
  }
}

// An unroll pragma in front of the loop would end up in front of the guard.
__global__ void pragma(int *a) {
#pragma unroll
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) a[threadIdx.x] += a[threadIdx.x + s];
    __syncthreads();
  }
}
