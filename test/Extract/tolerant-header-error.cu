// A host-code error in a shared header does not drop the translation unit: its kernel and
// launch site are listed with status "ok", the TU is "partial", and the error is reported
// with the side that saw it (the host side only: the device side parses cleanly).
// RUN: kloop extract %s --root %S -- %mockcuda -I %S/Inputs/tolerant > %t.json 2> %t.err
// RUN: python3 %S/Inputs/status.py < %t.json | FileCheck %s
// RUN: FileCheck --check-prefix=ERR %s < %t.err
#include "cuda.h"
#include "host-broken.h"
__global__ void scale(float *p, float a) { p[threadIdx.x] *= a; }
void run(float *p) { scale<<<1, 32>>>(p, 2.0f); }
// CHECK: TU tolerant-header-error.cu partial sides=ok/error
// CHECK-NEXT: TUERR {{.*}}host-broken.h:5:{{[0-9]+}}: error: use of undeclared identifier 'not_declared_anywhere' [host]
// CHECK-NEXT: KERNEL scale ok editable=1
// CHECK-NEXT: LAUNCH tolerant-header-error.cu:run/launch#1 ok editable=1 kernel=scale
// ERR: kloop extract: warning: tolerant-header-error.cu: parsed with errors; what they touch has status "error"
// ERR-NEXT: host-broken.h:5:{{[0-9]+}}: error: use of undeclared identifier 'not_declared_anywhere' [host]
// ERR-NEXT: kloop extract: 1 of 1 translation unit(s) parsed with errors; their kernels and launch sites outside the errors have status "ok"
