// A device function and a function template that kernel k calls: inserted code that adds an overload
// or a specialization of either changes what k calls without touching k.
#include "cuda.h"
__device__ float scale(double x) { return x * 2.0; }
template <typename T> __device__ T twice(T x) { return x + x; }
#ifdef WITH_NAMESPACE
namespace a {
__device__ float helper(int x) { return 2.0f * x; }
} // namespace a
using namespace a;
#endif
__global__ void k(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = scale(a[i]) + twice(a[i]);
}
void host(float *a, int n) { k<<<(n + 255) / 256, 256>>>(a, n); }
