#include "cuda.h"
// Launches of accum that are not a resolved `<<<>>>`: through cudaLaunchKernel's argument array,
// cudaLaunchKernelEx's arguments, a function pointer, a kernel template launched inside a template, a
// handle, device code. The test compiles one case at a time (-DCASE_...).
#include "alias_kernels.h"
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
#ifdef CASE_TEMPLATE_COOP
template <int N> void coop(float *x, int n) {
  void *args[] = {&x, &x, &n};
  cudaLaunchCooperativeKernel((const void *)taccum<N>, 1, N, args, 0, 0);
}
void coopAll(float *x, int n) { coop<256>(x, n); }
#endif
#ifdef CASE_SPECIALIZATION
template <> __global__ void taccum<128>(const float *a, float *b, int n) {
  int i = blockIdx.x * 128 + threadIdx.x;
  if (i < n) b[i] += a[i];
}
void special(float *x, int n) {
  void (*f)(const float *, float *, int) = taccum<128>;
  f<<<1, 128>>>(x, x, n);
}
#endif
#ifdef CASE_HANDLE
void handle(float *x, int n) {
  cudaFunction_t fn;
  cudaGetFuncBySymbol(&fn, (const void *)accum);
}
#endif
#ifdef CASE_DEVICE_LAUNCH
__global__ void parent(float *x, int n) {
#ifdef __CUDA_ARCH__
  accum<<<1, 256>>>(x, x, n);
#endif
}
void launchParent(float *x, int n) { parent<<<1, 1>>>(x, n); }
#endif
#ifdef CASE_GLOBAL_ARRAY
float *gx, *gy;
int gn;
void *gargs[] = {&gx, &gy, &gn};
void aliasLater() { gargs[1] = &gx; }
void globalArray() { cudaLaunchKernel((const void *)accum, 1, 256, gargs, 0, 0); }
#endif
#ifdef CASE_INIT_EFFECT
void initEffect(float *x, float *y, int n) {
  void *args[] = {&x, &y, &(y = x, n)};
  cudaLaunchKernel((const void *)accum, 1, 256, args, 0, 0);
}
#endif
#ifdef CASE_LAMBDA
auto lambdaLauncher = [](float *x, float *y, int n) {
  if (!y) y = x;
  accum<<<1, 256>>>(x, y, n);
};
#endif
#ifdef CASE_UNEVALUATED
using KernelPtr = decltype(&accum);
static_assert(sizeof(&accum) == sizeof(void *), "a pointer");
void unevaluated(float *x, float *y, int n) { accum<<<1, 256>>>(x, y, n); }
#endif
#ifdef CASE_PINGPONG
void pingPong(float *x, float *y, int n) {
  void *fwd[] = {&x, &y, &n};
  cudaLaunchKernel((const void *)accum, 1, 256, fwd, 0, 0);
  void *back[] = {&y, &x, &n};
  cudaLaunchKernel((const void *)accum, 1, 256, back, 0, 0);
}
#endif
#ifdef CASE_TEMPLATE_DISTINCT
template <int N> void runDistinct(float *x, float *y, int n) { taccum<N><<<1, N>>>(x, y, n); }
void runDistinctAll(float *x, float *y, int n) { runDistinct<256>(x, y, n); }
#endif
#ifdef CASE_TEMPLATE_POINTER
template <int N> void keep(float *x, int n) {
  void (*f)(const float *, float *, int) = taccum<N>;
  f<<<1, N>>>(x, x, n);
}
void keepAll(float *x, int n) { keep<64>(x, n); }
#endif
