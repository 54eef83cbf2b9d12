// Interface between the softmax kernel file (softmax.cu, editable by kloop) and its harness
// (softmax_main.cu, protected). Part of the harness: listed under `protected:`.
#pragma once
#include <cuda_runtime.h>

/// Row-wise softmax of a rows x cols row-major f32 matrix: out[r][c] = exp(in[r][c] - m_r) /
/// sum_c' exp(in[r][c'] - m_r) with m_r the row maximum. Enqueues the work on `stream`;
/// returns without synchronizing. The caller checks cudaGetLastError().
void softmax_launch(int rows, int cols, const float* in, float* out, cudaStream_t stream);
