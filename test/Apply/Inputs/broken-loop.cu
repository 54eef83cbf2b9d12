#include "cuda.h"
__global__ void bad(float *o) {
  for (int k = 0; k < 4; ++k)
    o[k] = undefined_thing + k;
}
__global__ void good(float *o) { o[0] = 1.0f; }
