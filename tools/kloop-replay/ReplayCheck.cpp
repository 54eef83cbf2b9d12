//===- ReplayCheck.cpp - host-only helpers of the replay worker -----------===//
#include "ReplayCheck.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kloop {
namespace replay {

bool parseTolerance(const std::string &Text, Tolerance &Out, std::string &Error) {
  Tolerance T;
  std::string Body = Text;
  size_t Comma = Text.find(',');
  if (Comma != std::string::npos) {
    std::string Type = Text.substr(Comma + 1);
    Body = Text.substr(0, Comma);
    if (Type == "f64")
      T.ElementBytes = 8;
    else if (Type != "f32") {
      Error = "--tolerance '" + Text + "': element type must be f32 or f64";
      return false;
    }
  }
  if (Body == "exact") {
    Out = T;
    return true;
  }
  size_t Colon = Body.find(':');
  std::string Kind = Body.substr(0, Colon);
  if (Colon == std::string::npos || (Kind != "abs" && Kind != "rel")) {
    Error = "--tolerance '" + Text + "': expected exact, abs:X or rel:X (optionally ,f32 or ,f64)";
    return false;
  }
  const char *Num = Body.c_str() + Colon + 1;
  char *End = nullptr;
  double V = std::strtod(Num, &End);
  if (!*Num || *End || !std::isfinite(V) || V < 0) {
    Error = "--tolerance '" + Text + "': the bound must be a finite number >= 0";
    return false;
  }
  T.K = Kind == "abs" ? Tolerance::Kind::Abs : Tolerance::Kind::Rel;
  T.Value = V;
  Out = T;
  return true;
}

std::string toleranceText(const Tolerance &T) {
  if (T.K == Tolerance::Kind::Exact)
    return "exact";
  char Buf[64];
  std::snprintf(Buf, sizeof(Buf), "%s:%g,%s", T.K == Tolerance::Kind::Abs ? "abs" : "rel", T.Value,
                T.ElementBytes == 8 ? "f64" : "f32");
  return Buf;
}

namespace {

double element(const uint8_t *P, unsigned Bytes) {
  if (Bytes == 8) {
    double D;
    std::memcpy(&D, P, 8);
    return D;
  }
  float F;
  std::memcpy(&F, P, 4);
  return F;
}

std::string hexBytes(const uint8_t *P, size_t N) {
  std::string S;
  char Buf[4];
  for (size_t I = N; I-- > 0;) { // little-endian: print the value's bytes most significant first
    std::snprintf(Buf, sizeof(Buf), "%02x", P[I]);
    S += Buf;
  }
  return S;
}

bool within(double E, double G, const Tolerance &T) {
  if (std::isnan(E) || std::isnan(G))
    return std::isnan(E) && std::isnan(G);
  if (E == G)
    return true; // equal infinities too
  if (std::isinf(E) || std::isinf(G))
    return false; // an infinity matches nothing else (|inf - x| <= rel * inf would hold)
  double Diff = std::fabs(G - E);
  if (T.K == Tolerance::Kind::Abs)
    return Diff <= T.Value;
  return Diff <= T.Value * std::max(std::fabs(E), std::fabs(G));
}

std::string describe(const uint8_t *E, const uint8_t *G, size_t Offset, unsigned Width) {
  char Buf[160];
  std::string Head = "byte " + std::to_string(Offset);
  if (Width == 4 || Width == 8) {
    std::snprintf(Buf, sizeof(Buf), " (element %zu): expected %s (%.9g), got %s (%.9g)", Offset / Width,
                  hexBytes(E + Offset, Width).c_str(), element(E + Offset, Width), hexBytes(G + Offset, Width).c_str(),
                  element(G + Offset, Width));
    return Head + Buf;
  }
  std::snprintf(Buf, sizeof(Buf), ": expected %s, got %s", hexBytes(E + Offset, 1).c_str(),
                hexBytes(G + Offset, 1).c_str());
  return Head + Buf;
}

} // namespace

std::optional<std::string> firstMismatch(const uint8_t *Expected, const uint8_t *Got, size_t Size, const Tolerance &T) {
  size_t Whole = 0;
  if (T.K != Tolerance::Kind::Exact) {
    unsigned W = T.ElementBytes;
    Whole = Size / W * W;
    for (size_t Off = 0; Off < Whole; Off += W)
      if (std::memcmp(Expected + Off, Got + Off, W) != 0 &&
          !within(element(Expected + Off, W), element(Got + Off, W), T))
        return describe(Expected, Got, Off, W);
  }
  if (std::memcmp(Expected + Whole, Got + Whole, Size - Whole) == 0)
    return std::nullopt;
  size_t Off = Whole;
  while (Expected[Off] == Got[Off])
    ++Off;
  // Exact: show the aligned 4-byte word around the first differing byte when it fits.
  size_t Word = Off / 4 * 4;
  if (T.K == Tolerance::Kind::Exact && Word + 4 <= Size)
    return describe(Expected, Got, Word, 4);
  return describe(Expected, Got, Off, 1);
}

std::vector<MappedRange> granuleRanges(const std::vector<capture::AddressRange> &Allocs, uint64_t Granule) {
  std::vector<MappedRange> Rs;
  for (const capture::AddressRange &A : Allocs) {
    if (A.Size == 0)
      continue;
    uint64_t Start = A.Base & ~(Granule - 1);
    uint64_t End = (A.Base + A.Size + Granule - 1) & ~(Granule - 1);
    Rs.push_back({Start, End - Start});
  }
  std::sort(Rs.begin(), Rs.end(), [](const MappedRange &A, const MappedRange &B) { return A.Start < B.Start; });
  std::vector<MappedRange> Out;
  for (const MappedRange &R : Rs) {
    if (!Out.empty() && R.Start <= Out.back().Start + Out.back().Size) {
      uint64_t End = std::max(Out.back().Start + Out.back().Size, R.Start + R.Size);
      Out.back().Size = End - Out.back().Start;
    } else {
      Out.push_back(R);
    }
  }
  return Out;
}

std::vector<MappedRange> uncovered(const std::vector<MappedRange> &Mapped,
                                   const std::vector<capture::AddressRange> &Allocs) {
  std::vector<capture::AddressRange> Sorted(Allocs);
  std::sort(Sorted.begin(), Sorted.end(),
            [](const capture::AddressRange &A, const capture::AddressRange &B) { return A.Base < B.Base; });
  std::vector<MappedRange> Out;
  for (const MappedRange &M : Mapped) {
    uint64_t At = M.Start, End = M.Start + M.Size;
    for (const capture::AddressRange &A : Sorted) {
      uint64_t AEnd = A.Base + A.Size;
      if (AEnd <= At || A.Base >= End)
        continue;
      if (A.Base > At)
        Out.push_back({At, A.Base - At});
      At = std::max(At, AEnd);
    }
    if (At < End)
      Out.push_back({At, End - At});
  }
  return Out;
}

bool allBytesAre(const std::vector<uint8_t> &Bytes, uint8_t B) {
  return !Bytes.empty() && std::all_of(Bytes.begin(), Bytes.end(), [B](uint8_t X) { return X == B; });
}

uint64_t median(std::vector<uint64_t> V) {
  if (V.empty())
    return 0;
  std::sort(V.begin(), V.end());
  size_t N = V.size();
  return N % 2 ? V[N / 2] : (V[N / 2 - 1] + V[N / 2]) / 2;
}

uint64_t steadyDirtyBytes(uint64_t WrittenBytes, uint64_t FootprintBytes, uint64_t L2Bytes) {
  if (!WrittenBytes || !FootprintBytes)
    return 0;
  if (FootprintBytes <= L2Bytes)
    return std::min(WrittenBytes, FootprintBytes);
  return rotateDirtyBytes(WrittenBytes, FootprintBytes, L2Bytes);
}

uint64_t rotateDirtyBytes(uint64_t WrittenBytes, uint64_t FootprintBytes, uint64_t L2Bytes) {
  if (!WrittenBytes || !FootprintBytes)
    return 0;
  WrittenBytes = std::min(WrittenBytes, FootprintBytes);
  return static_cast<uint64_t>(static_cast<long double>(WrittenBytes) * L2Bytes / FootprintBytes);
}

uint32_t rotationSets(uint64_t FootprintBytes, uint64_t L2Bytes, uint32_t MaxSets) {
  if (!FootprintBytes)
    return 0;
  uint64_t Others = std::max<uint64_t>(1, 2 * L2Bytes / FootprintBytes);
  return static_cast<uint32_t>(std::min<uint64_t>(Others, MaxSets));
}

std::vector<uint32_t> placementsBefore(uint32_t Timed, uint32_t Others, uint32_t Total) {
  std::vector<uint32_t> Out;
  if (!Total)
    return Out;
  Others = std::min(Others, Total - 1);
  for (uint32_t K = Others; K >= 1; --K)
    Out.push_back((Timed + Total - K % Total) % Total);
  return Out;
}

std::vector<uint32_t> trainPlacements(const std::vector<uint32_t> &Before, uint32_t Length) {
  const size_t M = Before.size();
  if (!M)
    return {};
  const size_t N = std::max<size_t>(Length, M);
  std::vector<uint32_t> Out(N);
  // Out's last element is Before's last, the one before it Before's one before, and so on, cyclically.
  for (size_t I = 0; I < N; ++I)
    Out[N - 1 - I] = Before[M - 1 - I % M];
  return Out;
}

std::optional<uint64_t> firstStoredPointer(const uint8_t *Data, size_t Size,
                                           const std::vector<capture::AddressRange> &Allocs) {
  uint64_t Lo = UINT64_MAX, Hi = 0; // most words (data) lie outside [Lo, Hi): one comparison each
  for (const capture::AddressRange &A : Allocs)
    Lo = std::min(Lo, A.Base), Hi = std::max(Hi, A.Base + A.Size);
  std::vector<capture::FoundPointer> Found =
      capture::scanPointers(Data, Size, [&](uint64_t V) -> std::optional<capture::AddressRange> {
        if (V < Lo || V >= Hi)
          return std::nullopt;
        for (const capture::AddressRange &A : Allocs)
          if (V >= A.Base && V - A.Base < A.Size)
            return A;
        return std::nullopt;
      });
  if (Found.empty())
    return std::nullopt;
  return Found.front().Offset;
}

} // namespace replay
} // namespace kloop
