// Interface between the reduction kernel file (reduction.cu, editable by kloop) and its
// harness (reduction_main.cu, protected). Part of the harness: listed under `protected:`.
#pragma once
#include <cuda_runtime.h>

/// Number of floats of scratch space (`partials`) that reduce_sum_launch needs for n inputs.
int reduce_sum_scratch_floats(int n);

/// *out = sum of in[0..n), n >= 1, in one kernel launch on `stream`. `partials` holds
/// reduce_sum_scratch_floats(n) floats; `done_count` points to one unsigned int that is 0
/// before the launch and is 0 again after it. Deterministic: the summation order depends
/// only on n. Returns without synchronizing; the caller checks cudaGetLastError().
void reduce_sum_launch(const float* in, int n, float* partials, unsigned int* done_count,
                       float* out, cudaStream_t stream);
