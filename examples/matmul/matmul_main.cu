// Harness for matmul (protected): inputs from --seed, a poisoned check run against a double
// precision CPU reference, then --iters timed launches rotating over enough buffer sets to
// defeat the L2, all on the default stream.
//
//   matmul --m M --n N --k K --seed S --iters I
//
// The check run compares every element when M*N*K <= 2^30, else 32 rows chosen from the seed
// plus the first and last rows (all N columns of each). After the timed launches the last
// set written is checked the same sampled way.
#include <algorithm>

#include "../common/harness.h"
#include "matmul.h"

namespace {

struct Set {
  float *A = nullptr, *B = nullptr, *C = nullptr;
};

// Error bound per element: a K-term f32 dot product in any order (with or without FMA) is
// within K * 2^-24 * sum_k |a_ik b_kj| of the exact value (Higham, 2nd ed., sec. 3.1); the
// tolerance is twice that. A zero or stale element is far outside it for random inputs.
bool check(const char* what, int N, int K, const std::vector<float>& A,
           const std::vector<float>& B, const float* dC, const std::vector<int>& rows,
           double* max_abs, double* max_rel, double* tol_out) {
  const double gamma = 2.0 * double(K) * std::ldexp(1.0, -24);
  std::vector<float> got(N);
  std::vector<double> ref(N), mag(N);
  bool ok = true;
  long bad = 0;
  for (int i : rows) {
    KCHECK(cudaMemcpy(got.data(), dC + size_t(i) * N, sizeof(float) * N, cudaMemcpyDeviceToHost));
    std::fill(ref.begin(), ref.end(), 0.0);
    std::fill(mag.begin(), mag.end(), 0.0);
    for (int k = 0; k < K; ++k) {
      const double a = A[size_t(i) * K + k];
      const float* b = &B[size_t(k) * N];
      for (int j = 0; j < N; ++j) {
        double p = a * double(b[j]);
        ref[j] += p;
        mag[j] += std::fabs(p);
      }
    }
    for (int j = 0; j < N; ++j) {
      double err = std::fabs(double(got[j]) - ref[j]);
      kex::track_max(*max_abs, err);
      kex::track_max(*max_rel, mag[j] > 0 ? err / mag[j] : err);
      if (!(err <= gamma * mag[j] + 1e-30)) {
        if (bad++ < 5)
          std::fprintf(stderr, "matmul %s: C[%d][%d] = %.9g want %.9g\n", what, i, j,
                       double(got[j]), ref[j]);
        ok = false;
      }
    }
  }
  if (bad) std::fprintf(stderr, "matmul %s: %ld elements wrong\n", what, bad);
  *tol_out = gamma;
  return ok;
}

std::vector<int> sample_rows(int M, uint64_t seed) {
  std::vector<int> rows{0, M - 1};
  uint64_t s = seed ^ 0x5EED5EEDull;
  for (int r = 0; r < 32; ++r) rows.push_back(int(kex::splitmix64(s) % uint64_t(M)));
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  kex::Args args(argc, argv, {"m", "n", "k", "seed", "iters"});
  const int M = int(args.get("m", 1024));
  const int N = int(args.get("n", 1024));
  const int K = int(args.get("k", 1024));
  const uint64_t seed = uint64_t(args.get("seed", 0, 0));
  const int iters = int(args.get("iters", 20));
  if (double(M) * K > 2e9 || double(K) * N > 2e9 || double(M) * N > 2e9) {
    std::fprintf(stderr, "matmul: matrices must have fewer than 2e9 elements\n");
    return 2;
  }
  const size_t bytesA = sizeof(float) * size_t(M) * K, bytesB = sizeof(float) * size_t(K) * N,
               bytesC = sizeof(float) * size_t(M) * N;
  const int sets = kex::rotation_sets(bytesA + bytesB + bytesC);

  std::vector<std::vector<float>> hA(sets), hB(sets);
  std::vector<Set> d(sets);
  for (int s = 0; s < sets; ++s) {
    hA[s].resize(size_t(M) * K);
    hB[s].resize(size_t(K) * N);
    kex::fill_uniform(hA[s].data(), hA[s].size(), seed, 2 * s, -1.f, 1.f);
    kex::fill_uniform(hB[s].data(), hB[s].size(), seed, 2 * s + 1, -1.f, 1.f);
    KCHECK(cudaMalloc(&d[s].A, bytesA));
    KCHECK(cudaMalloc(&d[s].B, bytesB));
    KCHECK(cudaMalloc(&d[s].C, bytesC));
    KCHECK(cudaMemcpy(d[s].A, hA[s].data(), bytesA, cudaMemcpyHostToDevice));
    KCHECK(cudaMemcpy(d[s].B, hB[s].data(), bytesB, cudaMemcpyHostToDevice));
  }
  const double flops = 2.0 * double(M) * double(N) * double(K);
  std::printf("matmul: m=%d n=%d k=%d seed=%llu iters=%d rotation_sets=%d bytes_per_launch=%zu\n",
              M, N, K, (unsigned long long)seed, iters, sets, bytesA + bytesB + bytesC);

  sgemm_launch(M, N, K, d[0].A, d[0].B, d[0].C, 0);
  KCHECK_LAUNCH();
  KCHECK(cudaDeviceSynchronize());
  kex::poison_nan(d[0].C, bytesC);
  sgemm_launch(M, N, K, d[0].A, d[0].B, d[0].C, 0);
  KCHECK_LAUNCH();
  KCHECK(cudaDeviceSynchronize());
  std::vector<int> rows;
  if (double(M) * N * K <= 1073741824.0) {
    for (int i = 0; i < M; ++i) rows.push_back(i);
  } else {
    rows = sample_rows(M, seed);
  }
  double max_abs = 0, max_rel = 0, tol = 0;
  bool ok = check("check run", N, K, hA[0], hB[0], d[0].C, rows, &max_abs, &max_rel, &tol);

  for (int s = 0; s < sets; ++s) kex::poison_nan(d[s].C, bytesC);
  kex::EventTimer timer;
  timer.start();
  for (int it = 0; it < iters; ++it) {
    const Set& cur = d[it % sets];
    sgemm_launch(M, N, K, cur.A, cur.B, cur.C, 0);
    KCHECK_LAUNCH();
  }
  float ms = timer.stop();
  KCHECK(cudaDeviceSynchronize());
  const int last = (iters - 1) % sets;
  ok &= check("timed run", N, K, hA[last], hB[last], d[last].C, sample_rows(M, seed + 1),
              &max_abs, &max_rel, &tol);

  kex::report_time("matmul", ms, iters, double(bytesA + bytesB + bytesC), flops);
  int rc = kex::report("matmul", ok, max_abs, max_rel, tol,
                       "per element, relative to sum_k |a_ik b_kj|");
  for (auto& s : d) {
    KCHECK(cudaFree(s.A));
    KCHECK(cudaFree(s.B));
    KCHECK(cudaFree(s.C));
  }
  return rc;
}
