// Host code compares the kernel with a function pointer of its type: a `const` added to one of its
// parameters breaks the comparison, outside every kernel, so no one edit is to blame.
#include "cuda.h"
__global__ void copy(float *out, float *in, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = in[i];
}
typedef void (*kernel_t)(float *, float *, int);
bool isCopy(kernel_t k) { return k == &copy; }
