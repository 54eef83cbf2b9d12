// Lost by kloop and by nvcc alike: a missing header.
#include "no_such_header.h"

__global__ void never(float *x) { x[0] = 1.0f; }
