// nvcc's cuda_runtime.h includes <math.h> (crt/math_functions.h), so isfinite, isnan, isinf,
// signbit, isgreater, ... are found by unqualified calls in host templates, which clang's
// device pass parses too. clang's wrapper includes only <cmath>, whose global names are
// __device__ only: "no matching function for call to 'isfinite'" on both sides without the
// compatibility layer. nvcc-accepts.test compiles this file with nvcc.
// REQUIRES: nvcc
// RUN: kloop extract %s --root %S --cuda-path=%cuda_path -- -std=c++17 2> %t.err | python3 %inputs/summarize.py | FileCheck %s
// RUN: count 0 < %t.err
#include <cmath>
template <typename T> bool all_finite(const T *v, int n) {
  for (int i = 0; i < n; ++i)
    if (!isfinite(v[i]) || isnan(v[i]) || isinf(v[i]) || signbit(v[i]) || isgreater(v[i], T(1e30)))
      return false;
  return true;
}
__global__ void scale(float *x, float s) { x[threadIdx.x] *= s; }
bool check_and_scale(float *d, const float *h, int n) {
  if (!all_finite(h, n))
    return false;
  scale<<<1, n>>>(d, 2.f);
  return true;
}
// CHECK: TU math-classification.cu ok
// CHECK: KERNEL scale editable=1
// CHECK: LAUNCH math-classification.cu:check_and_scale/launch#1 kernel=scale via=<<<>>>
