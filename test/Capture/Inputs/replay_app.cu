// A small program for kloop capture / kloop replay on the GPU (test/Capture/gpu-capture-replay*.test).
//  - saxpy_struct: its buffers reach it inside a struct passed by value (x read, y read and written),
//    launched 3 times with one launch configuration;
//  - scale_interior: an interior pointer (z + 256 floats) with the length after it;
//  - touch_managed (with --managed): managed memory, which capture refuses;
//  - scale_copy (with --copy): reads x, writes y only (a write-only output, as a program's out-of-place
//    kernel has);
//  - add_stored (with --stored): its inputs reach it through an array of pointers in device memory (and
//    as parameters too, so that capture records them).
// Prints checksums, so that a captured run can be compared with an uncaptured one.
// Built as a program, and with -cubin as the replay's baseline; -DKLOOP_WRONG, -DKLOOP_FAULT and
// -DKLOOP_HANG give candidates that compute a wrong saxpy (and scale_copy), write to an invalid address, or never return;
// -DKLOOP_ROUNDOFF one whose saxpy is off by a relative 2e-7 (within rel:1e-5, not exact).
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include <vector>

struct Bufs {
  const float *x;
  float *y;
};

__global__ void saxpy_struct(int n, float a, Bufs b) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#if defined(KLOOP_HANG)
  long long t0 = clock64();
  while (clock64() - t0 >= 0) {
  }
#endif
  if (i < n) {
#if defined(KLOOP_WRONG)
    b.y[i] = a * b.x[i] + b.y[i] + (i == n / 2 ? 1.0f : 0.0f);
#elif defined(KLOOP_ROUNDOFF)
    b.y[i] = (a * b.x[i] + b.y[i]) * 1.0000002f; // within rel:1e-5 of the reference, not exact
#elif defined(KLOOP_FAULT)
    reinterpret_cast<float *>(16)[i] = a * b.x[i] + b.y[i];
#else
    b.y[i] = a * b.x[i] + b.y[i];
#endif
  }
}

__global__ void scale_interior(float *p, int n, float s) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] *= s;
}

__global__ void touch_managed(float *m, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    m[i] += 1.0f;
}

__global__ void add_stored(const float *const *in, const float *a, const float *b, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[0][i] + in[1][i] + (a == in[0] && b == in[1] ? 0.0f : 1.0f);
}

__global__ void scale_copy(const float *x, float *y, int n, float s) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
#if defined(KLOOP_WRONG)
    y[i] = s * x[i] + (i == 7 ? 1.0f : 0.0f);
#else
    y[i] = s * x[i];
#endif
}

/// Takes no pointer: its captured launch has no allocation to restore, copy or check.
__global__ void scalar_only(int n, float a) {
  if (n < 0 && a > 1e30f)
    __trap();
}

/// Writes addresses of its input: after the launch, device memory holds pointers into an allocation.
__global__ void write_pointers(const float *x, const float **out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = x + i;
}

#define CHECK(call)                                                                                             \
  do {                                                                                                          \
    cudaError_t e_ = (call);                                                                                    \
    if (e_ != cudaSuccess) {                                                                                    \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e_));                                  \
      return 1;                                                                                                 \
    }                                                                                                           \
  } while (0)

int main(int argc, char **argv) {
  bool Managed = argc > 1 && std::strcmp(argv[1], "--managed") == 0;
  bool Stored = argc > 1 && std::strcmp(argv[1], "--stored") == 0;
  bool Scalar = argc > 1 && std::strcmp(argv[1], "--scalar") == 0;
  bool Pointers = argc > 1 && std::strcmp(argv[1], "--pointers") == 0;
  bool Copy = argc > 1 && std::strcmp(argv[1], "--copy") == 0;
  const int n = 1 << 16;
  std::vector<float> hx(n), hy(n), hz(n + 256);
  for (int i = 0; i < n; ++i) {
    hx[i] = 0.5f * static_cast<float>(i % 97);
    hy[i] = static_cast<float>(i % 13) - 6.0f;
  }
  for (int i = 0; i < n + 256; ++i)
    hz[i] = static_cast<float>(i % 31);
  float *x, *y, *z;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&y, n * sizeof(float)));
  CHECK(cudaMalloc(&z, (n + 256) * sizeof(float)));
  CHECK(cudaMemcpy(x, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(y, hy.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(z, hz.data(), (n + 256) * sizeof(float), cudaMemcpyHostToDevice));
  for (int r = 0; r < 3; ++r)
    saxpy_struct<<<(n + 255) / 256, 256>>>(n, 2.0f, Bufs{x, y});
  scale_interior<<<(n + 127) / 128, 128>>>(z + 256, n, 3.0f);
  CHECK(cudaGetLastError());
  if (Managed) {
    float *m;
    CHECK(cudaMallocManaged(&m, n * sizeof(float)));
    CHECK(cudaMemset(m, 0, n * sizeof(float)));
    touch_managed<<<(n + 255) / 256, 256>>>(m, n);
    CHECK(cudaDeviceSynchronize());
    std::printf("managed[7] = %g\n", m[7]);
    CHECK(cudaFree(m));
  }
  if (Stored) {
    const float *hin[2] = {x, z};
    const float **in;
    CHECK(cudaMalloc(&in, sizeof(hin)));
    CHECK(cudaMemcpy(in, hin, sizeof(hin), cudaMemcpyHostToDevice));
    add_stored<<<(n + 255) / 256, 256>>>(in, x, z, y, n);
    CHECK(cudaGetLastError());
  }
  if (Pointers) {
    const float **out;
    CHECK(cudaMalloc(&out, 1024 * sizeof(float *)));
    CHECK(cudaMemset(out, 0, 1024 * sizeof(float *)));
    write_pointers<<<4, 256>>>(x, out, 1024);
    CHECK(cudaGetLastError());
  }
  if (Copy) {
    scale_copy<<<(n + 255) / 256, 256>>>(x, y, n, 0.25f);
    CHECK(cudaGetLastError());
  }
  if (Scalar) {
    scalar_only<<<1, 32>>>(n, 2.0f);
    CHECK(cudaGetLastError());
  }
  CHECK(cudaMemcpy(hy.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(hz.data(), z, (n + 256) * sizeof(float), cudaMemcpyDeviceToHost));
  double sy = 0, sz = 0;
  for (int i = 0; i < n; ++i)
    sy += hy[i];
  for (int i = 0; i < n + 256; ++i)
    sz += hz[i];
  std::printf("sum y = %.1f, sum z = %.1f\n", sy, sz);
  return 0;
}
