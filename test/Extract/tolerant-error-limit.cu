// More errors than clang's default limit (20) before a kernel: with no error limit the parse
// does not stop at a fatal "too many errors", so the kernel after them is still found.
// RUN: kloop extract %s --root %S -- %mockcuda > %t.json 2> %t.err
// RUN: python3 %S/Inputs/status.py < %t.json | FileCheck %s
// RUN: FileCheck --check-prefix=ERR %s < %t.err
#include "cuda.h"
int e1 = undeclared_1;
int e2 = undeclared_2;
int e3 = undeclared_3;
int e4 = undeclared_4;
int e5 = undeclared_5;
int e6 = undeclared_6;
int e7 = undeclared_7;
int e8 = undeclared_8;
int e9 = undeclared_9;
int e10 = undeclared_10;
int e11 = undeclared_11;
int e12 = undeclared_12;
int e13 = undeclared_13;
int e14 = undeclared_14;
int e15 = undeclared_15;
int e16 = undeclared_16;
int e17 = undeclared_17;
int e18 = undeclared_18;
int e19 = undeclared_19;
int e20 = undeclared_20;
int e21 = undeclared_21;
int e22 = undeclared_22;
int e23 = undeclared_23;
int e24 = undeclared_24;
int e25 = undeclared_25;
__global__ void after_errors(int *p) { p[0] = 1; }
// CHECK: TU tolerant-error-limit.cu partial sides=error/error
// CHECK: TUERR {{.*}}:31:{{[0-9]+}}: error: use of undeclared identifier 'undeclared_25'
// CHECK-NEXT: KERNEL after_errors ok editable=1
// ERR-NOT: too many errors
// ERR: 1 of 1 translation unit(s) parsed with errors
