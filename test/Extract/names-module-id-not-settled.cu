// What does not settle nvcc's module id early (read off nvcc 13): a local class with
// ordinary member functions only, a local class of an inline function, a class in an
// anonymous namespace with a constructor, a library container of a local class built
// by a user-written constructor, a lambda. The first external definition, `launch`,
// names the module id, and kloop predicts the symbol.
// REQUIRES: nvcc
// RUN: %cuda_path/bin/nvcc -arch=sm_90 -cubin -o %t.cubin %s
// RUN: readelf -sW %t.cubin > %t.syms
// RUN: kloop extract --no-cache %s --root %S --cuda-path=%cuda_path -- -std=c++17 > %t.json
// RUN: python3 %inputs/cubin_names.py %t.json %t.syms | FileCheck %s --implicit-check-not=MISSING --implicit-check-not=EXTRA
#include <vector>
static int member_only() { struct Box { int i; int get() const { return i; } }; Box b{1}; return b.get(); }
inline int in_inline() { struct Box { int i; Box() : i(1) {} }; Box b; return b.i; }
namespace { struct Anon { int i; Anon() : i(2) {} }; }
static int anon_user() { Anon a; return a.i; }
static int sized_vector() { struct K { int v; }; std::vector<K> v(4); return (int)v.size(); }
static int lambda_user() { auto l = [](int x) { return x + 1; }; return l(1); }
static __device__ void twice(float &x) { x *= 2; }
template <void (*F)(float &)> __global__ void apply(float *x) { F(x[0]); }
void launch(float *x) {
  if (member_only() + in_inline() + anon_user() + sized_vector() + lambda_user() > 0)
    apply<twice><<<1, 1>>>(x);
}
// CHECK: FOUND apply linkage=internal nvcc_known=1
