// Constants whose value is a hardware fact are marked `hardware_fact` from their AST uses, with the
// reason and each such use; the builtin search never tunes them (docs/inventory.md, "hardware_fact").
// LANE_MASK is the operand of `&` equal to 31; SHFL_W the width argument of __shfl_down_sync; WS the
// other side of a comparison with warpSize; WARP_THREADS has no such use, but its name and value (32)
// are the weaker signal. TILE (16) used as `% TILE` is an ordinary tile index: not a hardware fact.
// Every one of them also sizes a shared array, so each is a listed constant.
// RUN: kloop extract --no-cache %s --root %S -- %mockcuda > %t.json
// RUN: python3 -c "import json,sys; [print('HW', c['id'], (c['hardware_fact'] or {}).get('reason', 'none')) for c in json.load(sys.stdin)['constants']]" < %t.json | FileCheck %s
// CHECK-DAG: HW macro:LANE_MASK used as the operand of `&` equal to 31, a lane mask (the warp size - 1) at hardware-fact.cu:39
// CHECK-DAG: HW macro:SHFL_W used as the width argument of __shfl_down_sync (the lanes a warp shuffle spans) at hardware-fact.cu:40
// CHECK-DAG: HW const:WS used as the other side of a comparison with warpSize at hardware-fact.cu:41
// CHECK-DAG: HW macro:WARP_THREADS named like a warp size and equal to 32, what that name means on every NVIDIA GPU
// CHECK-DAG: HW macro:TILE none
// A `% 32` stays a hardware fact when the constant also sizes a square shared tile (TILE_DIM:
// `[TILE_DIM][TILE_DIM + 1]`, BS: `[BS * BS]`): a warp-transposed buffer `s[W][W + 1]` indexed by lane and
// warp looks the same, and unmarking it let a search set W to 16 (a review of a rule that did; kept
// marked, so such a tile width is not tuned).
// CHECK-DAG: HW macro:TILE_DIM used as the right operand of `%` equal to 32, the warp size (a lane index) at hardware-fact.cu:{{[0-9]+}}
// CHECK-DAG: HW const:BS used as the right operand of `%` equal to 32, the warp size (a lane index) at hardware-fact.cu:{{[0-9]+}}
// CHECK-DAG: HW macro:W used as the right operand of `%` equal to 32, the warp size (a lane index) at hardware-fact.cu:{{[0-9]+}}
// CHECK-DAG: HW macro:WARP_SZ used as the right operand of `%` equal to 32, the warp size (a lane index) at hardware-fact.cu:{{[0-9]+}}
// Device functions list their direct callers (the reverse of `calls`).
// RUN: python3 -c "import json,sys; [print('CALLERS', f['id'], f['called_by']) for f in json.load(sys.stdin)['device_functions']]" < %t.json | FileCheck %s --check-prefix=CALLERS
// CALLERS-DAG: CALLERS device:inner ['device:outer']
// CALLERS-DAG: CALLERS device:outer ['k']
#include "cuda.h"
#define LANE_MASK 31
#define SHFL_W 32
#define WARP_THREADS 32
#define TILE 16
constexpr int WS = 32;
static const __device__ int warpSize = 32; // clang's CUDA headers declare it so; the mock does not

__device__ int inner(int x) { return x + 1; }
__device__ int outer(int x) { return inner(x) * 2; }

__global__ void k(float *out) {
  __shared__ float a[LANE_MASK + 1], b[SHFL_W], c[WS], d[WARP_THREADS], e[TILE];
  int lane = threadIdx.x & LANE_MASK;
  float v = __shfl_down_sync(0xffffffffu, out[lane], 1, SHFL_W);
  if (warpSize == WS) v += 1.0f;
  int t = threadIdx.x % TILE;
  a[0] = b[0] = c[0] = d[0] = e[t] = v + outer(lane);
  out[threadIdx.x] = a[0];
}

#define TILE_DIM 32
#define W 32
#define WARP_SZ 32
constexpr int BS = 32;
__global__ void tiles(float *out, const float *in) {
  __shared__ float t[TILE_DIM][TILE_DIM + 1];
  __shared__ float u[BS * BS];
  __shared__ float s[W];
  __shared__ float q[WARP_SZ][WARP_SZ];
  int c = threadIdx.x % TILE_DIM, r = threadIdx.x / TILE_DIM;
  t[r][c] = in[threadIdx.x];
  u[threadIdx.x] = t[c][r] + (float)(threadIdx.x % BS);
  s[threadIdx.x % W] = u[threadIdx.x];
  q[0][threadIdx.x % WARP_SZ] = s[0];
  out[threadIdx.x] = q[0][0];
}
