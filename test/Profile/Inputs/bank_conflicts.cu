// Three kernels whose hardware counters are known in advance (test/Profile/gpu-metrics.test):
//   transpose_conflicts: a 32x32 shared tile read down its columns: 32-way bank conflicts on every load;
//   transpose_padded:    the same tile padded to 33 columns: conflict-free;
//   big_smem:            48 KiB of static shared memory per 128-thread block: occupancy limited by shared
//                        memory (4 blocks of 4 warps per SM on sm_90, 25%).
// Each is launched once; the program checks both transposes and exits non-zero on a mismatch.
#include <cstdio>
#include <vector>

constexpr int N = 2048, TILE = 32;

__global__ void transpose_conflicts(const float *in, float *out) {
  __shared__ float tile[TILE][TILE];
  int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  tile[threadIdx.y][threadIdx.x] = in[y * N + x];
  __syncthreads();
  int ox = blockIdx.y * TILE + threadIdx.x, oy = blockIdx.x * TILE + threadIdx.y;
  out[oy * N + ox] = tile[threadIdx.x][threadIdx.y];
}

__global__ void transpose_padded(const float *in, float *out) {
  __shared__ float tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  tile[threadIdx.y][threadIdx.x] = in[y * N + x];
  __syncthreads();
  int ox = blockIdx.y * TILE + threadIdx.x, oy = blockIdx.x * TILE + threadIdx.y;
  out[oy * N + ox] = tile[threadIdx.x][threadIdx.y];
}

__global__ void big_smem(const float *in, float *out) {
  __shared__ float buf[12288]; // 48 KiB
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = threadIdx.x; k < 12288; k += blockDim.x)
    buf[k] = in[(i + k) % (N * N)];
  __syncthreads();
  out[i] = buf[(threadIdx.x * 97) % 12288];
}

static int check(const char *what, const std::vector<float> &in, const std::vector<float> &out) {
  for (int y = 0; y < N; ++y)
    for (int x = 0; x < N; ++x)
      if (out[x * N + y] != in[y * N + x]) {
        std::fprintf(stderr, "%s: mismatch at (%d, %d)\n", what, x, y);
        return 1;
      }
  return 0;
}

int main() {
  std::vector<float> h(N * N), got(N * N);
  for (int i = 0; i < N * N; ++i)
    h[i] = float(i % 1000) * 0.5f;
  float *in = nullptr, *out = nullptr;
  size_t bytes = sizeof(float) * N * N;
  if (cudaMalloc(&in, bytes) != cudaSuccess || cudaMalloc(&out, bytes) != cudaSuccess) {
    std::fprintf(stderr, "cudaMalloc failed\n");
    return 1;
  }
  cudaMemcpy(in, h.data(), bytes, cudaMemcpyHostToDevice);
  dim3 grid(N / TILE, N / TILE), block(TILE, TILE);
  int bad = 0;
  transpose_conflicts<<<grid, block>>>(in, out);
  cudaMemcpy(got.data(), out, bytes, cudaMemcpyDeviceToHost);
  bad |= check("transpose_conflicts", h, got);
  transpose_padded<<<grid, block>>>(in, out);
  cudaMemcpy(got.data(), out, bytes, cudaMemcpyDeviceToHost);
  bad |= check("transpose_padded", h, got);
  big_smem<<<N * N / 128, 128>>>(in, out);
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    std::fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(e));
    return 1;
  }
  std::printf("bank_conflicts: %s\n", bad ? "FAILED" : "ok");
  return bad;
}
