// A tiny CUDA workload for the GPU lit tests of kloop measure/compare (test/Measure/gpu-*.test).
//   tiny_saxpy --n N --seed S --iters I [--sets K]
// Rotates over enough buffer sets that consecutive timed launches do not find their data in the
// 60 MiB L2 of an H200 (sets * 12 * n bytes > 128 MiB), checks the result, exits non-zero on error.
//   tiny_saxpy --n N --hold SECONDS --ready FILE
// Instead: holds a CUDA context and keeps the GPU busy with saxpy launches for SECONDS (or until
// killed), after creating FILE: the other process of gpu-foreign-load.test.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

#define CK(x)                                                                                 \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "tiny_saxpy: %s: %s\n", #x, cudaGetErrorString(e_));               \
      return 1;                                                                               \
    }                                                                                         \
  } while (0)

__global__ void saxpy(int n, float a, const float *x, const float *y, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = a * x[i] + y[i];
}

int main(int argc, char **argv) {
  int n = 1 << 20, seed = 0, iters = 10, sets_arg = 0; // --sets 1: no rotation (gpu-l2flush.test)
  int hold = 0;
  const char *ready = nullptr;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--n")) n = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--seed")) seed = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--iters")) iters = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--sets")) sets_arg = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--hold")) hold = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--ready")) ready = argv[i + 1];
  }
  size_t bytes = sizeof(float) * size_t(n);
  int sets = sets_arg > 0 ? sets_arg : int((size_t(128) << 20) / (3 * bytes)) + 2;
  std::vector<float> hx(n), hy(n);
  srand(seed + 1);
  for (int i = 0; i < n; ++i) {
    hx[i] = float(rand() % 1000) / 100.0f;
    hy[i] = float(rand() % 1000) / 100.0f;
  }
  std::vector<float *> x(sets), y(sets), out(sets);
  for (int s = 0; s < sets; ++s) {
    CK(cudaMalloc(&x[s], bytes));
    CK(cudaMalloc(&y[s], bytes));
    CK(cudaMalloc(&out[s], bytes));
    CK(cudaMemcpy(x[s], hx.data(), bytes, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(y[s], hy.data(), bytes, cudaMemcpyHostToDevice));
  }
  int threads = 256, blocks = (n + threads - 1) / threads;
  if (hold > 0) {
    CK(cudaDeviceSynchronize());
    if (ready) {
      FILE *f = std::fopen(ready, "w");
      if (!f || std::fclose(f) != 0) {
        std::fprintf(stderr, "tiny_saxpy: cannot create %s\n", ready);
        return 1;
      }
    }
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(hold);
    while (std::chrono::steady_clock::now() < end) {
      for (int it = 0; it < 100; ++it)
        saxpy<<<blocks, threads>>>(n, 2.0f, x[it % sets], y[it % sets], out[it % sets]);
      CK(cudaDeviceSynchronize());
    }
    return 0;
  }
  saxpy<<<blocks, threads>>>(n, 2.0f, x[0], y[0], out[0]); // check launch (kloop's warm-up)
  CK(cudaGetLastError());
  for (int it = 0; it < iters; ++it) {
    int s = (it + 1) % sets;
    saxpy<<<blocks, threads>>>(n, 2.0f, x[s], y[s], out[s]);
    CK(cudaGetLastError());
  }
  CK(cudaDeviceSynchronize());
  std::vector<float> got(n);
  CK(cudaMemcpy(got.data(), out[0], bytes, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i)
    if (got[i] != 2.0f * hx[i] + hy[i]) {
      std::fprintf(stderr, "tiny_saxpy: mismatch at %d\n", i);
      return 1;
    }
  std::printf("tiny_saxpy: n=%d seed=%d iters=%d sets=%d ok\n", n, seed, iters, sets);
  return 0;
}
