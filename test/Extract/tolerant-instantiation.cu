// An error inside a device function template, raised when a kernel instantiates it, marks the
// kernel through clang's "in instantiation of ... requested here" note that points into it;
// a kernel that does not use the template stays "ok". Only the device side reports it: nvcc's host pass
// never instantiates a device-only template's body (host-unchecked-template-body.cu).
// RUN: kloop extract %s --root %S -- %mockcuda | python3 %S/Inputs/status.py | FileCheck %s
#include "cuda.h"
template <typename T> __device__ int width(T x) { return x.width; }
__global__ void uses(int *p) { p[0] = width(p[1]); }
__global__ void other(int *p) { p[0] = 2; }
// CHECK: TU tolerant-instantiation.cu partial
// CHECK: KERNEL uses error editable=0
// CHECK-NEXT: KERNELERR uses tolerant-instantiation.cu:7:{{[0-9]+}}: error: member reference base type 'int' is not a structure or union [device]
// CHECK-NEXT: KERNEL other ok editable=1
// CHECK: DEVFN device:width error editable=0
