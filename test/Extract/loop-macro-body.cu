// A loop whose body without braces is one macro invocation (`for (...) ACCUM(x);`) ends on the
// last token of that macro's expansion. The whole invocation lies inside the loop, so the loop
// is editable: kloop apply writes a pragma above it or replaces it with the invocation's text.
// So is a loop that begins with a whole invocation (`FOR4(j) body;`). A loop that ends in the
// middle of an expansion (the macro holds two statements and only the first is the body) or
// begins in the middle of one (the macro declares the counter, then writes the `for`) is not
// editable, and the reason says which.
// RUN: kloop extract %s --root %S -- %mockcuda > %t.json
// RUN: python3 %inputs/summarize.py < %t.json | FileCheck %s
// RUN: python3 -c "import json,sys; [print('REASON', l['id'], l.get('not_editable_reason', '-')) for k in json.load(sys.stdin)['kernels'] for l in k['loops']]" < %t.json | FileCheck %s --check-prefix=REASON
// RUN: printf '{"version": 1, "rationale": "r", "edits": [{"kind": "set_unroll", "id": "sum/loop#1", "count": 4}, {"kind": "replace_loop", "id": "sum/loop#3", "code": "while (i < n) { ++i; }"}]}' > %t.proposal.json
// RUN: kloop apply %t.proposal.json %s --root %S -- %mockcuda | FileCheck %s --check-prefix=APPLY
#include "cuda.h"
#define ACCUM(x) (acc += (x))
#define ADD_TO(a, x) a += x
#define STEP(i) { ++i; }
#define TWICE(x) acc += (x); acc2 += 1.f
#define FOR4(i) for (int i = 0; i < 4; ++i)
#define COUNT_UP(i, n) int i = 0; for (; i < n; ++i)
__global__ void sum(const float *v, float *out, int n) {
  float acc = 0.f, acc2 = 0.f;
  for (int k = 0; k < 8; ++k) ACCUM(v[k]);
  for (int k = 0; k < 8; ++k) ADD_TO(acc, v[k]);
  int i = 0;
  while (i < n) STEP(i);
  for (int k = 0; k < 8; ++k) TWICE(v[k]);
  FOR4(j) acc += v[j];
  COUNT_UP(m, 4) acc2 += v[m];
  out[0] = acc + acc2;
}
// CHECK: LOOP sum/loop#1 kind=for depth=0 parent=- unroll=- trip=8 editable=1
// CHECK: LOOP sum/loop#2 kind=for depth=0 parent=- unroll=- trip=8 editable=1
// CHECK: LOOP sum/loop#3 kind=while depth=0 parent=- unroll=- trip=- editable=1
// CHECK: LOOP sum/loop#4 kind=for depth=0 parent=- unroll=- trip=8 editable=0
// CHECK: LOOP sum/loop#5 kind=for depth=0 parent=- unroll=- trip=4 editable=1
// CHECK: LOOP sum/loop#6 kind=for depth=0 parent=- unroll=- trip=- editable=0
// REASON: REASON sum/loop#1 -
// REASON: REASON sum/loop#4 ends inside the expansion of macro 'TWICE' (line 26), which continues after it; edit the macro definition instead
// REASON: REASON sum/loop#5 -
// REASON: REASON sum/loop#6 begins inside the expansion of macro 'COUNT_UP' (line 28), which starts before it; edit the macro definition instead
// APPLY:      float acc = 0.f, acc2 = 0.f;
// APPLY-NEXT: +  #pragma unroll 4
// APPLY-NEXT:    for (int k = 0; k < 8; ++k) ACCUM(v[k]);
// APPLY:      -  while (i < n) STEP(i);
// APPLY-NEXT: +  while (i < n) { ++i; };
