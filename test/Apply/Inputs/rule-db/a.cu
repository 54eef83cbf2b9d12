#include "k.cuh"
void run_a(int M, int N, int K, const float *A, const float *B, float *C) {
  naive<<<dim3((M + 31) / 32, (N + 31) / 32), dim3(32, 32)>>>(M, N, A, C);
  dim3 block(TILE, TILE);
  mm<<<dim3((N + TILE - 1) / TILE, (M + TILE - 1) / TILE), block>>>(M, N, K, A, B, C);
}
