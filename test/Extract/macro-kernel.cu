// A kernel written by a macro is listed, but marked not editable with the reason.
// RUN: kloop extract %s --root %S -- %mockcuda | python3 %inputs/summarize.py | FileCheck %s
#include "cuda.h"
#define DEFINE_SCALE(NAME, F) \
  __global__ void NAME(float *p) { for (int i = 0; i < 4; ++i) p[i] *= F; }
DEFINE_SCALE(twice, 2.f)
__global__ void plain(float *p) { p[0] = 1.f; }
// CHECK: KERNEL twice editable=0
// CHECK-SAME: reason=comes from the expansion of macro 'DEFINE_SCALE'
// CHECK: LOOP twice/loop#1 kind=for depth=0 parent=- unroll=- trip=4 editable=0
// CHECK: KERNEL plain editable=1
