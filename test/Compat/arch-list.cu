// __CUDA_ARCH_LIST__ is every architecture the command builds, ascending, in every pass (nvcc 13.0
// --dryrun: -gencode lines of sm_80, sm_90 and sm_75 give 750,800,900 in each). kloop parses one
// architecture at a time, and clang then defined the list as that one alone, so code that sizes a
// table by the list (CCCL's dispatch does) saw one entry and a static_assert on its length failed.
// nvcc-accepts.test compiles this file with nvcc for the same targets.
// RUN: kloop extract %s --root %S -- -nocudainc -nocudalib -isystem %inputs -DNARCH=3 -DFIRST=750 -DLAST=900 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_75,code=sm_75 2> %t.err | python3 %inputs/summarize.py | FileCheck %s
// RUN: count 0 < %t.err
// An architecture-specific target counts as its architecture (sm_90a is 900); one architecture is clang's.
// RUN: kloop extract %s --root %S -- -nocudainc -nocudalib -isystem %inputs -DNARCH=2 -DFIRST=800 -DLAST=900 --cuda-gpu-arch=sm_90a --cuda-gpu-arch=sm_80 --cuda-gpu-arch=sm_90 2> %t.err | python3 %inputs/summarize.py | FileCheck %s
// RUN: count 0 < %t.err
// RUN: kloop extract %s --root %S -- -nocudainc -nocudalib -isystem %inputs -DNARCH=1 -DFIRST=900 -DLAST=900 -arch=sm_90 2> %t.err | python3 %inputs/summarize.py | FileCheck %s
// RUN: count 0 < %t.err
// An edit is checked under each architecture with the whole list too (the other architectures' parses).
// RUN: echo '{"rationale":"x","edits":[{"kind":"set_constant","id":"macro:BLOCK","value":128}]}' > %t.json
// RUN: kloop apply %t.json %s --root %S -- -nocudainc -nocudalib -isystem %inputs -DNARCH=3 -DFIRST=750 -DLAST=900 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_75,code=sm_75 | FileCheck %s --check-prefix=APPLY
// CHECK: TU arch-list.cu ok
// CHECK: KERNEL scale editable=1
// APPLY: +#define BLOCK 128
#include "cuda.h"
#define BLOCK 256
constexpr int kArchs[] = {__CUDA_ARCH_LIST__};
static_assert(sizeof(kArchs) / sizeof(kArchs[0]) == NARCH, "one entry per architecture the command builds");
static_assert(kArchs[0] == FIRST && kArchs[NARCH - 1] == LAST, "ascending");
__global__ void scale(float *x) {
  __shared__ float s[BLOCK];
  s[threadIdx.x % BLOCK] = x[threadIdx.x];
  __syncthreads();
  x[threadIdx.x] = 2.0f * s[(threadIdx.x + 1) % BLOCK];
}
