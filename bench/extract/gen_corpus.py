#!/usr/bin/env python3
"""Generates a corpus of CUDA translation units for the `kloop extract` benchmark.

    python3 bench/extract/gen_corpus.py OUT_DIR [--tus 200] [--seed 1] [--cuda-path /usr/local/cuda]

Writes under OUT_DIR:
  include/*.cuh           headers shared between translation units (kernels defined in headers,
                          kernel-defining macros, device functions, tunable constants);
  src/tu_NNNN.cu          the translation units (a few named .cpp, compiled with `nvcc -x cu`);
  compile_commands.json   nvcc-style commands with absolute paths (what `kloop extract -p` reads);
  clang_commands.txt      one line per TU: the equivalent `clang++ -fsyntax-only` command (host
                          and device sides, sm_90), shell-quoted, for `xargs -P N`;
  manifest.json           per TU: file, family, the __global__ kernels written (templates
                          counted once) and the launch sites by kind.

The corpus is deterministic for a given --seed. Families (TU index modulo 8): elementwise
templates and macros with <<<>>> launches; namespaced and static kernels launched through
cudaLaunchKernel; cooperative groups with cudaLaunchCooperativeKernel; CUB block reductions
and scans; cudaLaunchKernelEx with launch attributes; shared-memory tiled matmul templates;
stencils with __constant__ coefficients; device lambdas and header kernels.
"""
import argparse
import json
import os
import random
import shlex

HEADERS = {
    "corpus_common.cuh": r'''// Shared by every translation unit of the corpus.
#pragma once
#include <cuda_runtime.h>
#include <cstdio>

#define CORPUS_CHECK(call)                                                     \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) std::printf("%s\n", cudaGetErrorString(e_));        \
  } while (0)

#ifndef CORPUS_BLOCK
#define CORPUS_BLOCK 256
#endif

// A kernel defined by a macro: one elementwise map per expansion.
#define DEFINE_MAP_KERNEL(NAME, T, EXPR)                                        \
  __global__ void NAME(const T* __restrict__ in, T* __restrict__ out, int n) { \
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;                 \
         i += blockDim.x * gridDim.x) {                                        \
      T x = in[i];                                                             \
      out[i] = (EXPR);                                                         \
    }                                                                          \
  }

namespace corpus {

constexpr int kWarp = 32;

__device__ __forceinline__ float sq(float x) { return x * x; }
__device__ __forceinline__ double sq(double x) { return x * x; }

template <typename T>
__device__ T warp_sum(T v) {
#pragma unroll
  for (int o = kWarp / 2; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

// A kernel template defined in a header, instantiated by several TUs.
template <typename T, int BLOCK>
__global__ void __launch_bounds__(BLOCK) fill(T* out, T value, int n) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n) out[i] = value;
}

inline int blocks_for(int n, int block) { return (n + block - 1) / block; }

}  // namespace corpus
''',
    "corpus_tile.cuh": r'''// Tiling helpers shared by the matmul and stencil families.
#pragma once
#include "corpus_common.cuh"

namespace corpus {
namespace tile {

constexpr int kDefaultTile = 16;

template <int TILE>
struct Shape {
  static constexpr int tile = TILE;
  static constexpr int threads = TILE * TILE;
};

template <typename T, int TILE>
__device__ void load_tile(T (*dst)[TILE + 1], const T* src, int ld, int r0, int c0, int rows,
                          int cols) {
  int r = r0 + threadIdx.y, c = c0 + threadIdx.x;
  dst[threadIdx.y][threadIdx.x] = (r < rows && c < cols) ? src[(size_t)r * ld + c] : T(0);
}

}  // namespace tile
}  // namespace corpus
''',
    "corpus_stats.cuh": r'''// Statistics kernels defined in a header (a static kernel and a template).
#pragma once
#include "corpus_common.cuh"

static __global__ void corpus_count_nonzero(const float* in, unsigned* count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && in[i] != 0.f) atomicAdd(count, 1u);
}

namespace corpus {
template <typename T>
__global__ void minmax(const T* in, T* lo, T* hi, int n) {
  __shared__ T slo[CORPUS_BLOCK], shi[CORPUS_BLOCK];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  T v = i < n ? in[i] : in[0];
  slo[threadIdx.x] = v;
  shi[threadIdx.x] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      slo[threadIdx.x] = min(slo[threadIdx.x], slo[threadIdx.x + s]);
      shi[threadIdx.x] = max(shi[threadIdx.x], shi[threadIdx.x + s]);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    lo[blockIdx.x] = slo[0];
    hi[blockIdx.x] = shi[0];
  }
}
}  // namespace corpus
''',
}

