// Launch formulas (docs/inventory.md, "Launch formulas"): each <<<>>> launch's grid, block and dynamic
// shared memory as integer formulas over what its kernel call passes, for replaying a new launch
// configuration (docs/optimize.md). The host code before the launch is run symbolically.
// RUN: kloop extract %s --root %S -- %mockcuda | python3 %inputs/formulas.py | FileCheck %s
#include "cuda.h"
#define BLOCK 256
#define MAX_BLOCKS 65535

__global__ void k(int n, float *p) { p[threadIdx.x] = n; }
__global__ void k2(int w, int h, float *p) { p[threadIdx.x] = w + h; }
template <int B> __global__ void kt(int n, float *p) { p[threadIdx.x] = B * n; }

static int ceil_div(int a, int b) { return (a + b - 1) / b; }
template <class T> T min(T a, T b) { return a < b ? a : b; }
int g_blocks;

// A grid-stride launch's clamp: the if becomes a conditional.
void clamp(int n, float *p) {
  int blocks = (n + BLOCK - 1) / BLOCK;
  if (blocks > MAX_BLOCKS)
    blocks = MAX_BLOCKS;
  k<<<blocks, BLOCK>>>(n, p);
}
// CHECK-DAG: FORMULA launch-formula.cu:clamp/launch#1 callee=k grid=(u32)(((((n + 256) - 1) / 256) > 65535) ? 65535 : (((n + 256) - 1) / 256)),1,1 block=256,1,1 smem=0 args=n;-

// dim3 locals and their members; a stream argument.
void tiles(int w, int h, float *p, cudaStream_t s) {
  dim3 block(16, 8);
  dim3 grid((w + block.x - 1) / block.x, (h + block.y - 1) / block.y);
  k2<<<grid, block, 0, s>>>(w, h, p);
}
// CHECK-DAG: FORMULA launch-formula.cu:tiles/launch#1 callee=k2 grid=((((u32)w + 16) - 1) / 16),((((u32)h + 8) - 1) / 8),1 block=16,8,1 smem=0 args=w;h;-

// A call whose body is one return is inlined (this file's own min too: only the standard library's and
// CUDA's min/max are min/max nodes); the shared memory is a formula.
void inlined(int n, float *p) {
  k<<<min(ceil_div(n, 128), 1024), 128, 128 * sizeof(float)>>>(n, p);
}
// CHECK-DAG: FORMULA launch-formula.cu:inlined/launch#1 callee=k grid=(u32)(((((n + 128) - 1) / 128) < 1024) ? (((n + 128) - 1) / 128) : 1024),1,1 block=128,1,1 smem=512 args=n;-

// A helper with straight-line code ending in its only return runs the same way (reduction's pattern);
// one with two returns does not.
static int clamped_blocks(int n) {
  int b = (n + BLOCK - 1) / BLOCK;
  return b < MAX_BLOCKS ? b : MAX_BLOCKS;
}
static int two_returns(int n) {
  if (n > 4096)
    return 4096;
  return n;
}
void helper(int n, float *p) {
  const int blocks = clamped_blocks(n);
  k<<<blocks, BLOCK>>>(n, p);
  k<<<two_returns(n), BLOCK>>>(n, p);
}
// CHECK-DAG: FORMULA launch-formula.cu:helper/launch#1 callee=k grid=(u32)(((((n + 256) - 1) / 256) < 65535) ? (((n + 256) - 1) / 256) : 65535),1,1 block=256,1,1 smem=0 args=n;-
// CHECK-DAG: UNKNOWN launch-formula.cu:helper/launch#2 two_returns(n): a call to two_returns, whose body is not straight-line code ending in its only return statement

// A loop around the launch: what the loop changes is unknown at the launch.
void sweep(int n, float *p) {
  for (int b = 32; b <= 1024; b *= 2)
    k<<<(n + b - 1) / b, b>>>(n, p);
}
// CHECK-DAG: UNKNOWN launch-formula.cu:sweep/launch#1 b is changed by `for (int b = 32; b <= 1024; b *= 2)`, which kloop does not follow

// A parameter set from its own earlier value: kloop keeps no value of it.
void halved(int n, float *p) {
  n = n / 2;
  int g = n;
  k<<<g, 32>>>(n, p);
}
// CHECK-DAG: UNKNOWN launch-formula.cu:halved/launch#1 n is set from its own earlier value

// A variable changed in a way kloop does not follow.
void opaque(int n, float *p) {
  int g = n;
  g += 3;
  k<<<g, 64>>>(n, p);
}
// CHECK-DAG: UNKNOWN launch-formula.cu:opaque/launch#1 g is changed by `g += 3`, which kloop does not follow

