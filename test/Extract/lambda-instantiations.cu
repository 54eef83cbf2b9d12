// A kernel template instantiated with a lambda of a function template, itself instantiated twice: the two
// instantiations print the same template arguments, so each ID ends with its symbol, and the lambda's
// file is relative to the root (IDs do not depend on where the tree lies).
// RUN: kloop extract %s --root %S -- %mockcuda > %t.json
// RUN: python3 -c "import json,sys; [print(i['id']) for k in json.load(open(sys.argv[1]))['kernels'] for i in k['instantiations']]" %t.json | FileCheck %s
// CHECK: apply_k<(lambda at lambda-instantiations.cu:{{[0-9]+}}:{{[0-9]+}})>@_Z7apply_kIZ3runIfEvPT_iEUliE_EvS1_i
// CHECK-NEXT: apply_k<(lambda at lambda-instantiations.cu:{{[0-9]+}}:{{[0-9]+}})>@_Z7apply_kIZ3runIdEvPT_iEUliE_EvS1_i
// CHECK-NOT: apply_k
#include "cuda.h"

template <typename F> __global__ void apply_k(F f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    f(i);
}

template <typename T> void run(T *p, int n) {
  auto f = [=] __device__(int i) { p[i] = p[i] * T(2); };
  apply_k<<<(n + 127) / 128, 128>>>(f, n);
}

void host(float *a, double *b, int n) {
  run(a, n);
  run(b, n);
}
