// Kernel parameters: pointer/const/__restrict__ and whether the kernel writes through them.
// RUN: kloop extract %s --root %S -- %mockcuda > %t.json
// RUN: python3 %inputs/summarize.py < %t.json | FileCheck %s
// RUN: python3 -c "import json,sys; k=[k for k in json.load(open(sys.argv[1]))['kernels'] if k['name']=='asm_params'][0]; print('EVIDENCE', [(p['name'], p['write_evidence']) for p in k['params']])" %t.json | FileCheck %s --check-prefix=EVIDENCE
// RUN: python3 -c "import json,sys; k=[k for k in json.load(open(sys.argv[1]))['kernels'] if k['name']=='cast_params'][0]; print('CASTS', [(p['name'], p['written'], p['write_evidence']) for p in k['params']])" %t.json | FileCheck %s --check-prefix=CASTS
// RUN: python3 -c "import json,sys; k=[k for k in json.load(open(sys.argv[1]))['kernels'] if k['name']=='dependent_params'][0]; print('DEPENDENT', [(p['name'], p['written'], p['write_evidence']) for p in k['params']])" %t.json | FileCheck %s --check-prefix=DEPENDENT
// RUN: python3 -c "import json,sys; k=[k for k in json.load(open(sys.argv[1]))['kernels'] if k['name']=='ref_params'][0]; print('REFS', [(p['name'], p['written'], p['write_evidence']) for p in k['params']])" %t.json | FileCheck %s --check-prefix=REFS
// RUN: python3 -c "import json,sys; k=[k for k in json.load(open(sys.argv[1]))['kernels'] if k['name']=='callee_params'][0]; print('CALLEES', [(p['name'], p['written'], p['write_evidence']) for p in k['params']])" %t.json | FileCheck %s --check-prefix=CALLEES
// RUN: python3 -c "import json,sys; k=[k for k in json.load(open(sys.argv[1]))['kernels'] if k['name']=='escape_params'][0]; print('ESCAPES', [(p['name'], p['written'], p['write_evidence']) for p in k['params']])" %t.json | FileCheck %s --check-prefix=ESCAPES
// RUN: python3 -c "import json,sys; k=[k for k in json.load(open(sys.argv[1]))['kernels'] if k['name']=='const_view_params'][0]; print('CONSTVIEWS', [(p['name'], p['written'], p['write_evidence']) for p in k['params']])" %t.json | FileCheck %s --check-prefix=CONSTVIEWS
#include "cuda.h"

__device__ void store(float *p, float v) { *p = v; }

