// A kernel that calls a device function with an error stays "ok", but add_restrict does not rest on
// what that function reaches: clang's recovery dropped the code it could not read there, so the
// kernel's indirect_pointer names the call. Here the callee folds over an assignment, which nvcc
// accepts and clang refuses; before, indirect_pointer was null and add_restrict was applied to `k`
// (helper-60's break test, M3). A kernel that calls only a sound function keeps a null
// indirect_pointer; one that reaches the broken function through another (an overload's too) is marked.
// RUN: kloop extract %s --root %S -- %mockcuda > %t.inv.json
// RUN: python3 -c "import json; [print('KERNEL', k['id'], k['status'], k['indirect_pointer']) for k in json.load(open('%t.inv.json'))['kernels']]" | FileCheck %s
// RUN: echo '{"rationale":"x","edits":[{"kind":"add_restrict","id":"k/param:c"}]}' > %t.restrict.json
// RUN: not kloop apply %t.restrict.json %s --root %S -- %mockcuda 2>&1 | FileCheck %s --check-prefix=RESTRICT
// RUN: echo '{"rationale":"x","edits":[{"kind":"add_const","id":"k/param:c"}]}' > %t.const.json
// RUN: kloop apply %t.const.json %s --root %S -- %mockcuda 2>&1 | FileCheck %s --check-prefix=CONST
#include "cuda.h"
template <class... P> __device__ void put(P... p) { (((float *)p)[0] = 12.0f, ...); }
__device__ float twice(float x) { return 2.0f * x; }
__device__ void relay(float *p) { put(p); }
__global__ void k(float *a, float *b, float *c) { b[0] = a[1] + c[0]; put(a); }
__global__ void sound(float *a) { a[0] = twice(a[1]); }
__global__ void indirect(float *a) { relay(a); }
// Overloads share one "calls" name: each one's calls are followed (only the first's were).
__device__ void relay2(int x) {}
__device__ void relay2(float *p) { put(p); }
__global__ void overloaded(float *a) { relay2(a); }
// CHECK: KERNEL k ok a call of 'put' (tolerant-callee-error.cu:14), which has compile errors: clang drops the code it cannot read, so what that code reaches is not known
// CHECK: KERNEL sound ok None
// CHECK: KERNEL indirect ok a call of 'put' (tolerant-callee-error.cu:14), which has compile errors
// CHECK: KERNEL overloaded ok a call of 'put' (tolerant-callee-error.cu:14), which has compile errors
// RESTRICT: refused: edit #1 (add_restrict k/param:c): kernel 'k' reaches memory other than through its pointer parameters, where no launch shows what it points to: a call of 'put' (tolerant-callee-error.cu:14), which has compile errors
// add_const rests on the kernel's own writes, and `c` is only read (a call's writes through `a` are counted).
// CONST: +__global__ void k(float *a, float *b, const float *c) { b[0] = a[1] + c[0]; put(a); }
