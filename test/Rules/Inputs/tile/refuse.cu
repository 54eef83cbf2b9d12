// Dot-product loops that tile-shared-memory refuses, one legality failure each.
#include <cuda.h>

#define TILE 16

// Refused: the block is (TILE, 8), not (TILE, TILE).
__global__ void flat_block(int M, int N, int K, const float *A, const float *B, float *C) {
  const int row = blockIdx.y * TILE + threadIdx.y;
  const int col = blockIdx.x * TILE + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k)
    acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = acc;
}

// Refused: A[row * K + col] reads by row and column (not a dot product over k).
__global__ void mixed(int M, int N, int K, const float *A, const float *B, float *C) {
  const int row = blockIdx.y * TILE + threadIdx.y;
  const int col = blockIdx.x * TILE + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k)
    acc += A[row * K + col] * B[k * N + col];
  C[row * N + col] = acc;
}

// Refused: the loop also writes (not one `acc += x * y`).
__global__ void writes_b(int M, int N, int K, float *A, float *B, float *C) {
  const int row = blockIdx.y * TILE + threadIdx.y;
  const int col = blockIdx.x * TILE + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) {
    acc += A[row * K + k] * B[k * N + col];
    B[k * N + col] = 0.f;
  }
  C[row * N + col] = acc;
}

// Refused: the result goes back into B, which the product reads.
__global__ void in_place(int M, int N, int K, const float *A, float *B) {
  const int row = blockIdx.y * TILE + threadIdx.y;
  const int col = blockIdx.x * TILE + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k)
    acc += A[row * K + k] * B[k * N + col];
  B[row * N + col] = acc;
}

// Refused: the early return's condition ties row and column together.
__global__ void triangle(int M, int N, int K, const float *A, const float *B, float *C) {
  const int row = blockIdx.y * TILE + threadIdx.y;
  const int col = blockIdx.x * TILE + threadIdx.x;
  if (row >= M || col > row) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k)
    acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = acc;
}

// Refused: row and column come from blockDim, no compile-time tile size.
__global__ void by_blockdim(int M, int N, int K, const float *A, const float *B, float *C) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k)
    acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = acc;
}

// Refused: a statement before the loop that reads memory (the early return would no longer guard it).
__global__ void reads_first(int M, int N, int K, const float *A, const float *B, float *C, const float *bias) {
  const int row = blockIdx.y * TILE + threadIdx.y;
  const int col = blockIdx.x * TILE + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = bias[col];
  for (int k = 0; k < K; ++k)
    acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = acc;
}

// Refused: two 64 x 64 double tiles (64 KiB) exceed the static shared-memory limit; the launch says
// 64 x 64 threads, which no GPU runs, but the limit is what the rule names first.
__global__ void big(int M, int N, int K, const double *A, const double *B, double *C) {
  const int row = blockIdx.y * 64 + threadIdx.y;
  const int col = blockIdx.x * 64 + threadIdx.x;
  if (row >= M || col >= N) return;
  double acc = 0;
  for (int k = 0; k < K; ++k)
    acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = acc;
}

void launch(int M, int N, int K, float *A, float *B, float *C, const double *dA, const double *dB, double *dC) {
  dim3 block(TILE, TILE), flat(TILE, 8), huge(64, 64);
  dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
  flat_block<<<grid, flat>>>(M, N, K, A, B, C);
  mixed<<<grid, block>>>(M, N, K, A, B, C);
  writes_b<<<grid, block>>>(M, N, K, A, B, C);
  in_place<<<grid, block>>>(M, N, K, A, B);
  triangle<<<grid, block>>>(M, N, K, A, B, C);
  by_blockdim<<<grid, block>>>(M, N, K, A, B, C);
  reads_first<<<grid, block>>>(M, N, K, A, B, C, A);
  big<<<grid, huge>>>(M, N, K, dA, dB, dC);
}
