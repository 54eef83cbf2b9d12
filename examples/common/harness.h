// Shared harness support for kloop's bundled CUDA examples.
//
// This file is part of every example's *harness*, never of its kernel: each
// .kloop.yaml lists it under `protected:` so that no candidate may change how
// inputs are made, how outputs are checked or how launches are issued.
//
// What it provides (host code only):
//   - KCHECK(call) / KCHECK_LAUNCH(): abort with a message and exit code 3 on any CUDA error;
//   - Args: `--key value` argument parsing with a fixed set of accepted keys;
//   - fill_uniform(): reproducible pseudo-random inputs from a seed (splitmix64);
//   - rotation_sets(): how many buffer sets to rotate through so that the working set of
//     consecutive timed launches exceeds twice the H200's 60 MiB L2 (DESIGN.md, issue 4);
//   - poison_nan(): fill a device buffer with 0xFF bytes (a NaN for f32) before a check run;
//   - EventTimer: an indicative CUDA-event figure, labelled as such (kloop times with CUPTI).
//
// Exit codes used by every example: 0 = PASS, 1 = FAIL (result mismatch), 2 = usage error,
// 3 = CUDA error.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#define KCHECK(call)                                                                        \
  do {                                                                                      \
    cudaError_t kcheck_err_ = (call);                                                       \
    if (kcheck_err_ != cudaSuccess) {                                                       \
      std::fprintf(stderr, "CUDA error at %s:%d: %s failed: %s\n", __FILE__, __LINE__,      \
                   #call, cudaGetErrorString(kcheck_err_));                                 \
      std::exit(3);                                                                         \
    }                                                                                       \
  } while (0)

// Checks the launch configuration error of the previous launch (cudaGetLastError).
#define KCHECK_LAUNCH() KCHECK(cudaGetLastError())

namespace kex {

/// L2 capacity the rotation is sized for: the H200's 60 MiB (62914560 bytes). A constant,
/// not a device query, so that the sequence of launches (and so the captured outputs) is
/// the same on every machine.
constexpr size_t kL2Bytes = size_t(60) << 20;

/// Command-line arguments of the form `--key value`. Unknown keys and missing values are
/// usage errors (exit 2), so a typo in a .kloop.yaml run command cannot go unnoticed.
class Args {
 public:
  Args(int argc, char** argv, std::vector<std::string> allowed) {
    for (int i = 1; i < argc; ++i) {
      std::string k = argv[i];
      if (k == "--help" || k == "-h") usage(argv[0], allowed, 0);
      if (k.size() < 3 || k.compare(0, 2, "--") != 0 || i + 1 >= argc) {
        std::fprintf(stderr, "%s: bad argument '%s' (expected --key value)\n", argv[0], k.c_str());
        usage(argv[0], allowed, 2);
      }
      k = k.substr(2);
      bool ok = false;
      for (auto& a : allowed) ok |= (a == k);
      if (!ok) {
        std::fprintf(stderr, "%s: unknown option '--%s'\n", argv[0], k.c_str());
        usage(argv[0], allowed, 2);
      }
      values_[k] = argv[++i];
    }
  }

  /// The integer value of --key, or `def` when absent. Exits 2 when not an integer or < min.
  long long get(const std::string& key, long long def, long long min = 1) const {
    auto it = values_.find(key);
    if (it == values_.end()) return def;
    char* end = nullptr;
    long long v = std::strtoll(it->second.c_str(), &end, 10);
    if (end == it->second.c_str() || *end != '\0' || v < min) {
      std::fprintf(stderr, "bad value for --%s: '%s' (need an integer >= %lld)\n", key.c_str(),
                   it->second.c_str(), min);
      std::exit(2);
    }
    return v;
  }

 private:
  [[noreturn]] static void usage(const char* prog, const std::vector<std::string>& allowed,
                                 int code) {
    std::fprintf(code ? stderr : stdout, "usage: %s", prog);
    for (auto& a : allowed) std::fprintf(code ? stderr : stdout, " [--%s N]", a.c_str());
    std::fprintf(code ? stderr : stdout, "\n");
    std::exit(code);
  }
  std::map<std::string, std::string> values_;
};

/// splitmix64 (Steele, Lea, Flood 2014): a small, well-mixed 64-bit generator.
inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Fills h[0..n) with floats uniform in [lo, hi), determined by (seed, stream): distinct
/// streams (e.g. one per buffer set and per array) give independent sequences.
inline void fill_uniform(float* h, size_t n, uint64_t seed, uint64_t stream, float lo, float hi) {
  uint64_t s = seed * 0x632BE59BD9B4E019ull + stream * 0x8CB92BA72F3D8DD7ull + 1;
  const double scale = (double(hi) - double(lo)) / 16777216.0;  // 24 random bits
  for (size_t i = 0; i < n; ++i) h[i] = float(double(lo) + double(splitmix64(s) >> 40) * scale);
}

/// Number of buffer sets to rotate through: at least 2, and enough that `sets *
/// bytes_per_set > 2 * kL2Bytes`, so no timed launch finds its inputs left in L2 by the
/// previous launches.
inline int rotation_sets(size_t bytes_per_set) {
  size_t k = (2 * kL2Bytes) / (bytes_per_set ? bytes_per_set : 1) + 1;
  return int(k < 2 ? 2 : k);
}

/// Fills `bytes` of device memory with 0xFF (a quiet NaN for every f32/f64 element), so a
/// kernel that leaves part of its output unwritten fails the check instead of passing on
/// stale data.
inline void poison_nan(void* dptr, size_t bytes) {
  KCHECK(cudaMemset(dptr, 0xFF, bytes));
  KCHECK(cudaDeviceSynchronize());
}

/// Indicative timing of the timed loop with CUDA events on the default stream. Printed with
/// an explicit label: events overstate short kernels (issue 4), kloop measures with CUPTI.
class EventTimer {
 public:
  EventTimer() {
    KCHECK(cudaEventCreate(&start_));
    KCHECK(cudaEventCreate(&stop_));
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  void start() { KCHECK(cudaEventRecord(start_, 0)); }
  /// Records the stop event, waits for it and returns elapsed milliseconds.
  float stop() {
    KCHECK(cudaEventRecord(stop_, 0));
    KCHECK(cudaEventSynchronize(stop_));
    float ms = 0.f;
    KCHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaEvent_t start_{}, stop_{};
};

/// Updates a running maximum so that a NaN, once seen, is kept (NaN compares false).
inline void track_max(double& m, double v) {
  if (std::isnan(m)) return;
  if (std::isnan(v) || v > m) m = v;
}

/// Prints the standard result lines and returns the exit code (0 PASS, 1 FAIL).
inline int report(const char* name, bool ok, double max_abs_err, double max_rel_err,
                  double tolerance, const char* tolerance_kind) {
  std::printf("%s: max_abs_err=%.3e max_rel_err=%.3e tolerance=%.3e (%s)\n", name, max_abs_err,
              max_rel_err, tolerance, tolerance_kind);
  std::printf("%s: %s\n", name, ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}

/// Prints the indicative event-based time per launch and the figures it implies.
inline void report_time(const char* name, float total_ms, int iters, double bytes,
                        double flops) {
  double us = 1e3 * double(total_ms) / double(iters);
  std::printf("%s: event_time_per_launch_us=%.3f (CUDA events, indicative only; kloop measures "
              "with CUPTI)",
              name, us);
  if (bytes > 0) std::printf(" ~%.1f GB/s", bytes / (us * 1e3));
  if (flops > 0) std::printf(" ~%.1f GFLOP/s", flops / (us * 1e3));
  std::printf("\n");
}

}  // namespace kex
