//===- kloop/Measure/Config.h - The workload description (.kloop.yaml) ---===//
///
/// \file
/// The workload description a user writes next to their CUDA sources: how to
/// build and run the workload, which kernels are targets, the shapes to run,
/// the tolerance of each output, and which seeds and shapes are held out for
/// final acceptance. The schema is documented field by field in
/// docs/kloop-yaml.md; it is read with llvm::yaml (YAMLTraits).
///
/// Every error names the file, the line and column llvm::yaml reports, and
/// the field, e.g.
///   `w/.kloop.yaml:7:3: error: build.timeout_s: expected a non-negative integer, got '-5'`.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_MEASURE_CONFIG_H
#define KLOOP_MEASURE_CONFIG_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kloop/Verify/Compare.h"

namespace kloop {
namespace measure {

/// How an output is compared against the baseline's: kloopVerify's kinds and
/// tolerance (include/kloop/Verify/Compare.h documents their meaning), so the
/// YAML and the comparison can never disagree.
using ToleranceKind = verify::ToleranceKind;
using Tolerance = verify::Tolerance;

/// Whether the target kernel also reads an output buffer (`outputs[i].access`).
/// kloop compare poisons write-only outputs (NaN bytes) before every captured
/// launch, so that a candidate that leaves elements unwritten is caught. A
/// kernel that reads the buffer (C = alpha*A*B + beta*C) would then compute
/// from the poison on both sides, and NaN would "match" NaN (DESIGN.md,
/// "Lessons from the field"): such outputs are declared ReadWrite and are not
/// poisoned; they are still captured after each launch and compared.
enum class OutputAccess {
  Write,     ///< `write` (the default): written only, poisoned before each captured launch
  ReadWrite, ///< `readwrite`: read and written by the kernel, never poisoned
};

/// Spelling of \p A as in the YAML: "write", "readwrite".
llvm::StringRef toString(OutputAccess A);

/// An output buffer of a target kernel (`outputs[i]`).
struct OutputSpec {
  /// Kernel name, matched like `targets` (substring of the demangled name).
  std::string Kernel;
  /// Zero-based index of the pointer parameter holding the output.
  unsigned Arg = 0;
  /// Element type: one of f16 f32 f64 i32 u8 bytes (what kloopVerify compares).
  std::string DType;
  Tolerance Tol;
  /// Whether the kernel reads the buffer too (decides poisoning).
  OutputAccess Access = OutputAccess::Write;
};

/// Cache-residency policy between timed launches (`l2`). DESIGN: a figure
/// above the measured copy ceiling is a measurement error, usually L2 reuse.
enum class L2Policy {
  Rotate, ///< the workload rotates its buffers itself
  Flush,  ///< kloop must flush L2 between timed launches
  None,   ///< nothing is done: timings may include L2 hits
};

/// Spelling of \p P as in the YAML: "rotate", "flush", "none".
llvm::StringRef toString(L2Policy P);

/// Which CUPTI activity kind times the kernels (`tracing`, KLOOP_CUPTI_KERNEL_TRACE).
/// Measured on the H200 (bench/overhead/run.sh, docs/results.md): under Concurrent
/// tracing the same saxpy ran 6.5% slower at 65,536 blocks of 256 threads and 0.2%
/// at 131,072 blocks of 128, so the speed-up between two launch configurations was
/// biased by up to 5.8%; under Serial tracing the ratios of kernel durations across
/// those launch configurations stayed within 0.9% of the untraced ratios, at the
/// cost of 1.4-2.5 us more per launch in back-to-back launches; part of it is inside
/// the timed durations (they exceeded the untraced per-launch time by up to 0.55 us),
/// a near-constant offset that compresses ratios toward 1, which is conservative.
enum class KernelTrace {
  Serial,     ///< CUPTI_ACTIVITY_KIND_KERNEL (the default): kernels are serialized
  Concurrent, ///< CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: concurrent kernels overlap
};

/// Spelling of \p T as in the YAML: "serial", "concurrent".
llvm::StringRef toString(KernelTrace T);

struct WorkloadConfig;

/// "" when discarding \p Warmup launches of each target per run leaves samples
/// in a run of \p C (Warmup < iters), else the usage error that says so.
std::string warmupProblem(unsigned Warmup, const WorkloadConfig &C);

/// One shape/variant of the workload (`shapes[i]`).
struct ShapeSpec {
  /// Unique among the shapes; used by `--shape` and in reports.
  std::string Name;
  /// Placeholder values for run.command, e.g. {n: "16777216"} makes `{n}` expand.
  std::map<std::string, std::string> Args;
  /// DRAM bytes moved per launch of the target kernel, when declared.
  std::optional<uint64_t> Bytes;
  /// Floating-point operations per launch of the target kernel, when declared.
  std::optional<uint64_t> Flops;
  /// Used only for final acceptance, never during search.
  bool HeldOut = false;
};

/// A command with its limits (`build` and `run`).
struct CommandSpec {
  /// Shell command (run by /bin/sh -c) with `{placeholder}`s; see expandCommand.
  std::string Command;
  /// Working directory, relative to the source directory unless absolute.
  /// Placeholders {build_dir} and {source_dir} are expanded. Default ".".
  std::string Cwd = ".";
  /// Extra environment variables, added to (and overriding) kloop's own.
  std::map<std::string, std::string> Env;
  /// Wall-clock limit in seconds (build default 600, run default 120).
  unsigned TimeoutS = 0;
  /// `run.drain_timeout_s` (run only): after a run that did not end Ok, how
  /// long kloop may take to reap the run's processes and see the GPU drained
  /// before it stops the measurement (RunRequest::DrainTimeoutS), seconds,
  /// 1..3600. Default 30: a killed kernel-spinning process left the GPU in
  /// 0.25-0.5 s on an H200, so 30 s only passes when something is wrong.
  unsigned DrainTimeoutS = 30;
};

/// `search.timing`: how `kloop optimize` times its search steps (docs/kloop-yaml.md, docs/optimize.md).
enum class SearchTiming {
  /// Replay when the workload can be captured; workload runs otherwise. The default.
  Auto,
  /// Replay; a workload that cannot be captured stops the run with the capture's error.
  Replay,
  /// Every search step runs the workload program (`kloop compare`), no capture.
  Workload,
};

/// "auto", "replay" or "workload".
llvm::StringRef searchTimingName(SearchTiming T);

/// `search:`: how `kloop optimize` evaluates search candidates.
struct SearchSpec {
  SearchTiming Timing = SearchTiming::Auto;
  /// Shell command that compiles the source directory's kernels into one cubin for the replay worker;
  /// placeholders {source_dir} and {cubin} (the file to write). "" = the default: `nvcc -cubin
  /// -arch=native -o {cubin} {source_dir}/SRC` when `sources` lists exactly one `.cu` file.
  std::string CubinCommand;
  /// `search.replay_l2`: the L2 state the replay worker times each launch from (capture::isL2Mode;
  /// docs/capture.md, "The L2 before a timed launch"). Default "": the mode that matches the workload's
  /// own `l2` (replayL2Of).
  std::string ReplayL2;
  /// `search.replay_placements`: the placements the replay worker times each launch at, in turn
  /// (capture::ReplayOptions::Placements; docs/capture.md, "Placements"): 1 to 16. Default 4, so that a
  /// replayed search step's interval, like a workload compare's over its timing rounds, holds what the
  /// place of the buffers in device memory changes.
  unsigned ReplayPlacements = 4;
  /// `search.replay_train`: with replay L2 "rotate-sets", the launches the replay worker queues back to
  /// back before each timed launch on the other buffer sets (capture::ReplayOptions::Train; docs/capture.md,
  /// "Back to back"), 0 to capture::MaxTrain. Default 8: on the H200, layernorm r4096c4096's vectorized
  /// candidate measured 0.934x against its baseline with none, 0.920x with 3, 0.906x with 8 and 0.903x
  /// with 32, and 0.890x in the program's own timed loop (docs/results.md, "Twenty-eighth GPU session").
  unsigned ReplayTrain = 8;
};

/// The whole workload description.
struct WorkloadConfig {
  /// Absolute path of the file it was read from ("<memory>" for strings).
  std::string Path;
  /// Directory of the file: the default source directory.
  std::string Dir;

