#include "cuda.h"
// Side effects that a call written in new text runs without spelling them there.
int counter;
int bump(int v) { return counter += v; }
int with_default(int a, int b = bump(1)) { return a + b; }
void note_exit(int *) { ++counter; }
int with_cleanup(int n) {
  int guard __attribute__((cleanup(note_exit))) = 0;
  return n / 256 + guard;
}
struct Tally {
  ~Tally() { ++counter; }
};
int with_temp_default(int n, Tally t = Tally()) { return n / 256; }

namespace fast {
inline int pick(int v) { return v + 1; }
}
inline int pick(long v) { return (int)v; }

__global__ void scale(float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] *= 2.f;
}

int main() {
  float *a;
  int n = 1 << 20;
  cudaMalloc((void **)&a, n * sizeof(float));
  scale<<<(n + 255) / 256, 256>>>(a, n);
  return pick(5);
}
