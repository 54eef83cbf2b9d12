// Reductions whose partials a device function folds, for vectorize-global-access
// (docs/rules/vectorize-global-access.md, "Reductions"; lib/Inventory/BlockCombine.h).
#include <cuda.h>

template <int BLOCK>
__device__ float fold_max(float v, float *red) {
  const int tid = threadIdx.x;
  red[tid] = v;
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (tid < s) red[tid] = fmaxf(red[tid], red[tid + s]);
    __syncthreads();
  }
  float r = red[0];
  __syncthreads();
  return r;
}

template <int BLOCK>
__device__ float fold_sum(float v, float *red) {
  const int tid = threadIdx.x;
  red[tid] = v;
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (tid < s) red[tid] += red[tid + s];
    __syncthreads();
  }
  float r = red[0];
  __syncthreads();
  return r;
}

template <int BLOCK>
__device__ void tree_sum(float *sdata, int tid) {
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
}

// Fires on all three loops: the maximum and the sum are folded by device functions and reassigned their
// block's totals, which the later loops read (and a const local of them).
template <int BLOCK>
__global__ void rows_softmax(int cols, const float *__restrict__ in, float *__restrict__ out) {
  __shared__ float red[BLOCK];
  const float *x = in + (size_t)blockIdx.x * cols;
  float *y = out + (size_t)blockIdx.x * cols;
  float m = -1e30f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) m = fmaxf(m, x[c]);
  m = fold_max<BLOCK>(m, red);
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) s += expf(x[c] - m);
  s = fold_sum<BLOCK>(s, red);
  const float inv = 1.f / s;
  for (int c = threadIdx.x; c < cols; c += BLOCK) y[c] = expf(x[c] - m) * inv;
}

// Fires: the total is used inside a const local's initializer.
template <int BLOCK>
__global__ void rows_mean(int cols, const float *__restrict__ in, float *__restrict__ out) {
  __shared__ float red[BLOCK];
  const float *x = in + (size_t)blockIdx.x * cols;
  float *y = out + (size_t)blockIdx.x * cols;
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) s += x[c];
  const float mean = fold_sum<BLOCK>(s, red) / cols;
  for (int c = threadIdx.x; c < cols; c += BLOCK) y[c] = x[c] - mean;
}

// Fires: a grid-stride sum kept in its blocks, folded by a device function's tree; later only slot 0 is
// read, then the array is filled again.
template <int BLOCK>
__global__ void grid_total(const float *__restrict__ in, int n, float *__restrict__ partials,
                           float *__restrict__ out) {
  __shared__ float sdata[BLOCK];
  const int tid = threadIdx.x;
  float sum = 0.f;
  for (int i = blockIdx.x * BLOCK + tid; i < n; i += BLOCK * gridDim.x) {
    sum += in[i];
  }
  sdata[tid] = sum;
  __syncthreads();
  tree_sum<BLOCK>(sdata, tid);
  if (tid == 0) partials[blockIdx.x] = sdata[0];
  sdata[tid] = 1.f;
  __syncthreads();
  out[blockIdx.x * BLOCK + tid] = sdata[(tid + 1) % BLOCK];
}

// Refused: after the tree, a slot other than 0 is read (it holds another partial after the rewrite).
template <int BLOCK>
__global__ void later_slot(const float *__restrict__ in, int n, float *__restrict__ out) {
  __shared__ float sdata[BLOCK];
  const int tid = threadIdx.x;
  float sum = 0.f;
  for (int i = blockIdx.x * BLOCK + tid; i < n; i += BLOCK * gridDim.x) sum += in[i];
  sdata[tid] = sum;
  __syncthreads();
  tree_sum<BLOCK>(sdata, tid);
  out[blockIdx.x * BLOCK + tid] = sdata[tid];
}

template <int BLOCK>
__device__ float fold_keep(float v, float *red) {
  red[threadIdx.x] = v;
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  return red[0] + v;
}

// Refused: the function uses the thread's own partial again after the tree.
template <int BLOCK>
__global__ void keeps_value(int cols, const float *__restrict__ in, float *__restrict__ out) {
  __shared__ float red[BLOCK];
  const float *x = in + (size_t)blockIdx.x * cols;
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) s += x[c];
  out[blockIdx.x * BLOCK + threadIdx.x] = fold_keep<BLOCK>(s, red);
}

// Refused: a sum folded by a maximum.
template <int BLOCK>
__global__ void wrong_op(int cols, const float *__restrict__ in, float *__restrict__ out) {
  __shared__ float red[BLOCK];
  const float *x = in + (size_t)blockIdx.x * cols;
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) s += x[c];
  s = fold_max<BLOCK>(s, red);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}

// Refused: the function is passed half the block extent, so its tree folds only half the slots.
template <int BLOCK>
__global__ void half_fold(int cols, const float *__restrict__ in, float *__restrict__ out) {
  __shared__ float red[BLOCK];
  const float *x = in + (size_t)blockIdx.x * cols;
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) s += x[c];
  s = fold_sum<BLOCK / 2>(s, red);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}

// Refused: the partial is used after the fold, which did not overwrite it.
template <int BLOCK>
__global__ void used_after(int cols, const float *__restrict__ in, float *__restrict__ out) {
  __shared__ float red[BLOCK];
  const float *x = in + (size_t)blockIdx.x * cols;
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) s += x[c];
  const float total = fold_sum<BLOCK>(s, red);
  out[blockIdx.x * BLOCK + threadIdx.x] = s / total;
}

// Refused (second loop): the maximum is changed by one thread after its fold, so it may differ.
template <int BLOCK>
__global__ void rewritten(int cols, const float *__restrict__ in, float *__restrict__ out) {
  __shared__ float red[BLOCK];
  const float *x = in + (size_t)blockIdx.x * cols;
  float *y = out + (size_t)blockIdx.x * cols;
  float m = -1e30f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) m = fmaxf(m, x[c]);
  m = fold_max<BLOCK>(m, red);
  if (threadIdx.x == 0) m = 0.f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) y[c] = x[c] - m;
}

template <int BLOCK>
__device__ void lane_tree(float *sdata, int lane) {
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (lane < s) sdata[lane] += sdata[lane + s];
    __syncthreads();
  }
}

// Refused: the tree's index is a parameter this call passes something other than threadIdx.x.
template <int BLOCK>
__global__ void other_index(const float *__restrict__ in, int n, float *__restrict__ out) {
  __shared__ float sdata[BLOCK];
  float sum = 0.f;
  for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += BLOCK * gridDim.x) sum += in[i];
  sdata[threadIdx.x] = sum;
  __syncthreads();
  lane_tree<BLOCK>(sdata, (threadIdx.x + 1) % BLOCK);
  if (threadIdx.x == 0) out[blockIdx.x] = sdata[0];
}

void launch(int rows, int cols, const float *in, float *out, float *partials) {
  rows_softmax<256><<<rows, 256>>>(cols, in, out);
  rows_mean<128><<<rows, 128>>>(cols, in, out);
  grid_total<256><<<rows, 256>>>(in, cols, partials, out);
  later_slot<256><<<rows, 256>>>(in, cols, out);
  keeps_value<128><<<rows, 128>>>(cols, in, out);
  wrong_op<128><<<rows, 128>>>(cols, in, out);
  half_fold<128><<<rows, 128>>>(cols, in, out);
  used_after<128><<<rows, 128>>>(cols, in, out);
  rewritten<128><<<rows, 128>>>(cols, in, out);
  other_index<128><<<rows, 128>>>(in, cols, out);
}
