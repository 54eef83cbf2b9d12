// Injection-overhead probe for libkloop-cupti (tools/kloop-cupti/gpu-selftest.sh): launches a memory-bound
// copy kernel of about 50 us on an H200 (2 x 104 MB of DRAM traffic at ~4.2 TB/s) ITERS times back to back
// and prints the mean time per launch measured with CUDA events around the whole batch. Run it with and
// without CUDA_INJECTION64_PATH: the ratio is the injection's cost on a 50 us kernel.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

__global__ void copy4(const float4 *__restrict__ in, float4 *__restrict__ out, size_t n4) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x)
    out[i] = in[i];
}

int main(int argc, char **argv) {
  int iters = argc > 1 ? std::atoi(argv[1]) : 1000;
  size_t n4 = (26u << 20) / 4; // 26 Mi floats = 104 MiB per buffer
  float4 *a, *b;
  if (cudaMalloc(&a, n4 * sizeof(float4)) != cudaSuccess || cudaMalloc(&b, n4 * sizeof(float4)) != cudaSuccess) {
    std::fprintf(stderr, "cudaMalloc failed\n");
    return 1;
  }
  cudaMemset(a, 0, n4 * sizeof(float4));
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  dim3 grid(sms * 4), block(512);
  for (int i = 0; i < 20; ++i) // warm-up
    copy4<<<grid, block>>>(a, b, n4);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaEventRecord(e0);
  for (int i = 0; i < iters; ++i)
    copy4<<<grid, block>>>(i % 2 ? b : a, i % 2 ? a : b, n4);
  cudaEventRecord(e1);
  cudaEventSynchronize(e1);
  float ms = 0;
  cudaEventElapsedTime(&ms, e0, e1);
  if (cudaGetLastError() != cudaSuccess) {
    std::fprintf(stderr, "kernel failed\n");
    return 1;
  }
  std::printf("per_launch_us=%.4f\n", ms * 1000.0 / iters);
  return 0;
}
