// A translation unit without a non-inline definition of external linkage: nvcc makes its
// module id from the time and its process id, so the symbols of internal kernels cannot be
// predicted. The inventory says so (nvcc_known=0, with the reason) and carries clang's name
// and the match key, which names the cubin's symbol.
// REQUIRES: nvcc
// RUN: %cuda_path/bin/nvcc -arch=sm_90 -cubin -o %t.cubin %s
// RUN: readelf -sW %t.cubin > %t.syms
// RUN: kloop extract %s --root %S --cuda-path=%cuda_path -- -std=c++17 > %t.json
// RUN: python3 %inputs/cubin_names.py %t.json %t.syms | FileCheck %s --implicit-check-not=EXTRA
// RUN: FileCheck %s --check-prefix=REASON < %t.json
namespace { __global__ void akern(float *x) { x[0] = 3; } }
static __global__ void skern(float *x) { x[0] = 2; }
inline void launch(float *x) { akern<<<1, 1>>>(x); skern<<<1, 1>>>(x); }
// CHECK-DAG: MISSING (anonymous namespace)::akern linkage=internal nvcc_known=0 library=0 _ZN12_GLOBAL__N_15akernEPf
// CHECK-DAG: KEYMATCH (anonymous namespace)::akern (anonymous namespace)::akern(float*)
// A static kernel's own name does not involve the module id.
// CHECK-DAG: FOUND skern linkage=internal nvcc_known=1 library=0 _Z5skernPf
// REASON: "nvcc_unknown_reason": "nvcc makes this translation unit's module id from the time: it has no non-inline definition with external linkage"
