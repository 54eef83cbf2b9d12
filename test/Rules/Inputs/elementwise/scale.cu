// Elementwise grid-stride kernels for vectorize-global-access and coarsen-grid-stride-N.
#include <cuda.h>

// Fires: unit stride, independent iterations, all pointers __restrict__.
__global__ void scale(int n, float a, const float *__restrict__ x, float *__restrict__ out) {
  const int stride = blockDim.x * gridDim.x;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = a * x[i];
  }
}

// Refused: x is read two elements apart (non-unit stride).
__global__ void strided(int n, const float *__restrict__ x, float *__restrict__ out) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    out[i] = x[2 * i];
  }
}

// Refused: out[i + 1] belongs to the next iteration, another thread's.
__global__ void shifted(int n, const float *__restrict__ x, float *__restrict__ out) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    out[i + 1] = x[i];
  }
}

// Vectorize refuses: out is not __restrict__ and may overlap x.
__global__ void aliased(int n, const float *x, float *out) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    out[i] = x[i] + 1.0f;
  }
}

// Refused: each thread stores its own sum, which giving it other elements would change.
__global__ void total(int n, const float *__restrict__ x, float *__restrict__ out) {
  float sum = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    sum += x[i];
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

// Vectorize refuses: 8-byte and 4-byte elements.
__global__ void widen(int n, const float *__restrict__ x, double *__restrict__ out) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    out[i] = x[i];
  }
}

// Refused: not a grid-stride loop (each thread walks from its index by 1).
__global__ void walk(int n, float *__restrict__ out) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += 1) {
    out[i] = 0.0f;
  }
}

// Vectorize fires; coarsening refuses: the kernel also writes a flag per block.
__global__ void flagged(int n, float *__restrict__ out, int *__restrict__ flag) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    out[i] = 1.0f;
  }
  if (threadIdx.x == 0) flag[blockIdx.x] = 1;
}

void launch(int n, float a, const float *x, float *out, double *d, int *flag) {
  dim3 grid((n + 255) / 256);
  scale<<<grid, 256>>>(n, a, x, out);
  strided<<<grid, 256>>>(n, x, out);
  shifted<<<grid, 256>>>(n, x, out);
  aliased<<<(n + 255) / 256, 256>>>(n, x, out);
  total<<<grid, 256>>>(n, x, out);
  widen<<<grid, 256>>>(n, x, d);
  walk<<<grid, 256>>>(n, out);
  flagged<<<grid, 256>>>(n, out, flag);
}
