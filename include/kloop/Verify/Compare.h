//===- kloop/Verify/Compare.h - Candidate outputs against the baseline -----===//
///
/// \file
/// Compares a candidate's captured outputs with the baseline's, launch by
/// launch, with a tolerance per output (.kloop.yaml `outputs`), and runs the
/// anti-cheat checks of AntiCheat.h on the way. Rules and their justification:
/// docs/verify.md.
///
/// Tolerance semantics for one element pair (b = baseline, c = candidate):
///  - exact: the element's bytes are equal (bitwise; +0 != -0, NaN payloads
///    must match).
///  - abs:   |c - b| <= value.
///  - rel:   |c - b| <= value * max(|b|, |c|). Pure relative, no absolute
///    floor: a candidate that writes 0 where the baseline has 1 fails for any
///    value < 1 ("loose tolerances passing zeros"). Use abs or ulp for outputs
///    that are legitimately near zero.
///  - ulp:   the distance in units in the last place, counted as the
///    difference of the values' positions in the ordered sequence of
///    representable numbers of the dtype (f16/f32/f64), <= value. For i32 and
///    u8 it is |c - b|.
/// For abs, rel and ulp: two NaNs match (any payload); NaN against a number
/// never matches; equal infinities match.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_VERIFY_COMPARE_H
#define KLOOP_VERIFY_COMPARE_H

