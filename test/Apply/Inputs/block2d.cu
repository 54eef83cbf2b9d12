// A 2-D block whose size is a product of two macros (as in examples/stencil2d): a set_constant on one
// factor changes the block size without naming the launch.
#include "cuda.h"
#define BLOCK_X 32
#define BLOCK_Y 8

__global__ void __launch_bounds__(BLOCK_X * BLOCK_Y) blur(const float *in, float *out, int w, int h) {
  int x = blockIdx.x * BLOCK_X + threadIdx.x, y = blockIdx.y * BLOCK_Y + threadIdx.y;
  if (x < w && y < h)
    out[y * w + x] = in[y * w + x];
}

void run(const float *in, float *out, int w, int h) {
  dim3 block(BLOCK_X, BLOCK_Y);
  dim3 grid((w + BLOCK_X - 1) / BLOCK_X, (h + BLOCK_Y - 1) / BLOCK_Y);
  blur<<<grid, block>>>(in, out, w, h);
}
