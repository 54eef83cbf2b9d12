//===- CaptureSupport.h - host-only helpers of libkloop-cupti -------------===//
//
// Everything libkloop-cupti.so decides without a GPU (the hash of captured bytes is kloop/Support/BufferHash.h): which kernel
// parameters are pointers (from the demangled signature), the parsing of the KLOOP_CUPTI_* variables, the
// map of live device allocations and which GPU processes are foreign. Kept free of CUDA headers so it is
// unit-tested on CI machines.
//
//===----------------------------------------------------------------------===//
#ifndef KLOOP_TOOLS_KLOOP_CUPTI_CAPTURESUPPORT_H
#define KLOOP_TOOLS_KLOOP_CUPTI_CAPTURESUPPORT_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kloop {
namespace cupti {

/// Formats \p Value as exactly 16 lower-case hexadecimal digits (the "hash" field of a capture).
std::string hex16(uint64_t Value);

/// Formats a device address as "0x" followed by lower-case hex digits, no padding (the "ptr" field).
std::string hexPointer(uint64_t Value);

/// Demangles an Itanium C++ symbol with the C++ runtime's demangler; returns \p Mangled unchanged when it
/// is not a mangled name (extern "C" kernels) or demangling fails.
std::string demangle(const std::string &Mangled);

/// One parameter of a kernel as read from its demangled signature.
struct SignatureParam {
  /// The parameter's type as the demangler prints it, trimmed (e.g. "float const*").
  std::string Type;
  /// True when the type is a data pointer (ends in '*' after dropping cv/restrict qualifiers). Function
  /// pointers and references are not data pointers.
  bool IsPointer = false;
};

/// Reads the parameter list of a demangled function name such as
/// "void scale<128>(float*, float const*, int)" or "saxpy(int, float, float const*, float*)".
/// Returns std::nullopt when \p Demangled has no parameter list (an extern "C" kernel's plain name) or the
/// parentheses do not balance. A kernel without parameters gives an empty vector.
std::optional<std::vector<SignatureParam>> parseSignature(const std::string &Demangled);

/// Splits \p Text at commas, trims blanks around each item and drops empty items ("a, ,b" -> {a, b}).
std::vector<std::string> splitList(const std::string &Text);

/// True when any of \p Targets is a substring of \p DemangledName (KLOOP_CUPTI_TARGETS semantics:
/// an empty list matches nothing).
bool matchesTarget(const std::vector<std::string> &Targets, const std::string &DemangledName);

/// One entry of KLOOP_CUPTI_POISON_ARGS or KLOOP_CUPTI_DUMP_ARGS: "N" (parameter N of every target
/// kernel) or "SUBSTR:N" (parameter N of target kernels whose demangled name contains SUBSTR). N counts
/// parameters from 0.
struct PoisonArg {
  /// Empty for "N": applies to every target kernel.
  std::string KernelSubstring;
  /// Zero-based parameter index.
  unsigned Arg = 0;
};

/// Parses a list of parameters (comma-separated PoisonArg entries) read from environment variable
/// \p Var (KLOOP_CUPTI_POISON_ARGS or KLOOP_CUPTI_DUMP_ARGS). On a malformed entry returns std::nullopt
/// and sets \p Error to a message naming \p Var, the entry and the reason.
std::optional<std::vector<PoisonArg>> parsePoisonArgs(const std::string &Text, std::string &Error,
                                                      const char *Var = "KLOOP_CUPTI_POISON_ARGS");

/// True when \p Spec names parameter \p Arg of the kernel called \p DemangledName (a parameter to
/// poison, or to dump).
bool shouldPoison(const std::vector<PoisonArg> &Spec, const std::string &DemangledName, unsigned Arg);

/// The byte written over poisoned buffers for KLOOP_CUPTI_POISON: "nan" -> 0xFF (every f32/f64 made of
/// 0xFF bytes is a NaN), "sentinel" -> 0xA5. Returns std::nullopt for any other value; "" and "none"
/// mean "no poisoning" and also return std::nullopt with \p Error left empty.
std::optional<uint8_t> parsePoisonMode(const std::string &Text, std::string &Error);

/// Expands "%p" in KLOOP_CUPTI_OUT to \p Pid (so that several processes sharing one environment each
/// write their own file); "%%" gives a literal '%'.
std::string expandOutputPath(const std::string &Pattern, long Pid);

/// File name (no directory) of a dump: "<basename of the JSON>.k<seq>.a<arg>.bin", for example
/// "run.json.k3.a1.bin" for JSON "/tmp/run.json", launch 3, parameter 1.
std::string dumpFileName(const std::string &JsonPath, uint64_t Seq, unsigned Arg);

/// Directory part of \p Path ("." when it has none).
std::string directoryOf(const std::string &Path);

/// Parses an unsigned decimal integer; std::nullopt on empty input, junk or overflow.
std::optional<uint64_t> parseUnsigned(const std::string &Text);

/// Most process ids of foreign processes kept per NVML sample ("foreign_pids"); the count is exact.
constexpr size_t MaxForeignPids = 8;

/// The processes that have a compute context on the GPU, sorted by whose they are.
struct ProcessCensus {
  /// Distinct processes listed (the workload's own included).
  uint64_t Compute = 0;
  /// Of those, processes outside the workload's process group: foreign GPU load.
  uint64_t Foreign = 0;
  /// The first MaxForeignPids of their process ids, in the order listed.
  std::vector<unsigned> ForeignPids;
};

/// Sorts \p Pids (nvmlDeviceGetComputeRunningProcesses; a pid listed twice, once per MIG compute instance,
/// counts once) into the workload's and foreign ones. \p OwnGroup is the workload's process group
/// (getpgid(0) in the workload: kloop runs each workload and its children in a process group of their own);
/// \p GroupOf returns a pid's process group, or -1 when that process is not visible here (another PID
/// namespace, or gone), which counts as foreign: the GPU is shared with something we cannot see.
ProcessCensus censusProcesses(const std::vector<unsigned> &Pids, long OwnGroup,
                              const std::function<long(unsigned)> &GroupOf);

/// Live device allocations, keyed by base address: base -> size in bytes. Not thread safe (the caller
/// holds its lock).
class AllocationMap {
public:
  /// A live allocation: [Base, Base + Size).
  struct Range {
    uint64_t Base = 0;
    uint64_t Size = 0;
  };
  /// Records an allocation; a later allocation at the same base replaces the earlier one. Size 0 is ignored.
  void insert(uint64_t Base, uint64_t Size);
  /// Forgets the allocation starting at \p Base; returns false when none starts there.
  bool erase(uint64_t Base);
  /// The allocation containing \p Address (Base <= Address < Base + Size), if any.
  std::optional<Range> find(uint64_t Address) const;
  /// Number of live allocations.
  size_t size() const { return Live.size(); }
  /// Sum of the sizes of the live allocations (bytes).
  uint64_t bytes() const { return LiveBytes; }
  /// Largest value bytes() has had (bytes).
  uint64_t peakBytes() const { return PeakBytes; }

private:
  std::map<uint64_t, uint64_t> Live;
  uint64_t LiveBytes = 0;
  uint64_t PeakBytes = 0;
};

} // namespace cupti
} // namespace kloop

#endif // KLOOP_TOOLS_KLOOP_CUPTI_CAPTURESUPPORT_H
