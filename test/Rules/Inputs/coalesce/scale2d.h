// Interface between the scale2d kernel file (scale2d.cu, editable by kloop) and its harness
// (scale2d_main.cu, protected). Part of the harness: listed under `protected:`.
#pragma once
#include <cuda_runtime.h>

/// out[r * cols + c] = a * in[r * cols + c] + b for r in [0, rows), c in [0, cols). Enqueues the work on
/// `stream`; returns without synchronizing. The caller checks cudaGetLastError().
void scale2d_launch(int rows, int cols, float a, float b, const float* in, float* out, cudaStream_t stream);
