// `-Xcompiler -fopenmp`: nvcc's host compiler (gcc, or the one -ccbin names) finds its own omp.h
// and defines _OPENMP, in both passes. clang 22 here ships no omp.h, so kloop asks the host
// compiler where its omp.h is (-print-file-name=include/omp.h) and what _OPENMP is (-fopenmp -dM -E),
// and parses with that directory searched last (-idirafter) and _OPENMP defined. The host
// compiler here is a stand-in (Inputs/hostcc/bin/gcc) with its own omp.h.
// RUN: kloop extract %s --root %S --no-cache -- %mockcuda -ccbin %S/Inputs/hostcc/bin -Xcompiler -fopenmp,-fPIC 2> %t.err | python3 %inputs/summarize.py | FileCheck %s
// RUN: count 0 < %t.err
// -ccbin naming the compiler itself, and a bare -fopenmp (nvcc passes it on with
// -forward-unknown-to-host-compiler):
// RUN: kloop extract %s --root %S --no-cache -- %mockcuda -ccbin=%S/Inputs/hostcc/bin/gcc -forward-unknown-to-host-compiler -fopenmp | python3 %inputs/summarize.py | FileCheck %s
// A host compiler that cannot tell: the translation unit is still parsed, with a warning that
// names the compiler and what failed, and the missing omp.h is the TU's error.
// RUN: not kloop extract %s --root %S --no-cache -- %mockcuda -ccbin %t.no-such-compiler -Xcompiler -fopenmp 2> %t.err2
// RUN: FileCheck %s --check-prefix=WARN < %t.err2
#include "cuda.h"
#include <omp.h>
#if _OPENMP != 201511
#error "_OPENMP is not the host compiler's"
#endif
__global__ void fill(float *p, float v) { p[threadIdx.x] = v; }
int run(float *p) {
  fill<<<1, 32>>>(p, (float)omp_get_max_threads());
  return omp_get_thread_num();
}
// CHECK: TU host-openmp.cu ok
// CHECK: KERNEL fill editable=1
// CHECK: LAUNCH host-openmp.cu:run/launch#1 kernel=fill
// WARN: kloop extract: warning: {{.*}}host-openmp.cu: -fopenmp is a host compiler flag, but kloop could not ask the host compiler '{{.*}}no-such-compiler' (-ccbin) for its omp.h and _OPENMP: {{.*}}; parsed without them
// WARN: host-openmp.cu:16:10: fatal: 'omp.h' file not found
