// Float operations with faster, less precise intrinsics, under the tolerances of fast.kloop.yaml.
#include "cuda.h"

// expf inside a division, then another division: all three replaced (out: rel 1e-5, 83 ulp).
__global__ void soft(int n, const float *__restrict__ x, float m, float *__restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = expf(x[i] - m) / (m + 1.f) + x[i] / 3.f;
}

// logf, sinf and powf have no bound relative to their result (out: rel 1e-3).
__global__ void logs(int n, const float *__restrict__ x, float *__restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = logf(x[i]) + sinf(x[i]) + powf(x[i], 2.f);
}

// out: exact.
__global__ void exact_div(int n, const float *__restrict__ x, float *__restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] / 3.f;
}

// out: abs 1e-4.
__global__ void abs_exp(int n, const float *__restrict__ x, float *__restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = expf(x[i]);
}

// out: rel 1e-7, under 1 ulp: __fdividef's 2 ulp do not fit.
__global__ void tight(int n, const float *__restrict__ x, float *__restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] / 7.f;
}

// out is listed, extra is not.
__global__ void unlisted(int n, const float *__restrict__ x, float *__restrict__ out, float *__restrict__ extra) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = expf(x[i]);
    extra[i] = 1.f;
  }
}

void launch(int n, const float *x, float *out, float *extra) {
  soft<<<(n + 255) / 256, 256>>>(n, x, 0.5f, out);
  logs<<<(n + 255) / 256, 256>>>(n, x, out);
  exact_div<<<(n + 255) / 256, 256>>>(n, x, out);
  abs_exp<<<(n + 255) / 256, 256>>>(n, x, out);
  tight<<<(n + 255) / 256, 256>>>(n, x, out);
  unlisted<<<(n + 255) / 256, 256>>>(n, x, out, extra);
}