__global__ void params(float *__restrict__ out, const float *in, float *alias, float *viacall,
                       int *counter, float *untouched, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = in[i];
  float *row = alias + i * 4;
  row[1] = 2.f;
  store(viacall + i, 1.f);
  atomicAdd(&counter[0], 1);
  float x = untouched[i];
  (void)x;
}
// Inline asm may store through any address it is given: the operand counts as a write (found on
// NVIDIA/nccl-tests, whose `bad` counters are only written by red.global.add).
// A value parameter handed to asm is no write through anything (no write evidence).
__global__ void asm_params(long long *viaasm, long long *derived, float *unused, long long b) {
  asm volatile("red.global.add.u64 [%0],%1;" ::"l"(viaasm), "l"(b) : "memory");
  asm volatile("red.global.add.u64 [%0],%1;" ::"l"(derived + 2), "l"(b) : "memory");
}
// A cast to a pointer to non-const counts as a write (adding const would make it ill-formed; found on
// siboehm/SGEMM_CUDA's float4 loads); a cast to a pointer to const, or of a loaded value, does not.
__global__ void cast_params(float *vec, float *cstyle, float *constcast, float *value, float *out) {
  float4 v = reinterpret_cast<float4 *>(&vec[4 * threadIdx.x])[0];
  float4 w = ((float4 *)cstyle)[threadIdx.x];
  float4 u = reinterpret_cast<const float4 *>(constcast)[threadIdx.x];
  int bits = (int)value[threadIdx.x];
  out[threadIdx.x] = v.x + w.x + u.x + bits;
}
// CASTS: CASTS [('vec', True, 'cast to a pointer to non-const at line {{[0-9]+}}'), ('cstyle', True, 'cast to a pointer to non-const at line {{[0-9]+}}'), ('constcast', False, None), ('value', False, None), ('out', True, 'store at line {{[0-9]+}}')]
// A kernel template's pattern, where types depend on template parameters (found on karpathy/llm.c's
// layernorm backward kernels): a local pointer derived from a parameter through a sum whose type is
// dependent (spelled as an operator call, since operator+ and operator- overloads are visible), and the
// address of an element (or either branch of a conditional, llm.c's adamw) passed to an overloaded
// function the call cannot resolve before instantiation, count as writes; reads through a pointer to
// const do not.
struct half2x { float a, b; };
__device__ half2x operator+(half2x x, half2x y) { return {x.a + y.a, x.b + y.b}; }
__device__ half2x operator-(half2x x, half2x y) { return {x.a - y.a, x.b - y.b}; }
__device__ void accumulate(float *p, float v) { *p += v; }
__device__ void accumulate(double *p, double v) { *p += v; }
template <class TOut, class TIn>
__global__ void dependent_params(TOut *out, const TIn *in, TOut *acc, TOut *viaauto, float *maybe, int n) {
  TOut *row = out + blockIdx.x * n + threadIdx.x - 0;
  auto tail = viaauto + n;
  for (int i = 0; i < n; ++i)
    row[i] = (TOut)in[i];
  tail[0] = (TOut)in[0];
  accumulate(&acc[threadIdx.x], (TOut)in[0]);
  accumulate(maybe ? maybe + n : nullptr, (TOut)in[0]);
}
template __global__ void dependent_params<float, float>(float *, const float *, float *, float *, float *, int);
// Writes the analysis must see for `add_const` to be safe, where an overload for const would otherwise be
// chosen silently (found on xlite-dev/LeetCUDA by a break test): an element bound to a reference to
// non-const, through a reference or `auto *` local or a pointer local assigned later, either branch of `?:`, the right operand of `,`, an
// array of pointers, a function template taking `U &`, a non-const member function.
__device__ void put(float &r, float v) { r = v; }
__device__ void put(const float &r, float v) {}
template <class U> __device__ void both(U &a, U &b) { U t = a; a = b; b = t; }
struct Counter { float n; __device__ void add(float v) { n += v; } __device__ float get() const { return n; } };
__global__ void ref_params(float *byref, float *viaref, float *viaauto, float *left, float *right, float *comma,
                           float *inarray, float *assigned, float *swapped, Counter *counters, const float *ro, Counter *readonly,
                           bool c) {
  put(byref[threadIdx.x], ro[0]);
  float &r = viaref[0];
  put(r, 1.f);
  auto *q = &viaauto[1];
  put(*q, 1.f);
  put((c ? left : right)[0], 1.f);
  put((threadIdx.x, comma)[0], 1.f);
  float *late;
  late = assigned + threadIdx.x;
  late[0] = 1.f;
  float *arr[1] = {inarray};
  arr[0][0] = readonly->get();
  both(swapped[0], swapped[1]);
  counters[threadIdx.x].add(1.f);
}
// REFS: REFS [('byref', True, 'passed to put by reference to non-const at line {{[0-9]+}}'), ('viaref', True, 'passed to put by reference to non-const at line {{[0-9]+}}'), ('viaauto', True, 'passed to put by reference to non-const at line {{[0-9]+}}'), ('left', True, 'passed to put by reference to non-const at line {{[0-9]+}}'), ('right', True, 'passed to put by reference to non-const at line {{[0-9]+}}'), ('comma', True, 'passed to put by reference to non-const at line {{[0-9]+}}'), ('inarray', True, 'store at line {{[0-9]+}}'), ('assigned', True, 'store at line {{[0-9]+}}'), ('swapped', True, 'passed to both by reference to non-const at line {{[0-9]+}}'), ('counters', True, 'non-const member function add called at line {{[0-9]+}}'), ('ro', False, None), ('readonly', False, None), ('c', None, None)]
// DEPENDENT: DEPENDENT [('out', True, 'store at line {{[0-9]+}}'), ('in', False, None), ('acc', True, 'passed to accumulate as a pointer to non-const at line {{[0-9]+}}'), ('viaauto', True, 'store at line {{[0-9]+}}'), ('maybe', True, 'passed to accumulate as a pointer to non-const at line {{[0-9]+}}'), ('n', None, None)]
// Calls: a callee's body is not read, since adding `const` to the argument may choose another overload
// or instantiation (`pick(const float *)`, `is_const<T>`) that builds and behaves differently (a break
// test found both when bodies were read). So a pointer passed to a function taking a pointer to non-const
// counts, by value to a template too, and through a lambda's or functor's operator(), which did not count
// at all before; a C variadic function may write through a pointer argument (`va_arg(ap, float *)`, also
// found by that break test), not through a value.
__device__ int pick(float *p) { return 1; }
__device__ int pick(const float *p) { return 2; }
template <typename P> __device__ float first(P p) { return p[0]; }
__device__ void put(int n, ...);
__global__ void callee_params(float *overloaded, float *bytemplate, float *bylambda, float *variadic, float *byvalue,
                              int *out) {
  out[0] = pick(overloaded) + (int)first(bytemplate);
  auto w = [](float *a) { a[0] = 2.f; };
  w(bylambda);
  put(2, variadic, byvalue[0]);
}
// CALLEES: CALLEES [('overloaded', True, 'passed to pick as a pointer to non-const at line {{[0-9]+}}'), ('bytemplate', True, 'passed to first as a pointer to non-const at line {{[0-9]+}}'), ('bylambda', True, 'passed to {{.+}} as a pointer to non-const at line {{[0-9]+}}'), ('variadic', True, 'passed to put as a pointer to non-const at line {{[0-9]+}}'), ('byvalue', False, None), ('out', True, 'store at line {{[0-9]+}}')]
// A pointer parameter made an integer, or its own address handed to a call (`memcpy(&q, &p, 8)`), may come back as a pointer
// to non-const and be written through (a break test: `const` was added and built); an integer only
// computed with (an alignment test) and a loaded value cast to an integer are no write.
__device__ void copy_bytes(void *to, const void *from, unsigned long n);
__device__ void put_at(unsigned long long u) { *(float *)u = 1.f; }
__global__ void escape_params(float *toint, float *viaarg, float *copied, float *value, float *aligned) {
  unsigned long long u = (unsigned long long)toint;
  *(float *)u = 3.0f;
  put_at(reinterpret_cast<unsigned long long>(viaarg));
  float *q;
  copy_bytes(&q, &copied, sizeof q);
  q[0] = 4.0f;
  q[1] = (float)(int)value[0];
  if ((unsigned long long)aligned % 16 == 0)
    q[2] = aligned[0];
}
// ESCAPES: ESCAPES [('toint', True, 'cast to an integer and kept at line {{[0-9]+}}'), ('viaarg', True, 'cast to an integer and passed to put_at at line {{[0-9]+}}'), ('copied', True, 'its address passed to copy_bytes at line {{[0-9]+}}'), ('value', False, None), ('aligned', False, None)]
// A local pointer or reference to const that views a parameter, then cast back to non-const and stored
// through: a write (found on Bruce-Lee-LY/cuda_hgemm's mma kernels, `const half *src = &C[i];
// *((int4 *)(src + j)) = ...`). Only read, or passed where a pointer to const is taken (here to a
// template whose `T *` deduces `const float *`), it is none.
template <typename T> __device__ T first_of(T *p) { return p[0]; }
__device__ float read_one(const float *p) { return p[0]; }
__global__ void const_view_params(float *cstyle, float *offset, float *constcast, float *byref, float *assigned,
                                  float *readonly, float *tocallee, float *out) {
  const float *a = &cstyle[blockIdx.x * 4];
  *((float4 *)(a) + threadIdx.x) = make_float4(1.f, 1.f, 1.f, 1.f);
  const float *b = offset + 1;
  ((float *)b)[threadIdx.x] = 2.f;
  const float *c = constcast;
  *const_cast<float *>(c) = 3.f;
  const float &r = byref[threadIdx.x];
  const_cast<float &>(r) = 4.f;
  const float *d;
  d = assigned + 2;
  ((float *)d)[0] = 5.f;
  const float *e = readonly + threadIdx.x;
  const float *f = tocallee;
  out[0] = e[0] + first_of(f) + read_one(f);
}
// CONSTVIEWS: CONSTVIEWS [('cstyle', True, 'cast to a pointer to non-const at line {{[0-9]+}}'), ('offset', True, 'cast to a pointer to non-const at line {{[0-9]+}}'), ('constcast', True, 'cast to a pointer to non-const at line {{[0-9]+}}'), ('byref', True, 'cast to a pointer to non-const at line {{[0-9]+}}'), ('assigned', True, 'cast to a pointer to non-const at line {{[0-9]+}}'), ('readonly', False, None), ('tocallee', False, None), ('out', True, 'store at line {{[0-9]+}}')]
// CHECK: KERNEL params editable=1 static=0
// CHECK-SAME: mangled=_Z6paramsPfPKfS_S_PiS_i
// CHECK: PARAM params/param:out type=float *__restrict ptr=1 const=0 restrict=1 written=1
// CHECK: PARAM params/param:in type=const float * ptr=1 const=1 restrict=0 written=0
// CHECK: PARAM params/param:alias type=float * ptr=1 const=0 restrict=0 written=1
// CHECK: PARAM params/param:viacall type=float * ptr=1 const=0 restrict=0 written=1
// CHECK: PARAM params/param:counter type=int * ptr=1 const=0 restrict=0 written=1
// CHECK: PARAM params/param:untouched type=float * ptr=1 const=0 restrict=0 written=0
// CHECK: PARAM params/param:n type=int ptr=0 const=0 restrict=0 written=-
// CHECK: CALLS params device:store
// CHECK: PARAM asm_params/param:viaasm type=long long * ptr=1 const=0 restrict=0 written=1
// CHECK: PARAM asm_params/param:derived type=long long * ptr=1 const=0 restrict=0 written=1
// CHECK: PARAM asm_params/param:unused type=float * ptr=1 const=0 restrict=0 written=0
// EVIDENCE: EVIDENCE [('viaasm', 'handed to inline asm at line {{[0-9]+}}'), ('derived', 'handed to inline asm at line {{[0-9]+}}'), ('unused', None), ('b', None)]
// CHECK: DEVFN device:store
