// Block-stride loops, grid-stride loops with a constant block extent, and reductions, for
// vectorize-global-access (docs/rules/vectorize-global-access.md).
#include <cuda.h>

template <int BLOCK>
__device__ void block_tree(float *sdata, int tid) {
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
}

// Fires: a block-stride loop over a row (a local pointer based on a __restrict__ parameter); the float
// sum is reassociated, its partials combined by the kernel's halving tree; blockDim.x == BLOCK is checked
// at run time.
template <int BLOCK>
__global__ void row_sum(int cols, const float *__restrict__ in, float *__restrict__ sums) {
  __shared__ float red[BLOCK];
  const float *x = in + (size_t)blockIdx.x * cols;
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) s += x[c];
  red[threadIdx.x] = s;
  __syncthreads();
  for (int st = BLOCK / 2; st > 0; st >>= 1) {
    if (threadIdx.x < st) red[threadIdx.x] += red[threadIdx.x + st];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[blockIdx.x] = red[0];
}

// Fires without a workload: a grid-stride loop written with the block extent BLOCK and a const local
// thread index, combined by a device function's tree.
template <int BLOCK>
__global__ void grid_sum(const float *__restrict__ in, int n, float *__restrict__ partials) {
  __shared__ float sdata[BLOCK];
  const int tid = threadIdx.x;
  float sum = 0.f;
  for (int i = blockIdx.x * BLOCK + tid; i < n; i += BLOCK * gridDim.x) {
    sum += in[i];
  }
  sdata[tid] = sum;
  __syncthreads();
  block_tree<BLOCK>(sdata, tid);
  if (tid == 0) partials[blockIdx.x] = sdata[0];
}

// Refused: each thread's own maximum is used, never combined across the threads; the second loop reads it.
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

// Refused: the body reads a value that differs between threads.
__global__ void thread_value(int n, const float *__restrict__ x, float *__restrict__ out) {
  const int tid = threadIdx.x;
  for (int c = tid; c < n; c += blockDim.x) out[c] = x[c] + tid;
}

// Refused: the row pointer's offset differs between threads.
__global__ void thread_base(int n, const float *__restrict__ in, float *__restrict__ out) {
  const float *x = in + threadIdx.x;
  for (int c = threadIdx.x; c < n; c += blockDim.x) out[c] = x[c];
}

// Refused: threads that return never run the loop.
__global__ void early_return(int n, const float *__restrict__ x, float *__restrict__ out) {
  if (threadIdx.x >= 32) return;
  for (int c = threadIdx.x; c < n; c += blockDim.x) out[c] = x[c];
}

// Refused: a fence orders the two stores, which the rewrite would batch.
__global__ void fenced(int n, const float *__restrict__ x, float *__restrict__ out, int *__restrict__ flag) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    out[i] = x[i];
    __threadfence();
    flag[i] = 1;
  }
}

// Refused: an int sum of floats rounds at each step, so its order matters.
__global__ void int_of_float(int n, const float *__restrict__ x, int *__restrict__ out) {
  __shared__ int red[256];
  int s = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s += x[i];
  red[threadIdx.x] = s;
}

// Refused: the second loop reads what the first writes, element by element in the same thread.
__global__ void two_loops(int n, const float *__restrict__ x, float *__restrict__ y, const double *__restrict__ d) {
  for (int c = threadIdx.x; c < n; c += blockDim.x) y[c] = x[c] * 2.f;
  for (int c = threadIdx.x; c < n; c += blockDim.x) y[c] += (float)d[c];
}

// Refused: the body is in another file.
__global__ void included(int n, const float *__restrict__ in, float *__restrict__ out) {
  for (int c = threadIdx.x; c < n; c += blockDim.x) {
#include "body.inc"
  }
}

// Refused: the tree starts at 32, so it folds only the first 64 threads' partials; given other elements,
// the threads it leaves out would hold other sums.
template <int BLOCK>
__global__ void part_tree(int cols, const float *__restrict__ in, float *__restrict__ sums) {
  __shared__ float red[BLOCK];
  const float *x = in + (size_t)blockIdx.x * cols;
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) s += x[c];
  red[threadIdx.x] = s;
  __syncthreads();
  for (int st = 32; st > 0; st >>= 1) {
    if (threadIdx.x < st) red[threadIdx.x] += red[threadIdx.x + st];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[blockIdx.x] = red[0];
}

void launch(int rows, int cols, const float *in, float *out, float *sums, int step, int *flag, int *iout,
            const double *d) {
  row_sum<128><<<rows, 128>>>(cols, in, sums);
  grid_sum<256><<<rows, 256>>>(in, cols, sums);
  row_max<<<rows, 256>>>(cols, in, out);
  reads_acc<<<1, 256>>>(cols, in, out);
  mixed_ops<<<1, 256>>>(cols, in, out);
  shared_root<<<1, 256>>>(cols, out);
  moved<<<1, 256>>>(cols, out);
  stepped<<<1, 256>>>(cols, step, out);
  mismatched<256><<<rows, 256>>>(cols, out);
  thread_value<<<1, 256>>>(cols, in, out);
  thread_base<<<1, 256>>>(cols, in, out);
  early_return<<<1, 256>>>(cols, in, out);
  fenced<<<1, 256>>>(cols, in, out, flag);
  int_of_float<<<1, 256>>>(cols, in, iout);
  two_loops<<<1, 256>>>(cols, in, out, d);
  included<<<1, 256>>>(cols, in, out);
  part_tree<128><<<rows, 128>>>(cols, in, sums);
}
