// `__shared__ cuda::barrier<cuda::thread_scope_block> bar;` has a non-empty constructor and
// destructor. nvcc accepts it with warning 20054-D and runs neither; clang 22 refuses it
// ("initialization is not supported for __shared__ variables") and offers no flag to accept
// it nor a way to map that error to a warning. kloop reports exactly this error, on a
// declaration without a written initializer, as a warning; a written initializer stays an
// error, as in nvcc (the second run line: that kernel has status error, the TU is partial).
// nvcc-accepts.test compiles this file with nvcc.
// REQUIRES: nvcc
// RUN: kloop extract %s --root %S --cuda-path=%cuda_path -- -std=c++17 2> %t.err | python3 %inputs/summarize.py | FileCheck %s
// RUN: count 0 < %t.err
// RUN: kloop extract %s --root %S --cuda-path=%cuda_path -- -std=c++17 -DWRITTEN_INIT 2>&1 >/dev/null | FileCheck --check-prefix=INIT %s
#include <cuda/barrier>
__global__ void produce(float *out) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  if (threadIdx.x == 0)
    init(&bar, blockDim.x);
  __syncthreads();
  bar.arrive_and_wait();
  out[threadIdx.x] = 1.f;
}
#ifdef WRITTEN_INIT
__global__ void written(int *out) {
  __shared__ int x = 5;
  out[0] = x;
}
#endif
// CHECK: TU shared-barrier.cu ok
// CHECK: KERNEL produce editable=1
// INIT: warning: shared-barrier.cu: parsed with errors
// INIT-NEXT: shared-barrier.cu:{{[0-9]+}}:{{[0-9]+}}: error: initialization is not supported for __shared__ variables
