// nvcc defines a macro for each of these mode flags (nvcc 13.0, `nvcc -E -Xcompiler -dM`), and code
// tests them: `#ifndef __CUDACC_EXTENDED_LAMBDA__` with `#error "build with --extended-lambda"` built
// with nvcc and failed in kloop, which dropped the flags (helper-58's break test). Without the flags the
// unit has errors, as nvcc refuses it.
// RUN: kloop extract %s --root %S -- %mockcuda --extended-lambda --expt-relaxed-constexpr -G -rdc=true 2> %t.err | python3 %inputs/summarize.py | FileCheck %s
// RUN: count 0 < %t.err
// RUN: kloop extract %s --root %S -- %mockcuda 2>&1 >/dev/null | FileCheck --check-prefix=NONE %s
#include "cuda.h"
#if !defined(__CUDACC_EXTENDED_LAMBDA__) || !defined(__CUDACC_RELAXED_CONSTEXPR__) || \
    !defined(__CUDACC_DEBUG__) || !defined(__CUDACC_RDC__)
#error "build with --extended-lambda --expt-relaxed-constexpr -G -rdc=true"
#endif
__global__ void modes(float *p) { p[threadIdx.x] = 1.f; }
// CHECK: TU nvcc-mode-macros.cu ok
// CHECK: KERNEL modes editable=1
// NONE: error: "build with --extended-lambda --expt-relaxed-constexpr -G -rdc=true"
