// A kernel template instantiated with static (internal linkage) functions as template
// arguments: nvcc puts them in the pseudo-namespace _INTERNAL<module id>, which also
// shifts later substitutions (k3, k4). kloop's names are the cubin's.
// REQUIRES: nvcc
// RUN: %cuda_path/bin/nvcc -arch=sm_90 -cubin -o %t.cubin %s
// RUN: readelf -sW %t.cubin > %t.syms
// RUN: kloop extract %s --root %S --cuda-path=%cuda_path -- -std=c++17 > %t.json
// RUN: python3 %inputs/cubin_names.py %t.json %t.syms | FileCheck %s --implicit-check-not=MISSING --implicit-check-not=EXTRA
int first_definition = 1;
static __device__ float s1(float a) { return a + 1; }
static __device__ float s2(float a) { return a * 2; }
namespace ns { static __device__ float sf(float a) { return a; } }
namespace { __device__ float anon(float a) { return a * 3; } }
template <float (*F)(float)> __global__ void k1(float *x) { x[0] = F(x[0]); }
template __global__ void k1<s1>(float *);
template __global__ void k1<ns::sf>(float *);
template __global__ void k1<anon>(float *);
template <float (*F)(float), float (*G)(float)> __global__ void k3(float *x, float *y) { x[0] = F(G(y[0])); }
template __global__ void k3<s1, s2>(float *, float *);
template <typename T, float (*F)(float)> __global__ void k4(T *x, T *y) { x[0] = F(y[0]); }
template __global__ void k4<float, s2>(float *, float *);
// CHECK-DAG: FOUND k1 linkage=internal nvcc_known=1 library=0 _Z2k1IXadL_ZN{{[0-9]+}}_INTERNAL_{{[0-9a-f]+}}_21_names_static_fnptr_cu_{{[0-9a-f]+}}2s1EfEEEvPf
// CHECK-DAG: FOUND k1 linkage=internal nvcc_known=1 library=0 _Z2k1IXadL_ZN{{[0-9]+}}_INTERNAL_{{[0-9a-z_]+}}2ns2sfEfEEEvPf
// CHECK-DAG: FOUND k1 linkage=internal nvcc_known=1 library=0 _Z2k1IXadL_ZN{{[0-9]+}}_INTERNAL_{{[0-9a-z_]+}}_GLOBAL__N_{{[0-9a-z_]+}}4anonEfEEEvPf
// CHECK-DAG: FOUND k3 linkage=internal nvcc_known=1 library=0 _Z2k3IXadL_ZN{{[0-9]+}}_INTERNAL_{{[0-9a-z_]+}}2s1EfEEXadL_ZNS0_2s2EfEEEvPfS1_
// CHECK-DAG: FOUND k4 linkage=internal nvcc_known=1 library=0 _Z2k4IfXadL_ZN{{[0-9]+}}_INTERNAL_{{[0-9a-z_]+}}2s2EfEEEvPT_S2_
