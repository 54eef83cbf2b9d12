// Harness for softmax (protected): inputs from --seed, a poisoned check run against a double
// precision CPU reference, then --iters timed launches rotating over enough buffer sets to
// defeat the L2, all on the default stream.
//
//   softmax --rows R --cols C --seed S --iters I
#include <algorithm>

#include "../common/harness.h"
#include "softmax.h"

namespace {

struct Set {
  float *in = nullptr, *out = nullptr;
};

// Per element, relative to the exact value: expf is within 2 ulp, the row sum within
// (cols / BLOCK + log2 BLOCK) roundings (< 20 at cols = 4096) of sum exp, and the multiply by
// the reciprocal within 2 more: about 2e-6; the tolerance is 1e-5 relative (plus 1e-30 for
// denormal results). A value computed with a lowered-precision exponential or a stale row
// is far outside it.
constexpr double kRelTol = 1e-5;

bool check(const char* what, int rows, int cols, const std::vector<float>& in, const float* dout,
           double* max_abs, double* max_rel) {
  std::vector<float> got(size_t(rows) * cols);
  KCHECK(cudaMemcpy(got.data(), dout, sizeof(float) * got.size(), cudaMemcpyDeviceToHost));
  long bad = 0;
  std::vector<double> e(cols);
  for (int r = 0; r < rows; ++r) {
    const float* x = &in[size_t(r) * cols];
    double m = *std::max_element(x, x + cols), s = 0;
    for (int c = 0; c < cols; ++c) s += (e[c] = std::exp(double(x[c]) - m));
    for (int c = 0; c < cols; ++c) {
      double ref = e[c] / s, g = got[size_t(r) * cols + c];
      double err = std::fabs(g - ref);
      kex::track_max(*max_abs, err);
      kex::track_max(*max_rel, err / ref);
      if (!(err <= kRelTol * ref + 1e-30)) {
        if (bad++ < 5)
          std::fprintf(stderr, "softmax %s: out[%d][%d] = %.9g want %.9g\n", what, r, c, g, ref);
      }
    }
  }
  if (bad) std::fprintf(stderr, "softmax %s: %ld elements wrong\n", what, bad);
  return bad == 0;
}

}  // namespace

int main(int argc, char** argv) {
  kex::Args args(argc, argv, {"rows", "cols", "seed", "iters"});
  const int rows = int(args.get("rows", 4096));
  const int cols = int(args.get("cols", 1024));
  const uint64_t seed = uint64_t(args.get("seed", 0, 0));
  const int iters = int(args.get("iters", 20));
  if (double(rows) * cols > 2e9 || rows > 2147483647) {
    std::fprintf(stderr, "softmax: rows*cols must be below 2e9\n");
    return 2;
  }
  const size_t bytes = sizeof(float) * size_t(rows) * cols;
  const int sets = kex::rotation_sets(2 * bytes);

  std::vector<std::vector<float>> h(sets);
  std::vector<Set> d(sets);
  for (int s = 0; s < sets; ++s) {
    h[s].resize(size_t(rows) * cols);
    kex::fill_uniform(h[s].data(), h[s].size(), seed, s, -4.f, 4.f);
    KCHECK(cudaMalloc(&d[s].in, bytes));
    KCHECK(cudaMalloc(&d[s].out, bytes));
    KCHECK(cudaMemcpy(d[s].in, h[s].data(), bytes, cudaMemcpyHostToDevice));
  }
  std::printf("softmax: rows=%d cols=%d seed=%llu iters=%d rotation_sets=%d bytes_per_launch=%zu\n",
              rows, cols, (unsigned long long)seed, iters, sets, 2 * bytes);

  softmax_launch(rows, cols, d[0].in, d[0].out, 0);
  KCHECK_LAUNCH();
  KCHECK(cudaDeviceSynchronize());
  kex::poison_nan(d[0].out, bytes);
  softmax_launch(rows, cols, d[0].in, d[0].out, 0);
  KCHECK_LAUNCH();
  KCHECK(cudaDeviceSynchronize());
  double max_abs = 0, max_rel = 0;
  bool ok = check("check run", rows, cols, h[0], d[0].out, &max_abs, &max_rel);

  for (int s = 0; s < sets; ++s) kex::poison_nan(d[s].out, bytes);
  kex::EventTimer timer;
  timer.start();
  for (int it = 0; it < iters; ++it) {
    softmax_launch(rows, cols, d[it % sets].in, d[it % sets].out, 0);
    KCHECK_LAUNCH();
  }
  float ms = timer.stop();
  KCHECK(cudaDeviceSynchronize());
  const int last = (iters - 1) % sets;
  ok &= check("timed run", rows, cols, h[last], d[last].out, &max_abs, &max_rel);

  kex::report_time("softmax", ms, iters, 2.0 * double(bytes), 5.0 * double(rows) * double(cols));
  int rc = kex::report("softmax", ok, max_abs, max_rel, kRelTol, "per element, relative");
  for (auto& s : d) {
    KCHECK(cudaFree(s.in));
    KCHECK(cudaFree(s.out));
  }
  return rc;
}