TYPES = ["float", "double", "int"]


def fam_elementwise(t, r):
    block = r.choice([64, 128, 256, 512])
    nk = r.randint(2, 5)
    out = [f'#include "corpus_common.cuh"\n#include "corpus_stats.cuh"\n', f"#define BLOCK_{t} {block}\n"]
    kernels, launches = [], {"chevron": 0}
    exprs = ["x * x + T(1)", "x > T(0) ? x : T(0)", "T(2) * x - T(3)", "x / (T(1) + x * x)"]
    map_types = []
    for k in range(nk):
        ty = r.choice(["float", "double"])
        map_types.append(ty)
        out.append(f"#define T {ty}\nDEFINE_MAP_KERNEL(map_{t}_{k}, {ty}, {r.choice(exprs)})\n#undef T\n")
        kernels.append(f"map_{t}_{k}")
    out.append(f'''
template <typename T, int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK) axpby_{t}(int n, T a, const T* __restrict__ x, T b,
                                                 T* __restrict__ y) {{
  const int base = (blockIdx.x * BLOCK + threadIdx.x) * ITEMS;
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {{
    int i = base + j;
    if (i < n) y[i] = a * x[i] + b * y[i];
  }}
}}

template __global__ void axpby_{t}<float, {block}, 4>(int, float, const float*, float, float*);
''')
    kernels.append(f"axpby_{t}")
    out.append(f"void run_elementwise_{t}(float* d, double* e, int n, cudaStream_t s) {{\n")
    out.append(f"  const int grid = corpus::blocks_for(n, BLOCK_{t});\n")
    for k in range(nk):
        ptr = "d" if map_types[k] == "float" else "e"
        out.append(f"  map_{t}_{k}<<<grid, BLOCK_{t}, 0, s>>>({ptr}, {ptr}, n);\n")
        launches["chevron"] += 1
    out.append(f"  axpby_{t}<float, {block}, 4><<<dim3(grid / 4 + 1), dim3({block}), 0, s>>>(n, 2.f, d, 0.5f, d);\n")
    out.append(f"  axpby_{t}<double, 128, 2><<<grid, 128>>>(n, 2.0, e, 0.5, e);\n")
    out.append(f"  corpus::fill<float, {block}><<<grid, {block}, 0, s>>>(d, 1.f, n);\n")
    out.append(f"  corpus_count_nonzero<<<grid, {block}>>>(d, nullptr, n);\n")
    out.append(f"  corpus::minmax<float><<<grid, CORPUS_BLOCK, 0, s>>>(d, d, d, n);\n")
    launches["chevron"] += 5
    out.append("  CORPUS_CHECK(cudaGetLastError());\n}\n")
    kernels += ["corpus::fill", "corpus_count_nonzero", "corpus::minmax"]
    return "".join(out), kernels, launches


