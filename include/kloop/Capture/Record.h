//===- kloop/Capture/Record.h - Run a program once and capture it --------===//
///
/// \file
/// `kloop capture`: runs a command once under libkloop-cupti.so with
/// KLOOP_CUPTI_CAPTURE_DIR set (docs/capture.md), checks what it wrote with
/// the capture reader (every blob decompressed and hashed), and only then
/// moves it to the requested directory: a failed or empty capture leaves
/// nothing behind.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_CAPTURE_RECORD_H
#define KLOOP_CAPTURE_RECORD_H

#include "kloop/Capture/Manifest.h"
#include "llvm/Support/Error.h"
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kloop {
namespace capture {

/// What to run and capture.
struct RecordOptions {
  /// The program and its arguments (argv; run through /bin/sh with each
  /// word quoted).
  std::vector<std::string> Command;
  /// Working directory of the program (absolute).
  std::string Cwd;
  /// Extra environment variables of the program (a workload's run.env).
  std::map<std::string, std::string> Env;
  /// The capture directory to create. Must not exist; its parent must be a
  /// writable directory.
  std::string OutDir;
  /// Target kernels: substrings of mangled or demangled names; empty: all.
  std::vector<std::string> Kernels;
  /// Launches captured per kernel and launch configuration; >= 1.
  uint64_t LaunchesPerConfig = 1;
  /// Absolute path of libkloop-cupti.so.
  std::string CuptiLib;
  /// Wall-clock limit of each run of the program, seconds; > 0.
  unsigned TimeoutS = 600;
  /// Also run the program once without injection, to report what capturing
  /// cost and whether the program's stdout changed.
  bool MeasureCost = false;
};

/// Per kernel, from the captured run's profile (kloop-cupti/1).
struct KernelGpuTime {
  /// Launches the profile recorded (all of them, not only the captured).
  uint64_t Launches = 0;
  /// Sum of their durations, ns. Capture synchronises around target
  /// launches, so this ranks kernels; it is not a timing.
  uint64_t TotalNs = 0;
};

/// What a successful capture produced.
struct RecordResult {
  /// The capture directory (RecordOptions::OutDir) and its manifest.
  std::string Dir;
  Manifest M;
  /// Bytes of the directory's blob files.
  uint64_t BlobBytes = 0;
  /// Wall time of the captured run, s.
  double CapturedWallS = 0;
  /// With MeasureCost: wall time of the run without injection, s, and
  /// whether its stdout equals the captured run's byte for byte.
  std::optional<double> UncapturedWallS;
  std::optional<bool> SameStdout;
  /// Per mangled kernel name, from the profile.
  std::map<std::string, KernelGpuTime> GpuTime;
};

/// Runs \p O.Command under the injection library and writes the capture to
/// \p O.OutDir (through a temporary directory beside it, renamed at the end).
/// The program's stdout and stderr are kept there as run.stdout/run.stderr,
/// its profile as run.json. Errors, with nothing left at O.OutDir:
/// "-o DIR: already exists", "-o DIR: directory P does not exist or is not
/// writable", the command failing ("the command exited with code 3" and the
/// tail of its stderr), timing out or crashing, no manifest written (the
/// program never initialised CUDA, or the library did not load), a manifest
/// or blob the reader refuses, and nothing captured ("nothing captured: 2
/// launches refused: managed memory: ...", or "no launch of a target kernel
/// (--kernel saxpy) was seen").
llvm::Expected<RecordResult> recordCapture(const RecordOptions &O);

} // namespace capture
} // namespace kloop

#endif
