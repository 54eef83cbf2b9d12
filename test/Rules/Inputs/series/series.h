// Interface between the series kernel file (series.cu, editable by kloop) and its harness (series_main.cu,
// protected). Part of the harness: listed under `protected:`.
#pragma once
#include <cuda_runtime.h>

/// Terms of the series: out[i] = sum over k in [1, kSeriesTerms] of exp(-k x / 4) / (1 + k x^2).
constexpr int kSeriesTerms = 16;

/// out[i] for i in [0, n), x = in[i] (the harness draws x from [0, 1]). Enqueues the work on `stream`;
/// returns without synchronizing. The caller checks cudaGetLastError().
void series_launch(int n, const float* in, float* out, cudaStream_t stream);
