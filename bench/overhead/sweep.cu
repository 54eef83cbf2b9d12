// Tracing overhead against grid size: the same work launched with different numbers of thread
// blocks, timed without tracing, under libkloop-cupti.so and under CUPTI kernel tracing alone.
//
// Why: issue 4 bounds the injection overhead at 2% of a 50 us kernel. gpu-selftest.sh (528 blocks)
// measured -0.3%, bench/decide's saxpy (65,536 blocks) +5.9%. This program separates the number of
// blocks from the work: a grid-stride saxpy over N floats at any grid size, and an empty kernel.
//
// usage: sweep --kernel saxpy|empty --grid G --block B [--n N] [--launches L] [--cupti]
//   --grid 0     one thread per element (ceil(N / B) blocks), as a non-grid-stride kernel launches
//   --cupti      enable CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL in this process (no callbacks, nothing
//                else), to tell CUPTI's own cost from libkloop-cupti.so's
//   --cupti-serial  the same with CUPTI_ACTIVITY_KIND_KERNEL (CUPTI serializes kernels)
// Prints one line: kernel, grid, block, launches, per_launch_us (CUDA events around the whole batch
// of back-to-back launches, after 20 warm-up launches) and, with --cupti, the median CUPTI kernel
// duration in us.
#include <cuda_runtime.h>
#include <cupti.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(call)                                                                                \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "sweep: %s failed: %s\n", #call, cudaGetErrorString(e_));              \
      std::exit(3);                                                                                \
    }                                                                                              \
  } while (0)

__global__ void saxpy(long long n, float a, const float *__restrict__ x, float *__restrict__ y) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    y[i] = a * x[i] + y[i];
}

__global__ void empty() {}

static std::vector<unsigned long long> g_durations;

static void CUPTIAPI bufferRequested(uint8_t **buffer, size_t *size, size_t *maxRecords) {
  *size = 8 << 20;
  *buffer = static_cast<uint8_t *>(std::aligned_alloc(8, *size));
  *maxRecords = 0;
}

static void CUPTIAPI bufferCompleted(CUcontext, uint32_t, uint8_t *buffer, size_t, size_t valid) {
  CUpti_Activity *rec = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
    if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || rec->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      auto *k = reinterpret_cast<CUpti_ActivityKernel10 *>(rec);
      g_durations.push_back(k->end - k->start);
    }
  std::free(buffer);
}

int main(int argc, char **argv) {
  std::string kernel = "saxpy";
  long long n = 1LL << 24, launches = 500;
  unsigned grid = 0, block = 256;
  bool cupti = false, serial = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char * {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "sweep: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--kernel") kernel = value();
    else if (a == "--grid") grid = unsigned(std::atoll(value()));
    else if (a == "--block") block = unsigned(std::atoll(value()));
    else if (a == "--n") n = std::atoll(value());
    else if (a == "--launches") launches = std::atoll(value());
    else if (a == "--cupti") cupti = true;
    else if (a == "--cupti-serial") cupti = serial = true;
    else {
      std::fprintf(stderr, "sweep: unknown argument '%s'\n", a.c_str());
      return 2;
    }
  }
  if ((kernel != "saxpy" && kernel != "empty") || block < 32 || block > 1024 || launches < 1 ||
      (kernel == "empty" && grid == 0)) {
    std::fprintf(stderr, "usage: sweep --kernel saxpy|empty --grid G --block B [--n N] [--launches L] [--cupti|--cupti-serial]\n");
    return 2;
  }
  if (grid == 0) grid = unsigned((n + block - 1) / block);
  if (cupti) {
    if (cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted) != CUPTI_SUCCESS ||
        cuptiActivityEnable(serial ? CUPTI_ACTIVITY_KIND_KERNEL : CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
      std::fprintf(stderr, "sweep: CUPTI activity setup failed\n");
      return 3;
    }
  }
  float *x = nullptr, *y = nullptr;
  if (kernel == "saxpy") {
    CHECK(cudaMalloc(&x, n * sizeof(float)));
    CHECK(cudaMalloc(&y, n * sizeof(float)));
    CHECK(cudaMemset(x, 0, n * sizeof(float)));
    CHECK(cudaMemset(y, 0, n * sizeof(float)));
  }
  auto launch = [&]() {
    if (kernel == "saxpy") saxpy<<<grid, block>>>(n, 2.0f, x, y);
    else empty<<<grid, block>>>();
  };
  for (int i = 0; i < 20; ++i) launch();
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  CHECK(cudaEventRecord(e0));
  for (long long i = 0; i < launches; ++i) launch();
  CHECK(cudaEventRecord(e1));
  CHECK(cudaEventSynchronize(e1));
  CHECK(cudaGetLastError());
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, e0, e1));
  double median_us = -1;
  if (cupti) {
    cuptiActivityFlushAll(1);
    if (!g_durations.empty()) {
      std::sort(g_durations.begin(), g_durations.end());
      median_us = g_durations[g_durations.size() / 2] / 1000.0;
    }
  }
  std::printf("kernel=%s grid=%u block=%u launches=%lld per_launch_us=%.4f cupti_median_us=%.4f\n",
              kernel.c_str(), grid, block, launches, ms * 1000.0 / double(launches), median_us);
  return 0;
}