// Aliases: a variable whose address is taken, or that a reference or a by-reference lambda capture
// names, is never known, even where it is assigned after the alias was made.
void scale(int *);
void bump(int &);
void aliases(int n, float *p) {
  int a = 64;
  int *q = &a;
  a = 128;
  *q = 256;
  k<<<1, a>>>(n, p);
  int b = 32;
  bump(b);
  k<<<1, b>>>(n, p);
  int c = 16;
  auto set = [&c]() { c = 8; };
  set();
  k<<<1, c>>>(n, p);
}
void param_alias(int n, float *p) {
  scale(&n);
  k<<<n, 32>>>(n, p);
}
// CHECK-DAG: UNKNOWN launch-formula.cu:aliases/launch#1 a has its address taken or a reference bound to it in aliases, so kloop cannot follow its value
// CHECK-DAG: UNKNOWN launch-formula.cu:aliases/launch#2 b has its address taken or a reference bound to it in aliases, so kloop cannot follow its value
// CHECK-DAG: UNKNOWN launch-formula.cu:aliases/launch#3 c has its address taken or a reference bound to it in aliases, so kloop cannot follow its value
// CHECK-DAG: UNKNOWN launch-formula.cu:param_alias/launch#1 n has its address taken or a reference bound to it in param_alias, so kloop cannot follow its value

// Control flow the straight-line run does not model makes the whole launch unknown: goto, switch, a
// launch inside a lambda; and what a statement around the launch changes is forgotten.
void jumps(int n, float *p) {
  int b = 128;
  if (n > 5)
    goto skip;
  b = 64;
skip:
  k<<<1, b>>>(n, p);
}
void cases(int n, float *p) {
  int b = 128;
  switch (n) {
  case 0:
    b = 64;
  default:
    k<<<1, b>>>(n, p);
  }
}
void in_lambda(int n, float *p) {
  int b = 128;
  auto f = [=]() { k<<<1, b>>>(n, p); };
  f();
}
void comma(int n, float *p) {
  int g = n + 1;
  (n = 7), k<<<g, 1>>>(n, p);
}
// CHECK-DAG: UNKNOWN launch-formula.cu:jumps/launch#1 jumps has goto, and kloop follows straight-line code only
// CHECK-DAG: UNKNOWN launch-formula.cu:cases/launch#1 cases has switch, and kloop follows straight-line code only
// CHECK-DAG: UNKNOWN launch-formula.cu:in_lambda/launch#1 the launch is in a lambda, whose body runs when it is called
// CHECK-DAG: UNKNOWN launch-formula.cu:comma/launch#1 g was computed from n, which changes before the launch

// A reference parameter may name what other code changes; a virtual call may be overridden; a 128-bit
// integer is not a type formulas hold.
struct Sizer {
  virtual int blocks(int n) { return n; }
};
void by_ref(const int &n, float *p) { k<<<n, 32>>>(n, p); }
void by_virtual(Sizer &s, int n, float *p) { k<<<s.blocks(n), 32>>>(n, p); }
void wide(__int128 n, float *p) { k<<<1, 32>>>((int)n, p); }
// CHECK-DAG: UNKNOWN launch-formula.cu:by_ref/launch#1 n: a reference parameter, which may name what other code changes
// CHECK-DAG: UNKNOWN launch-formula.cu:by_virtual/launch#1 s.blocks(n): a virtual call, which another class may override
// CHECK-DAG: FORMULA launch-formula.cu:wide/launch#1 callee=k grid=1,1,1 block=32,1,1 smem=0 args=-;-

// A chain of clamps would double the formula at each step: past 256 nodes it is unknown.
void clamps(int n, float *p) {
  int b = (n + 255) / 256;
  if (b > 60000) b = 60000;
  if (b > 50000) b = 50000;
  if (b > 40000) b = 40000;
  if (b > 30000) b = 30000;
  if (b > 20000) b = 20000;
  if (b > 10000) b = 10000;
  k<<<b, 256>>>(n, p);
}
// CHECK-DAG: UNKNOWN launch-formula.cu:clamps/launch#1 b's formula grows past 256 nodes at `if (b > 20000) b = 20000`

// A global: host code elsewhere may set it, and a candidate's constants with it.
void global(float *p) { k<<<g_blocks, 64>>>(g_blocks, p); }
// CHECK-DAG: UNKNOWN launch-formula.cu:global/launch#1 g_blocks: a global, which host code elsewhere may set

// A template instantiation is the callee; a launch that depends on a template parameter is unknown.
template <int B> void launch_t(int n, float *p) { kt<B><<<(n + B - 1) / B, B>>>(n, p); }
void instantiate(float *p) {
  launch_t<128>(1000, p);
  kt<64><<<1, 64>>>(7, p);
}
// CHECK-DAG: UNKNOWN launch-formula.cu:launch_t/launch#1 (n + B - 1) / B: depends on a template parameter
// CHECK-DAG: FORMULA launch-formula.cu:instantiate/launch#1 callee=kt<64> grid=1,1,1 block=64,1,1 smem=0 args=7;-

// A floating-point step.
void floating(int n, float *p) {
  int g = (int)(n / 256.0f + 0.5f);
  k<<<g, 256>>>(n, p);
}
// CHECK-DAG: UNKNOWN launch-formula.cu:floating/launch#1 (n / 256.0f + 0.5f): a conversion from float (kloop evaluates integer formulas only)

// Another launch API has no formula.
void api(int n, float *p) {
  void *args[] = {&n, &p};
  cudaLaunchKernel((const void *)k, dim3(8), dim3(BLOCK), args, 0, 0);
}
// CHECK-DAG: NONE launch-formula.cu:api/launch#1
