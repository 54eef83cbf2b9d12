// Launch sites: <<<>>>, cudaLaunchKernel, cudaLaunchCooperativeKernel, cudaLaunchKernelEx.
// RUN: kloop extract %s --root %S -- %mockcuda | python3 %inputs/summarize.py | FileCheck %s
#include "cuda.h"
#define BLOCK 256
__global__ void k(float *p, int n) { p[threadIdx.x] = n; }
void launch_all(float *p, int n, cudaStream_t s) {
  k<<<(n + BLOCK - 1) / BLOCK, BLOCK, 64, s>>>(p, n);
  dim3 blk(16, 16);
  k<<<dim3(4, 2), blk>>>(p, n);
  void *args[] = {&p, &n};
  cudaLaunchKernel((const void *)k, dim3(8), dim3(BLOCK), args, 0, s);
  cudaLaunchCooperativeKernel((const void *)&k, 2, 128, args, 32, 0);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(3);
  cfg.blockDim = dim3(96);
  cfg.dynamicSmemBytes = 0;
  cudaLaunchKernelEx(&cfg, k, p, n);
}
// CHECK: SITES k launch-sites.cu:launch_all/launch#1,launch-sites.cu:launch_all/launch#2,launch-sites.cu:launch_all/launch#3,launch-sites.cu:launch_all/launch#4,launch-sites.cu:launch_all/launch#5
// CHECK: LAUNCH launch-sites.cu:launch_all/launch#1 kernel=k via=<<<>>> grid=(n + BLOCK - 1) / BLOCK=- block=BLOCK=256x1x1 smem=64=64 stream=s
// CHECK: LAUNCH launch-sites.cu:launch_all/launch#2 kernel=k via=<<<>>> grid=dim3(4, 2)=4x2x1 block=blk=16x16x1 smem=- stream=-
// CHECK: LAUNCH launch-sites.cu:launch_all/launch#3 kernel=k via=cudaLaunchKernel grid=dim3(8)=8x1x1 block=dim3(BLOCK)=256x1x1 smem=0=0 stream=s
// CHECK: LAUNCH launch-sites.cu:launch_all/launch#4 kernel=k via=cudaLaunchCooperativeKernel grid=2=2x1x1 block=128=128x1x1 smem=32=32
// CHECK: LAUNCH launch-sites.cu:launch_all/launch#5 kernel=k via=cudaLaunchKernelEx grid=dim3(3)=3x1x1 block=dim3(96)=96x1x1 smem=0=0
// CHECK: CONST macro:BLOCK kind=macro value=256
// CHECK-DAG: USE macro:BLOCK grid_size launch-sites.cu:launch_all/launch#1 line=7
// CHECK-DAG: USE macro:BLOCK block_size launch-sites.cu:launch_all/launch#1 line=7
// CHECK-DAG: USE macro:BLOCK block_size launch-sites.cu:launch_all/launch#3 line=11
