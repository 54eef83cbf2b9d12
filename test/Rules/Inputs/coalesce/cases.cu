// coalesce-thread-index (docs/rules/coalesce-thread-index.md) on the mock CUDA headers: one kernel where the
// rule fires, and one per refusal.
#include "cuda.h"

// threadIdx.x runs along rows: fires when every launch's block is square.
__global__ void by_rows(int rows, int cols, const float *__restrict__ in, float *__restrict__ out) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  const int col = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < rows && col < cols) out[row * cols + col] = 2.f * in[row * cols + col];
}

// The same kernel launched with a 32 x 8 block.
__global__ void oblong(int rows, int cols, const float *__restrict__ in, float *__restrict__ out) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  const int col = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < rows && col < cols) out[row * cols + col] = 2.f * in[row * cols + col];
}

// A transpose: one access is contiguous in threadIdx.x already.
__global__ void flip(int rows, int cols, const float *__restrict__ in, float *__restrict__ out) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  const int col = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < rows && col < cols) out[row * cols + col] = in[col * rows + row];
}

// Coalesced as written: threadIdx.x runs along columns.
__global__ void by_cols(int rows, int cols, const float *__restrict__ in, float *__restrict__ out) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < rows && col < cols) out[row * cols + col] = 2.f * in[row * cols + col];
}

// Threads exchange values through shared memory in lane order.
__global__ void staged(int rows, int cols, const float *__restrict__ in, float *__restrict__ out) {
  __shared__ float t[16][16];
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  const int col = blockIdx.y * blockDim.y + threadIdx.y;
  t[threadIdx.y][threadIdx.x] = in[row * cols + col];
  __syncthreads();
  out[row * cols + col] = t[threadIdx.x][threadIdx.y];
}

// The lane index is used besides the two indexes.
__global__ void lanes(int rows, int cols, const float *__restrict__ in, float *__restrict__ out) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  const int col = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < rows && col < cols) out[row * cols + col] = in[row * cols + col] + threadIdx.x % 32;
}

void launch(int rows, int cols, const float *in, float *out) {
  dim3 block(16, 16);
  dim3 grid((rows + 15) / 16, (cols + 15) / 16);
  by_rows<<<grid, block>>>(rows, cols, in, out);
  oblong<<<grid, dim3(32, 8)>>>(rows, cols, in, out);
  flip<<<grid, block>>>(rows, cols, in, out);
  by_cols<<<grid, block>>>(rows, cols, in, out);
  staged<<<grid, block>>>(rows, cols, in, out);
  lanes<<<grid, block>>>(rows, cols, in, out);
}
