// nvcc flags that change the parse are translated to clang's, in every nvcc spelling, after
// `--` as in a compilation database: comma lists (-DA=1,B=2), joined forms (-isystem=DIR,
// -Xcompiler=-D...), --use_fast_math (clang: -fgpu-approx-transcendentals), -x cu.
// RUN: kloop extract %s --root %S -- %mockcuda -x cu -DA=1,B=2 --define-macro=C -Xcompiler=-DFROM_XCOMPILER -isystem=%S/Inputs --use_fast_math --std=c++17 2> %t.err | python3 %inputs/summarize.py | FileCheck %s
// RUN: count 0 < %t.err
// The same flags from an nvcc compilation database.
// RUN: rm -rf %t.db && mkdir -p %t.db
// RUN: printf '[{"directory": "%S", "file": "%s", "command": "nvcc -x cu -DA=1,B=2 --define-macro=C -Xcompiler=-DFROM_XCOMPILER --use_fast_math --std=c++17 -nocudainc -nocudalib -isystem=%inputs -c %s"}]' > %t.db/compile_commands.json
// RUN: kloop extract -p %t.db --root %S 2> %t.err2 | python3 %inputs/summarize.py | FileCheck %s
// RUN: count 0 < %t.err2
#include <cuda.h>
#if A != 1 || B != 2 || !defined(C) || !defined(FROM_XCOMPILER)
#error macros from nvcc flags missing
#endif
#ifndef __CLANG_GPU_APPROX_TRANSCENDENTALS__
#error --use_fast_math not translated
#endif
#if __cplusplus != 201703L
#error --std c++17 not translated
#endif
__global__ void translated(float *p) { p[threadIdx.x] = 1.f; }
// CHECK: TU nvcc-flags-translated.cu ok
// CHECK: KERNEL translated editable=1
