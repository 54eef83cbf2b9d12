// A tiled transpose: tile is written by rows and read by columns (tile[threadIdx.x][threadIdx.y]),
// so the 32 threads of a warp read addresses 32 floats apart, all in one shared-memory bank.
#include "cuda.h"
#define TILE 32

__global__ void transpose(int n, const float *in, float *out) {
  __shared__ float tile[TILE][TILE];
  int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  if (x < n && y < n) tile[threadIdx.y][threadIdx.x] = in[y * n + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  if (x < n && y < n) out[y * n + x] = tile[threadIdx.x][threadIdx.y];
}

// Rows only: threadIdx.x indexes the last dimension everywhere, so there is no conflict to remove.
__global__ void rows(int n, const float *in, float *out) {
  __shared__ float r[8][TILE];
  r[threadIdx.y][threadIdx.x] = in[threadIdx.y * TILE + threadIdx.x];
  __syncthreads();
  out[threadIdx.y * TILE + threadIdx.x] = r[threadIdx.y][threadIdx.x] * 2.0f;
}

// A column read, but 192 x 64 floats are already the whole 48 KiB of static shared memory: padding
// by one column would not fit.
__global__ void big(const float *in, float *out) {
  __shared__ float b[192][64];
  b[threadIdx.y][threadIdx.x] = in[threadIdx.y * 64 + threadIdx.x];
  __syncthreads();
  out[threadIdx.y * 64 + threadIdx.x] = b[threadIdx.x][threadIdx.y];
}
