// series: out[i] = sum_{k=1..16} expf(-k x / 4) / (1 + k x^2), one thread per element. Each element costs 16
// expf and 16 IEEE divisions for 8 bytes of memory traffic: bound by the arithmetic, not by DRAM. The input
// of the rule fast-math where it should pay (docs/rules/fast-math.md): every bundled example with an expf is
// memory-bound, so on them the intrinsics save nothing measurable.
#include "series.h"

#define BLOCK 256

__global__ void series(int n, const float* __restrict__ in, float* __restrict__ out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float x = in[i];
  float s = 0.f;
  for (int k = 1; k <= kSeriesTerms; ++k) s += expf(-0.25f * k * x) / (1.f + k * x * x);
  out[i] = s;
}

void series_launch(int n, const float* in, float* out, cudaStream_t stream) {
  series<<<(n + BLOCK - 1) / BLOCK, BLOCK, 0, stream>>>(n, in, out);
}
