// Refused with the real CUDA headers: the body adds the thread's rank from cooperative groups, a
// namespace function whose result depends on the thread.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void ranked(int n, const float *__restrict__ x, float *__restrict__ y) {
  for (int c = threadIdx.x; c < n; c += blockDim.x) y[c] = x[c] + cg::this_thread_block().thread_rank();
}