def fam_launchkernel(t, r):
    n_static = r.randint(1, 3)
    out = ['#include "corpus_common.cuh"\n\n', f"namespace app{t % 7} {{\nnamespace detail {{\n\n"]
    kernels, launches = [], {"cudaLaunchKernel": 0, "chevron": 0}
    for k in range(n_static):
        out.append(f'''static __global__ void scale_{t}_{k}(float* __restrict__ v, float s, int n) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = corpus::sq(v[i]) * s;
}}

''')
        kernels.append(f"app{t % 7}::detail::scale_{t}_{k}")
    out.append(f'''__global__ void __launch_bounds__(256, 2) gather_{t}(const float* __restrict__ src,
                                                    const int* __restrict__ idx,
                                                    float* __restrict__ dst, int n) {{
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    dst[i] = src[idx[i]];
}}

}}  // namespace detail

void launch_{t}(float* v, const int* idx, float* dst, int n, cudaStream_t stream) {{
  float s = 1.5f;
  void* args[] = {{&v, &s, &n}};
''')
    kernels.append(f"app{t % 7}::detail::gather_{t}")
    for k in range(n_static):
        out.append(f"  CORPUS_CHECK(cudaLaunchKernel((const void*)detail::scale_{t}_{k}, dim3((n + 255) / 256), dim3(256), args, 0, stream));\n")
        launches["cudaLaunchKernel"] += 1
    out.append(f'''  const float* src = v;
  void* gargs[] = {{(void*)&src, (void*)&idx, (void*)&dst, (void*)&n}};
  CORPUS_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(&detail::gather_{t}), dim3(264), dim3(256), gargs, 0, stream));
  detail::gather_{t}<<<264, 256, 0, stream>>>(v, idx, dst, n);
}}

}}  // namespace app{t % 7}
''')
    launches["cudaLaunchKernel"] += 1
    launches["chevron"] += 1
    return "".join(out), kernels, launches


def fam_coop(t, r):
    block = r.choice([128, 256])
    out = f'''#include "corpus_common.cuh"
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

constexpr int kCoopBlock{t} = {block};

__global__ void __launch_bounds__(kCoopBlock{t}) coop_norm_{t}(const float* __restrict__ x,
                                                           float* __restrict__ partial,
                                                           float* __restrict__ y, int n) {{
  cg::grid_group grid = cg::this_grid();
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  __shared__ float warp_sums[kCoopBlock{t} / 32];
  float acc = 0.f;
  for (int i = grid.thread_rank(); i < n; i += grid.size()) acc += corpus::sq(x[i]);
  acc = cg::reduce(warp, acc, cg::plus<float>());
  if (warp.thread_rank() == 0) warp_sums[warp.meta_group_rank()] = acc;
  block.sync();
  if (threadIdx.x == 0) {{
    float s = 0.f;
    for (int w = 0; w < kCoopBlock{t} / 32; ++w) s += warp_sums[w];
    partial[blockIdx.x] = s;
  }}
  grid.sync();
  float total = 0.f;
  for (int b = 0; b < (int)gridDim.x; ++b) total += partial[b];
  for (int i = grid.thread_rank(); i < n; i += grid.size()) y[i] = x[i] * rsqrtf(total + 1e-6f);
}}

template <int TILE>
__global__ void tile_scan_{t}(int* data, int n) {{
  auto tile = cg::tiled_partition<TILE>(cg::this_thread_block());
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? data[i] : 0;
  for (int o = 1; o < TILE; o <<= 1) {{
    int u = tile.shfl_up(v, o);
    if ((int)tile.thread_rank() >= o) v += u;
  }}
  if (i < n) data[i] = v;
}}

void coop_{t}(const float* x, float* partial, float* y, int* data, int n, cudaStream_t stream) {{
  int dev = 0, sms = 0, per_sm = 0;
  CORPUS_CHECK(cudaGetDevice(&dev));
  CORPUS_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CORPUS_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, coop_norm_{t}, kCoopBlock{t}, 0));
  void* args[] = {{(void*)&x, (void*)&partial, (void*)&y, (void*)&n}};
  CORPUS_CHECK(cudaLaunchCooperativeKernel((void*)coop_norm_{t}, dim3(sms * per_sm), dim3(kCoopBlock{t}), args, 0, stream));
  tile_scan_{t}<16><<<(n + 255) / 256, 256, 0, stream>>>(data, n);
  tile_scan_{t}<32><<<(n + 255) / 256, 256, 0, stream>>>(data, n);
}}
'''
    return out, [f"coop_norm_{t}", f"tile_scan_{t}"], {"cudaLaunchCooperativeKernel": 1, "chevron": 2}


