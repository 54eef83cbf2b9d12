// Harness for reduction (protected): inputs from --seed, a poisoned check run against a
// double precision CPU sum, then --iters timed launches rotating over enough input buffers to
// defeat the L2, all on the default stream.
//
//   reduction --n N --seed S --iters I
#include <climits>

#include "../common/harness.h"
#include "reduction.h"

namespace {

// Relative tolerance against sum(|x|). A float summation in any order with at most L
// additions on any path from an input to the result is within L * 2^-24 * sum|x| of the
// exact sum (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., sec. 4.2).
// The baseline's paths are n/(256*1024) + 8 + 4 + 8 long (84 at 16M inputs: 5.0e-6);
// 1e-5 leaves room for other block and grid sizes while failing a result that drops even one
// block's worth of inputs at the default shapes: the inputs are biased positive (mean
// 0.375), so sum(x) is close to sum(|x|) and a zero or partial result is far outside it.
constexpr double kRelTol = 1e-5;

struct Ref {
  double sum = 0, abs_sum = 0;
};

Ref reference(const std::vector<float>& x) {
  Ref r;
  for (float v : x) {
    r.sum += double(v);
    r.abs_sum += std::fabs(double(v));
  }
  return r;
}

bool check(const char* what, const Ref& ref, const float* dout, double* max_abs, double* max_rel) {
  float got = 0.f;
  KCHECK(cudaMemcpy(&got, dout, sizeof(float), cudaMemcpyDeviceToHost));
  double err = std::fabs(double(got) - ref.sum);
  double rel = err / ref.abs_sum;
  kex::track_max(*max_abs, err);
  kex::track_max(*max_rel, rel);
  bool ok = rel <= kRelTol;  // false for NaN
  if (!ok)
    std::fprintf(stderr, "reduction %s: got %.9g want %.9g (error %.3e of sum|x|)\n", what,
                 double(got), ref.sum, rel);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  kex::Args args(argc, argv, {"n", "seed", "iters"});
  const long long n64 = args.get("n", 1 << 24);
  const uint64_t seed = uint64_t(args.get("seed", 0, 0));
  const int iters = int(args.get("iters", 20));
  if (n64 > INT_MAX) {
    std::fprintf(stderr, "reduction: --n must be <= %d\n", INT_MAX);
    return 2;
  }
  const int n = int(n64);
  const size_t bytes = sizeof(float) * size_t(n);
  const int sets = kex::rotation_sets(bytes);

  std::vector<Ref> refs(sets);
  std::vector<float*> din(sets), dout(sets);
  {
    std::vector<float> h(n);
    for (int s = 0; s < sets; ++s) {
      kex::fill_uniform(h.data(), n, seed, s, -0.25f, 1.0f);
      refs[s] = reference(h);
      KCHECK(cudaMalloc(&din[s], bytes));
      KCHECK(cudaMalloc(&dout[s], sizeof(float)));
      KCHECK(cudaMemcpy(din[s], h.data(), bytes, cudaMemcpyHostToDevice));
    }
  }
  const int scratch = reduce_sum_scratch_floats(n);
  if (scratch < 1) {
    std::fprintf(stderr, "reduction: reduce_sum_scratch_floats(%d) = %d\n", n, scratch);
    return 1;
  }
  float* partials = nullptr;
  unsigned int* done_count = nullptr;
  KCHECK(cudaMalloc(&partials, sizeof(float) * size_t(scratch)));
  KCHECK(cudaMalloc(&done_count, sizeof(unsigned int)));
  KCHECK(cudaMemset(done_count, 0, sizeof(unsigned int)));
  std::printf("reduction: n=%d seed=%llu iters=%d rotation_sets=%d bytes_per_launch=%zu\n", n,
              (unsigned long long)seed, iters, sets, bytes + sizeof(float));

  // Warm-up, then the check run on a poisoned output and poisoned scratch.
  reduce_sum_launch(din[0], n, partials, done_count, dout[0], 0);
  KCHECK_LAUNCH();
  KCHECK(cudaDeviceSynchronize());
  kex::poison_nan(dout[0], sizeof(float));
  kex::poison_nan(partials, sizeof(float) * size_t(scratch));
  reduce_sum_launch(din[0], n, partials, done_count, dout[0], 0);
  KCHECK_LAUNCH();
  KCHECK(cudaDeviceSynchronize());
  double max_abs = 0, max_rel = 0;
  bool ok = check("check run", refs[0], dout[0], &max_abs, &max_rel);

  for (int s = 0; s < sets; ++s) kex::poison_nan(dout[s], sizeof(float));
  kex::EventTimer timer;
  timer.start();
  for (int it = 0; it < iters; ++it) {
    reduce_sum_launch(din[it % sets], n, partials, done_count, dout[it % sets], 0);
    KCHECK_LAUNCH();
  }
  float ms = timer.stop();
  KCHECK(cudaDeviceSynchronize());
  for (int s = 0; s < sets && s < iters; ++s)
    ok &= check("timed run", refs[s], dout[s], &max_abs, &max_rel);
  unsigned int count_after = 1;
  KCHECK(cudaMemcpy(&count_after, done_count, sizeof(unsigned int), cudaMemcpyDeviceToHost));
  if (count_after != 0) {
    std::fprintf(stderr, "reduction: done_count is %u after the launches, want 0\n", count_after);
    ok = false;
  }

  kex::report_time("reduction", ms, iters, double(bytes) + 4.0, double(n) - 1.0);
  int rc = kex::report("reduction", ok, max_abs, max_rel, kRelTol, "relative to sum|x|");
  for (int s = 0; s < sets; ++s) {
    KCHECK(cudaFree(din[s]));
    KCHECK(cudaFree(dout[s]));
  }
  KCHECK(cudaFree(partials));
  KCHECK(cudaFree(done_count));
  return rc;
}
