// Kernels in a system header (here a mock library found through -isystem) that are not
// templates are library kernels too: nvcc puts every kernel a translation unit defines in its
// cubin, so a profile can name them. They are listed with library: true, not editable, with
// their symbols, like the kernel templates the translation unit instantiates.
// RUN: kloop extract %s --root %S -- %mockcuda -isystem %S/Inputs/mocklib | python3 %inputs/summarize.py | FileCheck %s
#include "cuda.h"
#include <mocklib/kernels.cuh>
__global__ void mine(float *p) { p[threadIdx.x] += 1.f; }
void run(float *p, float *q, int *flag) {
  mocklib::fill(p, 0.f, 1024);
  mocklib::copy_kernel<4><<<1, 32>>>(p, q);
  mine<<<4, 256>>>(q);
}
// CHECK-DAG: KERNEL mocklib::fill_kernel editable=0 static=0 file={{.*}}kernels.cuh:5 lb=-/- mangled=_ZN7mocklib11fill_kernelEPffi reason=is a library kernel in a system header; listed so that profiles and captures can name it
// CHECK-DAG: KERNEL mocklib::copy_kernel editable=0 {{.*}}mangled=_ZN7mocklib11copy_kernelILi4EEEvPKfPf reason=is a library kernel
// CHECK-DAG: KERNEL mocklib_reset editable=0 static=1 {{.*}}reason=is a library kernel
// CHECK-DAG: KERNEL mine editable=1
