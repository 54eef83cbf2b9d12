// scale2d: out = a * in + b over a row-major rows x cols matrix, one thread per element, with the row
// taken from threadIdx.x: the 32 threads of a warp read 32 elements `cols` apart (uncoalesced). The
// input of the rule coalesce-thread-index (docs/rules/coalesce-thread-index.md): no bundled example
// has this pattern.
#include "scale2d.h"

#define TILE 16

__global__ void scale2d(int rows, int cols, float a, float b, const float* __restrict__ in,
                        float* __restrict__ out) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  const int col = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < rows && col < cols) out[(size_t)row * cols + col] = a * in[(size_t)row * cols + col] + b;
}

void scale2d_launch(int rows, int cols, float a, float b, const float* in, float* out, cudaStream_t stream) {
  dim3 block(TILE, TILE);
  dim3 grid((rows + TILE - 1) / TILE, (cols + TILE - 1) / TILE);
  scale2d<<<grid, block, 0, stream>>>(rows, cols, a, b, in, out);
}
