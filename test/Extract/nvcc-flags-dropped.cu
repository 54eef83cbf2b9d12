// nvcc flags irrelevant to parsing are dropped silently, with their values, in both modes;
// -Xcompiler -fopenmp does not reach clang either (clang would then need an omp.h it does not
// ship): the host compiler's _OPENMP is defined instead (host-openmp.cu; the host compiler here
// is the stand-in of Inputs/hostcc).
// RUN: kloop extract %s --root %S -- %mockcuda --threads=0 -t=0 -t 4 -compress-mode=size -forward-unknown-to-host-compiler -Xcompiler -fopenmp -Xcompiler=-fPIC -lineinfo -MD -MF x.d -MT x.o -G --expt-relaxed-constexpr -ccbin %S/Inputs/hostcc/bin -Xptxas -v --keep-dir /tmp -o x.o 2> %t.err | python3 %inputs/summarize.py | FileCheck %s
// RUN: count 0 < %t.err
// RUN: rm -rf %t.db && mkdir -p %t.db
// RUN: printf '[{"directory": "%S", "file": "%s", "command": "/usr/local/cuda/bin/nvcc --threads=0 -t=0 -compress-mode=size -forward-unknown-to-host-compiler -ccbin %S/Inputs/hostcc/bin -Xcompiler -fopenmp -lineinfo -MD -MF x.d -nocudainc -nocudalib -isystem %inputs -c %s -o x.o"}]' > %t.db/compile_commands.json
// RUN: kloop extract -p %t.db --root %S 2> %t.err2 | python3 %inputs/summarize.py | FileCheck %s
// RUN: count 0 < %t.err2
#include <cuda.h>
#if _OPENMP != 201511
#error -fopenmp reached clang, or the host compiler's _OPENMP did not
#endif
__global__ void dropped(float *p) { p[threadIdx.x] = 1.f; }
// CHECK: TU nvcc-flags-dropped.cu ok
// CHECK: KERNEL dropped editable=1
