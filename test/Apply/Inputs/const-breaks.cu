// restrict-const-params where `float *` is needed in ways the inventory does not count as writes (a
// struct member): the new `const` breaks the re-parse inside that kernel only (test/Apply/rules.test);
// in_array's array of pointers is an alias the inventory now follows, so it gets no `const`.
#include "cuda.h"
struct Holder {
  float *q;
};
__global__ void in_struct(float *o) {
  Holder h{o};
  h.q[0] = 1.0f;
}
__global__ void in_array(float *o) {
  float *arr[1] = {o};
  arr[0][0] = 1.0f;
}
__global__ void clean(float *out, float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = 2.0f * in[i];
}
__global__ void twice(float *o) {
  Holder h{o};
  float *arr[1] = {o};
  h.q[0] = arr[0][0];
}
