// Harness for histogram (protected): inputs from --seed, a poisoned check run compared
// exactly with the CPU histogram, then --iters timed launches rotating over enough input
// buffers to defeat the L2, all on the default stream.
//
//   histogram --n N --seed S --iters I
#include <climits>

#include "../common/harness.h"
#include "histogram.h"

namespace {

// Bytes with a skewed distribution (the sum of two uniform bytes, halved, plus a run of one
// hot value) so that some bins are much fuller than others, as in real images and keys.
void fill_bytes(unsigned char* h, size_t n, uint64_t seed, uint64_t stream) {
  uint64_t s = seed * 0x632BE59BD9B4E019ull + stream * 0x8CB92BA72F3D8DD7ull + 7;
  for (size_t i = 0; i < n; ++i) {
    uint64_t r = kex::splitmix64(s);
    h[i] = (r & 0xF) == 0 ? 42 : (unsigned char)(((r >> 8) & 0xFF) / 2 + ((r >> 16) & 0xFF) / 2);
  }
}

bool check(const char* what, const std::vector<unsigned>& want, const unsigned* dbins,
           double* max_abs) {
  std::vector<unsigned> got(kHistogramBins);
  KCHECK(cudaMemcpy(got.data(), dbins, sizeof(unsigned) * kHistogramBins, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int b = 0; b < kHistogramBins; ++b)
    if (got[b] != want[b]) {
      if (bad++ < 5) std::fprintf(stderr, "histogram %s: bin %d = %u want %u\n", what, b, got[b], want[b]);
      kex::track_max(*max_abs, std::fabs(double(got[b]) - double(want[b])));
    }
  if (bad) std::fprintf(stderr, "histogram %s: %d bins wrong\n", what, bad);
  return bad == 0;
}

}  // namespace

int main(int argc, char** argv) {
  kex::Args args(argc, argv, {"n", "seed", "iters"});
  const long long n64 = args.get("n", 1 << 26);
  const uint64_t seed = uint64_t(args.get("seed", 0, 0));
  const int iters = int(args.get("iters", 20));
  if (n64 > INT_MAX) {
    std::fprintf(stderr, "histogram: --n must be <= %d\n", INT_MAX);
    return 2;
  }
  const int n = int(n64);
  const size_t bytes = size_t(n), bin_bytes = sizeof(unsigned) * kHistogramBins;
  const int sets = kex::rotation_sets(bytes + bin_bytes);

  std::vector<std::vector<unsigned>> want(sets, std::vector<unsigned>(kHistogramBins, 0));
  std::vector<unsigned char*> din(sets);
  std::vector<unsigned*> dbins(sets);
  {
    std::vector<unsigned char> h(bytes);
    for (int s = 0; s < sets; ++s) {
      fill_bytes(h.data(), bytes, seed, s);
      for (unsigned char v : h) ++want[s][v];
      KCHECK(cudaMalloc(&din[s], bytes));
      KCHECK(cudaMalloc(&dbins[s], bin_bytes));
      KCHECK(cudaMemcpy(din[s], h.data(), bytes, cudaMemcpyHostToDevice));
    }
  }
  std::printf("histogram: n=%d seed=%llu iters=%d rotation_sets=%d bytes_per_launch=%zu\n", n,
              (unsigned long long)seed, iters, sets, bytes + bin_bytes);

  histogram_launch(din[0], n, dbins[0], 0);
  KCHECK_LAUNCH();
  KCHECK(cudaDeviceSynchronize());
  kex::poison_nan(dbins[0], bin_bytes);  // 0xFFFFFFFF counts: a launch that does not clear fails
  histogram_launch(din[0], n, dbins[0], 0);
  KCHECK_LAUNCH();
  KCHECK(cudaDeviceSynchronize());
  double max_abs = 0;
  bool ok = check("check run", want[0], dbins[0], &max_abs);

  for (int s = 0; s < sets; ++s) kex::poison_nan(dbins[s], bin_bytes);
  kex::EventTimer timer;
  timer.start();
  for (int it = 0; it < iters; ++it) {
    histogram_launch(din[it % sets], n, dbins[it % sets], 0);
    KCHECK_LAUNCH();
  }
  float ms = timer.stop();
  KCHECK(cudaDeviceSynchronize());
  for (int s = 0; s < sets && s < iters; ++s) ok &= check("timed run", want[s], dbins[s], &max_abs);

  kex::report_time("histogram", ms, iters, double(bytes + bin_bytes), 0.0);
  int rc = kex::report("histogram", ok, max_abs, 0.0, 0.0, "exact counts");
  for (int s = 0; s < sets; ++s) {
    KCHECK(cudaFree(din[s]));
    KCHECK(cudaFree(dbins[s]));
  }
  return rc;
}
