// __managed__ variables (unified memory): nvcc makes them __device__ variables that host code may use
// too; clang 22 drops the `managed` attribute outside HIP, so the variable was a host variable and the
// kernel that uses it an error ("reference to __host__ variable 'counter' in __global__ function"), not
// editable. The compatibility layer spells __managed__ as __device__. nvcc-accepts.test compiles this
// file with nvcc.
// REQUIRES: nvcc
// RUN: kloop extract %s --root %S --cuda-path=%cuda_path -- -std=c++17 2> %t.err | python3 %inputs/summarize.py | FileCheck %s
// RUN: count 0 < %t.err
#include <cstdio>
__managed__ int counter;
__device__ __managed__ float table[16];
__global__ void count(const int *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    atomicAdd(&counter, in[i]);
    table[i % 16] = 1.0f;
  }
}
int run(const int *in, int n) {
  counter = 0;
  count<<<(n + 255) / 256, 256>>>(in, n);
  cudaDeviceSynchronize();
  std::printf("%f\n", table[0]);
  return counter;
}
// CHECK: TU managed-variable.cu ok
// CHECK: KERNEL count editable=1
