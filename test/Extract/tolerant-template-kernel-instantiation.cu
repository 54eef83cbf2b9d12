// An error in a kernel template's own instantiation (k<float> refers to float::nope): that
// instantiation has no symbol, so it is left out of the kernel's instantiations, and the kernel is
// reported with its error; before, the instantiation was listed without `mangled` and the whole
// extract failed on the merged inventory (found on NVIDIA/nccl-tests, issue 14's break test).
// RUN: kloop extract %s --root %S -- %mockcuda > %t.json
// RUN: python3 %S/Inputs/status.py < %t.json | FileCheck %s
// RUN: python3 -c "import json,sys; k=[k for k in json.load(open(sys.argv[1]))['kernels'] if k['name']=='k'][0]; print('INSTS', len(k['instantiations']))" %t.json | FileCheck %s --check-prefix=INSTS
#include "cuda.h"
template <typename T>
__global__ void k(T *p) { p[threadIdx.x] = T::nope; }
void *pick() { return (void *)k<float>; }
__global__ void fine(int *p) { p[0] = 2; }
// CHECK: TU tolerant-template-kernel-instantiation.cu partial
// CHECK: KERNEL k error editable=0
// CHECK: KERNEL fine ok editable=1
// INSTS: INSTS 0
