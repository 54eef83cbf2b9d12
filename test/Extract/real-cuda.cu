// Real CUDA 13 headers (cooperative groups, CUB, Thrust) parse cleanly with clang 22, with
// nvcc's implicit include directories (include/cccl) and no CUDA version warning.
// REQUIRES: nvcc
// RUN: kloop extract %s --root %S --cuda-path=%cuda_path -- -std=c++17 2> %t.err | python3 %inputs/summarize.py | FileCheck %s
// RUN: count 0 < %t.err
#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>
#include <thrust/device_vector.h>
#include <thrust/reduce.h>
namespace cg = cooperative_groups;
template <int BS>
__global__ void block_sum(float *out, const float *in, int n) {
  using Reduce = cub::BlockReduce<float, BS>;
  __shared__ typename Reduce::TempStorage tmp;
  auto block = cg::this_thread_block();
  int i = blockIdx.x * BS + threadIdx.x;
  float v = i < n ? in[i] : 0.f;
  float s = Reduce(tmp).Sum(v);
  block.sync();
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}
int main() {
  thrust::device_vector<float> v(1024, 1.f);
  thrust::device_vector<float> o(4);
  block_sum<256><<<4, 256>>>(thrust::raw_pointer_cast(o.data()), thrust::raw_pointer_cast(v.data()), 1024);
  return thrust::reduce(o.begin(), o.end()) == 1024.f ? 0 : 1;
}
// CHECK: TU real-cuda.cu ok
// CHECK: KERNEL block_sum editable=1
// CHECK: INST block_sum<256> _Z9block_sumILi256EEvPfPKfi
// CHECK: SHARED block_sum/shared:tmp
// CHECK: LAUNCH real-cuda.cu:main/launch#1 kernel=block_sum via=<<<>>> grid=4=4x1x1 block=256=256x1x1
