// Interface between the transpose kernel file (transpose.cu, editable by kloop) and its
// harness (transpose_main.cu, protected). Part of the harness: listed under `protected:`.
#pragma once
#include <cuda_runtime.h>

/// out = transpose(in): in is rows x cols, out is cols x rows, both row-major f32. Enqueues
/// the work on `stream`; returns without synchronizing. The caller checks cudaGetLastError().
void transpose_launch(int rows, int cols, const float* in, float* out, cudaStream_t stream);
