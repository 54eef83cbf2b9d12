//===- kloop/Measure/Runner.h - One isolated run of a workload ------------===//
///
/// \file
/// Runs one build or workload invocation as a child process with a timeout,
/// its output captured to files, optionally under the kloop-cupti injection
/// library, and classifies what happened. A crash, hang, non-zero exit or a
/// missing/corrupt profile is a RunResult, never a failure of kloop (issue 4,
/// item 7).
///
/// Mechanism: the command string is run by `/bin/sh -c` (after `cd` into the
/// working directory) through kloop::spawnProcessGroup (kloop/Support/Process.h),
/// polled with waitpid. The shell runs in a process group of its own that dies
/// with kloop (even when kloop is killed with SIGKILL) and that is killed as a
/// whole at the timeout and when the shell ends, so nothing the workload or the
/// build started outlives the run (issue 12, item 7). The shell always waits for the command and
/// records its status in a file, so a workload killed by signal N is seen with
/// the shell's status 128+N and reported as crashed by signal N.
///
/// After every run the group is killed and reaped whole (reapProcessGroup):
/// kloop is a child subreaper, so nothing of the run is left as a zombie or
/// alive. With a GPU monitor (RunRequest::Gpu, GpuMonitor.h) the runner also
/// records which processes held the GPU before and after the run and, after a
/// run that did not end Ok, drains the GPU before it returns (docs/measure.md,
/// "Drain after a fault"; issue 17, item 1):
///  1. right after the kill, NVML's view: the processes not listed before the
///     run are what the failed run still holds (DrainReport::HeldAtStart);
///  2. the group is reaped;
///  3. waitForDrain until no process is listed that was not there before the
///     run and, on a device where none was, utilization is 0; at most
///     RunRequest::DrainTimeoutS seconds from the kill, else DirtyGpuError.
/// Without NVML the runner reaps and then waits a fixed UnwatchedSettleS
/// seconds, and says so (DrainReport::Watched is false): it never claims
/// that the GPU drained.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_MEASURE_RUNNER_H
#define KLOOP_MEASURE_RUNNER_H