#include "kloop/Verify/AntiCheat.h"
#include "kloop/Verify/Profile.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kloop {
namespace verify {

/// Element type of an output buffer (.kloop.yaml outputs[].dtype).
enum class DType { F32, F64, F16, I32, U8 };

/// "f32", "f64", "f16", "i32", "u8".
llvm::StringRef dtypeName(DType T);
/// Parses a dtype name; "bytes" is accepted as u8. Errors name the string.
llvm::Expected<DType> parseDType(llvm::StringRef Name);
/// Size of one element, bytes.
size_t dtypeSize(DType T);

/// Kind of tolerance (.kloop.yaml outputs[].tolerance.kind).
enum class ToleranceKind { Abs, Rel, Ulp, Exact };

/// "abs", "rel", "ulp", "exact".
llvm::StringRef toleranceKindName(ToleranceKind K);
/// Parses a tolerance kind. Errors name the string.
llvm::Expected<ToleranceKind> parseToleranceKind(llvm::StringRef Name);

/// A tolerance: kind and value (absolute units of the dtype for abs, a
/// fraction for rel, a count for ulp, ignored for exact).
struct Tolerance {
  ToleranceKind Kind = ToleranceKind::Exact;
  double Value = 0;
};

/// One checked output (.kloop.yaml outputs[]).
struct OutputSpec {
  /// Kernel name as in the inventory; matched with kernelMatches().
  std::string Kernel;
  /// Index of the pointer argument that is the output.
  uint64_t Arg = 0;
  DType Type = DType::F32;
  Tolerance Tol;
};

/// The identifier of a kernel from its demangled name: the text before the
/// parameter list, without template arguments, namespace qualifiers or return
/// type. "void ns::saxpy<128>(int, float*)" -> "saxpy". Returns \p Demangled
/// unchanged when it has no parameter list.
std::string kernelBaseName(llvm::StringRef Demangled);

/// True when \p Spec (an inventory kernel name) names the kernel with mangled
/// name \p Mangled and demangled name \p Demangled: equal to the mangled name,
/// to the demangled name, or to its kernelBaseName().
bool kernelMatches(llvm::StringRef Spec, llvm::StringRef Mangled,
                   llvm::StringRef Demangled);

/// Element-wise comparison statistics of one buffer pair.
struct BufferComparison {
  /// Number of elements compared (bytes / dtypeSize).
  uint64_t Elements = 0;
  /// Elements outside the tolerance.
  uint64_t Mismatched = 0;
  /// Elements the candidate left as poison (see countLeftPoison()).
  uint64_t Poison = 0;
  /// Candidate NaNs where the baseline has a number, not counting poison
  /// elements (see countNewNaNs()).
  uint64_t NewNaNs = 0;
  /// Largest |c - b| and |c - b| / max(|b|,|c|) over elements where both are
  /// finite; largest ULP distance (f16/f32/f64; |c-b| for integers).
  double MaxAbsError = 0, MaxRelError = 0;
  uint64_t MaxUlpError = 0;
  /// Index of the first mismatching element and the two values there.
  std::optional<uint64_t> FirstMismatch;
  double FirstBaseline = 0, FirstCandidate = 0;
};

/// Compares two buffers of \p Type element-wise with \p Tol. When
/// \p CandidatePoisoned (the candidate's buffer was poisoned before its
/// launch), poison elements are counted in BufferComparison::Poison and left
/// out of NewNaNs; otherwise Poison is 0.
/// Errors: the sizes differ, or a size is not a multiple of dtypeSize(Type).
llvm::Expected<BufferComparison>
compareBuffers(llvm::ArrayRef<uint8_t> Baseline,
               llvm::ArrayRef<uint8_t> Candidate, DType Type, Tolerance Tol,
               bool CandidatePoisoned = false);

/// How a launch's output was compared.
enum class CompareMethod {
  /// Element-wise on the dumps of both sides.
  Dumps,
  /// On the capture hashes only (a dump was missing on one side).
  Hashes,
  /// The candidate has no capture for this launch.
  Missing,
};

/// The comparison of one output of one launch.
struct LaunchComparison {
  /// Key: kernel key name (see compareProfiles()), per-kernel ordinal, arg.
  std::string Kernel;
  uint64_t KernelOrdinal = 0;
  uint64_t Arg = 0;
  /// Global launch order on each side (CandidateSeq is 0 when Missing).
  uint64_t BaselineSeq = 0, CandidateSeq = 0;
  CompareMethod Method = CompareMethod::Missing;
  /// True when within tolerance (Dumps), equal hashes (Hashes).
  bool Matched = false;
  /// Element statistics (Method == Dumps only).
  std::optional<BufferComparison> Stats;
  /// One sentence, e.g. "saxpy #0 arg 1: 12 of 4096 elements outside rel
  /// 1e-05 (max rel error 3.1e-03, first at [7]: 1.5 vs 1.6)".
  std::string Message;
};

/// Everything compareProfiles() found.
struct CompareReport {
  /// One entry per (kernel, ordinal, arg) of the baseline's captures of the
  /// checked outputs, in baseline order.
  std::vector<LaunchComparison> Launches;
  /// Anti-cheat findings (poison, NaN, missing captures, launch counts, new
  /// kernels, other arguments changed).
  std::vector<Finding> Findings;
  /// Counts over Launches.
  uint64_t Matched = 0, Mismatched = 0;
  /// No mismatch and no fatal finding.
  bool Passed = false;
  /// The result in words: "outputs match: 20 launches of 1 output (20 by
  /// dumps)" or "outputs differ: <first reasons>".
  std::string Explanation;
};

/// Compares \p Candidate's captures of \p Outputs with \p Baseline's (same
/// seed, same shape), launch by launch, keyed on (kernel key name,
/// kernel_ordinal, arg). The kernel key name is kernelBaseName() of the
/// demangled name (so a re-instantiated template still matches), or the
/// mangled name when that base name is shared by several mangled kernels in
/// either profile. \p TargetKernels (inventory names) select the kernels whose
/// launch counts must not change; empty means the kernels of \p Outputs.
/// Captures of arguments not listed in \p Outputs are compared bitwise and a
/// difference is a non-fatal finding.
/// Errors (not verdicts): \p Outputs empty; an output with no baseline
/// capture (the check would be vacuous); an unreadable or corrupt dump.
llvm::Expected<CompareReport>
compareProfiles(const Profile &Baseline, const Profile &Candidate,
                llvm::ArrayRef<OutputSpec> Outputs,
                llvm::ArrayRef<std::string> TargetKernels = {});

} // namespace verify
} // namespace kloop

#endif
