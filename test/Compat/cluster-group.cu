// Thread block clusters through cooperative groups (cg::this_cluster, cg::cluster_group; Hopper and
// Blackwell code): CUDA 13's cooperative_groups/details/info.h declares them only under __NVCC__,
// __CUDACC_RTC__ or _CG_CLUSTER_INTRINSICS_AVAILABLE, so in clang the unit had "no type named
// 'cluster_group' in namespace 'cooperative_groups'" on both sides and the kernel was not editable.
// The compatibility layer defines the header's own opt-in. nvcc-accepts.test compiles this file with nvcc.
// REQUIRES: nvcc
// RUN: kloop extract %s --root %S --cuda-path=%cuda_path -- -std=c++17 -arch=sm_90 2> %t.err | python3 %inputs/summarize.py | FileCheck %s
// RUN: count 0 < %t.err
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void __cluster_dims__(2, 1, 1) ranks(unsigned *out) {
  cg::cluster_group cluster = cg::this_cluster();
  out[blockIdx.x * blockDim.x + threadIdx.x] = cluster.block_rank();
  cluster.sync();
}
void run(unsigned *out) { ranks<<<4, 128>>>(out); }
// CHECK: TU cluster-group.cu ok
// CHECK: KERNEL ranks editable=1