#include "kloop/Measure/Config.h"
#include "kloop/Measure/GpuMonitor.h"
#include "kloop/Verify/Profile.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kloop {
namespace measure {

/// Environment given to libkloop-cupti.so (the variables are listed in
/// docs/measure.md).
struct InjectionSettings {
  /// Absolute path of libkloop-cupti.so (CUDA_INJECTION64_PATH).
  std::string LibraryPath;
  /// Substrings of demangled kernel names whose outputs are captured
  /// (KLOOP_CUPTI_TARGETS, comma-joined). Empty: no capture.
  std::vector<std::string> Targets;
  /// Dump captured buffers next to the profile (KLOOP_CUPTI_DUMP=1).
  bool Dump = false;
  /// Poison output buffers before target launches: "" (off), "nan" or
  /// "sentinel" (KLOOP_CUPTI_POISON).
  std::string Poison;
  /// Further KLOOP_CUPTI_* variables, passed verbatim.
  std::map<std::string, std::string> Extra;
};

/// Adds what \p Policy asks of the injection library to \p I: for
/// L2Policy::Flush, KLOOP_CUPTI_L2_FLUSH=1 (libkloop-cupti.so then clears L2
/// before every kernel launch, see docs/cupti.md); nothing for Rotate (the
/// workload does it) or None.
void applyL2Policy(InjectionSettings &I, L2Policy Policy);

/// Sets KLOOP_CUPTI_KERNEL_TRACE in \p I to "serial" or "concurrent": the
/// CUPTI activity kind libkloop-cupti.so times kernels with (`tracing` in
/// .kloop.yaml; why Serial is the default: KernelTrace in Config.h).
void applyKernelTrace(InjectionSettings &I, KernelTrace Trace);

/// Bytes of device memory libkloop-cupti.so allocates before the program's own allocations in timing
/// round \p Round of seed \p Seed on shape index \p Shape, for `placement_pad_mib` \p MaxMiB: 2 MiB x k,
/// k in [0, MaxMiB / 2), k drawn by capture::placementPadBytes from the three packed in one key, so rounds
/// differ and a comparison can be repeated bit for bit. 0 when \p MaxMiB < 4 (nothing to vary).
/// Why vary it: the placement of a program's buffers in device memory moved one candidate's speed-up over
/// its baseline by 5% on the H200, the baseline's own time by under 2% (docs/results.md, "Twenty-fourth
/// GPU session"); one placement per comparison is one sample of that spread, taken as the whole truth.
uint64_t placementPadBytes(unsigned MaxMiB, size_t Shape, unsigned Seed, unsigned Round);

/// How many pads placementPadBytes chooses from for `placement_pad_mib` \p MaxMiB: capture::placementPadChoices
/// (MaxMiB / 2, or 0 when that is under 2: no placement varied), which the replay worker's pads share.
unsigned placementPadChoices(unsigned MaxMiB);

/// Sets KLOOP_CUPTI_PLACEMENT_PAD in \p I to \p Bytes (erased when 0; docs/cupti.md).
void applyPlacementPad(InjectionSettings &I, uint64_t Bytes);

/// "" when profile \p P says it was timed with \p Asked, else a sentence
/// naming the profile, the mode asked and the mode it reports (or that it
/// reports none: a libkloop-cupti.so older than KLOOP_CUPTI_KERNEL_TRACE).
std::string kernelTraceMismatch(const verify::Profile &P, KernelTrace Asked);

/// "" when every NVML sample of profile \p P says whether a foreign process
/// used the GPU (EnvSample::ForeignProcesses known), or when \p P has no NVML
/// samples (noted apart); else a sentence naming the profile and saying that
/// foreign GPU load was not checked in that run.
std::string foreignLoadUnknown(const verify::Profile &P);

/// What the profiles of one measurement or comparison say about themselves,
/// turned into notes: the first profile traced in another mode than \p Asked
/// (kernelTraceMismatch), the first one that reports errors or dropped
/// records (verify::profileProblems) and the first one whose NVML samples do
/// not tell foreign GPU load (foreignLoadUnknown), each noted once,
/// "(first such run)".
class ProfileNotes {
public:
  explicit ProfileNotes(KernelTrace Asked) : Asked(Asked) {}
  /// Appends to \p Notes what \p P adds that was not noted yet.
  void check(const verify::Profile &P, std::vector<std::string> &Notes);

private:
  KernelTrace Asked;
  bool TraceNoted = false, ProblemNoted = false, ForeignNoted = false;
};

/// One invocation to run.
struct RunRequest {
  /// Shell command, placeholders already expanded (see expandCommand).
  std::string Command;
  /// Working directory (absolute, must exist).
  std::string Cwd;
  /// Variables added to kloop's own environment (overriding it).
  std::map<std::string, std::string> Env;
  /// Wall-clock limit in seconds; must be > 0.
  unsigned TimeoutS = 60;
  /// Existing or creatable directory receiving <Label>.stdout, <Label>.stderr
  /// and, with injection, the profile <Label>.json (KLOOP_CUPTI_OUT).
  std::string OutDir;
  /// File stem for this run, e.g. "base-n16M-s0-r3". Letters, digits, '-',
  /// '_' and '.' only.
  std::string Label;
  /// When set, the run is injected and a profile is expected.
  std::optional<InjectionSettings> Inject;
  /// When set, the GPU is watched around the run and drained after a run that
  /// did not end Ok (file comment); an Ok run's profile that names its device
  /// (verify::DeviceInfo::PciBusId) makes the monitor watch that device. Not
  /// owned; kept by the caller for all the runs of a measurement.
  GpuMonitor *Gpu = nullptr;
  /// Bound on the drain, seconds from the end of the run: reaping its group
  /// and waiting for the GPU (`run.drain_timeout_s`); must be > 0.
  unsigned DrainTimeoutS = 30;
};

/// Seconds the runner waits after reaping a failed run when NVML cannot tell
/// whether the GPU drained: twice the longest time a killed kernel-spinning
/// process stayed listed by NVML on an H200 (0.25-0.5 s, measured).
constexpr double UnwatchedSettleS = 1.0;

/// What the runner did about the GPU after a run that did not end Ok.
struct DrainReport {
  /// NVML watched the GPU. False: it could not (Unwatched says why) and the
  /// runner only waited UnwatchedSettleS after reaping the run's processes.
  bool Watched = false;
  /// Why NVML was not used ("" when Watched).
  std::string Unwatched;
  /// Seconds from the end of the run (the kill) until the GPU drained, or
  /// until the settle time ended.
  double Seconds = 0;
  /// Processes NVML listed right after the kill that it had not listed before
  /// the run (empty without NVML).
  std::vector<GpuProcess> HeldAtStart;
  /// Processes of the run's group that kloop reaped after the kill (those that
  /// died while their parent in the group still lived were reaped by it).
  unsigned Reaped = 0;
};

/// How a run ended. Ordered roughly by how far the run got.
enum class RunStatus {
  Ok,             ///< exit 0 and, when injected, a valid profile
  FailedToStart,  ///< the shell could not be started / cwd missing
  TimedOut,       ///< killed after TimeoutS seconds
  Crashed,        ///< killed by a signal (Signal says which)
  ExitedNonZero,  ///< exited with ExitCode != 0
  MissingProfile, ///< exit 0 but no profile file was written
  CorruptProfile, ///< exit 0 but the profile could not be parsed
};

/// Short name: "ok", "failed to start", "timed out", "crashed",
/// "exited non-zero", "missing profile", "corrupt profile".
llvm::StringRef toString(RunStatus S);

/// What happened to one run.
struct RunResult {
  RunStatus Status = RunStatus::FailedToStart;
  /// Exit status of the command (valid for Ok, ExitedNonZero and the profile
  /// statuses).
  int ExitCode = 0;
  /// Signal number for Crashed, else 0.
  int Signal = 0;
  /// Wall-clock duration of the child, seconds.
  double WallSeconds = 0;
  /// Paths of the captured output and of the expected profile ("" without
  /// injection).
  std::string StdoutPath, StderrPath, ProfilePath;
  /// Last lines of stderr (at most 20 lines / 4 KiB), for error messages.
  std::string StderrTail;
  /// Human-readable detail, e.g. "killed by signal 11 (SIGSEGV)" or the
  /// profile parser's error.
  std::string Detail;
  /// The parsed profile (kloopVerify's reader), for Ok runs with injection.
  std::optional<verify::Profile> Prof;
  /// True when NVML watched the GPU for this run (RunRequest::Gpu set and
  /// available, and every query worked): ForeignBefore and ForeignAfter are
  /// NVML's. False: they are empty and GpuUnwatched says why.
  bool GpuWatched = false;
  /// Why NVML did not watch the run ("" when GpuWatched or without RunRequest::Gpu).
  std::string GpuUnwatched;
  /// Compute processes NVML listed on the monitored devices just before the
  /// run started: none of them is the run's.
  std::vector<GpuProcess> ForeignBefore;
  /// Compute processes NVML listed after the run had ended and its group was
  /// reaped (after a failed run: once drained, so each of them was also in
  /// ForeignBefore). The run's own processes are gone by then; a process of it
  /// that NVML were slow to drop would appear here.
  std::vector<GpuProcess> ForeignAfter;
  /// Set after a run that did not end Ok and had RunRequest::Gpu.
  std::optional<DrainReport> Drain;

