// An nvcc flag kloop cannot mirror (--target-directory) and a flag no one knows are ignored
// with a warning naming them; --strict-flags makes each an error of the TU.
// RUN: kloop extract %s --root %S -- %mockcuda --target-directory aarch64-linux --no-such-flag 2> %t.err | python3 %inputs/summarize.py | FileCheck %s
// RUN: FileCheck --check-prefix=WARN %s < %t.err
// RUN: not kloop extract %s --root %S --strict-flags -- %mockcuda --target-directory aarch64-linux 2>&1 >/dev/null | FileCheck --check-prefix=STRICT %s
#include <cuda.h>
__global__ void kept(float *p) { p[threadIdx.x] = 1.f; }
// CHECK: TU nvcc-flags-unsupported.cu ok
// CHECK: KERNEL kept editable=1
// WARN: warning: {{.*}}nvcc-flags-unsupported.cu: unknown compiler flag '--no-such-flag' in its compile command (neither an nvcc flag nor a clang flag); ignored
// WARN: warning: {{.*}}nvcc-flags-unsupported.cu: nvcc flag '--target-directory' is not supported by kloop's parse (selects another target's include directory (targets/<dir>/include); kloop parses with targets/x86_64-linux); ignored
// STRICT: error: nvcc-flags-unsupported.cu: nvcc flag '--target-directory' is not supported by kloop's parse ({{.*}}) (--strict-flags)
