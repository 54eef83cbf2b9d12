// Harness for layernorm (protected): inputs from --seed, a poisoned check run against a
// double precision CPU reference, then --iters timed launches rotating over enough buffer
// sets to defeat the L2, all on the default stream.
//
//   layernorm --rows R --cols C --seed S --iters I
#include "../common/harness.h"
#include "layernorm.h"

namespace {

constexpr float kEps = 1e-5f;

struct Set {
  float *in = nullptr, *out = nullptr;
};

// Per element, against the double reference: the normalized value xhat is off by a few
// roundings of the row statistics (sums of <= cols / BLOCK + log2 BLOCK terms) and rsqrtf's
// 2 ulp, then scaled: about 1e-5 of |xhat * gamma| + |beta| + 1 in the worst case (the + 1
// covers elements with xhat near 0, where the error is that of the mean relative to the
// row's spread). The tolerance is 3e-5 of that magnitude; a result computed in lower
// precision or left unwritten is far outside it.
constexpr double kTol = 3e-5;

bool check(const char* what, int rows, int cols, const std::vector<float>& in,
           const std::vector<float>& gamma, const std::vector<float>& beta, const float* dout,
           double* max_abs, double* max_rel) {
  std::vector<float> got(size_t(rows) * cols);
  KCHECK(cudaMemcpy(got.data(), dout, sizeof(float) * got.size(), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (int r = 0; r < rows; ++r) {
    const float* x = &in[size_t(r) * cols];
    double mean = 0, var = 0;
    for (int c = 0; c < cols; ++c) mean += x[c];
    mean /= cols;
    for (int c = 0; c < cols; ++c) var += (x[c] - mean) * (x[c] - mean);
    const double rstd = 1.0 / std::sqrt(var / cols + double(kEps));
    for (int c = 0; c < cols; ++c) {
      double xhat = (x[c] - mean) * rstd;
      double ref = xhat * gamma[c] + beta[c];
      double mag = std::fabs(xhat * gamma[c]) + std::fabs(double(beta[c])) + 1.0;
      double err = std::fabs(double(got[size_t(r) * cols + c]) - ref);
      kex::track_max(*max_abs, err);
      kex::track_max(*max_rel, err / mag);
      if (!(err <= kTol * mag)) {
        if (bad++ < 5)
          std::fprintf(stderr, "layernorm %s: out[%d][%d] = %.9g want %.9g\n", what, r, c,
                       double(got[size_t(r) * cols + c]), ref);
      }
    }
  }
  if (bad) std::fprintf(stderr, "layernorm %s: %ld elements wrong\n", what, bad);
  return bad == 0;
}

}  // namespace

int main(int argc, char** argv) {
  kex::Args args(argc, argv, {"rows", "cols", "seed", "iters"});
  const int rows = int(args.get("rows", 4096));
  const int cols = int(args.get("cols", 1024));
  const uint64_t seed = uint64_t(args.get("seed", 0, 0));
  const int iters = int(args.get("iters", 20));
  if (double(rows) * cols > 2e9) {
    std::fprintf(stderr, "layernorm: rows*cols must be below 2e9\n");
    return 2;
  }
  const size_t bytes = sizeof(float) * size_t(rows) * cols, pbytes = sizeof(float) * size_t(cols);
  const int sets = kex::rotation_sets(2 * bytes + 2 * pbytes);

  std::vector<float> hg(cols), hb(cols);
  kex::fill_uniform(hg.data(), cols, seed, 1000001, 0.5f, 1.5f);
  kex::fill_uniform(hb.data(), cols, seed, 1000002, -0.5f, 0.5f);
  float *dg = nullptr, *db = nullptr;
  KCHECK(cudaMalloc(&dg, pbytes));
  KCHECK(cudaMalloc(&db, pbytes));
  KCHECK(cudaMemcpy(dg, hg.data(), pbytes, cudaMemcpyHostToDevice));
  KCHECK(cudaMemcpy(db, hb.data(), pbytes, cudaMemcpyHostToDevice));
  std::vector<std::vector<float>> h(sets);
  std::vector<Set> d(sets);
  for (int s = 0; s < sets; ++s) {
    h[s].resize(size_t(rows) * cols);
    // Rows with an offset and a scale of their own, so mean and variance matter.
    kex::fill_uniform(h[s].data(), h[s].size(), seed, s, -1.f, 1.f);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c)
        h[s][size_t(r) * cols + c] = h[s][size_t(r) * cols + c] * (1.f + float(r % 7)) + float(r % 5);
    KCHECK(cudaMalloc(&d[s].in, bytes));
    KCHECK(cudaMalloc(&d[s].out, bytes));
    KCHECK(cudaMemcpy(d[s].in, h[s].data(), bytes, cudaMemcpyHostToDevice));
  }
  std::printf("layernorm: rows=%d cols=%d seed=%llu iters=%d rotation_sets=%d "
              "bytes_per_launch=%zu\n",
              rows, cols, (unsigned long long)seed, iters, sets, 2 * bytes + 2 * pbytes);

  layernorm_launch(rows, cols, kEps, d[0].in, dg, db, d[0].out, 0);
  KCHECK_LAUNCH();
  KCHECK(cudaDeviceSynchronize());
  kex::poison_nan(d[0].out, bytes);
  layernorm_launch(rows, cols, kEps, d[0].in, dg, db, d[0].out, 0);
  KCHECK_LAUNCH();
  KCHECK(cudaDeviceSynchronize());
  double max_abs = 0, max_rel = 0;
  bool ok = check("check run", rows, cols, h[0], hg, hb, d[0].out, &max_abs, &max_rel);

  for (int s = 0; s < sets; ++s) kex::poison_nan(d[s].out, bytes);
  kex::EventTimer timer;
  timer.start();
  for (int it = 0; it < iters; ++it) {
    layernorm_launch(rows, cols, kEps, d[it % sets].in, dg, db, d[it % sets].out, 0);
    KCHECK_LAUNCH();
  }
  float ms = timer.stop();
  KCHECK(cudaDeviceSynchronize());
  const int last = (iters - 1) % sets;
  ok &= check("timed run", rows, cols, h[last], hg, hb, d[last].out, &max_abs, &max_rel);

  kex::report_time("layernorm", ms, iters, double(2 * bytes + 2 * pbytes),
                   8.0 * double(rows) * double(cols));
  int rc = kex::report("layernorm", ok, max_abs, max_rel, kTol,
                       "per element, relative to |xhat*gamma|+|beta|+1");
  for (auto& s : d) {
    KCHECK(cudaFree(s.in));
    KCHECK(cudaFree(s.out));
  }
  KCHECK(cudaFree(dg));
  KCHECK(cudaFree(db));
  return rc;
}
