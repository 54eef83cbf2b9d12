// The module id's tail comes from the first non-inline definition with external linkage:
// here an out-of-line constructor (named by its complete-object variant, C1), after an
// inline function, an explicit specialization and a variable without initializer, which
// do not count. The anonymous-namespace kernel's symbol then matches nvcc's.
// REQUIRES: nvcc
// RUN: %cuda_path/bin/nvcc -arch=sm_90 -cubin -o %t.cubin %s
// RUN: readelf -sW %t.cubin > %t.syms
// RUN: kloop extract %s --root %S --cuda-path=%cuda_path -- -std=c++17 > %t.json
// RUN: python3 %inputs/cubin_names.py %t.json %t.syms | FileCheck %s --implicit-check-not=MISSING --implicit-check-not=EXTRA
inline void not_counted() {}
template <class T> void tf() {}
template <> void tf<int>() {}
int no_initializer;
struct Widget {
  Widget();
  int v;
};
Widget::Widget() : v(1) {}
namespace { __global__ void akern(float *x) { x[0] = 3; } }
void launch(float *x) { akern<<<1, 1>>>(x); }
// CHECK: FOUND (anonymous namespace)::akern linkage=internal nvcc_known=1 library=0 _ZN{{[0-9]+}}_GLOBAL__N_{{[0-9a-z_]+}}5akernEPf