def fam_cub(t, r):
    block = r.choice([128, 256, 512])
    items = r.choice([1, 2, 4])
    out = f'''#include "corpus_common.cuh"
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_load.cuh>

template <int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK) cub_block_sum_{t}(const float* __restrict__ in,
                                                          float* __restrict__ out, int n) {{
  using Load = cub::BlockLoad<float, BLOCK, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Reduce = cub::BlockReduce<float, BLOCK>;
  __shared__ union {{
    typename Load::TempStorage load;
    typename Reduce::TempStorage reduce;
  }} temp;
  float items[ITEMS];
  const int base = blockIdx.x * BLOCK * ITEMS;
  Load(temp.load).Load(in + base, items, n - base, 0.f);
  __syncthreads();
  float s = Reduce(temp.reduce).Sum(items);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}}

template <typename T, int BLOCK>
__global__ void cub_block_scan_{t}(T* data, int n) {{
  using Scan = cub::BlockScan<T, BLOCK>;
  __shared__ typename Scan::TempStorage temp;
  int i = blockIdx.x * BLOCK + threadIdx.x;
  T v = i < n ? data[i] : T(0);
  Scan(temp).ExclusiveSum(v, v);
  if (i < n) data[i] = v;
}}

void cub_{t}(const float* in, float* out, int* idata, int n, cudaStream_t s) {{
  constexpr int kBlock = {block};
  constexpr int kItems = {items};
  const int grid = (n + kBlock * kItems - 1) / (kBlock * kItems);
  cub_block_sum_{t}<kBlock, kItems><<<grid, kBlock, 0, s>>>(in, out, n);
  cub_block_scan_{t}<int, 256><<<(n + 255) / 256, 256, 0, s>>>(idata, n);
  cub_block_scan_{t}<float, 128><<<(n + 127) / 128, 128>>>(out, grid);
}}
'''
    return out, [f"cub_block_sum_{t}", f"cub_block_scan_{t}"], {"chevron": 3}


def fam_launchex(t, r):
    cluster = r.choice([1, 2, 4])
    out = f'''#include "corpus_common.cuh"

namespace ex{t} {{

struct Params {{
  const float* a;
  const float* b;
  float* c;
  int n;
  float alpha;
}};

__global__ void __launch_bounds__(128) blend(Params p) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < p.n) p.c[i] = p.alpha * p.a[i] + (1.f - p.alpha) * p.b[i];
}}

template <int UNROLL>
__global__ void shift(float* v, int n, int by) {{
  extern __shared__ float buf[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll UNROLL
  for (int k = 0; k < UNROLL; ++k) buf[threadIdx.x * UNROLL + k] = i < n ? v[i] : 0.f;
  __syncthreads();
  if (i < n) v[i] = buf[((threadIdx.x + by) % blockDim.x) * UNROLL];
}}

void run(const float* a, const float* b, float* c, int n, cudaStream_t stream) {{
  cudaLaunchConfig_t cfg = {{}};
  cfg.gridDim = dim3((n + 127) / 128);
  cfg.blockDim = dim3(128);
  cfg.dynamicSmemBytes = 0;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = {cluster};
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  Params p{{a, b, c, n, 0.25f}};
  CORPUS_CHECK(cudaLaunchKernelEx(&cfg, blend, p));

  cudaLaunchConfig_t cfg2 = {{}};
  cfg2.gridDim = dim3((n + 255) / 256);
  cfg2.blockDim = dim3(256);
  cfg2.dynamicSmemBytes = 256 * 4 * sizeof(float);
  cfg2.stream = stream;
  CORPUS_CHECK(cudaLaunchKernelEx(&cfg2, shift<4>, c, n, 3));
  shift<2><<<(n + 255) / 256, 256, 256 * 2 * sizeof(float), stream>>>(c, n, 1);
}}

}}  // namespace ex{t}
'''
    return out, [f"ex{t}::blend", f"ex{t}::shift"], {"cudaLaunchKernelEx": 2, "chevron": 1}


