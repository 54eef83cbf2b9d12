// ceilings.cu - measures two ceilings of the current GPU for `kloop measure`:
//   copy_gbps      device-to-device copy bandwidth, counting read + write bytes (GB/s = 1e9 B/s),
//                  the best of cudaMemcpyAsync D2D and a float4 grid-stride copy kernel;
//   fma_gflops_f32 f32 FMA rate (2 flops per FMA, GFLOP/s = 1e9 flop/s) of a kernel with 8
//                  independent FMA chains per thread and enough blocks to fill every SM.
// Each figure is the best of REPS timed repetitions (CUDA events around a long, ~ms, operation:
// event overhead is negligible at that length). Buffers are 1 GiB per side, far above any L2.
// Prints one JSON object on stdout; exits non-zero with a message on stderr on any CUDA error.
// Built and run by kloop (lib/Measure/Ceilings.cpp), which caches the result per GPU name.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CK(x)                                                                                   \
  do {                                                                                          \
    cudaError_t e_ = (x);                                                                       \
    if (e_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "ceilings: %s failed: %s\n", #x, cudaGetErrorString(e_));            \
      std::exit(2);                                                                             \
    }                                                                                           \
  } while (0)

static const int REPS = 10;

__global__ void copyKernel(const float4 *__restrict__ in, float4 *__restrict__ out, size_t n) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = in[i];
}

// 8 independent chains hide the FMA latency; ITERS * 8 FMAs per thread.
template <int ITERS>
__global__ void fmaKernel(float *out, float a, float b) {
  float x0 = threadIdx.x, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3, x4 = x0 + 4, x5 = x0 + 5, x6 = x0 + 6,
        x7 = x0 + 7;
#pragma unroll 16
  for (int i = 0; i < ITERS; ++i) {
    x0 = fmaf(x0, a, b); x1 = fmaf(x1, a, b); x2 = fmaf(x2, a, b); x3 = fmaf(x3, a, b);
    x4 = fmaf(x4, a, b); x5 = fmaf(x5, a, b); x6 = fmaf(x6, a, b); x7 = fmaf(x7, a, b);
  }
  float s = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
  // Never true for the a, b used, but the compiler cannot know: keeps the chains alive.
  if (s == 1.2345f)
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

int main() {
  int dev = 0;
  CK(cudaSetDevice(dev));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, dev));

  const size_t bytes = size_t(1) << 30;
  float4 *a = nullptr, *b = nullptr;
  CK(cudaMalloc(&a, bytes));
  CK(cudaMalloc(&b, bytes));
  CK(cudaMemset(a, 1, bytes));
  CK(cudaMemset(b, 0, bytes));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));

  double bestMemcpyMs = 1e30, bestKernelMs = 1e30;
  int sms = prop.multiProcessorCount;
  for (int r = 0; r < REPS + 1; ++r) { // first repetition is a warm-up
    float ms = 0;
    CK(cudaEventRecord(e0));
    CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice));
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&ms, e0, e1));
    if (r > 0 && ms < bestMemcpyMs)
      bestMemcpyMs = ms;
    CK(cudaEventRecord(e0));
    copyKernel<<<sms * 8, 512>>>(a, b, bytes / sizeof(float4));
    CK(cudaGetLastError());
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&ms, e0, e1));
    if (r > 0 && ms < bestKernelMs)
      bestKernelMs = ms;
  }
  double memcpyGBps = 2.0 * bytes / (bestMemcpyMs * 1e-3) / 1e9;
  double kernelGBps = 2.0 * bytes / (bestKernelMs * 1e-3) / 1e9;

  const int ITERS = 4096;
  int blocks = sms * 16, threads = 256;
  float *out = nullptr;
  CK(cudaMalloc(&out, sizeof(float) * blocks * threads));
  double bestFmaMs = 1e30;
  for (int r = 0; r < REPS + 1; ++r) {
    float ms = 0;
    CK(cudaEventRecord(e0));
    fmaKernel<ITERS><<<blocks, threads>>>(out, 0.999f, 0.001f);
    CK(cudaGetLastError());
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&ms, e0, e1));
    if (r > 0 && ms < bestFmaMs)
      bestFmaMs = ms;
  }
  double flops = 2.0 * 8.0 * ITERS * double(blocks) * threads;
  double fmaGflops = flops / (bestFmaMs * 1e-3) / 1e9;

  std::printf("{\"schema\": \"kloop-ceilings/1\", \"device\": \"%s\", \"cc\": \"%d.%d\", \"sms\": %d, "
              "\"copy_gbps\": %.1f, \"copy_gbps_memcpy\": %.1f, \"copy_gbps_kernel\": %.1f, "
              "\"copy_bytes\": %zu, \"fma_gflops_f32\": %.1f, \"reps\": %d}\n",
              prop.name, prop.major, prop.minor, sms, memcpyGBps > kernelGBps ? memcpyGBps : kernelGBps,
              memcpyGBps, kernelGBps, bytes, fmaGflops, REPS);
  CK(cudaFree(a));
  CK(cudaFree(b));
  CK(cudaFree(out));
  return 0;
}
