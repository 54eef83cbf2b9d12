// Harness of the planted-cheat fixture (test/Measure/gpu-planted.test). Protected: every candidate
// directory holds a byte-identical copy, except harness/, whose change kloop compare must refuse.
//   app --n N --seed S --iters I
// Fills x and y from the seed, rotates over enough buffer sets that consecutive timed launches do
// not find their data in the 60 MiB L2 of an H200 (sets * 12 * n bytes > 128 MiB), launches saxpy
// once as a check launch (kloop's warm-up) and then `iters` times through launch_saxpy
// (kernel.cuh, the tunable source), and prints a checksum of the first output buffer. It does not
// verify the result itself: catching a wrong kernel is kloop's job. Exits non-zero on a CUDA error.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

#include "kernel.cuh"

#define CK(x)                                                                                 \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "app: %s: %s\n", #x, cudaGetErrorString(e_));                      \
      return 1;                                                                               \
    }                                                                                         \
  } while (0)

int main(int argc, char **argv) {
  int n = 1 << 20, seed = 0, iters = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--n")) n = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--seed")) seed = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--iters")) iters = std::atoi(argv[i + 1]);
  }
  if (n <= 0 || iters < 0) {
    std::fprintf(stderr, "usage: app --n N (> 0) --seed S --iters I (>= 0)\n");
    return 2;
  }
  const float a = 2.0f;
  size_t bytes = sizeof(float) * size_t(n);
  int sets = int((size_t(128) << 20) / (3 * bytes)) + 2;
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
    CK(cudaMemset(out[s], 0, bytes));
  }
  // The setup must be complete before the first launch, whichever stream kernel.cuh uses.
  CK(cudaDeviceSynchronize());

  CK(launch_saxpy(n, a, x[0], y[0], out[0])); // check launch (kloop's warm-up)
  for (int it = 0; it < iters; ++it) {
    int s = (it + 1) % sets;
    CK(launch_saxpy(n, a, x[s], y[s], out[s]));
  }
  CK(cudaDeviceSynchronize());
  CK(cudaGetLastError());

  std::vector<float> got(n);
  CK(cudaMemcpy(got.data(), out[0], bytes, cudaMemcpyDeviceToHost));
  double sum = 0;
  for (int i = 0; i < n; ++i)
    sum += got[i];
  for (int s = 0; s < sets; ++s) {
    CK(cudaFree(x[s]));
    CK(cudaFree(y[s]));
    CK(cudaFree(out[s]));
  }
  std::printf("app: n=%d seed=%d iters=%d sets=%d checksum=%.9g\n", n, seed, iters, sets, sum);
  return 0;
}
