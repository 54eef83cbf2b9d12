// A kernel whose declaration clang marks invalid (an unknown parameter type) is listed with
// status "error" and not editable; the collector reads clang's recovered AST without crashing
// on it (no mangled name is asked for) and the next kernel is "ok".
// RUN: kloop extract %s --root %S -- %mockcuda | python3 %S/Inputs/status.py | FileCheck %s
#include "cuda.h"
__global__ void takes_unknown(UnknownType *p, int n) { p[n] = 0; }
__global__ void fine(int *p) { p[0] = 1; }
// CHECK: TU tolerant-invalid-decl.cu partial
// CHECK: KERNEL takes_unknown error editable=0 reason=has {{[0-9]+}} compile error{{s?}}, the first: tolerant-invalid-decl.cu:6:31: error: unknown type name 'UnknownType'
// CHECK: KERNEL fine ok editable=1