  bool ok() const { return Status == RunStatus::Ok; }
  /// One line: "<status>: <detail>" for reports.
  std::string describe() const;
};

/// Runs \p R and waits for it (at most R.TimeoutS seconds, then the drain).
/// Errors (kloop-side, not the workload's): OutDir cannot be created, Label
/// is invalid, TimeoutS or DrainTimeoutS is 0, or an output file cannot be
/// opened; DirtyGpuError when, with R.Gpu, the run's processes could not be
/// reaped or the GPU did not drain within R.DrainTimeoutS (the message names
/// the run, how it ended, the processes still listed with their MiB, the busy
/// devices and the bound).
llvm::Expected<RunResult> runIsolated(const RunRequest &R);

/// After runs made without R.Gpu (side by side, CompareOptions::VerifyJobs) of which one or more
/// failed: waits, at most \p DrainTimeoutS seconds, until \p M lists no process that \p Before (the
/// snapshot taken before those runs) did not (waitForDrain). DirtyGpuError when the GPU does not
/// drain, its message starting with \p Runs ("run base-s4-s0-cap exited non-zero: exit code 3")
/// like runIsolated's. Success when NVML cannot be queried: nothing is claimed, and the caller's
/// next run with R.Gpu looks again.
llvm::Error drainAfter(const GpuMonitor &M, const GpuSnapshot &Before, unsigned DrainTimeoutS,
                       llvm::StringRef Runs);

/// A note on what the drain after run \p Label did, "" when \p R has no
/// DrainReport: "run cand-n1M-s0-t0 timed out; waited 0.42 s for the GPU to
/// drain (pid 465, 1032 MiB)" ("no new process held it" when NVML listed
/// none), or, without NVML, "run ... crashed; the GPU was not checked (NVML
/// unavailable: <reason>); waited a fixed 1.00 s after reaping the run's
/// processes".
std::string drainNote(llvm::StringRef Label, const RunResult &R);

/// Where libkloop-cupti.so is looked for under kloop's installation prefix,
/// in order: lib/kloop (the installed layout, cmake/Install.cmake), lib (the
/// build tree, build/lib).
inline constexpr const char *CuptiLibrarySubdirs[] = {"lib/kloop", "lib"};

/// Finds libkloop-cupti.so: $KLOOP_CUPTI_LIB if set (must exist), else the
/// first of <prefix>/CuptiLibrarySubdirs[i]/libkloop-cupti.so that exists,
/// where <prefix> is kloop::installPrefix(\p Argv0, \p MainAddr).
/// Error naming every place looked at when it is not found.
llvm::Expected<std::string> findCuptiLibrary(const char *Argv0, void *MainAddr);

/// The last \p MaxLines lines (and at most \p MaxBytes bytes) of file \p Path;
/// "" when unreadable.
std::string tailOfFile(llvm::StringRef Path, size_t MaxLines = 20, size_t MaxBytes = 4096);

/// True when \p Text (a workload's stderr) says there is no usable CUDA
/// device: "no CUDA-capable device", "cudaErrorNoDevice",
/// "CUDA_ERROR_NO_DEVICE", "CUDA driver version is insufficient".
bool saysNoCudaDevice(llvm::StringRef Text);

} // namespace measure
} // namespace kloop

#endif