def fam_matmul(t, r):
    tile = r.choice([8, 16, 32])
    ty = r.choice(["float", "double"])
    out = f'''#include "corpus_tile.cuh"

#define MM_TILE_{t} {tile}

template <typename T, int TILE>
__global__ void __launch_bounds__(TILE * TILE, 2) gemm_tiled_{t}(int M, int N, int K,
                                                              const T* __restrict__ A,
                                                              const T* __restrict__ B,
                                                              T* __restrict__ C) {{
  __shared__ T As[TILE][TILE + 1];
  __shared__ T Bs[TILE][TILE + 1];
  const int row = blockIdx.y * TILE + threadIdx.y;
  const int col = blockIdx.x * TILE + threadIdx.x;
  T acc = T(0);
  for (int k0 = 0; k0 < K; k0 += TILE) {{
    corpus::tile::load_tile<T, TILE>(As, A, K, blockIdx.y * TILE, k0, M, K);
    corpus::tile::load_tile<T, TILE>(Bs, B, N, k0, blockIdx.x * TILE, K, N);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }}
  if (row < M && col < N) C[(size_t)row * N + col] = acc;
}}

template <typename T>
__global__ void gemm_dyn_{t}(int M, int N, int K, const T* A, const T* B, T* C) {{
  extern __shared__ unsigned char smem_raw[];
  T* arow = reinterpret_cast<T*>(smem_raw);
  const int row = blockIdx.x;
  for (int k = threadIdx.x; k < K; k += blockDim.x) arow[k] = A[(size_t)row * K + k];
  __syncthreads();
  for (int col = threadIdx.x; col < N; col += blockDim.x) {{
    T acc = T(0);
#pragma unroll 8
    for (int k = 0; k < K; ++k) acc += arow[k] * B[(size_t)k * N + col];
    C[(size_t)row * N + col] = acc;
  }}
}}

void gemm_{t}(int M, int N, int K, const {ty}* A, const {ty}* B, {ty}* C, cudaStream_t s) {{
  dim3 block(MM_TILE_{t}, MM_TILE_{t});
  dim3 grid((N + MM_TILE_{t} - 1) / MM_TILE_{t}, (M + MM_TILE_{t} - 1) / MM_TILE_{t});
  gemm_tiled_{t}<{ty}, MM_TILE_{t}><<<grid, block, 0, s>>>(M, N, K, A, B, C);
  gemm_dyn_{t}<{ty}><<<M, 128, K * sizeof({ty}), s>>>(M, N, K, A, B, C);
}}
'''
    return out, [f"gemm_tiled_{t}", f"gemm_dyn_{t}"], {"chevron": 2}


