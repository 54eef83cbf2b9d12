// Kernels where an earlier version of the fold proof let vectorize-global-access fire wrongly (a break
// test of 2026-12-02): each is now refused. test/Rules/vectorize-folds.test, prefix BREAK.
#include <cuda.h>

#define TREE(R, B)                                                   \
  for (int s = (B) / 2; s > 0; s >>= 1) {                            \
    if (threadIdx.x < s) R[threadIdx.x] += R[threadIdx.x + s];       \
    __syncthreads();                                                 \
  }

template <int B>
__device__ float fsum(float v, float *red) {
  red[threadIdx.x] = v;
  __syncthreads();
  for (int s = B / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  float r = red[0];
  __syncthreads();
  return r;
}

// A pointer to the array reads a partial slot after the fold.
template <int B>
__global__ void alias_ptr(int cols, const float *__restrict__ in, float *__restrict__ out) {
  const float *x = in + (size_t)blockIdx.x * cols;
  __shared__ float red[B];
  float *p = red;
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += B) s += x[c];
  const float t = fsum<B>(s, red);
  out[blockIdx.x * B + threadIdx.x] = p[threadIdx.x] + t;
}

__shared__ float file_red[128];
__device__ float peek() { return file_red[threadIdx.x]; }

// A file-scope array: another function reads its slots.
__global__ void file_scope(int cols, const float *__restrict__ in, float *__restrict__ out) {
  const float *x = in + (size_t)blockIdx.x * cols;
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += 128) s += x[c];
  s = fsum<128>(s, file_red);
  out[blockIdx.x * 128 + threadIdx.x] = peek() + s;
}

// A refill under a condition may not run: the later read of another slot sees a partial.
template <int B>
__global__ void cond_refill(int cols, int flag, const float *__restrict__ in, float *__restrict__ out) {
  const float *x = in + (size_t)blockIdx.x * cols;
  __shared__ float red[B];
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += B) s += x[c];
  const float total = fsum<B>(s, red);
  float t = 0.f;
  if (flag) t = fsum<B>(t, red);
  out[blockIdx.x * B + threadIdx.x] = red[threadIdx.x] + total + t;
}

template <int B>
__device__ float fcopy(float v, float *red) {
  const float w = v;
  red[threadIdx.x] = v;
  __syncthreads();
  for (int s = B / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  return red[0] + w;
}

// The fold function keeps a copy of the thread's own partial.
template <int B>
__global__ void value_copy(int cols, const float *__restrict__ in, float *__restrict__ out) {
  const float *x = in + (size_t)blockIdx.x * cols;
  __shared__ float red[B];
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += B) s += x[c];
  out[blockIdx.x * B + threadIdx.x] = fcopy<B>(s, red);
}

template <int B>
__device__ float fspec(float v, float *red) {
  red[threadIdx.x] = v;
  __syncthreads();
  TREE(red, B)
  return red[0];
}
template <>
__device__ float fspec<128>(float v, float *red) { return v; }

// An explicit specialization of the fold may be the one instantiated.
template <int B>
__global__ void specialized(int cols, const float *__restrict__ in, float *__restrict__ out) {
  const float *x = in + (size_t)blockIdx.x * cols;
  __shared__ float red[B];
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += B) s += x[c];
  s = fspec<B>(s, red);
  out[blockIdx.x * B + threadIdx.x] = s;
}

template <int B>
__device__ float fover(float v, volatile float *red) {
  red[threadIdx.x] = v;
  __syncthreads();
  TREE(red, B)
  return red[0];
}
template <int B>
__device__ float fover(float v, float *red) { return v; }

// Two candidates: overload resolution, not the first declared, decides which runs.
template <int B>
__global__ void overloaded(int cols, const float *__restrict__ in, float *__restrict__ out) {
  const float *x = in + (size_t)blockIdx.x * cols;
  __shared__ float red[B];
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += B) s += x[c];
  s = fover<B>(s, red);
  out[blockIdx.x * B + threadIdx.x] = s;
}

template <int B>
struct Holder {
  template <int C>
  static __device__ float fold(float v, float *red) {
    red[threadIdx.x] = v;
    __syncthreads();
    TREE(red, B)
    return red[0];
  }
};

