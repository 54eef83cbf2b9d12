// Every kernel symbol nvcc puts in the cubin of a translation unit that includes a library
// header defining kernels that are not templates is named by the inventory (library kernels).
// REQUIRES: nvcc
// RUN: %cuda_path/bin/nvcc -arch=sm_90 -cubin -isystem %S/Inputs/mocklib -o %t.cubin %s
// RUN: readelf -sW %t.cubin > %t.syms
// RUN: kloop extract %s --root %S --cuda-path=%cuda_path -- -isystem %S/Inputs/mocklib > %t.json
// RUN: python3 %inputs/cubin_names.py %t.json %t.syms | FileCheck %s --implicit-check-not=MISSING --implicit-check-not=EXTRA
#include <mocklib/kernels.cuh>
__global__ void mine(float *p) { p[threadIdx.x] += 1.f; }
void run(float *p, float *q) {
  mocklib::fill(p, 0.f, 1024);
  mocklib::copy_kernel<4><<<1, 32>>>(p, q);
  mine<<<4, 256>>>(q);
}
// CHECK-DAG: FOUND mocklib::fill_kernel linkage=external nvcc_known=1 library=1 _ZN7mocklib11fill_kernelEPffi
// CHECK-DAG: FOUND mocklib::copy_kernel linkage=external nvcc_known=1 library=1 _ZN7mocklib11copy_kernelILi4EEEvPKfPf
// CHECK-DAG: FOUND mocklib_reset linkage=internal nvcc_known=1 library=1
// CHECK-DAG: FOUND mine linkage=external nvcc_known=1 library=0 _Z4minePf
