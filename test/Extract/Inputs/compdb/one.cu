#include "cuda.h"
#ifndef FROM_RSP
#error "the response file was not read"
#endif
#ifndef FROM_XCOMPILER
#error "-Xcompiler arguments were not passed"
#endif
__global__ void rsp_kernel(int *p) { p[0] = FROM_RSP; }
