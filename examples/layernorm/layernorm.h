// Interface between the layernorm kernel file (layernorm.cu, editable by kloop) and its
// harness (layernorm_main.cu, protected). Part of the harness: listed under `protected:`.
#pragma once
#include <cuda_runtime.h>

/// Layer normalization of each row of a rows x cols row-major f32 matrix:
/// out[r][c] = (in[r][c] - mean_r) / sqrt(var_r + eps) * gamma[c] + beta[c], with mean_r and
/// var_r (biased) over the row. Enqueues the work on `stream`; returns without synchronizing.
/// The caller checks cudaGetLastError().
void layernorm_launch(int rows, int cols, float eps, const float* in, const float* gamma,
                      const float* beta, float* out, cudaStream_t stream);
