// nvcc declares the cache-hinted loads and stores of sm_32_intrinsics.h for every scalar and
// vector type; clang 22 lacks __ldca, __ldlu, __stcg, __stcs, __stwb entirely and __ldcg,
// __ldcs, __ldcv, __stwt on (unsigned) long: "no matching function for call to '__stcs'"
// without the compatibility layer, whose stand-ins are plain `*p = v` / `return *p`.
// nvcc-accepts.test compiles this file with nvcc.
// REQUIRES: nvcc
// RUN: kloop extract %s --root %S --cuda-path=%cuda_path -- -std=c++17 2> %t.err | python3 %inputs/summarize.py | FileCheck %s
// RUN: count 0 < %t.err
__global__ void stream_copy(float4 *out, const float4 *in, float2 *o2, int4 *oi, double *od,
                            unsigned long *ul, long *l) {
  int i = threadIdx.x;
  __stcs(out + i, __ldcs(in + i));
  __stcg(o2 + i, __ldca(reinterpret_cast<const float2 *>(in) + i));
  __stwb(oi + i, __ldlu(oi + i + 32));
  __stcs(od + i, __ldcg(od + i + 32));
  __stwt(l + i, __ldcv(l + i + 32));
  __stcg(ul + i, __ldcg(ul + i + 32) + __ldcs(ul) + __ldcv(ul + 1));
}
// CHECK: TU cache-intrinsics.cu ok
// CHECK: KERNEL stream_copy editable=1
