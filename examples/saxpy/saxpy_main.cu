// Harness for saxpy (protected): inputs from --seed, a poisoned check run against a double
// precision CPU reference, then --iters timed launches rotating over enough buffer sets to
// defeat the L2, all on the default stream.
//
//   saxpy --n N --seed S --iters I
#include <climits>

#include "../common/harness.h"
#include "saxpy.h"

namespace {

struct Set {
  float *x = nullptr, *y = nullptr, *out = nullptr;
};

// Checks out[0..n) against a * x + y computed in double. f32 gives a*x+y within 2 roundings
// (1 with an FMA) of the exact value, so the bound is 2 ulp of |a*x| + |y|, i.e.
// 2 * 2^-24 * (|a x| + |y|), with a factor 2 of margin. NaN (the poison) never passes.
bool check(const char* what, int n, float a, const std::vector<float>& x,
           const std::vector<float>& y, const float* dout, double* max_abs, double* max_rel,
           double* tol_out) {
  std::vector<float> got(n);
  KCHECK(cudaMemcpy(got.data(), dout, sizeof(float) * n, cudaMemcpyDeviceToHost));
  const double rel_tol = 4.0 * std::ldexp(1.0, -24);
  bool ok = true;
  long bad = 0;
  for (int i = 0; i < n; ++i) {
    double ref = double(a) * double(x[i]) + double(y[i]);
    double mag = std::fabs(double(a) * double(x[i])) + std::fabs(double(y[i]));
    double err = std::fabs(double(got[i]) - ref);
    if (!(err <= rel_tol * mag + 1e-30)) {
      if (bad++ < 5)
        std::fprintf(stderr, "saxpy %s: mismatch at %d: got %.9g want %.9g\n", what, i,
                     double(got[i]), ref);
      ok = false;
    }
    kex::track_max(*max_abs, err);
    kex::track_max(*max_rel, mag > 0 ? err / mag : err);
  }
  if (bad) std::fprintf(stderr, "saxpy %s: %ld of %d elements wrong\n", what, bad, n);
  *tol_out = rel_tol;
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  kex::Args args(argc, argv, {"n", "seed", "iters"});
  const long long n64 = args.get("n", 1 << 24);
  const uint64_t seed = uint64_t(args.get("seed", 0, 0));
  const int iters = int(args.get("iters", 20));
  if (n64 > INT_MAX) {
    std::fprintf(stderr, "saxpy: --n must be <= %d\n", INT_MAX);
    return 2;
  }
  const int n = int(n64);
  const size_t bytes = sizeof(float) * size_t(n);
  const int sets = kex::rotation_sets(3 * bytes);

  std::vector<float> ha(1);
  kex::fill_uniform(ha.data(), 1, seed, 999, 0.5f, 2.5f);
  const float a = ha[0];

  std::vector<std::vector<float>> hx(sets), hy(sets);
  std::vector<Set> d(sets);
  for (int s = 0; s < sets; ++s) {
    hx[s].resize(n);
    hy[s].resize(n);
    kex::fill_uniform(hx[s].data(), n, seed, 2 * s, -1.f, 1.f);
    kex::fill_uniform(hy[s].data(), n, seed, 2 * s + 1, -1.f, 1.f);
    KCHECK(cudaMalloc(&d[s].x, bytes));
    KCHECK(cudaMalloc(&d[s].y, bytes));
    KCHECK(cudaMalloc(&d[s].out, bytes));
    KCHECK(cudaMemcpy(d[s].x, hx[s].data(), bytes, cudaMemcpyHostToDevice));
    KCHECK(cudaMemcpy(d[s].y, hy[s].data(), bytes, cudaMemcpyHostToDevice));
  }
  std::printf("saxpy: n=%d a=%.6f seed=%llu iters=%d rotation_sets=%d bytes_per_launch=%zu\n", n,
              double(a), (unsigned long long)seed, iters, sets, 3 * bytes);

  // Warm-up (module load, clocks), then the check run on poisoned output.
  saxpy_launch(n, a, d[0].x, d[0].y, d[0].out, 0);
  KCHECK_LAUNCH();
  KCHECK(cudaDeviceSynchronize());
  kex::poison_nan(d[0].out, bytes);
  saxpy_launch(n, a, d[0].x, d[0].y, d[0].out, 0);
  KCHECK_LAUNCH();
  KCHECK(cudaDeviceSynchronize());
  double max_abs = 0, max_rel = 0, tol = 0;
  bool ok = check("check run", n, a, hx[0], hy[0], d[0].out, &max_abs, &max_rel, &tol);

  // Timed launches, rotating over the buffer sets; every output is poisoned first so the
  // final check below sees only what the timed launches wrote.
  for (int s = 0; s < sets; ++s) kex::poison_nan(d[s].out, bytes);
  kex::EventTimer timer;
  timer.start();
  for (int it = 0; it < iters; ++it) {
    const Set& cur = d[it % sets];
    saxpy_launch(n, a, cur.x, cur.y, cur.out, 0);
    KCHECK_LAUNCH();
  }
  float ms = timer.stop();
  KCHECK(cudaDeviceSynchronize());
  for (int s = 0; s < sets && s < iters; ++s)
    ok &= check("timed run", n, a, hx[s], hy[s], d[s].out, &max_abs, &max_rel, &tol);

  kex::report_time("saxpy", ms, iters, 3.0 * double(bytes), 2.0 * double(n));
  int rc = kex::report("saxpy", ok, max_abs, max_rel, tol, "per element, relative to |a*x|+|y|");
  for (auto& s : d) {
    KCHECK(cudaFree(s.x));
    KCHECK(cudaFree(s.y));
    KCHECK(cudaFree(s.out));
  }
  return rc;
}
