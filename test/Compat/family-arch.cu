// Family-specific (sm_100f, CUDA 12.9 and later) and architecture-specific (sm_103a) targets: clang 22
// knows no f target ("unsupported CUDA gpu architecture: sm_100f", the unit failed to parse; the ggml
// break test) and neither kind's macros. kloop parses sm_NNNf as sm_NNN and defines, on the device side
// only, what nvcc 13.0 defines (`nvcc --dryrun`): __CUDA_ARCH_FAMILY_SPECIFIC__ for both kinds and
// __CUDA_ARCH_SPECIFIC__ for a targets, each equal to __CUDA_ARCH__. `-arch=sm_100f` also compiles
// compute_100's PTX without either macro, and kloop reads that pass too. nvcc-accepts.test compiles this
// file with nvcc for both targets.
// REQUIRES: nvcc
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/fam.cu && cp %s %t/spec.cu
// RUN: printf '[{"directory": "%t", "file": "%t/fam.cu", "command": "nvcc -std=c++17 -arch=sm_100f -c fam.cu"}, {"directory": "%t", "file": "%t/spec.cu", "command": "nvcc -std=c++17 -gencode arch=compute_103a,code=sm_103a -DSPECIFIC -c spec.cu"}]' > %t/compile_commands.json
// RUN: kloop extract -p %t --root %t --cuda-path=%cuda_path 2> %t/err | python3 %inputs/summarize.py | FileCheck %s
// RUN: count 0 < %t/err
// CHECK-DAG: TU fam.cu ok
// CHECK-DAG: TU spec.cu ok
// CHECK-DAG: KERNEL scale@fam.cu editable=1
// CHECK-DAG: KERNEL scale@spec.cu editable=1
#ifdef __CUDA_ARCH__
#ifdef __CUDA_ARCH_FAMILY_SPECIFIC__
static_assert(__CUDA_ARCH_FAMILY_SPECIFIC__ == __CUDA_ARCH__, "the family macro is __CUDA_ARCH__");
#if defined(SPECIFIC) != defined(__CUDA_ARCH_SPECIFIC__)
#error "__CUDA_ARCH_SPECIFIC__ is for architecture-specific targets only"
#endif
#elif defined(__CUDA_ARCH_SPECIFIC__)
#error "an architecture-specific target is family-specific too"
#endif
#else
#if defined(__CUDA_ARCH_FAMILY_SPECIFIC__) || defined(__CUDA_ARCH_SPECIFIC__)
#error "nvcc's host pass defines neither"
#endif
#endif
__global__ void scale(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= 2.0f;
}
void run(float *x, int n) { scale<<<(n + 255) / 256, 256>>>(x, n); }
