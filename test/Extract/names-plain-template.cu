// Kernel names with external linkage: plain, namespaced, extern "C", templates with
// type, integer and pointer arguments. Each inventory symbol is one nvcc puts in the cubin.
// REQUIRES: nvcc
// RUN: %cuda_path/bin/nvcc -arch=sm_90 -cubin -o %t.cubin %s
// RUN: readelf -sW %t.cubin > %t.syms
// RUN: kloop extract %s --root %S --cuda-path=%cuda_path -- -std=c++17 > %t.json
// RUN: python3 %inputs/cubin_names.py %t.json %t.syms | FileCheck %s --implicit-check-not=MISSING --implicit-check-not=EXTRA
__global__ void plain(float *x) { x[0] = 1; }
namespace ns { __global__ void inns(int *x) { x[0] = 1; } }
extern "C" __global__ void ckern(float *x) { x[0] = 4; }
template <typename T, int N> __global__ void tk(T *x) { x[0] = N; }
template __global__ void tk<float, 4>(float *);
template __global__ void tk<double, 8>(double *);
__device__ int gdev;
template <int *P> __global__ void ptrk(int *x) { x[0] = *P; }
template __global__ void ptrk<&gdev>(int *);
// CHECK-DAG: FOUND plain linkage=external nvcc_known=1 library=0 _Z5plainPf
// CHECK-DAG: FOUND ns::inns linkage=external nvcc_known=1 library=0 _ZN2ns4innsEPi
// CHECK-DAG: FOUND ckern linkage=external nvcc_known=1 library=0 ckern
// CHECK-DAG: FOUND tk linkage=external nvcc_known=1 library=0 _Z2tkIfLi4EEvPT_
// CHECK-DAG: FOUND tk linkage=external nvcc_known=1 library=0 _Z2tkIdLi8EEvPT_
// CHECK-DAG: FOUND ptrk linkage=external nvcc_known=1 library=0 _Z4ptrkIXadL_Z4gdevEEEvPi
