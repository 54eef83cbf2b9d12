// __launch_bounds__(maxThreads[, minBlocks]) values, and the constants that feed them.
// RUN: kloop extract %s --root %S -- %mockcuda | python3 %inputs/summarize.py | FileCheck %s
#include "cuda.h"
#define MAX_THREADS 256
__global__ void __launch_bounds__(MAX_THREADS, 2) bounded(float *p) { p[0] = 0.f; }
template <int BS>
__global__ void __launch_bounds__(BS) tbounded(float *p) { p[0] = 0.f; }
__global__ void unbounded(float *p) { p[0] = 0.f; }
// CHECK: KERNEL bounded editable=1 {{.*}} lb=MAX_THREADS=256/2=2
// CHECK: KERNEL tbounded editable=1 {{.*}} lb=BS=-/-
// CHECK: KERNEL unbounded editable=1 {{.*}} lb=-/-
// CHECK: USE macro:MAX_THREADS launch_bounds bounded line=5