  unsigned Version = 1;
  std::string Name;
  /// Files kloop may edit, relative to the source directory.
  std::vector<std::string> Sources;
  /// Files whose content must not change (hashed before/after).
  std::vector<std::string> Protected;
  CommandSpec Build;
  CommandSpec Run;
  /// Target kernel names: substrings of demangled kernel names.
  std::vector<std::string> Targets;
  /// Timed launches per run of the workload (the `{iters}` placeholder). Default 20.
  unsigned Iters = 20;
  /// Search seeds are 0..Seeds-1. Default 1.
  unsigned Seeds = 1;
  /// Held-out seeds are Seeds..Seeds+HeldOutSeeds-1, used only for acceptance. Default 0.
  unsigned HeldOutSeeds = 0;
  L2Policy L2 = L2Policy::None;
  /// `tracing`: how CUPTI times kernels. Default Serial.
  KernelTrace Tracing = KernelTrace::Serial;
  /// `placement_pad_mib`: the timing rounds of kloop compare shift the program's device allocations by
  /// 0 to this many MiB, in 2 MiB steps, one shift per round, the same on both sides (placementPadBytes in
  /// Runner.h). 0 or 2: no shift. Default 128.
  unsigned PlacementPadMiB = 128;
  std::vector<ShapeSpec> Shapes;
  std::vector<OutputSpec> Outputs;
  /// `search`: timing of kloop optimize's search steps.
  SearchSpec Search;

