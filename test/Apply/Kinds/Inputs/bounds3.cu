// Kernels whose __launch_bounds__ carry two and three arguments (the third: max blocks per cluster).
#include "cuda.h"
__global__ void __launch_bounds__(256, 2, 4) clustered(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= 2.0f;
}
#define MINB 3
__global__ void __launch_bounds__(256, MINB) twoargs(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1.0f;
}
void run(float *p, int n) {
  clustered<<<(n + 255) / 256, 256>>>(p, n);
  twoargs<<<(n + 255) / 256, 256>>>(p, n);
}
__global__ void __launch_bounds__(128) declared(float *p, int n);
__global__ void declared(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= 3.0f;
}
void run2(float *p, int n) { declared<<<(n + 127) / 128, 128>>>(p, n); }
__global__ void __launch_bounds__(256) redeclared(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] -= 1.0f;
}
__global__ void __launch_bounds__(256) redeclared(float *p, int n);
void run3(float *p, int n) { redeclared<<<(n + 255) / 256, 256>>>(p, n); }
template <int N>
__global__ void __launch_bounds__(N, N / 64) templated(float *p, int n) {
  int i = blockIdx.x * N + threadIdx.x;
  if (i < n) p[i] *= 0.5f;
}
void run4(float *p, int n) {
  templated<256><<<(n + 255) / 256, 256>>>(p, n);
  templated<128><<<(n + 127) / 128, 128>>>(p, n);
}
