//===- kloop/Optimize/Stages.h - The real stages of kloop optimize --------===//
///
/// \file
/// The Stages implementation `kloop optimize` uses: `kloop extract` and
/// `kloop apply` as subprocesses (so that optimize depends only on their
/// command-line contract), the workload's build.command, nvcc's ptxas report,
/// and kloopMeasure's compareWorkloads. Also the ptxas report parser.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_OPTIMIZE_STAGES_H
#define KLOOP_OPTIMIZE_STAGES_H

#include "kloop/Measure/Config.h"
#include "kloop/Optimize/Optimize.h"
#include "llvm/ADT/ArrayRef.h"

#include <memory>

namespace kloop {
namespace optimize {

/// One kernel's resources as `ptxas -v` reports them (bytes; registers per thread).
struct PtxasKernel {
  std::string Name; ///< mangled name
  std::string Arch; ///< e.g. "sm_90"
  unsigned Registers = 0, SpillStores = 0, SpillLoads = 0, Smem = 0, Stack = 0, Cmem = 0;
};

/// Parses the `ptxas info` lines of `nvcc -Xptxas -v` output: "Compiling
/// entry function 'NAME' for 'ARCH'", "N bytes stack frame, N bytes spill
/// stores, N bytes spill loads", "Used N registers, ... N bytes smem, N bytes
/// cmem[0]". Lines it does not know are ignored; an empty result is not an error.
std::vector<PtxasKernel> parsePtxasOutput(llvm::StringRef Text);

/// {"kernels": [{"name","arch","registers","spill_stores","spill_loads","smem","stack","cmem"}]}.
nlohmann::json toJSON(const std::vector<PtxasKernel> &Ks);

/// The compiler arguments (given after `--`, in clang's terms) that the nvcc
/// compile of the ptxas report also understands: -I/-isystem/-D/-U (joined
/// or separate), -include and -std=. Everything else (--cuda-path,
/// --cuda-gpu-arch, -nocudainc, -x cuda, warnings...) is clang's alone and
/// would make nvcc fail, leaving the report empty.
std::vector<std::string> nvccCompatibleArgs(llvm::ArrayRef<std::string> ClangArgs);

/// Settings of the process stages.
struct ProcessStagesOptions {
  /// argv prefix for `kloop extract` / `kloop apply` (default: this kloop).
  std::vector<std::string> ExtractCommand, ApplyCommand;
  /// Compiler arguments given after `--` to extract, apply and the ptxas compile.
  std::vector<std::string> CompilerArgs;
  /// Produce a ptxas report with nvcc (skipped with a note when nvcc is missing).
  bool Ptxas = true;
  /// libkloop-cupti.so, for compare (GPU only).
  std::string CuptiLib;
  /// Timing rounds per (shape, seed) in compare.
  unsigned Rounds = 3;
  /// Search-time compares verify and time only this many search seeds per
  /// shape (measure::CompareOptions::MaxSeeds; 0 = every seed). The final
  /// compare always checks every seed, held-out ones included.
  unsigned ScreenSeeds = 1;
  /// Search-time compares time the candidate before verifying it and skip
  /// verification when the timing alone rejects it
  /// (measure::CompareOptions::TimingFirst; `--no-timing-first` turns it
  /// off). The final compare always verifies in full.
  bool TimingFirst = true;
  /// Where baseline builds are kept between compares ("" = rebuild each time).
  std::string BaselineBuildCache;
};

/// The real stages for workload \p C.
std::unique_ptr<Stages> makeProcessStages(const measure::WorkloadConfig &C, ProcessStagesOptions O);

} // namespace optimize
} // namespace kloop

#endif
