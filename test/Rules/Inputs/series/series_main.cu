// Harness for series (protected): inputs in [0, 1] from --seed, a poisoned check run against a double
// precision CPU reference, then --iters timed launches rotating over enough buffer sets to defeat the L2.
//
//   series --n N --seed S --iters I
#include "../common/harness.h"
#include "series.h"

namespace {

// Every term is positive, so the sum has no cancellation: its relative error is at most the largest term's
// plus the 16 additions' roundings. 1e-5 (about 83 ulp) is the workload's tolerance (series.kloop.yaml).
constexpr double kRelTol = 1e-5;

double reference(float x) {
  double s = 0;
  for (int k = 1; k <= kSeriesTerms; ++k) s += std::exp(-0.25 * k * double(x)) / (1.0 + k * double(x) * double(x));
  return s;
}

bool check(const char* what, size_t n, const std::vector<float>& in, const float* dout, double* max_abs,
           double* max_rel) {
  std::vector<float> got(n);
  KCHECK(cudaMemcpy(got.data(), dout, sizeof(float) * n, cudaMemcpyDeviceToHost));
  long bad = 0;
  for (size_t i = 0; i < n; ++i) {
    double ref = reference(in[i]);
    double err = std::fabs(double(got[i]) - ref);
    if (!(err <= kRelTol * ref) && bad++ < 5)
      std::fprintf(stderr, "series %s: mismatch at %zu: got %.9g want %.9g\n", what, i, double(got[i]), ref);
    kex::track_max(*max_abs, err);
    kex::track_max(*max_rel, err / ref);
  }
  if (bad) std::fprintf(stderr, "series %s: %ld of %zu elements wrong\n", what, bad, n);
  return bad == 0;
}

}  // namespace

int main(int argc, char** argv) {
  kex::Args args(argc, argv, {"n", "seed", "iters"});
  const long long n_arg = args.get("n", 1 << 20);
  const uint64_t seed = uint64_t(args.get("seed", 0, 0));
  const int iters = int(args.get("iters", 20));
  if (n_arg <= 0 || n_arg > 1000000000LL) {
    std::fprintf(stderr, "series: n must be in [1, 1e9]\n");
    return 2;
  }
  const size_t n = size_t(n_arg), bytes = sizeof(float) * n;
  const int sets = kex::rotation_sets(2 * bytes);
  std::vector<std::vector<float>> h(sets);
  std::vector<float*> din(sets), dout(sets);
  for (int s = 0; s < sets; ++s) {
    h[s].resize(n);
    kex::fill_uniform(h[s].data(), n, seed, s, 0.f, 1.f);
    KCHECK(cudaMalloc(&din[s], bytes));
    KCHECK(cudaMalloc(&dout[s], bytes));
    KCHECK(cudaMemcpy(din[s], h[s].data(), bytes, cudaMemcpyHostToDevice));
  }
  std::printf("series: n=%zu seed=%llu iters=%d rotation_sets=%d bytes_per_launch=%zu\n", n,
              (unsigned long long)seed, iters, sets, 2 * bytes);

  kex::poison_nan(dout[0], bytes);
  series_launch(int(n), din[0], dout[0], 0);
  KCHECK_LAUNCH();
  KCHECK(cudaDeviceSynchronize());
  double max_abs = 0, max_rel = 0;
  bool ok = check("check run", n, h[0], dout[0], &max_abs, &max_rel);

  for (int s = 0; s < sets; ++s) kex::poison_nan(dout[s], bytes);
  kex::EventTimer timer;
  timer.start();
  for (int it = 0; it < iters; ++it) {
    series_launch(int(n), din[it % sets], dout[it % sets], 0);
    KCHECK_LAUNCH();
  }
  float ms = timer.stop();
  KCHECK(cudaDeviceSynchronize());
  for (int s = 0; s < sets && s < iters; ++s) ok &= check("timed run", n, h[s], dout[s], &max_abs, &max_rel);

  kex::report_time("series", ms, iters, 2.0 * double(bytes), 64.0 * double(n));
  int rc = kex::report("series", ok, max_abs, max_rel, kRelTol, "relative to the double-precision sum");
  for (int s = 0; s < sets; ++s) {
    KCHECK(cudaFree(din[s]));
    KCHECK(cudaFree(dout[s]));
  }
  return rc;
}
