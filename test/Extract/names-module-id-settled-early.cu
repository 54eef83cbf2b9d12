// nvcc settles the module id early, from the time, when a function with internal linkage
// default-constructs a library container of a class local to it before the first
// external definition (ggml's common.cuh does so with a static std::unordered_map of
// local key and hash classes). The external definition that follows then does not name
// the module id, and the symbols of kernels instantiated with an internal function cannot
// be predicted: the inventory says so, with the function named, and the match key names
// the cubin's symbol.
// REQUIRES: nvcc
// RUN: %cuda_path/bin/nvcc -arch=sm_90 -cubin -o %t.cubin %s
// RUN: readelf -sW %t.cubin > %t.syms
// RUN: kloop extract --no-cache %s --root %S --cuda-path=%cuda_path -- -std=c++17 > %t.json
// RUN: python3 %inputs/cubin_names.py %t.json %t.syms | FileCheck %s --implicit-check-not=EXTRA
// RUN: FileCheck %s --check-prefix=REASON < %t.json
#include <unordered_map>
static bool seen_before(const void *p) {
  struct Key { const void *p; bool operator==(const Key &o) const { return p == o.p; } };
  struct Hash { unsigned long operator()(const Key &k) const { return (unsigned long)k.p; } };
  static std::unordered_map<Key, bool, Hash> cache;
  return !cache.emplace(Key{p}, true).second;
}
static __device__ void twice(float &x) { x *= 2; }
template <void (*F)(float &)> __global__ void apply(float *x) { F(x[0]); }
void launch(float *x) {
  if (!seen_before(x))
    apply<twice><<<1, 1>>>(x);
}
// CHECK: MISSING apply linkage=internal nvcc_known=0
// CHECK: KEYMATCH apply void apply<&twice(float&)>(float*)
// REASON: "nvcc_unknown_reason": "nvcc makes this translation unit's module id from the time: 'seen_before' (internal linkage) builds a constructor or destructor of a class local to it before the first non-inline definition with external linkage"