def fam_stencil(t, r):
    radius = r.choice([1, 2, 3, 4])
    bx, by = r.choice([(32, 4), (32, 8), (16, 16), (64, 4)])
    out = f'''#include "corpus_tile.cuh"

namespace stencil_{t} {{

constexpr int kRadius = {radius};
constexpr int kBX = {bx}, kBY = {by};
__constant__ float coeff[kRadius + 1];

__global__ void __launch_bounds__(kBX * kBY) star(int nx, int ny, const float* __restrict__ in,
                                                  float* __restrict__ out) {{
  __shared__ float halo[kBY + 2 * kRadius][kBX + 2 * kRadius];
  const int x = blockIdx.x * kBX + threadIdx.x, y = blockIdx.y * kBY + threadIdx.y;
  for (int dy = threadIdx.y; dy < kBY + 2 * kRadius; dy += kBY)
    for (int dx = threadIdx.x; dx < kBX + 2 * kRadius; dx += kBX) {{
      int gx = min(max(blockIdx.x * kBX + dx - kRadius, 0), nx - 1);
      int gy = min(max(blockIdx.y * kBY + dy - kRadius, 0), ny - 1);
      halo[dy][dx] = in[(size_t)gy * nx + gx];
    }}
  __syncthreads();
  if (x >= nx || y >= ny) return;
  float acc = coeff[0] * halo[threadIdx.y + kRadius][threadIdx.x + kRadius];
#pragma unroll
  for (int r = 1; r <= kRadius; ++r)
    acc += coeff[r] * (halo[threadIdx.y + kRadius][threadIdx.x + kRadius - r] +
                       halo[threadIdx.y + kRadius][threadIdx.x + kRadius + r] +
                       halo[threadIdx.y + kRadius - r][threadIdx.x + kRadius] +
                       halo[threadIdx.y + kRadius + r][threadIdx.x + kRadius]);
  out[(size_t)y * nx + x] = acc;
}}

__global__ void copy_boundary(int nx, int ny, const float* in, float* out) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < nx) {{
    out[i] = in[i];
    out[(size_t)(ny - 1) * nx + i] = in[(size_t)(ny - 1) * nx + i];
  }}
}}

void step(int nx, int ny, const float* in, float* out, cudaStream_t s) {{
  const float h[kRadius + 1] = {{}};
  CORPUS_CHECK(cudaMemcpyToSymbolAsync(coeff, h, sizeof(h), 0, cudaMemcpyHostToDevice, s));
  dim3 block(kBX, kBY), grid((nx + kBX - 1) / kBX, (ny + kBY - 1) / kBY);
  star<<<grid, block, 0, s>>>(nx, ny, in, out);
  copy_boundary<<<(nx + 255) / 256, 256, 0, s>>>(nx, ny, in, out);
}}

}}  // namespace stencil_{t}
'''
    return out, [f"stencil_{t}::star", f"stencil_{t}::copy_boundary"], {"chevron": 2}


def fam_lambda(t, r):
    block = r.choice([128, 256])
    out = f'''#include "corpus_common.cuh"
#include "corpus_stats.cuh"

template <typename F>
__global__ void for_each_{t}(int n, F f) {{
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) f(i);
}}

template <typename F>
void launch_for_each_{t}(int n, F f, cudaStream_t s) {{
  for_each_{t}<<<(n + {block} - 1) / {block}, {block}, 0, s>>>(n, f);
}}

struct Affine{t} {{
  float a, b;
  __device__ float operator()(float x) const {{ return a * x + b; }}
}};

template <typename Op>
__global__ void transform_{t}(const float* in, float* out, int n, Op op) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = op(in[i]);
}}

void lambdas_{t}(float* x, const float* y, double* z, int n, cudaStream_t s) {{
  launch_for_each_{t}(n, [=] __device__(int i) {{ x[i] += 2.f * y[i]; }}, s);
  launch_for_each_{t}(n, [=] __device__(int i) {{ z[i] = corpus::sq(z[i]); }}, s);
  transform_{t}<<<(n + 255) / 256, 256>>>(y, x, n, Affine{t}{{2.f, 1.f}});
  corpus::fill<double, {block}><<<(n + {block} - 1) / {block}, {block}, 0, s>>>(z, 0.0, n);
  corpus::minmax<int><<<(n + CORPUS_BLOCK - 1) / CORPUS_BLOCK, CORPUS_BLOCK>>>(nullptr, nullptr, nullptr, n);
}}
'''
    return out, [f"for_each_{t}", f"transform_{t}", "corpus::fill", "corpus::minmax"], {"chevron": 4}


FAMILIES = [("elementwise", fam_elementwise), ("launchkernel", fam_launchkernel), ("coop", fam_coop),
            ("cub", fam_cub), ("launchex", fam_launchex), ("matmul", fam_matmul),
            ("stencil", fam_stencil), ("lambda", fam_lambda)]


