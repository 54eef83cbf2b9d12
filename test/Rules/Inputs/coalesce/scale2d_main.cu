// Harness for scale2d (protected): inputs from --seed, a poisoned check run against a double precision
// CPU reference, then --iters timed launches rotating over enough buffer sets to defeat the L2.
//
//   scale2d --rows R --cols C --seed S --iters I
#include "../common/harness.h"
#include "scale2d.h"

namespace {

struct Set {
  float *in = nullptr, *out = nullptr;
};

// a * x + b in f32 is within 2 roundings (1 with an FMA) of the exact value: 2 ulp of |a x| + |b|
// with a factor 2 of margin. NaN (the poison) never passes.
bool check(const char* what, size_t n, float a, float b, const std::vector<float>& in, const float* dout,
           double* max_abs, double* max_rel, double* tol_out) {
  std::vector<float> got(n);
  KCHECK(cudaMemcpy(got.data(), dout, sizeof(float) * n, cudaMemcpyDeviceToHost));
  const double rel_tol = 4.0 * std::ldexp(1.0, -24);
  long bad = 0;
  for (size_t i = 0; i < n; ++i) {
    double ref = double(a) * double(in[i]) + double(b);
    double mag = std::fabs(double(a) * double(in[i])) + std::fabs(double(b));
    double err = std::fabs(double(got[i]) - ref);
    if (!(err <= rel_tol * mag + 1e-30) && bad++ < 5)
      std::fprintf(stderr, "scale2d %s: mismatch at %zu: got %.9g want %.9g\n", what, i, double(got[i]), ref);
    kex::track_max(*max_abs, err);
    kex::track_max(*max_rel, mag > 0 ? err / mag : err);
  }
  if (bad) std::fprintf(stderr, "scale2d %s: %ld of %zu elements wrong\n", what, bad, n);
  *tol_out = rel_tol;
  return bad == 0;
}

}  // namespace

int main(int argc, char** argv) {
  kex::Args args(argc, argv, {"rows", "cols", "seed", "iters"});
  const int rows = int(args.get("rows", 1024));
  const int cols = int(args.get("cols", 1024));
  const uint64_t seed = uint64_t(args.get("seed", 0, 0));
  const int iters = int(args.get("iters", 20));
  if (rows <= 0 || cols <= 0 || double(rows) * cols > 1e9) {
    std::fprintf(stderr, "scale2d: rows and cols must be positive, rows*cols at most 1e9\n");
    return 2;
  }
  const size_t n = size_t(rows) * cols, bytes = sizeof(float) * n;
  const int sets = kex::rotation_sets(2 * bytes);

  std::vector<float> hab(2);
  kex::fill_uniform(hab.data(), 2, seed, 999, 0.5f, 2.5f);
  const float a = hab[0], b = hab[1];

  std::vector<std::vector<float>> h(sets);
  std::vector<Set> d(sets);
  for (int s = 0; s < sets; ++s) {
    h[s].resize(n);
    kex::fill_uniform(h[s].data(), n, seed, s, -1.f, 1.f);
    KCHECK(cudaMalloc(&d[s].in, bytes));
    KCHECK(cudaMalloc(&d[s].out, bytes));
    KCHECK(cudaMemcpy(d[s].in, h[s].data(), bytes, cudaMemcpyHostToDevice));
  }
  std::printf("scale2d: rows=%d cols=%d seed=%llu iters=%d rotation_sets=%d bytes_per_launch=%zu\n", rows, cols,
              (unsigned long long)seed, iters, sets, 2 * bytes);

  scale2d_launch(rows, cols, a, b, d[0].in, d[0].out, 0);
  KCHECK_LAUNCH();
  KCHECK(cudaDeviceSynchronize());
  kex::poison_nan(d[0].out, bytes);
  scale2d_launch(rows, cols, a, b, d[0].in, d[0].out, 0);
  KCHECK_LAUNCH();
  KCHECK(cudaDeviceSynchronize());
  double max_abs = 0, max_rel = 0, tol = 0;
  bool ok = check("check run", n, a, b, h[0], d[0].out, &max_abs, &max_rel, &tol);

  for (int s = 0; s < sets; ++s) kex::poison_nan(d[s].out, bytes);
  kex::EventTimer timer;
  timer.start();
  for (int it = 0; it < iters; ++it) {
    scale2d_launch(rows, cols, a, b, d[it % sets].in, d[it % sets].out, 0);
    KCHECK_LAUNCH();
  }
  float ms = timer.stop();
  KCHECK(cudaDeviceSynchronize());
  for (int s = 0; s < sets && s < iters; ++s)
    ok &= check("timed run", n, a, b, h[s], d[s].out, &max_abs, &max_rel, &tol);

  kex::report_time("scale2d", ms, iters, 2.0 * double(bytes), 2.0 * double(n));
  int rc = kex::report("scale2d", ok, max_abs, max_rel, tol, "per element, relative to |a*x|+|b|");
  for (auto& s : d) {
    KCHECK(cudaFree(s.in));
    KCHECK(cudaFree(s.out));
  }
  return rc;
}
