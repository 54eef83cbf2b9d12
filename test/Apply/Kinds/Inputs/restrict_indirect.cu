#include "cuda.h"
// Ways a kernel reaches memory other than through its pointer parameters (add_restrict.test INDIRECT):
// each case writes there while `in` is read, so `in` may not be __restrict__ (an in-place call passes
// `in`'s buffer there, where no launch argument shows it). The test compiles one case at a time.
struct Out {
  float *p;
};
struct Cfg {
  int n;
  float scale;
};
#ifdef CASE_STRUCT
__global__ void k(const float *in, Out o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) o.p[i] = in[i] + 1.0f;
}
void run(float *buf, int n) { k<<<1, 256>>>(buf, Out{buf}, n); }
#endif
#ifdef CASE_TABLE
__global__ void k(const float *in, float **outs, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) outs[0][i] = 2.0f * in[i];
}
void run(float *buf, float **table, int n) { k<<<1, 256>>>(buf, table, n); }
#endif
#ifdef CASE_GLOBAL_POINTER
__device__ float *gout;
__global__ void k(const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) gout[i] = in[i];
}
void run(float *buf, int n) { k<<<1, 256>>>(buf, n); }
#endif
#ifdef CASE_GLOBAL_ARRAY
__device__ float gbuf[256];
__global__ void k(const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) gbuf[i] = in[i] + gbuf[i];
}
void run(float *buf, int n) { k<<<1, 256>>>(buf, n); }
#endif
#ifdef CASE_INTEGER
__global__ void k(const float *in, unsigned long long addr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) ((float *)addr)[i] = in[i];
}
void run(float *buf, int n) { k<<<1, 256>>>(buf, (unsigned long long)buf, n); }
#endif
#ifdef CASE_CALLEE
__device__ void put(Out o, int i, float v) { o.p[i] = v; }
__global__ void k(const float *in, Out o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) put(o, i, in[i]);
}
void run(float *buf, int n) { k<<<1, 256>>>(buf, Out{buf}, n); }
#endif
#ifdef CASE_TEMPLATE
template <typename S> __global__ void k(const float *in, S s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) s.p[i] = in[i];
}
void run(float *buf, int n) { k<Out><<<1, 256>>>(buf, Out{buf}, n); }
#endif
#ifdef CASE_FUNCTION_POINTER
__global__ void k(const float *in, float *out, float (*f)(const float *, int), int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = f(in, i);
}
void run(float *a, float *b, float (*f)(const float *, int), int n) { k<<<1, 256>>>(a, b, f, n); }
#endif
#ifdef CASE_ADDRESS_TAKEN
__global__ void k(const float *in, float *out, unsigned long long addr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float *p = out;
  *(unsigned long long *)&p = addr;
  if (i < n) p[i] = in[i];
}
void run(float *buf, float *other, int n) { k<<<1, 256>>>(buf, other, (unsigned long long)buf, n); }
#endif
#ifdef CASE_BIT_CAST
__global__ void k(const float *in, unsigned long long addr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) __builtin_bit_cast(float *, addr)[i] = in[i];
}
void run(float *buf, int n) { k<<<1, 256>>>(buf, (unsigned long long)buf, n); }
#endif
#ifdef CASE_VIRTUAL
struct Sink {
  __device__ virtual void put(int i, float v);
};
__global__ void k(const float *in, Sink *s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) s->put(i, in[i]);
}
#endif
#ifdef CASE_DESTRUCTOR
__device__ float gsum[256];
struct Flush {
  float v;
  __device__ ~Flush() { gsum[threadIdx.x] = v; }
};
__global__ void k(const float *in, int n) {
  Flush f{in[threadIdx.x]};
}
#endif
#ifdef CASE_DEFAULT_ARGUMENT
__device__ float *gtarget;
__device__ void put(int i, float v, float *p = gtarget) { p[i] = v; }
__global__ void k(const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) put(i, in[i]);
}
#endif
#ifdef CASE_ASM
__global__ void k(const float *in, unsigned long long addr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  asm volatile("st.global.f32 [%0], %1;" : : "l"(addr), "f"(in[i]) : "memory");
}
#endif
#ifdef CASE_UNDEFINED
__device__ void put(int i, float v);
__global__ void k(const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) put(i, in[i]);
}
#endif
#ifdef CASE_CLEAN
// None of those: locals derived from the parameters, a lambda capturing one, shared and constant
// memory, a struct argument without pointers.
__constant__ float coef[4];
__device__ float twice(float v) { return 2.0f * v; }
__global__ void k(const float *in, float *out, Cfg c) {
  __shared__ float tile[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float *row = in + i;
  auto at = [=](int j) { return row[j]; };
  tile[threadIdx.x] = at(0) * coef[0];
  if (i < c.n) out[i] = twice(tile[threadIdx.x]) * c.scale;
}
void run(float *a, int n) {
  float *b = nullptr;
  cudaMalloc((void **)&b, n * sizeof(float));
  k<<<1, 256>>>(a, b, Cfg{n, 1.0f});
}
#endif
