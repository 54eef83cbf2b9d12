// restrict-const-params on a kernel with three read-only-looking pointers, one of which the body puts in
// a struct of `float *` (which the inventory does not count as a write): that parameter's `const` breaks
// the re-parse on the line that names it; the other two keep theirs (test/Apply/rules.test).
#include "cuda.h"
struct Holder {
  float *q;
};
__global__ void three(float *a, float *b, float *c, float *out) {
  Holder h{a};
  out[threadIdx.x] = h.q[threadIdx.x] + b[threadIdx.x] + c[threadIdx.x];
}
