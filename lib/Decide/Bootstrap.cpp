//===- Bootstrap.cpp - Bootstrap CI of the median speed-up ----------------===//
#include "kloop/Decide/Bootstrap.h"
#include "kloop/Decide/Statistics.h"
#include "llvm/Support/FormatVariadic.h"
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <vector>

using namespace llvm;

namespace kloop {
namespace decide {

namespace {

/// Uniform index in [0, N) from a 64-bit generator, by rejection of the
/// incomplete top bucket: unbiased and identical on every standard library.
size_t drawIndex(std::mt19937_64 &Rng, uint64_t N) {
  const uint64_t Max = std::numeric_limits<uint64_t>::max();
  const uint64_t Limit = Max - (Max % N); // multiple of N
  uint64_t R;
  do {
    R = Rng();
  } while (R >= Limit);
  return static_cast<size_t>(R % N);
}

Error checkSide(ArrayRef<double> V, const char *Side) {
  if (V.empty())
    return createStringError(inconvertibleErrorCode(),
                             formatv("bootstrap: the {0} sample is empty", Side));
  for (size_t I = 0; I < V.size(); ++I)
    if (!std::isfinite(V[I]) || V[I] <= 0)
      return createStringError(
          inconvertibleErrorCode(),
          formatv("bootstrap: {0} duration #{1} is {2} ns; durations must be "
                  "finite and > 0",
                  Side, I, V[I]));
  return Error::success();
}

Error checkInputs(ArrayRef<double> B, ArrayRef<double> C, const BootstrapOptions &O) {
  if (Error E = checkSide(B, "baseline"))
    return E;
  if (Error E = checkSide(C, "candidate"))
    return E;
  if (!(O.Confidence > 0 && O.Confidence < 1))
    return createStringError(
        inconvertibleErrorCode(),
        formatv("bootstrap: confidence {0} is outside (0,1)", O.Confidence));
  if (O.Resamples < 100)
    return createStringError(
        inconvertibleErrorCode(),
        formatv("bootstrap: {0} resamples are too few (need >= 100)",
                O.Resamples));
  return Error::success();
}

double medianOf(ArrayRef<double> V) {
  std::vector<double> Tmp(V.begin(), V.end());
  return medianInPlace(Tmp);
}

/// The interval from the resampled ratios (sorted here).
SpeedupInterval intervalOf(std::vector<double> &Ratios, ArrayRef<double> B,
                           ArrayRef<double> C, const BootstrapOptions &O,
                           unsigned Groups) {
  std::sort(Ratios.begin(), Ratios.end());
  double Alpha = 1 - O.Confidence;
  SpeedupInterval R;
  R.Estimate = medianOf(B) / medianOf(C);
  R.Lower = percentileSorted(Ratios, Alpha / 2);
  R.Upper = percentileSorted(Ratios, 1 - Alpha / 2);
  R.Confidence = O.Confidence;
  R.Resamples = O.Resamples;
  R.Seed = O.Seed;
  R.Groups = Groups;
  return R;
}

/// The launches of one group, as indices into each side's durations.
struct GroupMembers {
  std::vector<size_t> Base, Cand;
};

std::vector<GroupMembers> groupsOf(ArrayRef<uint32_t> BG, ArrayRef<uint32_t> CG) {
  std::map<uint32_t, GroupMembers> ById; // ordered: the same draws everywhere
  for (size_t I = 0; I < BG.size(); ++I)
    ById[BG[I]].Base.push_back(I);
  for (size_t I = 0; I < CG.size(); ++I)
    ById[CG[I]].Cand.push_back(I);
  std::vector<GroupMembers> Out;
  for (auto &[Id, M] : ById)
    Out.push_back(std::move(M));
  return Out;
}

/// Appends to \p Into as many draws from \p Members' durations in \p V as it has.
void drawFrom(std::mt19937_64 &Rng, ArrayRef<double> V, const std::vector<size_t> &Members,
              std::vector<double> &Into) {
  for (size_t K = 0; K < Members.size(); ++K)
    Into.push_back(V[Members[drawIndex(Rng, Members.size())]]);
}

} // namespace

Expected<SpeedupInterval> bootstrapSpeedup(ArrayRef<double> B,
                                           ArrayRef<double> C,
                                           const BootstrapOptions &O) {
  if (Error E = checkInputs(B, C, O))
    return E;
  std::mt19937_64 Rng(O.Seed);
  std::vector<double> Ratios;
  Ratios.reserve(O.Resamples);
  std::vector<double> RB(B.size()), RC(C.size());
  for (unsigned K = 0; K < O.Resamples; ++K) {
    for (double &X : RB)
      X = B[drawIndex(Rng, B.size())];
    for (double &X : RC)
      X = C[drawIndex(Rng, C.size())];
    Ratios.push_back(medianInPlace(RB) / medianInPlace(RC));
  }
  return intervalOf(Ratios, B, C, O, 0);
}

static Error checkGroupSizes(ArrayRef<double> B, ArrayRef<uint32_t> BG, ArrayRef<double> C, ArrayRef<uint32_t> CG) {
  if (BG.size() == B.size() && CG.size() == C.size())
    return Error::success();
  return createStringError(inconvertibleErrorCode(),
                           formatv("bootstrap: {0} baseline and {1} candidate durations but {2} and {3} "
                                   "group numbers",
                                   B.size(), C.size(), BG.size(), CG.size()));
}

/// O.Resamples ratios median(RB) / median(RC), each resample drawn by \p Draw(Rng, RB, RC) into emptied
/// RB and RC. A draw that leaves a side empty (a group lacking it) is drawn again; 100 tries per resample
/// bound a pathological input.
template <typename DrawFn>
static Expected<std::vector<double>> resampledRatios(const BootstrapOptions &O, DrawFn Draw) {
  std::mt19937_64 Rng(O.Seed);
  std::vector<double> Ratios, RB, RC;
  Ratios.reserve(O.Resamples);
  for (uint64_t Tries = 0; Ratios.size() < O.Resamples; ++Tries) {
    if (Tries >= 100ull * O.Resamples)
      return createStringError(inconvertibleErrorCode(),
                               "bootstrap: too few of the groups hold launches of both sides");
    RB.clear();
    RC.clear();
    Draw(Rng, RB, RC);
    if (!RB.empty() && !RC.empty())
      Ratios.push_back(medianInPlace(RB) / medianInPlace(RC));
  }
  return Ratios;
}

Expected<SpeedupInterval> bootstrapSpeedupGrouped(ArrayRef<double> B, ArrayRef<uint32_t> BG,
                                                  ArrayRef<double> C, ArrayRef<uint32_t> CG,
                                                  const BootstrapOptions &O) {
  if (Error E = checkGroupSizes(B, BG, C, CG))
    return E;
  std::vector<GroupMembers> Groups = groupsOf(BG, CG);
  if (Groups.size() < 2)
    return bootstrapSpeedup(B, C, O);
  if (Error E = checkInputs(B, C, O))
    return E;
  Expected<std::vector<double>> Ratios =
      resampledRatios(O, [&](std::mt19937_64 &Rng, std::vector<double> &RB, std::vector<double> &RC) {
        for (size_t K = 0; K < Groups.size(); ++K) {
          const GroupMembers &G = Groups[drawIndex(Rng, Groups.size())];
          drawFrom(Rng, B, G.Base, RB);
          drawFrom(Rng, C, G.Cand, RC);
        }
      });
  if (!Ratios)
    return Ratios.takeError();
  return intervalOf(*Ratios, B, C, O, static_cast<unsigned>(Groups.size()));
}

Expected<SpeedupInterval> bootstrapSpeedupUnpaired(ArrayRef<double> B, ArrayRef<uint32_t> BG,
                                                   ArrayRef<double> C, ArrayRef<uint32_t> CG,
                                                   const BootstrapOptions &O) {
  if (Error E = checkGroupSizes(B, BG, C, CG))
    return E;
  std::vector<GroupMembers> BGroups = groupsOf(BG, {}), CGroups = groupsOf({}, CG);
  if (BGroups.size() < 2 && CGroups.size() < 2)
    return bootstrapSpeedup(B, C, O);
  if (Error E = checkInputs(B, C, O))
    return E;
  Expected<std::vector<double>> Ratios =
      resampledRatios(O, [&](std::mt19937_64 &Rng, std::vector<double> &RB, std::vector<double> &RC) {
        for (size_t I = 0; I < BGroups.size(); ++I)
          drawFrom(Rng, B, BGroups[drawIndex(Rng, BGroups.size())].Base, RB);
        for (size_t I = 0; I < CGroups.size(); ++I)
          drawFrom(Rng, C, CGroups[drawIndex(Rng, CGroups.size())].Cand, RC);
      });
  if (!Ratios)
    return Ratios.takeError();
  return intervalOf(*Ratios, B, C, O, static_cast<unsigned>(BGroups.size() + CGroups.size()));
}

} // namespace decide
} // namespace kloop
