//===- apply_bench.cpp - apply with and without the run's preambles -------===//
//
// kloop optimize applies every candidate's proposal to the incumbent's sources: each translation unit
// is parsed on both sides before the edit and again after it. This prints, for one proposal, the wall
// time of that apply (kloop::applyProposalFile, with the options kloop optimize's apply stage passes)
// without precompiled preambles and with the preambles a run keeps, measured alternately in one run,
// and their ratio. The first apply with preambles builds them; it is reported apart ("cold"). Every
// apply must produce the same changes and refusals, else the benchmark fails.
//
// Usage: kloop-apply-bench [--reps R] [--with-only] [--before KLOOP] PROPOSAL.json FILE... [-- COMPILER ARGS]
//   --reps R        repetitions of each side (default 5)
//   --with-only     only applies with preambles, for a profiler (no ratio is printed)
//   --before KLOOP  also times `KLOOP apply PROPOSAL FILE... -- ARGS`, the whole command of a kloop built
//                   from an earlier commit, alternated with the two applies; exit 0 (applied) or 1
//                   (refused) is expected of it
//
//===----------------------------------------------------------------------===//
#include "kloop/Edit/ApplyFile.h"
#include "kloop/Frontend/Preamble.h"
#include "kloop/Inventory/LaunchFormula.h"
#include "kloop/Support/Path.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace {

struct Args {
  int Reps = 5;
  bool WithOnly = false;
  std::string Before;
  std::string Proposal;
  kloop::FrontendOptions Inputs;
};

bool parseArgs(int argc, char **argv, Args &A) {
  int I = 1;
  for (; I < argc && std::strcmp(argv[I], "--"); ++I) {
    if (!std::strcmp(argv[I], "--reps") && I + 1 < argc)
      A.Reps = std::atoi(argv[++I]);
    else if (!std::strcmp(argv[I], "--with-only"))
      A.WithOnly = true;
    else if (!std::strcmp(argv[I], "--before") && I + 1 < argc)
      A.Before = argv[++I];
    else if (argv[I][0] == '-' && argv[I][1])
      return false;
    else if (A.Proposal.empty())
      A.Proposal = argv[I];
    else
      A.Inputs.Inputs.push_back(argv[I]);
  }
  if (I < argc) {
    A.Inputs.HasExtraArgs = true;
    A.Inputs.ExtraArgs.assign(argv + I + 1, argv + argc);
  }
  return A.Reps >= 1 && !A.Proposal.empty() && !A.Inputs.Inputs.empty();
}

/// What an apply produced, to check that preambles change nothing.
std::string outcome(const kloop::ProposalApplication &A) {
  std::string S;
  for (const kloop::Refusal &R : A.Result.Refusals)
    S += "refused: " + R.str() + "\n";
  for (const kloop::FileChange &C : A.Result.Changes)
    S += C.File + "\n" + C.After;
  for (const auto &[ID, F] : A.Result.LaunchFormulas)
    S += ID + " " + kloop::inv::toJSON(F).dump() + "\n";
  return S;
}

/// Seconds of one apply; its outcome goes to \p Out. Exits on an error.
double timedApply(const Args &A, kloop::PreambleCache *Cache, std::string &Out) {
  kloop::ApplyOptions AO;
  llvm::SmallString<256> Cwd;
  llvm::sys::fs::current_path(Cwd);
  AO.Root = std::string(Cwd);
  AO.Preambles = Cache;
  auto T0 = std::chrono::steady_clock::now();
  llvm::Expected<kloop::ProposalApplication> R = kloop::applyProposalFile(A.Proposal, A.Inputs, AO, false);
  double S = std::chrono::duration<double>(std::chrono::steady_clock::now() - T0).count();
  if (!R) {
    std::fprintf(stderr, "kloop-apply-bench: error: %s\n", llvm::toString(R.takeError()).c_str());
    std::exit(1);
  }
  Out = outcome(*R);
  return S;
}

/// Seconds of `Before apply PROPOSAL FILE... -- ARGS`, its output discarded. Exits on a failure.
double timedBefore(const Args &A) {
  std::vector<llvm::StringRef> Argv = {A.Before, "apply", A.Proposal};
  Argv.insert(Argv.end(), A.Inputs.Inputs.begin(), A.Inputs.Inputs.end());
  Argv.push_back("--");
  Argv.insert(Argv.end(), A.Inputs.ExtraArgs.begin(), A.Inputs.ExtraArgs.end());
  std::optional<llvm::StringRef> Null[] = {std::nullopt, llvm::StringRef(""), llvm::StringRef("")};
  std::string Err;
  auto T0 = std::chrono::steady_clock::now();
  int RC = llvm::sys::ExecuteAndWait(A.Before, Argv, std::nullopt, Null, 0, 0, &Err);
  double S = std::chrono::duration<double>(std::chrono::steady_clock::now() - T0).count();
  if (RC != 0 && RC != 1) {
    std::fprintf(stderr, "kloop-apply-bench: error: %s apply failed (exit %d)%s%s\n", A.Before.c_str(), RC,
                 Err.empty() ? "" : ": ", Err.c_str());
    std::exit(1);
  }
  return S;
}

double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  return V.size() % 2 ? V[V.size() / 2] : (V[V.size() / 2 - 1] + V[V.size() / 2]) / 2;
}

} // namespace

int main(int argc, char **argv) {
  Args A;
  if (!parseArgs(argc, argv, A)) {
    std::fprintf(stderr, "usage: kloop-apply-bench [--reps R] [--with-only] [--before KLOOP] PROPOSAL.json FILE... [-- COMPILER ARGS]\n");
    return 2;
  }
  kloop::PreambleCache Cache;
  std::string Plain, Cached, First;
  double Cold = timedApply(A, &Cache, First);
  std::vector<double> Without, With;
  if (A.WithOnly) {
    for (int I = 0; I < A.Reps; ++I)
      With.push_back(timedApply(A, &Cache, Cached));
    std::printf("apply with preambles: median %.3f s over %d (cold %.3f s)\n", median(With), A.Reps, Cold);
    return 0;
  }
  std::vector<double> Before;
  for (int I = 0; I < A.Reps; ++I) {
    if (!A.Before.empty())
      Before.push_back(timedBefore(A));
    Without.push_back(timedApply(A, nullptr, Plain));
    With.push_back(timedApply(A, &Cache, Cached));
    if (Plain != Cached || Plain != First) {
      std::fprintf(stderr, "kloop-apply-bench: error: the apply with preambles differs from the one without\n"
                           "--- without:\n%s--- with:\n%s--- the first with (building them):\n%s",
                   Plain.c_str(), Cached.c_str(), First.c_str());
      return 1;
    }
  }
  kloop::PreambleCache::Counts C = Cache.counts();
  std::printf("proposal: %s (%s)\n", A.Proposal.c_str(), Plain.rfind("refused:", 0) == 0 ? "refused" : "applies");
  std::printf("apply without preambles: median %.3f s over %d\n", median(Without), A.Reps);
  std::printf("apply with preambles:    median %.3f s over %d (the first, which built them: %.3f s)\n",
              median(With), A.Reps, Cold);
  std::printf("preambles: %u built, %u parses loaded one, %u parsed without, %.1f MB held\n", C.Builds, C.Reused,
              C.Unused, C.Bytes / 1e6);
  std::printf("with / without: %.3f\n", median(With) / median(Without));
  if (!Before.empty()) {
    std::printf("kloop apply before (%s): median %.3f s over %d, the whole command\n", A.Before.c_str(),
                median(Before), A.Reps);
    std::printf("with / before: %.3f\n", median(With) / median(Before));
  }
  return 0;
}
