// Launch sites inside a host function with an error: a launch whose own expression holds no
// error is "ok"; a launch whose arguments do not compile is "error".
// RUN: kloop extract %s --root %S -- %mockcuda | python3 %S/Inputs/status.py | FileCheck %s
#include "cuda.h"
__global__ void k(float *p) { p[threadIdx.x] = 0.0f; }
void run(float *p) {
  int broken = no_such_function(p);
  k<<<1, 32>>>(p);
  k<<<1, 64>>>(no_such_pointer);
}
// CHECK: TU tolerant-launch-error.cu partial sides=error/error
// CHECK: KERNEL k ok editable=1
// CHECK-NEXT: LAUNCH tolerant-launch-error.cu:run/launch#1 ok editable=1 kernel=k
// CHECK-NEXT: LAUNCH tolerant-launch-error.cu:run/launch#2 error editable=0 kernel=k reason=has 1 compile error, the first: tolerant-launch-error.cu:9:16: error: use of undeclared identifier 'no_such_pointer' [device, host]
// CHECK-NEXT: LAUNCHERR tolerant-launch-error.cu:run/launch#2 tolerant-launch-error.cu:9:16: error: use of undeclared identifier 'no_such_pointer' [device, host]
