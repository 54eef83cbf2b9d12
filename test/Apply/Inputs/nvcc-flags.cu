#include "cuda.h"
// Device code that clang accepts and nvcc 13.0 refuses without a flag (nvcc-flag-uses.test): a call of a
// constexpr function that is not __device__, a lambda annotated __device__.
constexpr float clampz(float v) { return v < 0.0f ? 0.0f : v; }
template <typename T> constexpr T tmax(T a, T b) { return a < b ? b : a; }
__device__ constexpr float devz(float v) { return v < 0.0f ? 0.0f : v; }
struct Box {
  float v;
  constexpr Box(float x) : v(x) {}
};
// An existing device template whose body nvcc compiles only once new code instantiates it.
template <typename T> __device__ T dclamp(T v) { return clampz(v); }

__global__ void scale(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * in[i];
}

// Existing code the command builds with --expt-relaxed-constexpr only; an edit elsewhere is not blamed.
#ifdef OLD_USE
__global__ void old(float *out) { out[0] = clampz(out[0]); }
#endif
