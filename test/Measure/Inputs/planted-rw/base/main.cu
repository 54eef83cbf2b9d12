// Harness of the read-write planted fixture (test/Measure/gpu-readwrite.test). Protected: every
// candidate directory holds a byte-identical copy.
//   app --n N --seed S --iters I
// C = alpha * A * B + beta * C over n x n row-major floats, with beta != 0: the kernel reads C and
// writes it back. A, B and the initial C0 are filled from the seed. Before every launch C is reset
// from C0 with a host-to-device copy (not a kernel, outside the timed launch), so that every launch,
// in the baseline and in a candidate alike, computes from the same inputs instead of accumulating
// into C. Launches gemm once as a check launch (kloop's warm-up) and then `iters` times through
// launch_gemm (kernel.cuh, the tunable source) and prints a checksum of C. It does NOT verify the
// result: only kloop's own output comparison can catch a wrong candidate. Exits non-zero on a CUDA
// error.
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
  int n = 256, seed = 0, iters = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--n")) n = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--seed")) seed = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--iters")) iters = std::atoi(argv[i + 1]);
  }
  if (n <= 0 || n > 4096 || iters < 0) {
    std::fprintf(stderr, "usage: app --n N (1..4096) --seed S --iters I (>= 0)\n");
    return 2;
  }
  const float alpha = 1.5f, beta = 0.5f;
  size_t count = size_t(n) * size_t(n), bytes = sizeof(float) * count;
  // A and B in [0, 1), C0 in [0, 10): beta * C0 is a large part of every result.
  std::vector<float> ha(count), hb(count), hc0(count);
  srand(seed + 1);
  for (size_t i = 0; i < count; ++i) {
    ha[i] = float(rand() % 1000) / 1000.0f;
    hb[i] = float(rand() % 1000) / 1000.0f;
    hc0[i] = float(rand() % 1000) / 100.0f;
  }
  float *a = nullptr, *b = nullptr, *c = nullptr;
  CK(cudaMalloc(&a, bytes));
  CK(cudaMalloc(&b, bytes));
  CK(cudaMalloc(&c, bytes));
  CK(cudaMemcpy(a, ha.data(), bytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b, hb.data(), bytes, cudaMemcpyHostToDevice));

  // One check launch (kloop's warm-up), then `iters` timed launches, each on C reset to C0.
  for (int it = 0; it <= iters; ++it) {
    CK(cudaMemcpy(c, hc0.data(), bytes, cudaMemcpyHostToDevice));
    CK(launch_gemm(n, alpha, a, b, beta, c));
  }
  CK(cudaDeviceSynchronize());
  CK(cudaGetLastError());

  std::vector<float> got(count);
  CK(cudaMemcpy(got.data(), c, bytes, cudaMemcpyDeviceToHost));
  double sum = 0;
  for (size_t i = 0; i < count; ++i)
    sum += got[i];
  CK(cudaFree(a));
  CK(cudaFree(b));
  CK(cudaFree(c));
  std::printf("app: n=%d seed=%d iters=%d checksum=%.9g\n", n, seed, iters, sum);
  return 0;
}
