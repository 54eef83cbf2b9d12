// Block-stride loops, grid-stride loops with a constant block extent, and reductions, for
// vectorize-global-access (docs/rules/vectorize-global-access.md).
#include <cuda.h>

// Fires: a block-stride loop over a row (local pointers based on __restrict__ parameters); the
// float sum is reassociated, and blockDim.x == BLOCK is checked at run time.
template <int BLOCK>
__global__ void row_sum(int cols, const float *__restrict__ in, float *__restrict__ sums) {
  const float *x = in + (size_t)blockIdx.x * cols;
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) s += x[c];
  sums[blockIdx.x * BLOCK + threadIdx.x] = s;
}

// Fires: a grid-stride loop written with the block extent BLOCK and a const local thread index.
template <int BLOCK>
__global__ void grid_sum(const float *__restrict__ in, int n, float *__restrict__ partials) {
  const int tid = threadIdx.x;
  float sum = 0.f;
  for (int i = blockIdx.x * BLOCK + tid; i < n; i += BLOCK * gridDim.x) {
    sum += in[i];
  }
  partials[blockIdx.x * BLOCK + tid] = sum;
}

// Fires: a max reduction (exact in any order) and a block-stride elementwise loop writing a row.
__global__ void row_max(int cols, const float *__restrict__ in, float *__restrict__ out) {
  const float *x = in + (size_t)blockIdx.x * cols;
  float *y = out + (size_t)blockIdx.x * cols;
  float m = -1e30f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, x[c]);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) y[c] = x[c] - m;
}

// Refused: the accumulator is read outside its own update.
__global__ void reads_acc(int n, const float *__restrict__ x, float *__restrict__ out) {
  float s = 0.f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s += x[i] * s;
  out[threadIdx.x] = s;
}

// Refused: two operations on one accumulator.
__global__ void mixed_ops(int n, const float *__restrict__ x, float *__restrict__ out) {
  float s = 0.f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    s += x[i];
    s *= 2.f;
  }
  out[threadIdx.x] = s;
}

// Refused: a and b are both based on buf, and b is written.
__global__ void shared_root(int n, float *__restrict__ buf) {
  const float *a = buf;
  float *b = buf + n;
  for (int c = threadIdx.x; c < n; c += blockDim.x) b[c] = a[c];
}

// Refused: y is assigned again after its declaration.
__global__ void moved(int n, float *__restrict__ out) {
  float *y = out;
  y = out + 1;
  for (int c = threadIdx.x; c < n; c += blockDim.x) y[c] = 0.f;
}

// Refused: the stride is a parameter, not the block extent.
__global__ void stepped(int n, int step, float *__restrict__ out) {
  for (int c = threadIdx.x; c < n; c += step) out[c] = 0.f;
}

// Refused: the start's block extent (BLOCK) and the stride's (blockDim.x) differ.
template <int BLOCK>
__global__ void mismatched(int n, float *__restrict__ out) {
  for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += blockDim.x * gridDim.x) out[i] = 0.f;
}

void launch(int rows, int cols, const float *in, float *out, float *sums, int step) {
  row_sum<128><<<rows, 128>>>(cols, in, sums);
  grid_sum<256><<<rows, 256>>>(in, cols, sums);
  row_max<<<rows, 256>>>(cols, in, out);
  reads_acc<<<1, 256>>>(cols, in, out);
  mixed_ops<<<1, 256>>>(cols, in, out);
  shared_root<<<1, 256>>>(cols, out);
  moved<<<1, 256>>>(cols, out);
  stepped<<<1, 256>>>(cols, step, out);
  mismatched<256><<<rows, 256>>>(cols, out);
}
