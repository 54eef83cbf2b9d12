// nvcc reads `k<< <grid, block>> >(args)` (blanks between `<<` and `<`, whitespace between
// `>>` and `>`) as a launch; clang 22 says "expected expression". kloop's parse reads such a
// launch as `<<<...>>>` through a same-length rewrite (offsets and lines unchanged), and
// leaves `operator<< <T>` and nested templates closed with `>> >` alone.
// nvcc-accepts.test compiles this file with nvcc.
// REQUIRES: nvcc
// RUN: kloop extract %s --root %S --cuda-path=%cuda_path -- -std=c++17 2> %t.err | python3 %inputs/summarize.py | FileCheck %s
// RUN: count 0 < %t.err
#include <vector>
template <typename T> struct Box { T v; };
template <typename T> int operator<<(int s, Box<T> b) { return s + int(b.v); }
__global__ void k(int *p, int n) { p[threadIdx.x] = n; }
int launch(int *p) {
  k<< <1, 32>> >(p, 1);
  k<<<dim3(2), 64>> >(p, 2);
  k<< <4, 128>>>(p, 3);
  std::vector<std::vector<Box<int>> > nested(1);
  int (*shift)(int, Box<int>) = &operator<< <int>;
  return shift(1, Box<int>{2});
}
// CHECK: TU launch-chevron-spacing.cu ok
// CHECK: LAUNCH launch-chevron-spacing.cu:launch/launch#1 kernel=k via=<<<>>> grid=1=1x1x1 block=32=32x1x1
// CHECK: LAUNCH launch-chevron-spacing.cu:launch/launch#2 kernel=k via=<<<>>> grid=dim3(2)=2x1x1 block=64=64x1x1
// CHECK: LAUNCH launch-chevron-spacing.cu:launch/launch#3 kernel=k via=<<<>>> grid=4=4x1x1 block=128=128x1x1
