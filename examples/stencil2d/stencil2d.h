// Interface between the stencil2d kernel file (stencil2d.cu, editable by kloop) and its
// harness (stencil2d_main.cu, protected). Part of the harness: listed under `protected:`.
#pragma once
#include <cuda_runtime.h>

/// One Jacobi step of the 5-point Laplace-smoothing stencil on a height x width row-major f32
/// grid: out[i][j] = c0 * in[i][j] + c1 * (in[i-1][j] + in[i+1][j] + in[i][j-1] + in[i][j+1])
/// for interior points, out = in on the one-cell boundary. Enqueues the work on `stream`;
/// returns without synchronizing. The caller checks cudaGetLastError().
void stencil2d_launch(int height, int width, float c0, float c1, const float* in, float* out,
                      cudaStream_t stream);
