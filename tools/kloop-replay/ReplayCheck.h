//===- ReplayCheck.h - host-only helpers of the replay worker -------------===//
//
// What kloop-replay decides without a GPU: the tolerance an output is checked with, the first element
// where a replayed buffer differs from the captured reference, and which device address ranges must be
// reserved to put the captured allocations back at their addresses. Free of CUDA headers, unit-tested in
// ReplayCheckTest.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef KLOOP_TOOLS_KLOOP_REPLAY_REPLAYCHECK_H
#define KLOOP_TOOLS_KLOOP_REPLAY_REPLAYCHECK_H

#include "kloop/Capture/Manifest.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kloop {
namespace replay {

/// How a written allocation is compared with its reference.
struct Tolerance {
  enum class Kind { Exact, Abs, Rel } K = Kind::Exact;
  /// The bound of Abs (|got - expected| <= Value) or Rel (<= Value * max(|got|, |expected|)).
  double Value = 0;
  /// Element type of Abs and Rel: 4 (f32) or 8 (f64) bytes, little-endian.
  unsigned ElementBytes = 4;
};

/// Parses "exact", "abs:X" or "rel:X", optionally followed by ",f32" or ",f64" (default f32).
/// False with \p Error naming the text on anything else (X must be a finite number >= 0).
bool parseTolerance(const std::string &Text, Tolerance &Out, std::string &Error);

/// "exact", "abs:1e-05,f32", ... (the inverse of parseTolerance).
std::string toleranceText(const Tolerance &T);

/// The first difference between \p Expected and \p Got (\p Size bytes each) under \p T, as
/// "byte 16 (element 4): expected 3f800000 (1), got 00000000 (0)"; std::nullopt when they match.
/// Exact compares bytes; Abs and Rel compare elements (two NaNs match, NaN against a number does not,
/// an infinity matches only the same infinity, as kloopVerify's tolerances do; docs/verify.md) and compare any trailing
/// bytes that do not fill an element exactly.
std::optional<std::string> firstMismatch(const uint8_t *Expected, const uint8_t *Got, size_t Size, const Tolerance &T);

/// A device address range to reserve and map: [Start, Start + Size), both multiples of the granularity.
struct MappedRange {
  uint64_t Start = 0;
  uint64_t Size = 0;
};

/// The ranges to reserve so that every allocation of \p Allocs lies in one: each allocation widened to
/// multiples of \p Granule (a power of two), overlapping or touching ranges merged, in address order.
std::vector<MappedRange> granuleRanges(const std::vector<capture::AddressRange> &Allocs, uint64_t Granule);

/// The parts of \p Mapped (sorted, disjoint) that no allocation of \p Allocs covers, in address order:
/// the slack the granularity adds around the captured allocations. Replay fills it with a pattern and
/// checks it after every launch, so that a write past the end of an allocation is seen.
std::vector<MappedRange> uncovered(const std::vector<MappedRange> &Mapped,
                                   const std::vector<capture::AddressRange> &Allocs);

/// True when \p Bytes is non-empty and every byte equals \p B (an output made only of poison).
bool allBytesAre(const std::vector<uint8_t> &Bytes, uint8_t B);

/// Median of \p V (mean of the two middle values for an even count); 0 when empty.
uint64_t median(std::vector<uint64_t> V);

/// Bytes of dirty lines that L2 (\p L2Bytes) holds when a launch starts right after another launch of
/// the same kernel on the same sizes, as in a workload's back-to-back timed launches (the `--l2 steady`
/// mode; docs/capture.md, "The L2 before a timed launch"). The previous launch touched \p FootprintBytes
/// bytes of allocations and wrote \p WrittenBytes of them (both bytes, WrittenBytes <= FootprintBytes):
/// when the footprint fits in L2 all its writes are still there, dirty; otherwise L2 keeps the last
/// L2Bytes of its traffic, of which the written share is dirty: WrittenBytes * L2Bytes / FootprintBytes.
/// A model, not a measurement: it assumes L2 keeps the most recently touched lines and that a launch's
/// reads and writes interleave evenly over its run. 0 when nothing is written or the footprint is 0.
uint64_t steadyDirtyBytes(uint64_t WrittenBytes, uint64_t FootprintBytes, uint64_t L2Bytes);

/// Bytes of dirty lines that L2 (\p L2Bytes) holds when a launch starts after launches of the same kernel
/// on other buffers, as in a workload that rotates buffer sets (`l2: rotate`; the `--l2 rotate` mode):
/// L2 is full of their traffic, of which the written share is dirty, whether or not one launch's
/// footprint fits: WrittenBytes * L2Bytes / FootprintBytes (WrittenBytes capped at FootprintBytes; bytes).
/// A model with the assumptions of steadyDirtyBytes. 0 when nothing is written or the footprint is 0.
uint64_t rotateDirtyBytes(uint64_t WrittenBytes, uint64_t FootprintBytes, uint64_t L2Bytes);

/// How many other buffer sets the `--l2 rotate-sets` mode launches a kernel on before each timed launch:
/// the other sets of a program that rotates through enough sets that the traffic between two launches on
/// one set exceeds twice L2 (floor(2 x \p L2Bytes / \p FootprintBytes) others, at least 1; the rule of
/// the bundled examples' harness, examples/common/harness.h rotation_sets, and DESIGN.md's issue 4), at
/// most \p MaxSets. 0 when the footprint is 0 (nothing to launch on).
uint32_t rotationSets(uint64_t FootprintBytes, uint64_t L2Bytes, uint32_t MaxSets);

/// The placements of a launch's allocations that `--l2 rotate-sets` launches a kernel on before a timed
/// launch at placement \p Timed, in launch order: the \p Others placements before \p Timed, cyclically
/// among \p Total (placement 0 is the mapping at the captured addresses, 1 to Total - 1 the copies at
/// other addresses; `--placements`, docs/capture.md, "Placements"). So the last launched is the one
/// before \p Timed, and with Total = Others + 1 and Timed = 0 they are the copies 1 to Others in order.
/// Empty when \p Others is 0; \p Others is capped at Total - 1 (no placement is launched twice).
std::vector<uint32_t> placementsBefore(uint32_t Timed, uint32_t Others, uint32_t Total);

/// The placements of a train of launches queued right before a timed launch (`--train`, docs/capture.md,
/// "Back to back"), in launch order: max(\p Length, Before's size) launches that end with the rotation
/// \p Before (placementsBefore's result) and, before it, walk \p Before backwards cyclically, as a
/// program's loop over its buffer sets runs many launches back to back. Never the timed placement: its
/// inputs stay as restored and its write-only outputs poisoned, so a candidate cannot find the result of
/// an earlier launch there. Empty when \p Before is (no other placement to launch on).
std::vector<uint32_t> trainPlacements(const std::vector<uint32_t> &Before, uint32_t Length);

/// The offset (bytes) of the first 8-byte aligned word of \p Size bytes at \p Data whose value is an
/// address inside one of \p Allocs: a pointer stored in device memory (an array of pointers, a linked
/// structure). Copies of such an allocation at other addresses would still point into the original ones,
/// so the `rotate-sets` mode does not use them. std::nullopt when no word is one.
std::optional<uint64_t> firstStoredPointer(const uint8_t *Data, size_t Size,
                                           const std::vector<capture::AddressRange> &Allocs);

} // namespace replay
} // namespace kloop

#endif
