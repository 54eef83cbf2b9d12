// Interface between the saxpy kernel file (saxpy.cu, editable by kloop) and its harness
// (saxpy_main.cu, protected). Part of the harness: listed under `protected:`.
#pragma once
#include <cuda_runtime.h>

/// out[i] = a * x[i] + y[i] for i in [0, n). Enqueues the work on `stream`; returns without
/// synchronizing. The caller checks cudaGetLastError().
void saxpy_launch(int n, float a, const float* x, const float* y, float* out,
                  cudaStream_t stream);
