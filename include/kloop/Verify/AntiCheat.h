//===- kloop/Verify/AntiCheat.h - Checks against planted cheats ------------===//
///
/// \file
/// Pure functions over captures that catch the ways reported speed-ups have
/// been faked (DESIGN.md "Lessons from the field"; docs/verify.md):
///  (a) an output left unwritten, entirely or in part (poison still there);
///  (b) NaN where the baseline has a number (precision lowered, overflow);
///  (c) a capture missing in the candidate, a target kernel launched a
///      different number of times, or a kernel the baseline never launched
///      (work moved elsewhere, results cached between launches);
///  (d) determinism: the same seed run twice gives equal hashes per output,
///      and the candidate must stay deterministic where the baseline was;
///  (e) a target kernel launched on a different stream than the baseline's
///      (work moved to another stream, where timing on the default stream
///      does not see it);
///  (f) device memory leaked: more bytes still allocated at exit than the
///      baseline left.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_VERIFY_ANTICHEAT_H
#define KLOOP_VERIFY_ANTICHEAT_H

#include "kloop/Verify/Profile.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <string>
#include <vector>

namespace kloop {
namespace verify {

struct OutputSpec;
enum class DType;

/// Kind of an anti-cheat finding.
enum class FindingKind {
  /// (a) output elements still hold the poison pattern.
  UnwrittenOutput,
  /// (b) NaN in the candidate where the baseline has a number.
  NewNaN,
  /// (c) the baseline captured a launch the candidate did not.
  MissingCapture,
  /// (c) the candidate captured a launch the baseline did not.
  ExtraCapture,
  /// (c) a target kernel was launched a different number of times.
  LaunchCountChanged,
  /// (c) the candidate launches a kernel the baseline never launched.
  NewKernel,
  /// The candidate's buffer size differs from the baseline's.
  SizeChanged,
  /// A captured argument that is not a checked output differs bitwise
  /// (non-fatal: inputs and workspaces may legitimately differ).
  OtherArgumentChanged,
  /// (e) a target launch ran on a different stream than the baseline's.
  StreamChanged,
  /// (f) the candidate left more device memory allocated at exit.
  MemoryLeak,
};

/// "unwritten-output", "new-nan", "missing-capture", "extra-capture",
/// "launch-count-changed", "new-kernel", "size-changed",
/// "other-argument-changed", "stream-changed", "memory-leak".
llvm::StringRef findingKindName(FindingKind K);

/// One anti-cheat finding.
struct Finding {
  FindingKind Kind = FindingKind::MissingCapture;
  /// Refuses the candidate (all kinds but OtherArgumentChanged).
  bool Fatal = true;
  /// Kernel key name, ordinal and arg concerned (where they apply).
  std::string Kernel;
  uint64_t KernelOrdinal = 0;
  uint64_t Arg = 0;
  /// One sentence, e.g. "saxpy #3 arg 1: output not fully written: 512 of
  /// 4096 elements still poison".
  std::string Message;
};

/// The poison byte patterns of libkloop-cupti.so (KLOOP_CUPTI_POISON=nan and
/// =sentinel).
inline constexpr uint8_t PoisonNaNByte = 0xFF, PoisonSentinelByte = 0xA5;

/// True when all bytes of \p Element are 0xFF, or all are 0xA5.
bool isPoisonElement(llvm::ArrayRef<uint8_t> Element);

/// (a) Counts the elements of \p Candidate (element size \p ElementSize bytes)
/// that are poison (isPoisonElement) while the baseline's element at the same
/// index is not: a region the baseline also leaves unwritten, or a legitimate
/// value that happens to look like poison in both (e.g. i32 -1), is not
/// counted. \p Baseline may be empty (no baseline dump): then every poison
/// element counts. Sizes must match when \p Baseline is non-empty (asserted;
/// compareBuffers checks first).
uint64_t countLeftPoison(llvm::ArrayRef<uint8_t> Candidate,
                         llvm::ArrayRef<uint8_t> Baseline, size_t ElementSize);

/// True when \p Bytes (length \p Size) hashes like a buffer made entirely of
/// one poison pattern: lets a fully unwritten output be caught from the capture
/// hash alone, without a dump.
bool hashIsAllPoison(uint64_t Hash, uint64_t Size);

/// What makes a baseline output useless as a reference (vacuousOutput()).
enum class VacuousOutput {
  /// The output holds information: compare it.
  No,
  /// Every element is NaN (f16/f32/f64): under abs, rel and ulp two NaNs
  /// match, and a NaN's bytes say nothing about the computation, so any
  /// candidate that also ends in NaN would pass.
  AllNaN,
  /// The buffer was poisoned and every element still holds a poison pattern
  /// (isPoisonElement): the kernel wrote nothing to it, or copied back what
  /// it read.
  AllPoison,
};

/// Classifies the baseline's output \p Bytes (elements of \p Type), poisoned
/// before its launch when \p Poisoned. AllPoison is checked first (the 0xFF
/// pattern is also NaN). Without poisoning the poison patterns are ordinary
/// values (an i32 -1, the f32 -2.9e-16 of 0xA5A5A5A5). An empty buffer is No.
VacuousOutput vacuousOutput(llvm::ArrayRef<uint8_t> Bytes, DType Type,
                            bool Poisoned);

/// The same from the capture hash (bufferHash) of a \p Size byte buffer alone: AllPoison
/// when \p Poisoned and hashIsAllPoison(); AllNaN when \p Type is a float
/// type and the buffer is all 0xFF bytes (NaN in f16, f32 and f64). Other
/// all-NaN buffers (computed NaNs have other bytes) need the dump.
VacuousOutput vacuousOutputFromHash(uint64_t Hash, uint64_t Size, DType Type,
                                    bool Poisoned);

/// (b) Counts elements that are NaN in \p Candidate but not in \p Baseline
/// (same sizes, asserted); with \p SkipPoison, elements that countLeftPoison()
/// counts are skipped (they are reported as unwritten instead). Zero for
/// integer dtypes.
uint64_t countNewNaNs(llvm::ArrayRef<uint8_t> Candidate,
                      llvm::ArrayRef<uint8_t> Baseline, DType Type,
                      bool SkipPoison);

/// (c) Launch counts: for every kernel of \p Baseline whose names match one of
/// \p TargetKernels (kernelMatches), a finding when \p Candidate launched it a
/// different number of times; and a finding for every kernel (target or not)
/// that \p Candidate launches and \p Baseline never did.
std::vector<Finding> checkLaunchCounts(const Profile &Baseline,
                                       const Profile &Candidate,
                                       llvm::ArrayRef<std::string> TargetKernels);

/// (e) Streams: stream ids are numbered per profile in order of first use
/// (CUPTI's ids are not comparable between processes), and every launch of a
/// target kernel (matching \p TargetKernels, kernelMatches) must run on the
/// stream of the same number as the baseline's launch of the same ordinal.
/// One finding per kernel whose launches moved, naming the first one.
/// Launches only one side has are left to checkLaunchCounts().
std::vector<Finding> checkStreams(const Profile &Baseline,
                                  const Profile &Candidate,
                                  llvm::ArrayRef<std::string> TargetKernels);

/// (f) Leaks: a finding when both profiles report their memory use
/// (MemoryUse::Known) and the candidate's live bytes at exit exceed the
/// baseline's. Memory a program never frees before exit is allowed as long as
/// the baseline left as much.
std::vector<Finding> checkLeaks(const Profile &Baseline,
                                const Profile &Candidate);

/// (d) Determinism of one output over two runs with the same seed.
struct OutputDeterminism {
  /// "<kernel> arg <n>", with the OutputSpec's kernel name.
  std::string Output;
  /// Launches captured in the first run.
  uint64_t Launches = 0;
  /// Launches whose hashes differ, or that only one run captured.
  uint64_t DifferingLaunches = 0;
  /// DifferingLaunches == 0 and Launches > 0.
  bool Deterministic = false;
};

/// (d) Compares two runs of the same build with the same seed, per output.
/// Errors: an output with no capture in \p RunA.
llvm::Expected<std::vector<OutputDeterminism>>
checkDeterminism(const Profile &RunA, const Profile &RunB,
                 llvm::ArrayRef<OutputSpec> Outputs);

/// (d) Baseline against candidate determinism, per output.
struct DeterminismComparison {
  std::string Output;
  bool BaselineDeterministic = false, CandidateDeterministic = false;
  /// The baseline was deterministic and the candidate is not.
  bool Regressed = false;
  /// e.g. "saxpy arg 1: baseline bitwise deterministic, candidate not (3 of
  /// 20 launches differ)".
  std::string Message;
};

/// Pairs the two lists by Output name. An output missing from \p Candidate
/// counts as not deterministic there.
std::vector<DeterminismComparison>
compareDeterminism(llvm::ArrayRef<OutputDeterminism> Baseline,
                   llvm::ArrayRef<OutputDeterminism> Candidate);

} // namespace verify
} // namespace kloop

#endif
