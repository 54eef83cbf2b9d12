// Interface between the histogram kernel file (histogram.cu, editable by kloop) and its
// harness (histogram_main.cu, protected). Part of the harness: listed under `protected:`.
#pragma once
#include <cuda_runtime.h>

/// Number of bins: one per byte value.
constexpr int kHistogramBins = 256;

/// bins[v] = number of i in [0, n) with data[i] == v, for v in [0, 256). Sets `bins` itself
/// (the caller need not clear it). Enqueues the work on `stream`; returns without
/// synchronizing. The caller checks cudaGetLastError().
void histogram_launch(const unsigned char* data, int n, unsigned int* bins, cudaStream_t stream);
