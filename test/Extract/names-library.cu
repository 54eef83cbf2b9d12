// CUB/Thrust kernels the code instantiates (thrust::transform, cub::DeviceReduce::Sum)
// are listed as library kernels, not editable, with nvcc's symbols: every kernel symbol in
// the cubin is named by the inventory.
// REQUIRES: nvcc
// RUN: %cuda_path/bin/nvcc -arch=sm_90 -cubin -o %t.cubin %s
// RUN: readelf -sW %t.cubin > %t.syms
// RUN: kloop extract %s --root %S --cuda-path=%cuda_path -- -std=c++17 -arch=sm_90 > %t.json
// RUN: python3 %inputs/cubin_names.py %t.json %t.syms | FileCheck %s --implicit-check-not=MISSING --implicit-check-not=EXTRA
// RUN: python3 %inputs/summarize.py < %t.json | FileCheck %s --check-prefix=KERNEL
#include <cub/device/device_reduce.cuh>
#include <thrust/device_vector.h>
#include <thrust/transform.h>
struct Twice {
  __host__ __device__ float operator()(float x) const { return 2 * x; }
};
void run(thrust::device_vector<float> &v, float *out, void *tmp, size_t bytes) {
  thrust::transform(v.begin(), v.end(), v.begin(), Twice());
  cub::DeviceReduce::Sum(tmp, bytes, thrust::raw_pointer_cast(v.data()), out, (int)v.size());
}
// CHECK-DAG: FOUND cub::detail::EmptyKernel linkage=external nvcc_known=1 library=1 _ZN3cub{{.*}}EmptyKernelIvEEvv
// CHECK-DAG: FOUND cub::detail::transform::transform_kernel linkage=external nvcc_known=1 library=1 _ZN3cub{{.*}}5Twice
// CHECK-DAG: FOUND cub::detail::reduce::DeviceReduceKernel linkage=external nvcc_known=1 library=1 _ZN3cub
// CHECK-DAG: FOUND cub::detail::reduce::DeviceReduceSingleTileKernel linkage=external nvcc_known=1 library=1 _ZN3cub
// KERNEL: KERNEL cub::detail::EmptyKernel editable=0 {{.*}} reason=is a library kernel in a system header; listed so that profiles and captures can name it
