#include "cuda.h"
// Launches of accum that are not a resolved `<<<>>>`: through cudaLaunchKernel's argument array,
// cudaLaunchKernelEx's arguments, a function pointer, a kernel template launched inside a template.
// The test compiles one case at a time (-DCASE_...).
__global__ void accum(const float *a, float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] += a[i];
}
template <int B> __global__ void taccum(const float *a, float *b, int n) {
  int i = blockIdx.x * B + threadIdx.x;
  if (i < n) b[i] += a[i];
}
#ifdef CASE_ARGS_ALIAS
void argsAlias(float *x, int n) {
  void *args[] = {&x, &x, &n};
  cudaLaunchKernel((const void *)accum, 1, 256, args, 0, 0);
}
#endif
#ifdef CASE_ARGS_DISTINCT
void argsDistinct(float *x, float *y, int n) {
  void *args[] = {(void *)&x, (void *)&y, (void *)&n};
  cudaFuncSetAttribute((const void *)accum, cudaFuncAttributeMaxDynamicSharedMemorySize, 0);
  cudaLaunchKernel((const void *)accum, 1, 256, args, 0, 0);
}
#endif
#ifdef CASE_ARGS_OPAQUE
void argsOpaque(void **args) { cudaLaunchKernel((const void *)accum, 1, 256, args, 0, 0); }
#endif
#ifdef CASE_ARGS_SET
void argsSet(float *x, float *y, int n) {
  void *args[] = {&x, &y, &n};
  args[1] = &x;
  cudaLaunchKernel((const void *)accum, 1, 256, args, 0, 0);
}
#endif
#ifdef CASE_EX
void ex(float *x, int n) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(1);
  cfg.blockDim = dim3(256);
  cudaLaunchKernelEx(&cfg, accum, x, x + 4, n);
}
#endif
#ifdef CASE_EX_DISTINCT
void exDistinct(float *x, float *y, int n) {
  cudaLaunchConfig_t cfg = {};
  int blocks = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, (const void *)accum, 256, 0);
  cudaLaunchKernelEx(&cfg, accum, x, y, n);
}
#endif
#ifdef CASE_POINTER
void viaPointer(float *x, int n) {
  void (*f)(const float *, float *, int) = accum;
  f<<<1, 256>>>(x, x, n);
}
#endif
#ifdef CASE_TEMPLATE
template <int N> void run(float *x, int n) { taccum<N><<<1, N>>>(x, x, n); }
void runAll(float *x, int n) { run<256>(x, n); }
#endif
