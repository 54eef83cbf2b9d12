// Interface between the matmul kernel file (matmul.cu, editable by kloop) and its harness
// (matmul_main.cu, protected). Part of the harness: listed under `protected:`.
#pragma once
#include <cuda_runtime.h>

/// C = A * B in f32, row-major: A is M x K, B is K x N, C is M x N. Enqueues the work on
/// `stream`; returns without synchronizing. The caller checks cudaGetLastError().
void sgemm_launch(int M, int N, int K, const float* A, const float* B, float* C,
                  cudaStream_t stream);
