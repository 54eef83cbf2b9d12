// Kernels in namespaces, anonymous namespaces, and static kernels.
// RUN: kloop extract %s --root %S -- %mockcuda | python3 %inputs/summarize.py | FileCheck %s
#include "cuda.h"
namespace outer { namespace inner {
__global__ void nested(int *p) { p[0] = 1; }
} }
namespace {
__global__ void hidden(int *p) { p[0] = 2; }
}
static __global__ void file_local(int *p) { p[0] = 3; }
// CHECK: KERNEL outer::inner::nested editable=1 static=0
// CHECK: KERNEL (anonymous namespace)::hidden editable=1
// CHECK: KERNEL file_local editable=1 static=1
