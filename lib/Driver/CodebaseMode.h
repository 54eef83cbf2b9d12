//===- CodebaseMode.h - `kloop optimize -p`: the driver side ----------------===//
///
/// \file
/// What OptimizeCommand.cpp and CodebaseMode.cpp share: how one workload is
/// tuned (tuneWorkload, in OptimizeCommand.cpp, used by both modes) and the
/// codebase mode's options (docs/codebase.md). Private to lib/Driver.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_LIB_DRIVER_CODEBASEMODE_H
#define KLOOP_LIB_DRIVER_CODEBASEMODE_H

#include "kloop/Driver/Command.h"
#include "kloop/Measure/Config.h"
#include "kloop/Optimize/Optimize.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kloop {

/// One workload to tune.
struct TuneRequest {
  const measure::WorkloadConfig *Config = nullptr;
  std::string Journal, OutDir; ///< absolute or relative to the current directory
  bool Resume = false;         ///< reopen the journal and continue its last run
  /// Compiler arguments for extract and apply (what follows `--`).
  std::vector<std::string> CompilerArgs;
  /// Wraps the process stages (codebase mode: the project's test gate); null: none.
  std::function<std::unique_ptr<optimize::Stages>(std::unique_ptr<optimize::Stages>)> Wrap;
  /// Receives runOptimize's progress events; null: none.
  optimize::ProgressFn Progress;
  /// Overrides --time-budget (seconds) when set.
  std::optional<double> TimeBudgetS;
};

/// How it ended: runOptimize's result, the files writeResults wrote, the
/// patch (renderPatch; "" when nothing was accepted), and whether the
/// no-GPU event was seen.
struct TuneResult {
  optimize::OptimizeResult Result;
  std::vector<std::string> Written;
  std::string Patch;
  bool SaidNoGpu = false;
};

using TuneFn = std::function<llvm::Expected<TuneResult>(const CommandContext &, const TuneRequest &)>;

/// The codebase mode's options (OptimizeCommand.cpp's cl::opts).
struct CodebaseArgs {
  std::string BuildPath, Run, Test, Build, ExportFixes, OutDir;
  double Cover = 0.8;
  unsigned Kernels = 0;
  bool Fix = false, ConfigGiven = false, JournalGiven = false;
  unsigned TestTimeoutS = 1800;
  std::optional<double> TimeBudgetS;
};

/// `kloop optimize -p BUILD --run ...`: profile, select, tune each kernel
/// with \p Tune, write the series; prints and returns the exit status.
int runCodebaseMode(const CommandContext &Ctx, const CodebaseArgs &A, const TuneFn &Tune);

} // namespace kloop

#endif
