// Shared-memory arrays: static sizes (evaluated) and extern __shared__.
// RUN: kloop extract %s --root %S -- %mockcuda | python3 %inputs/summarize.py | FileCheck %s
#include "cuda.h"
constexpr int TILE = 16;
__global__ void tiles(float *out) {
  __shared__ float tile[TILE][TILE + 1];
  __shared__ int flags[32];
  extern __shared__ float dyn[];
  tile[threadIdx.y][threadIdx.x] = dyn[threadIdx.x] + flags[0];
  out[0] = tile[0][0];
}
// CHECK: SHARED tiles/shared:tile dims=TILE=16,TILE + 1=17 bytes=1088 dynamic=0 extern=0 editable=1
// CHECK: SHARED tiles/shared:flags dims=32=32 bytes=128 dynamic=0 extern=0 editable=1
// CHECK: SHARED tiles/shared:dyn dims=- bytes=- dynamic=1 extern=1 editable=1
// CHECK: CONST const:TILE kind=constexpr value=16
// CHECK: USE const:TILE array_size tiles line=6
