// nvcc's cuda_runtime.h reaches crt/common_functions.h, which includes <string.h> and <time.h>
// in every pass (not for NVRTC), and <new>, <stdio.h>, <stdlib.h> and <assert.h> in the device
// pass (__CUDA_ARCH__). So host code calls clock() and time() without including <time.h>, and
// device-only code (#ifdef __CUDA_ARCH__) uses placement new and assert without <new> or
// <assert.h>. clang's wrapper includes <string.h> and <stdlib.h> only: "no matching function
// for call to 'clock'" (the device clock() of __clang_cuda_device_functions.h is the only one),
// "use of undeclared identifier 'time'", "include <new>", "'assert'". nvcc-accepts.test
// compiles this file with nvcc.
// REQUIRES: nvcc
// RUN: kloop extract %s --root %S --cuda-path=%cuda_path -- -std=c++17 2> %t.err | python3 %inputs/summarize.py | FileCheck %s
// RUN: count 0 < %t.err
struct Pair {
  float a, b;
  __device__ Pair(float x) : a(x), b(-x) {}
};
__global__ void probe(float *out, int n) {
#ifdef __CUDA_ARCH__
  __shared__ float slot[2];
  Pair *p = new (slot) Pair(out[0]);
  assert(n > 0);
  out[threadIdx.x] = p->b + (float)abs(n);
#endif
}
double seconds_since(clock_t start) { return (double)(clock() - start) / CLOCKS_PER_SEC; }
long stamp() {
  time_t now = time(nullptr);
  struct tm parts;
  gmtime_r(&now, &parts);
  return (long)difftime(now, 0) + parts.tm_year;
}
int run(float *d, int n) {
  clock_t t0 = clock();
  probe<<<1, 32>>>(d, n);
  return seconds_since(t0) > 0 ? (int)stamp() : 0;
}
// CHECK: TU implicit-libc-headers.cu ok
// CHECK: KERNEL probe editable=1
// CHECK: LAUNCH implicit-libc-headers.cu:run/launch#1 kernel=probe via=<<<>>>
