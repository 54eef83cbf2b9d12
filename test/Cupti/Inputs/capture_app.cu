// A small, deterministic CUDA program for libkloop-cupti's GPU tests. It launches kernels through every
// path the library handles and prints a digest of every result, so that a run with the injection library
// can be compared with a run without it.
//
// Launch order (seq):
//   0  saxpy<<<16, 256>>>(n, 2, x, y)                 <<<>>> (CUDA 13: __cudaLaunchKernel with a cudaKernel_t)
//   1  cudaLaunchKernel((void*)saxpy, 16, 256, ...)   runtime API with a host stub (signature path)
//   2  cuLaunchKernel(saxpy's CUfunction, ...)         driver API (cuFuncGetParamInfo path)
//   3  c_scale<<<16, 256>>>(z, n, 3)                  extern "C" kernel (no signature: 8-byte matching)
//   4  half_writer<<<8, 256>>>(w, n)                  writes only w[0 .. n/2): the planted lazy kernel
// with n = 4096, x[i] = i, y[i] = 1, z[i] = i, w[i] = 0 initially. Hence after each launch
//   y = 2i+1 (seq 0), 4i+1 (seq 1), 6i+1 (seq 2); z = 3i; w[i] = 1 for i < n/2 and untouched above,
// all exact in float32. --reset calls cudaDeviceReset before exiting (exercises the flush at context
// destruction).
#include <cuda.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x)                                                                                            \
  do {                                                                                                      \
    cudaError_t e_ = (x);                                                                                   \
    if (e_ != cudaSuccess) {                                                                                \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));              \
      return 1;                                                                                             \
    }                                                                                                       \
  } while (0)

__global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}

extern "C" __global__ void c_scale(float *p, int n, float s) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] *= s;
}

__global__ void half_writer(float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n / 2)
    out[i] = 1.0f;
}

static unsigned long long fnv1a(const void *p, size_t n) {
  const unsigned char *b = static_cast<const unsigned char *>(p);
  unsigned long long h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; ++i) {
    h ^= b[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

int main(int argc, char **argv) {
  bool reset = argc > 1 && std::strcmp(argv[1], "--reset") == 0;
  const int n = 4096;
  const size_t bytes = n * sizeof(float);
  std::vector<float> hx(n), hy(n, 1.0f), hz(n), hw(n, 0.0f);
  for (int i = 0; i < n; ++i)
    hx[i] = hz[i] = static_cast<float>(i);
  float *x, *y, *z, *w;
  CHECK(cudaMalloc(&x, bytes));
  CHECK(cudaMalloc(&y, bytes));
  CHECK(cudaMalloc(&z, bytes));
  CHECK(cudaMalloc(&w, bytes));
  CHECK(cudaMemcpy(x, hx.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(y, hy.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(z, hz.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(w, 0, bytes));

  const int threads = 256, blocks = (n + threads - 1) / threads;
  float a = 2.0f;
  saxpy<<<blocks, threads>>>(n, a, x, y); // seq 0
  CHECK(cudaGetLastError());

  int nn = n;
  const float *cx = x;
  void *args[] = {&nn, &a, &cx, &y};
  CHECK(cudaLaunchKernel(reinterpret_cast<const void *>(&saxpy), dim3(blocks), dim3(threads), args, 0,
                         nullptr)); // seq 1

  cudaFunction_t fn = nullptr;
  CHECK(cudaGetFuncBySymbol(&fn, reinterpret_cast<const void *>(&saxpy)));
  CUresult r = cuLaunchKernel(reinterpret_cast<CUfunction>(fn), blocks, 1, 1, threads, 1, 1, 0, nullptr, args,
                              nullptr); // seq 2
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuLaunchKernel failed: %d\n", static_cast<int>(r));
    return 1;
  }

  c_scale<<<blocks, threads>>>(z, n, 3.0f); // seq 3
  CHECK(cudaGetLastError());
  half_writer<<<blocks / 2, threads>>>(w, n); // seq 4
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());

  CHECK(cudaMemcpy(hy.data(), y, bytes, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(hz.data(), z, bytes, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(hw.data(), w, bytes, cudaMemcpyDeviceToHost));
  int yBad = 0, zBad = 0, wNan = 0;
  for (int i = 0; i < n; ++i) {
    yBad += hy[i] != 6.0f * i + 1.0f;
    zBad += hz[i] != 3.0f * i;
    wNan += std::isnan(hw[i]) ? 1 : 0;
  }
  std::printf("y fnv=%016llx bad=%d\n", fnv1a(hy.data(), bytes), yBad);
  std::printf("z fnv=%016llx bad=%d\n", fnv1a(hz.data(), bytes), zBad);
  std::printf("w fnv=%016llx nan=%d\n", fnv1a(hw.data(), bytes), wNan);
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  CHECK(cudaFree(z));
  CHECK(cudaFree(w));
  if (reset)
    CHECK(cudaDeviceReset());
  return 0;
}
