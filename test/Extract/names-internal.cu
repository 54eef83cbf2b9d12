// Kernels with internal linkage: static, in an anonymous namespace (also nested in a
// named one), a template instantiated with an anonymous-namespace type, and a kernel
// taking such a type (external for nvcc). Each inventory symbol is in nvcc's cubin.
// REQUIRES: nvcc
// RUN: %cuda_path/bin/nvcc -arch=sm_90 -cubin -o %t.cubin %s
// RUN: readelf -sW %t.cubin > %t.syms
// RUN: kloop extract %s --root %S --cuda-path=%cuda_path -- -std=c++17 > %t.json
// RUN: python3 %inputs/cubin_names.py %t.json %t.syms | FileCheck %s --implicit-check-not=MISSING --implicit-check-not=EXTRA
namespace { struct P { int a; }; }
// Passed over for the module id: its own name contains the module id.
__global__ void ep(P p) {}
void host_first(int *x);
static __global__ void skern(float *x) { x[0] = 2; }
template <int N> static __global__ void stk(int *x) { x[0] = N; }
template __global__ void stk<3>(int *);
namespace { __global__ void akern(float *x) { x[0] = 3; } }
namespace ns { namespace { __global__ void nak(int *x) {} } }
template <typename T> __global__ void tk(T *x) {}
template __global__ void tk<P>(P *);
void host_first(int *x) { skern<<<1, 1>>>((float *)x); akern<<<1, 1>>>((float *)x); ns::nak<<<1, 1>>>(x); }
// CHECK-DAG: FOUND ep linkage=internal nvcc_known=1 library=0 _Z2epN{{[0-9]+}}_GLOBAL__N__{{[0-9a-f]+}}_17_names_internal_cu_{{[0-9a-f]+}}1PE
// CHECK-DAG: FOUND skern linkage=internal nvcc_known=1 library=0 _Z5skernPf
// CHECK-DAG: FOUND stk linkage=internal nvcc_known=1 library=0 _Z3stkILi3EEvPi
// CHECK-DAG: FOUND (anonymous namespace)::akern linkage=internal nvcc_known=1 library=0 _ZN{{[0-9]+}}_GLOBAL__N_{{[0-9a-z_]+}}5akernEPf
// CHECK-DAG: FOUND ns::(anonymous namespace)::nak linkage=internal nvcc_known=1 library=0 _ZN2ns{{[0-9]+}}_GLOBAL__N_{{[0-9a-z_]+}}3nakEPi
// CHECK-DAG: FOUND tk linkage=internal nvcc_known=1 library=0 _Z2tkIN{{[0-9]+}}_GLOBAL__N_{{[0-9a-z_]+}}1PEEvPT_