  /// The shape named \p Name, or nullptr.
  const ShapeSpec *findShape(llvm::StringRef Name) const;
  /// Search seeds followed by held-out seeds when \p IncludeHeldOut.
  std::vector<unsigned> seedList(bool IncludeHeldOut) const;
  /// True when \p DemangledName contains one of Targets.
  bool isTarget(llvm::StringRef DemangledName) const;
};

/// The deepest nesting of YAML collections parseConfig accepts: flow brackets
/// open at once, `- ` indicators opening sequences on one line, and (block
/// nesting) columns of indentation / 8. A workload description nests about 4
/// levels; 64 keeps llvm::yaml's recursion far from any stack limit.
constexpr unsigned MaxYamlNesting = 64;

/// Parses and validates YAML text \p Text. \p Path names the file in errors
/// and its directory becomes WorkloadConfig::Dir (made absolute).
/// Errors (llvm::StringError, all reported at once is not attempted: the first
/// one stops parsing): YAML syntax; unknown keys; missing name, build.command,
/// run.command, shapes[].name; version other than 1; duplicate shape names;
/// tolerance kind not in abs|rel|ulp|exact; negative or non-numeric numbers;
/// l2 not in rotate|flush|none; unknown dtype; access not in write|readwrite;
/// placeholders in run.command that some shape does not define; placeholders
/// in build.command other than {build_dir} {source_dir}; nesting deeper than
/// MaxYamlNesting (checked before llvm::yaml, which recurses once per level and
/// overflows the stack on a flow sequence nested 50,000 deep), naming the line.
llvm::Expected<WorkloadConfig> parseConfig(llvm::StringRef Text, llvm::StringRef Path);

/// Reads \p Path and calls parseConfig. Error when the file cannot be read.
llvm::Expected<WorkloadConfig> loadConfig(llvm::StringRef Path);

/// Values for placeholders. Entries without a value are unavailable: using
/// them is an error naming the field.
/// The replay worker's L2 mode for \p C: search.replay_l2 when set, else the state the workload's own
/// timed launches start from: `l2: rotate` -> "rotate-sets" (the kernel launched on other buffer sets
/// before each, as the workload does; "rotate", its model, when the sets cannot be used),
/// `l2: flush` -> "flush-dirty" (libkloop-cupti.so's flush writes twice the L2), `l2: none` -> "steady"
/// (the same buffers back to back). docs/capture.md, "The L2 before a timed launch".
std::string replayL2Of(const WorkloadConfig &C);

struct PlaceholderValues {
  std::optional<std::string> BuildDir;
  std::optional<std::string> SourceDir;
  std::optional<unsigned> Seed;
  std::optional<unsigned> Iters;
  /// Shape arguments, by placeholder name.
  std::map<std::string, std::string> Args;
};

/// Expands `{name}` placeholders in \p Template. Each value becomes exactly one
/// shell word: values with characters outside [A-Za-z0-9_./:=+,@%-] are single-
/// quoted. `{{` and `}}` are literal braces; `${VAR}` and `{a,b}` are left for
/// the shell. \p Field (e.g. "run.command") names the template in errors.
/// Error: an unknown or unavailable placeholder, or an unterminated `{`.
llvm::Expected<std::string> expandCommand(llvm::StringRef Template,
                                          const PlaceholderValues &Values,
                                          llvm::StringRef Field);

/// Like expandCommand but inserts values verbatim (no shell quoting): for
/// paths such as run.cwd that are used as paths, not shell words.
llvm::Expected<std::string> expandPath(llvm::StringRef Template,
                                       const PlaceholderValues &Values,
                                       llvm::StringRef Field);

/// Names of the placeholders used in \p Template, in order of first use
/// (same lexical rules as expandCommand).
std::vector<std::string> placeholdersIn(llvm::StringRef Template);

/// Quotes \p S for /bin/sh when needed (see expandCommand).
std::string shellQuote(llvm::StringRef S);

} // namespace measure
} // namespace kloop

#endif
