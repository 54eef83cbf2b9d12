// Harness for transpose (protected): inputs from --seed, a poisoned check run compared
// bit-exactly with the CPU transpose, then --iters timed launches rotating over enough buffer
// sets to defeat the L2, all on the default stream.
//
//   transpose --rows R --cols C --seed S --iters I
#include "../common/harness.h"
#include "transpose.h"

namespace {

struct Set {
  float *in = nullptr, *out = nullptr;
};

// A transpose moves values: the only acceptable result is bit-exact.
bool check(const char* what, int rows, int cols, const std::vector<float>& in, const float* dout,
           double* max_abs) {
  std::vector<float> got(size_t(rows) * cols);
  KCHECK(cudaMemcpy(got.data(), dout, sizeof(float) * got.size(), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      float want = in[size_t(r) * cols + c], have = got[size_t(c) * rows + r];
      if (std::memcmp(&want, &have, sizeof(float)) != 0) {
        if (bad++ < 5)
          std::fprintf(stderr, "transpose %s: out[%d][%d] = %.9g want %.9g\n", what, c, r,
                       double(have), double(want));
        kex::track_max(*max_abs, std::fabs(double(have) - double(want)));
      }
    }
  if (bad) std::fprintf(stderr, "transpose %s: %ld elements wrong\n", what, bad);
  return bad == 0;
}

}  // namespace

int main(int argc, char** argv) {
  kex::Args args(argc, argv, {"rows", "cols", "seed", "iters"});
  const int rows = int(args.get("rows", 4096));
  const int cols = int(args.get("cols", 4096));
  const uint64_t seed = uint64_t(args.get("seed", 0, 0));
  const int iters = int(args.get("iters", 20));
  if (double(rows) * cols > 2e9) {
    std::fprintf(stderr, "transpose: rows*cols must be below 2e9\n");
    return 2;
  }
  const size_t bytes = sizeof(float) * size_t(rows) * cols;
  const int sets = kex::rotation_sets(2 * bytes);

  std::vector<std::vector<float>> h(sets);
  std::vector<Set> d(sets);
  for (int s = 0; s < sets; ++s) {
    h[s].resize(size_t(rows) * cols);
    kex::fill_uniform(h[s].data(), h[s].size(), seed, s, -1.f, 1.f);
    KCHECK(cudaMalloc(&d[s].in, bytes));
    KCHECK(cudaMalloc(&d[s].out, bytes));
    KCHECK(cudaMemcpy(d[s].in, h[s].data(), bytes, cudaMemcpyHostToDevice));
  }
  std::printf("transpose: rows=%d cols=%d seed=%llu iters=%d rotation_sets=%d bytes_per_launch=%zu\n",
              rows, cols, (unsigned long long)seed, iters, sets, 2 * bytes);

  transpose_launch(rows, cols, d[0].in, d[0].out, 0);
  KCHECK_LAUNCH();
  KCHECK(cudaDeviceSynchronize());
  kex::poison_nan(d[0].out, bytes);
  transpose_launch(rows, cols, d[0].in, d[0].out, 0);
  KCHECK_LAUNCH();
  KCHECK(cudaDeviceSynchronize());
  double max_abs = 0;
  bool ok = check("check run", rows, cols, h[0], d[0].out, &max_abs);

  for (int s = 0; s < sets; ++s) kex::poison_nan(d[s].out, bytes);
  kex::EventTimer timer;
  timer.start();
  for (int it = 0; it < iters; ++it) {
    transpose_launch(rows, cols, d[it % sets].in, d[it % sets].out, 0);
    KCHECK_LAUNCH();
  }
  float ms = timer.stop();
  KCHECK(cudaDeviceSynchronize());
  for (int s = 0; s < sets && s < iters; ++s)
    ok &= check("timed run", rows, cols, h[s], d[s].out, &max_abs);

  kex::report_time("transpose", ms, iters, 2.0 * double(bytes), 0.0);
  int rc = kex::report("transpose", ok, max_abs, 0.0, 0.0, "bit-exact");
  for (auto& s : d) {
    KCHECK(cudaFree(s.in));
    KCHECK(cudaFree(s.out));
  }
  return rc;
}
