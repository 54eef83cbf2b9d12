// Loops: kind, nesting, #pragma unroll, constant trip counts.
// RUN: kloop extract %s --root %S -- %mockcuda | python3 %inputs/summarize.py | FileCheck %s
#include "cuda.h"
#define UNROLL 4
__global__ void loops(float *p, int n) {
#pragma unroll UNROLL
  for (int i = 0; i < 16; i += 2) {
    for (int j = 0; j <= 7; ++j)
      p[i * 8 + j] = 0.f;
  }
#pragma unroll
  for (int k = 0; k < n; ++k) p[k] += 1.f;
#pragma unroll 1
  for (int k = 10; k > 0; --k) p[k] -= 1.f;
  int w = 0;
  while (w < n) { ++w; }
  do { --w; } while (w > 0);
  int arr[3] = {1, 2, 3};
  for (int v : arr) p[v] = 0.f;
}
// CHECK: KERNEL loops editable=1
// CHECK: LOOP loops/loop#1 kind=for depth=0 parent=- unroll=4 trip=8 editable=1
// CHECK: LOOP loops/loop#2 kind=for depth=1 parent=loops/loop#1 unroll=- trip=8 editable=1
// CHECK: LOOP loops/loop#3 kind=for depth=0 parent=- unroll=full trip=- editable=1
// CHECK: LOOP loops/loop#4 kind=for depth=0 parent=- unroll=1 trip=- editable=1
// CHECK: LOOP loops/loop#5 kind=while depth=0
// CHECK: LOOP loops/loop#6 kind=do depth=0
// CHECK: LOOP loops/loop#7 kind=range_for depth=0
// CHECK: CONST macro:UNROLL kind=macro value=4
// CHECK: USE macro:UNROLL unroll loops line=6
