// A/B workload of the acceptance-rule benchmark (bench/decide/README.md, run by bench/decide/run.sh).
//
//   ab_app --variant base|slow [--launches N] [--events FILE] [--n ELEMENTS] [--batch]
//
// saxpy out[i] = a * x[i] + y[i] over n floats (default n = 2^24: three 64 MiB buffers, 201 MB of DRAM
// traffic per launch, far beyond the H200's 60 MB L2, so about 50 us at ~4 TB/s). One thread per element
// and 256 threads per block, so the block count (not a per-thread loop count) scales with n.
//
// --variant slow is the planted 3% slowdown: the same kernel over round(1.03 n) elements. Both variants
// allocate the same padded buffers (1.03 n + 1 elements) and initialise them the same way, so the only
// difference between them is the element count: the slow variant is slower for a real reason (3% more
// memory traffic), not because of a sleep or a different code path.
//
// Default mode: N launches, each bracketed by cudaEventRecord before and after and followed by
// cudaEventSynchronize; the per-launch elapsed times (ms, cudaEventElapsedTime) are written to FILE, one per
// line, in launch order. The first launch is the warm-up: it is written too (the analysis drops it, as it
// drops the first CUPTI record). Run under libkloop-cupti.so, the profile holds the CUPTI duration of the same
// launches, in the same order.
//
// --batch (injection overhead, (c) in the README): 20 warm-up launches, then N launches back to back with one
// event pair around the whole batch; prints "per_launch_us=<mean us per launch>" (the protocol of
// tools/kloop-cupti/gpu-selftest.sh, on this kernel). --events is ignored.
//
// Before exiting, a few elements are checked on the host (first, last processed, first unprocessed): exit 1 on
// a wrong value or on any CUDA error.
#include <cuda_runtime.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(call)                                                                                          \
  do {                                                                                                       \
    cudaError_t err_ = (call);                                                                               \
    if (err_ != cudaSuccess) {                                                                               \
      std::fprintf(stderr, "ab_app: %s failed: %s (%s:%d)\n", #call, cudaGetErrorString(err_), __FILE__,    \
                   __LINE__);                                                                                \
      std::exit(1);                                                                                          \
    }                                                                                                        \
  } while (0)

__global__ void saxpy(long long n, float a, const float *__restrict__ x, const float *__restrict__ y,
                      float *__restrict__ out) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = a * x[i] + y[i];
}

// Exactly representable inputs, so a * x + y is exact and checkable on the host.
__global__ void init(long long n, float *x, float *y, float *out) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    x[i] = (float)(i % 1024) * 0.5f;
    y[i] = 1.0f;
    out[i] = 0.0f;
  }
}

static void usage() {
  std::fprintf(stderr, "usage: ab_app --variant base|slow [--launches N] [--events FILE] [--n ELEMENTS] [--batch]\n");
  std::exit(2);
}

int main(int argc, char **argv) {
  std::string variant, events;
  long long launches = 100, n = 1LL << 24;
  bool batch = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char * {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "ab_app: %s needs a value\n", a.c_str());
        usage();
      }
      return argv[++i];
    };
    if (a == "--variant")
      variant = value();
    else if (a == "--launches")
      launches = std::atoll(value());
    else if (a == "--events")
      events = value();
    else if (a == "--n")
      n = std::atoll(value());
    else if (a == "--batch")
      batch = true;
    else {
      std::fprintf(stderr, "ab_app: unknown argument '%s'\n", a.c_str());
      usage();
    }
  }
  if (variant != "base" && variant != "slow") {
    std::fprintf(stderr, "ab_app: --variant must be base or slow\n");
    usage();
  }
  if (launches < 1 || n < 1024) {
    std::fprintf(stderr, "ab_app: --launches must be >= 1 and --n >= 1024\n");
    usage();
  }
  const long long padded = (long long)std::ceil((double)n * 1.03) + 1;
  const long long work = variant == "slow" ? std::llround((double)n * 1.03) : n;
  const float a = 2.0f;

  float *x, *y, *out;
  CHECK(cudaMalloc(&x, padded * sizeof(float)));
  CHECK(cudaMalloc(&y, padded * sizeof(float)));
  CHECK(cudaMalloc(&out, padded * sizeof(float)));
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  init<<<sms * 8, 256>>>(padded, x, y, out);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());

  const unsigned block = 256;
  const unsigned grid = (unsigned)((work + block - 1) / block);
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));

  if (batch) {
    for (int i = 0; i < 20; ++i)
      saxpy<<<grid, block>>>(work, a, x, y, out);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaEventRecord(e0));
    for (long long i = 0; i < launches; ++i)
      saxpy<<<grid, block>>>(work, a, x, y, out);
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    CHECK(cudaGetLastError());
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    std::printf("per_launch_us=%.4f\n", ms * 1000.0 / (double)launches);
  } else {
    std::vector<float> ms(launches);
    for (long long i = 0; i < launches; ++i) {
      CHECK(cudaEventRecord(e0));
      saxpy<<<grid, block>>>(work, a, x, y, out);
      CHECK(cudaGetLastError());
      CHECK(cudaEventRecord(e1));
      CHECK(cudaEventSynchronize(e1));
      CHECK(cudaEventElapsedTime(&ms[i], e0, e1));
    }
    if (!events.empty()) {
      FILE *f = std::fopen(events.c_str(), "w");
      if (!f) {
        std::fprintf(stderr, "ab_app: cannot write '%s': %s\n", events.c_str(), std::strerror(errno));
        return 1;
      }
      for (float v : ms)
        std::fprintf(f, "%.9g\n", v);
      if (std::fclose(f) != 0) {
        std::fprintf(stderr, "ab_app: cannot write '%s': %s\n", events.c_str(), std::strerror(errno));
        return 1;
      }
    }
  }

  // Spot checks: first and last processed elements hold a * x + y; the first unprocessed one is untouched.
  const long long idx[3] = {0, work - 1, work};
  for (long long k : idx) {
    float xv = (float)(k % 1024) * 0.5f, got = -1;
    CHECK(cudaMemcpy(&got, out + k, sizeof(float), cudaMemcpyDeviceToHost));
    float want = k < work ? a * xv + 1.0f : 0.0f;
    if (got != want) {
      std::fprintf(stderr, "ab_app: out[%lld] = %g, expected %g\n", k, got, want);
      return 1;
    }
  }
  CHECK(cudaEventDestroy(e0));
  CHECK(cudaEventDestroy(e1));
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  CHECK(cudaFree(out));
  std::printf("ab_app: %s, %lld elements, %lld launches%s\n", variant.c_str(), work, launches,
              batch ? " (batch)" : "");
  return 0;
}