// A member template: its tree's B is the class's parameter, not the call's.
__global__ void member(int cols, const float *__restrict__ in, float *__restrict__ out) {
  const float *x = in + (size_t)blockIdx.x * cols;
  __shared__ float red[128];
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += 128) s += x[c];
  s = Holder<32>::fold<128>(s, red);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}

#define BS 1 << 7

// The extent is a macro whose expansion binds otherwise in `BS / 2` (1 << 3).
__global__ void macro_extent(int cols, const float *__restrict__ in, float *__restrict__ out) {
  const float *x = in + (size_t)blockIdx.x * cols;
  __shared__ float red[128];
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += BS) s += x[c];
  red[threadIdx.x] = s;
  __syncthreads();
  for (int st = BS / 2; st > 0; st >>= 1) {
    if (threadIdx.x < st) red[threadIdx.x] += red[threadIdx.x + st];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = red[0];
}

// A per-thread array: the "total" differs between threads, and the loop reads it.
template <int B>
__global__ void local_array(int cols, const float *__restrict__ in, float *__restrict__ out) {
  const float *x = in + (size_t)blockIdx.x * cols;
  float *y = out + (size_t)blockIdx.x * cols;
  float mine[B] = {};
  const float t = fsum<B>(1.f, mine);
  for (int c = threadIdx.x; c < cols; c += B) y[c] = x[c] * t;
}

// A lambda written before the last assignment changes the value after it.
__global__ void lambda_write(int cols, const float *__restrict__ in, float *__restrict__ out) {
  const float *x = in + (size_t)blockIdx.x * cols;
  float *y = out + (size_t)blockIdx.x * cols;
  float m = 0.f;
  auto bump = [&]() { m = threadIdx.x; };
  m = 1.f;
  bump();
  for (int c = threadIdx.x; c < cols; c += blockDim.x) y[c] = x[c] * m;
}

// A backward goto runs the loop twice in one thread.
__global__ void jumps(int cols, const float *__restrict__ in, float *__restrict__ out) {
  int pass = 0;
again:
  pass += 0;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) out[c] = in[c] + 1.f;
  if (threadIdx.x == 0 && ++pass < 2) goto again;
}

// The written pointer has no __restrict__: another parameter may be the same buffer.
__global__ void unrestricted(int n, float *out, const float *alias, float *res) {
  for (int c = threadIdx.x; c < n; c += blockDim.x) out[c] = 2.f * out[c];
  res[threadIdx.x] = alias[threadIdx.x];
}

__device__ float dsum(float v, float *red = file_red) {
  red[threadIdx.x] = v;
  __syncthreads();
  TREE(red, 128)
  return red[0];
}

// The array comes from a default argument.
__global__ void default_arg(int cols, const float *__restrict__ in, float *__restrict__ out) {
  const float *x = in + (size_t)blockIdx.x * cols;
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += 128) s += x[c];
  s = dsum(s);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}

template <int B>
__device__ float tsum(float v, float *red = file_red) {
  red[threadIdx.x] = v;
  __syncthreads();
  TREE(red, B)
  return red[0];
}

// The same in a template: the call passes one argument (kloop extract crashed here).
template <int B>
__global__ void default_tmpl(int cols, const float *__restrict__ in, float *__restrict__ out) {
  const float *x = in + (size_t)blockIdx.x * cols;
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += B) s += x[c];
  s = tsum<B>(s);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}

void launch(int rows, int cols, const float *in, float *out, float *res) {
  alias_ptr<128><<<rows, 128>>>(cols, in, out);
  file_scope<<<rows, 128>>>(cols, in, out);
  cond_refill<128><<<rows, 128>>>(cols, 0, in, out);
  value_copy<128><<<rows, 128>>>(cols, in, out);
  specialized<128><<<rows, 128>>>(cols, in, out);
  overloaded<128><<<rows, 128>>>(cols, in, out);
  member<<<rows, 128>>>(cols, in, out);
  macro_extent<<<rows, 128>>>(cols, in, out);
  local_array<128><<<rows, 128>>>(cols, in, out);
  lambda_write<<<rows, 128>>>(cols, in, out);
  jumps<<<rows, 128>>>(cols, in, out);
  unrestricted<<<1, 128>>>(cols, out, out, res);
  default_arg<<<rows, 128>>>(cols, in, out);
  default_tmpl<128><<<rows, 128>>>(cols, in, out);
}
