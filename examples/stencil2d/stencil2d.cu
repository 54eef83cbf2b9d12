// stencil2d: one Jacobi step of a 5-point stencil, each thread reading its five inputs from
// global memory (neighbours are shared between threads only through the caches).
// Memory-bound: 8 bytes per point of compulsory traffic, 6 flops per interior point.
// Tunables: BLOCK_X, BLOCK_Y (block shape, __launch_bounds__), unrolling of the neighbour
// loop. Structural candidates: staging a (BLOCK_Y+2) x (BLOCK_X+2) halo tile in shared
// memory, several points per thread along y.
#include "stencil2d.h"

#define BLOCK_X 32
#define BLOCK_Y 8

// Neighbour offsets of the 5-point cross (row, column); the centre is handled apart.
__constant__ int kNeighbour[4][2] = {{-1, 0}, {1, 0}, {0, -1}, {0, 1}};

__global__ void __launch_bounds__(BLOCK_X * BLOCK_Y)
    stencil2d_5pt(int height, int width, float c0, float c1, const float* __restrict__ in,
                  float* __restrict__ out) {
  const int j = blockIdx.x * BLOCK_X + threadIdx.x;
  const int i = blockIdx.y * BLOCK_Y + threadIdx.y;
  if (i >= height || j >= width) return;
  const size_t at = (size_t)i * width + j;
  if (i == 0 || j == 0 || i == height - 1 || j == width - 1) {
    out[at] = in[at];
    return;
  }
  float sum = 0.f;
  for (int q = 0; q < 4; ++q) {
    sum += in[(size_t)(i + kNeighbour[q][0]) * width + (j + kNeighbour[q][1])];
  }
  out[at] = c0 * in[at] + c1 * sum;
}

void stencil2d_launch(int height, int width, float c0, float c1, const float* in, float* out,
                      cudaStream_t stream) {
  dim3 block(BLOCK_X, BLOCK_Y);
  dim3 grid((width + BLOCK_X - 1) / BLOCK_X, (height + BLOCK_Y - 1) / BLOCK_Y);
  stencil2d_5pt<<<grid, block, 0, stream>>>(height, width, c0, c1, in, out);
}