def nvcc_and_clang(t, r, family, src, inc, obj, cuda):
    """Returns (nvcc argv, equivalent clang++ -fsyntax-only argv) for one TU."""
    opt = r.choice(["-O3", "-O2"])
    nv = ["nvcc", opt, "-std=c++17"]
    cl = ["clang++", "-fsyntax-only", opt, "-std=c++17"]
    arch = r.choice(["-arch=sm_90", "gencode", "--gpu-architecture=sm_90"])
    if arch == "gencode":
        nv += ["-gencode", "arch=compute_90,code=sm_90"]
    else:
        nv.append(arch)
    cl += ["--cuda-gpu-arch=sm_90", f"--cuda-path={cuda}", "-isystem", f"{cuda}/include/cccl",
           "-Wno-unknown-cuda-version"]
    nv += ["-I", inc, f"-DCORPUS_TU={t}"]
    cl += ["-I", inc, f"-DCORPUS_TU={t}"]
    if r.random() < 0.3:
        nv += ["-Xcompiler", "-fPIC"]
        cl.append("-fPIC")
    if r.random() < 0.3 or family == "elementwise":
        nv.append("--expt-relaxed-constexpr")  # clang: constexpr functions are host+device already
    if family == "lambda":
        nv.append(r.choice(["--expt-extended-lambda", "--extended-lambda"]))  # clang: no flag needed
    if r.random() < 0.2:
        nv.append("-lineinfo")  # debug info only; no effect on parsing
    if family == "coop" and r.random() < 0.5:
        nv.append("-rdc=true")
        cl.append("-fgpu-rdc")
    if r.random() < 0.15:
        nv += ["-DCORPUS_BLOCK=128"]
        cl += ["-DCORPUS_BLOCK=128"]
    if src.endswith(".cpp"):
        nv += ["-x", "cu"]
        cl += ["-x", "cuda"]
    nv += ["-c", src, "-o", obj]
    cl.append(src)
    return nv, cl


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--tus", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cuda-path", default=os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    ap.add_argument("--clang", default="/usr/lib/llvm-22/bin/clang++")
    a = ap.parse_args()
    if a.tus < 1:
        ap.error("--tus must be >= 1")
    out = os.path.abspath(a.out)
    inc, srcd, objd = (os.path.join(out, d) for d in ("include", "src", "obj"))
    for d in (inc, srcd):
        os.makedirs(d, exist_ok=True)
    for name, text in HEADERS.items():
        with open(os.path.join(inc, name), "w") as f:
            f.write(text)
    r = random.Random(a.seed)
    db, clang_lines, manifest = [], [], []
    for t in range(a.tus):
        family, fn = FAMILIES[t % len(FAMILIES)]
        body, kernels, launches = fn(t, r)
        ext = ".cpp" if r.random() < 0.05 else ".cu"
        src = os.path.join(srcd, f"tu_{t:04d}{ext}")
        with open(src, "w") as f:
            f.write(f"// Generated by bench/extract/gen_corpus.py (family {family}, TU {t}).\n")
            f.write(body)
        obj = os.path.join(objd, f"tu_{t:04d}.o")
        nv, cl = nvcc_and_clang(t, r, family, src, inc, obj, a.cuda_path)
        cl[0] = a.clang
        db.append({"directory": out, "arguments": nv, "file": src, "output": obj})
        clang_lines.append(" ".join(shlex.quote(x) for x in cl))
        manifest.append({"file": src, "family": family, "kernels": sorted(set(kernels)),
                         "launches": launches})
    with open(os.path.join(out, "compile_commands.json"), "w") as f:
        json.dump(db, f, indent=1)
    with open(os.path.join(out, "clang_commands.txt"), "w") as f:
        f.write("\n".join(clang_lines) + "\n")
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump({"tus": a.tus, "seed": a.seed, "entries": manifest}, f, indent=1)
    nk = sum(len(m["kernels"]) for m in manifest)
    nl = {}
    for m in manifest:
        for k, v in m["launches"].items():
            nl[k] = nl.get(k, 0) + v
    print(f"gen_corpus: {a.tus} TUs in {out} ({nk} kernel definitions incl. header ones per TU; "
          f"launch sites {nl})")


if __name__ == "__main__":
    main()
