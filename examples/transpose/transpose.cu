// transpose: out = in^T for a row-major f32 matrix. The textbook first shared-memory version:
// each block stages a TILE_DIM x TILE_DIM tile so both the global read and the global write
// are coalesced, but the tile is not padded, so reading it by column is a 32-way shared
// memory bank conflict. Memory-bound: 8 bytes per element, no flops.
// Tunables: TILE_DIM, BLOCK_ROWS (the block is TILE_DIM x BLOCK_ROWS threads, each moving
// TILE_DIM / BLOCK_ROWS elements), the shared array's row length (TILE_DIM + 1 removes the
// bank conflicts), unrolling the copy loops.
#include "transpose.h"

#define TILE_DIM 32
#define BLOCK_ROWS 8

__global__ void __launch_bounds__(TILE_DIM * BLOCK_ROWS)
    transpose_tiled(int rows, int cols, const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float tile[TILE_DIM][TILE_DIM];

  int x = blockIdx.x * TILE_DIM + threadIdx.x;  // column of `in`
  int y = blockIdx.y * TILE_DIM + threadIdx.y;  // row of `in`
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
    if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
  }
  __syncthreads();

  x = blockIdx.y * TILE_DIM + threadIdx.x;  // column of `out` (a row of `in`)
  y = blockIdx.x * TILE_DIM + threadIdx.y;  // row of `out` (a column of `in`)
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
    if (x < rows && y + j < cols) out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
  }
}

void transpose_launch(int rows, int cols, const float* in, float* out, cudaStream_t stream) {
  dim3 block(TILE_DIM, BLOCK_ROWS);
  dim3 grid((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);
  transpose_tiled<<<grid, block, 0, stream>>>(rows, cols, in, out);
}
