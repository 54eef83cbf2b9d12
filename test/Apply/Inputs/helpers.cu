#include "cuda.h"
#define UNROLL_ALL _Pragma("unroll")
#define THREADS 256
#define QUIET _Pragma("clang diagnostic ignored \"-Wunused-value\"")

int ceil_div(int a, int b) { return (a + b - 1) / b; }
int rounded(int n) {
  int r = ceil_div(n, 32);
  return r * 32;
}
int hits;
int counted_div(int a, int b) {
  ++hits;
  return a / b;
}
int halve_to_one(int n) { return n <= 1 ? 1 : halve_to_one(n / 2); }
volatile int flag;
int plus_flag(int n) { return n + flag; }
int store_div(int *out, int a, int b) {
  *out = a / b;
  return *out;
}

__global__ void scale(float *out, const float *in, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = a * in[i];
}

int main() {
  float *a, *b;
  int n = 1 << 20;
  cudaMalloc((void **)&a, n * sizeof(float));
  cudaMalloc((void **)&b, n * sizeof(float));
  scale<<<(n + 255) / 256, THREADS>>>(a, b, 2.f, n);
  return 0;
}
