// A kernel whose body has an error is listed with status "error", the error and its side,
// and is not editable (nor are its loops); the other kernel of the translation unit is "ok".
// RUN: kloop extract %s --root %S -- %mockcuda | python3 %S/Inputs/status.py | FileCheck %s
#include "cuda.h"
__global__ void good(float *p) { p[threadIdx.x] = 1.0f; }
__global__ void bad(float *p) {
  for (int i = 0; i < 4; ++i) {
    p[i] = missing_value;
  }
}
// CHECK: TU tolerant-kernel-error.cu partial sides=error/error
// CHECK-NEXT: TUERR {{.*}}tolerant-kernel-error.cu:8:12: error: use of undeclared identifier 'missing_value' [device, host]
// CHECK-NEXT: KERNEL good ok editable=1
// CHECK-NEXT: KERNEL bad error editable=0 reason=has 1 compile error, the first: tolerant-kernel-error.cu:8:12: error: use of undeclared identifier 'missing_value' [device, host]
// CHECK-NEXT: KERNELERR bad tolerant-kernel-error.cu:8:12: error: use of undeclared identifier 'missing_value' [device, host]
// CHECK-NEXT: REGION bad/loop#1 editable=0 reason=is in kernel 'bad', which has 1 compile error
