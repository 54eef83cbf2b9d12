// Minimal stand-in for the CUDA runtime headers, so that lit tests parse CUDA
// with `-nocudainc -nocudalib` and need no SDK. Declares only what the tests use.
#pragma once
#include <stddef.h>

#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __forceinline__ __inline__ __attribute__((always_inline))

struct dim3 {
  unsigned x, y, z;
  __host__ __device__ constexpr dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1) : x(x), y(y), z(z) {}
};
struct uint3 { unsigned x, y, z; };
struct __attribute__((aligned(16))) uint4 { unsigned x, y, z, w; };

typedef struct CUstream_st *cudaStream_t;
typedef int cudaError_t;
enum { cudaSuccess = 0 };

extern "C" int cudaConfigureCall(dim3 gridSize, dim3 blockSize, size_t sharedSize = 0,
                                 cudaStream_t stream = 0);
extern "C" int __cudaPushCallConfiguration(dim3 gridSize, dim3 blockSize, size_t sharedSize = 0,
                                           cudaStream_t stream = 0);
extern "C" cudaError_t cudaMalloc(void **ptr, size_t size);
extern "C" cudaError_t cudaFree(void *ptr);
extern "C" cudaError_t cudaDeviceSynchronize();
extern "C" cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                        size_t sharedMem, cudaStream_t stream);
extern "C" cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 gridDim, dim3 blockDim,
                                                   void **args, size_t sharedMem, cudaStream_t stream);
typedef struct CUfunc_st *cudaFunction_t;
extern "C" cudaError_t cudaGetFuncBySymbol(cudaFunction_t *functionPtr, const void *symbolPtr);
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
extern "C" cudaError_t cudaFuncSetAttribute(const void *func, cudaFuncAttribute attr, int value);
extern "C" cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *func, int blockSize,
                                                                     size_t dynamicSMemSize);
struct cudaLaunchConfig_t {
  dim3 gridDim;
  dim3 blockDim;
  size_t dynamicSmemBytes;
  cudaStream_t stream;
  void *attrs;
  unsigned numAttrs;
};
template <typename... ExpTypes, typename... ActTypes>
cudaError_t cudaLaunchKernelEx(const cudaLaunchConfig_t *config, void (*kernel)(ExpTypes...),
                               ActTypes &&...args) { return 0; }

// What clang calls for a `<<<>>>` in device code (dynamic parallelism, -fgpu-rdc), as cuda_device_runtime_api.h
// declares them.
extern "C" __device__ void *cudaGetParameterBuffer(size_t alignment, size_t size);
extern "C" __device__ cudaError_t cudaLaunchDevice(void *func, void *parameterBuffer, dim3 gridDimension,
                                                   dim3 blockDimension, unsigned int sharedMemSize, cudaStream_t stream);
extern "C" __device__ int printf(const char *, ...);
__device__ float atomicAdd(float *address, float val);
__device__ int atomicAdd(int *address, int val);
__device__ void __syncthreads();
__device__ float __shfl_down_sync(unsigned mask, float var, unsigned delta, int width = 32);
__device__ void __threadfence();
__device__ int __shfl_down_sync(unsigned mask, int var, unsigned delta, int width = 32);
__device__ unsigned __shfl_down_sync(unsigned mask, unsigned var, unsigned delta, int width = 32);
__device__ double __shfl_down_sync(unsigned mask, double var, unsigned delta, int width = 32);
__device__ unsigned atomicAdd(unsigned *address, unsigned val);
__device__ unsigned long long atomicAdd(unsigned long long *address, unsigned long long val);
__device__ int atomicMax(int *address, int val);
__device__ unsigned atomicMax(unsigned *address, unsigned val);
__device__ int atomicMin(int *address, int val);
__device__ unsigned atomicMin(unsigned *address, unsigned val);
__device__ int atomicExch(int *address, int val);
__device__ float fmaxf(float a, float b);

struct __cuda_builtin_threadIdx_t { __device__ unsigned get_x(); };
extern const __device__ uint3 threadIdx;
extern const __device__ uint3 blockIdx;
extern const __device__ dim3 blockDim;
extern const __device__ dim3 gridDim;

// Single-precision math functions and the intrinsics rule fast-math writes (docs/rules/fast-math.md).
__device__ float expf(float x);
__device__ float exp10f(float x);
__device__ float logf(float x);
__device__ float sinf(float x);
__device__ float powf(float x, float y);
__device__ float __expf(float x);
__device__ float __exp10f(float x);
__device__ float __fdividef(float x, float y);
