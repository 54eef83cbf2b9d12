//===- kloop/Codebase/Codebase.h - `kloop optimize -p`: a whole codebase --===//
///
/// \file
/// The library behind codebase mode (issue 16, item 3; docs/codebase.md):
/// `kloop optimize -p BUILD --run "<program>" --test "<tests>"` profiles the
/// program (kloop/Measure/ProgramProfile.h), picks the hottest editable
/// kernels (selectKernels), writes for each the workload a `.kloop.yaml`
/// would give (synthesizeWorkload), tunes each with the optimize pipeline
/// behind a stage that runs the project's own tests on every accepted change
/// (makeTestGatedStages), and turns the accepted changes into a patch series,
/// clang-apply-replacements YAML and an all-or-nothing in-place write
/// (numberPatch, kernelFinding, fixChanges). Nothing here prints:
/// lib/Driver/CodebaseMode.cpp does.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_CODEBASE_CODEBASE_H
#define KLOOP_CODEBASE_CODEBASE_H

#include "kloop/Check/Check.h"
#include "kloop/Edit/Apply.h"
#include "kloop/Inventory/Model.h"
#include "kloop/Measure/ProgramProfile.h"
#include "kloop/Optimize/Optimize.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kloop {
namespace codebase {

/// How many kernels to tune.
struct SelectOptions {
  /// Take the hottest editable kernels until their summed share of all GPU
  /// time is at least this fraction (0, 1] (`--cover`, default 0.8).
  double Cover = 0.8;
  /// When > 0, take this many editable kernels instead (`--kernels N`).
  unsigned Count = 0;
};

/// A parameter of a chosen kernel that it writes: an output buffer to check.
struct OutputParam {
  unsigned Index = 0; ///< 0-based parameter index
  std::string Type;   ///< as the inventory spells it ("float *")
};

/// A kernel chosen for tuning.
struct ChosenKernel {
  std::string Id;            ///< inventory ID of the kernel (not of an instantiation)
  std::string QualifiedName; ///< what `targets:` names (a substring of the demangled name)
  std::string Name;          ///< demangled name as CUPTI recorded it
  std::string File;          ///< defining file, relative to the inventory's root
  double SharePct = 0;       ///< % of all kernels' GPU time
  uint64_t TotalNs = 0;      ///< summed GPU time of its launches, ns
  std::vector<OutputParam> Outputs;
};

/// A kernel of the profile that is not tuned, and why.
struct SkippedKernel {
  std::string Name;   ///< demangled name
  std::string Id;     ///< inventory ID, "" when the inventory does not list it
  double SharePct = 0;
  std::string Reason; ///< "library kernel (cub): ...", "not editable: ...", ...
};

/// What selectKernels picked.
struct Selection {
  std::vector<ChosenKernel> Chosen; ///< hottest first
  std::vector<SkippedKernel> Skipped; ///< in profile order
  double CoveredPct = 0;            ///< summed SharePct of Chosen
};

/// Walks \p P's kernels hottest first and takes each editable one until
/// \p O is met; the others are skipped with a reason: a library kernel (CUB,
/// Thrust, a namespace of a prebuilt library), a kernel the inventory does
/// not list (no source in the compilation database), one the inventory marks
/// not editable or with compile errors, one defined in a file that is not a
/// translation unit of the database (a header: `sources` would have to be
/// the header, which other translation units also read), one whose
/// definition another chosen kernel shares (its patch would overlap: tune it
/// after applying the series), one with no pointer parameter it writes (no
/// output to check), and, once \p O is met, the rest ("below the cut").
/// \p TUFiles are the database's translation units, relative to Inv.Root.
Selection selectKernels(const measure::ProgramProfile &P, const inv::Inventory &Inv,
                        const std::vector<std::string> &TUFiles, const SelectOptions &O);

/// {"chosen": [...], "skipped": [...], "covered_pct"} (the run directory's
/// selection.json), and back. Errors of fromJSON name \p Source and the field.
nlohmann::json toJSON(const Selection &S);
llvm::Expected<Selection> selectionFromJSON(const nlohmann::json &J, llvm::StringRef Source);

/// \p Command with every word that names a path in the build directory
/// (starts with \p BuildDir as given or \p BuildDirAbs, then `/`) rebased to
/// \p Replacement ("{build_dir}" for a workload, a real directory for the
/// test gate): `build/app --n 4` -> `{build_dir}/app --n 4`. Words are split
/// at unquoted blanks; a word in quotes is rebased inside them.
std::string rebaseBuildDir(llvm::StringRef Command, llvm::StringRef BuildDir, llvm::StringRef BuildDirAbs,
                           llvm::StringRef Replacement);

/// \p Command with `{` and `}` doubled, so that a workload's placeholder
/// expansion gives it back unchanged (docs/kloop-yaml.md, "Placeholders").
std::string escapeBraces(llvm::StringRef Command);

/// The default build of a candidate's copy of the project, from the CMake
/// cache in \p BuildDir (absolute): `cmake -S {source_dir}/<source dir
/// relative to Root> -B {build_dir} -G <generator> -D<the cache's build
/// type, CUDA compiler, architectures, flags> && cmake --build {build_dir}`.
/// Errors: no CMakeCache.txt (naming \p BuildDir and saying to give
/// --build), a CMAKE_HOME_DIRECTORY outside \p Root.
llvm::Expected<std::string> cmakeBuildCommand(llvm::StringRef BuildDir, llvm::StringRef Root);

/// Every regular file below \p Root that a copy of the project needs, relative
/// to it, sorted: directories whose name starts with '.', \p Exclude
/// (absolute) and every directory holding a CMakeCache.txt (build trees) are
/// left out. Errors: a directory cannot be listed; more than \p Limit files.
llvm::Expected<std::vector<std::string>> projectFiles(llvm::StringRef Root, const std::vector<std::string> &Exclude,
                                                      size_t Limit = 20000);

/// What synthesizeWorkload needs besides the kernel.
struct WorkloadInputs {
  std::string Root;         ///< the project root (absolute): the workload's source directory
  std::string BuildCommand; ///< build.command ({source_dir}, {build_dir} placeholders)
  std::string RunCommand;   ///< run.command, build directory already rebased, braces escaped
  std::vector<std::string> ProjectFiles; ///< projectFiles(Root); all but the kernel's file are protected
  unsigned BuildTimeoutS = 1800, RunTimeoutS = 600;
};

/// The `.kloop.yaml` text for tuning \p K: name = its ID, sources = its file,
/// protected = every other project file, build and run as \p In says,
/// targets = its qualified name, one shape `default` with no args (the
/// program runs as it is), one seed, `search.timing: auto` (replay when the
/// capture works), outputs = the pointer parameters it writes (f32/f64/f16/
/// i32/u8 from the pointee type, else bytes; `rel 1e-5` for floating point,
/// exact otherwise; `access: readwrite`, since the inventory does not say
/// whether the kernel reads them first). Comments say where it came from.
std::string synthesizeWorkload(const ChosenKernel &K, const WorkloadInputs &In);

/// The project's test command, and how to run it (`--test`).
struct TestGate {
  std::string Command;     ///< shell command; words naming the build directory are rebased per candidate
  std::string BuildDir, BuildDirAbs; ///< `-p` as given and absolute (rebaseBuildDir)
  unsigned TimeoutS = 1800;
};

/// \p Inner with compare and replayCompare gated by \p G: when the inner
/// stage accepts a candidate, it is built again into WorkDir/test-build
/// (Inner.build) and \p G's command runs in the candidate's copy of the
/// project (its build-directory words rebased to that build) through the
/// measurement runner (its own process group, killed at the timeout). A
/// build failure or a non-zero exit refuses the candidate: outcome
/// "refused", the explanation naming the command, its exit status and the
/// tail of its output, and the comparison's Detail gains "project_test":
/// {"command", "exit_code", "status", "passed", "output_tail", "log"}
/// (journaled with the verify step). A passing test adds the same object
/// with "passed": true. Rejected candidates are not tested.
std::unique_ptr<optimize::Stages> makeTestGatedStages(std::unique_ptr<optimize::Stages> Inner, TestGate G);

/// \p Patch (renderPatch's text for one kernel) as patch \p Index of
/// \p Total of a series: `Subject: [PATCH k/n] kloop: <kernel>: ...`, and
/// \p Extra (one paragraph: the kernel, its share, candidates tried, the
/// journal, the project test) inserted before the `---` line.
std::string numberPatch(llvm::StringRef Patch, unsigned Index, unsigned Total, llvm::StringRef KernelId,
                        llvm::StringRef Extra);

/// The file name of patch \p Index: `0001-<kernel id, letters digits - _ only>.patch`.
std::string patchFileName(unsigned Index, llvm::StringRef KernelId);

/// One accepted kernel's change as a finding of rule "optimize" for
/// check::exportFixesYaml: one fix-it per changed file (the smallest
/// differing range, smallestReplacement), the diagnostic at the first.
check::Finding kernelFinding(llvm::StringRef KernelId, llvm::StringRef Message,
                             const std::vector<FileChange> &Changes);

/// The changes of one kernel's accepted candidate: for each of \p Sources
/// (relative to \p Root) whose copy in \p FinalDir differs from the one in
/// \p BaselineDir, a FileChange on Root/<source> with Before = the baseline's
/// copy. Errors: a copy cannot be read.
llvm::Expected<std::vector<FileChange>> kernelChanges(llvm::StringRef Root, llvm::StringRef BaselineDir,
                                                      llvm::StringRef FinalDir,
                                                      const std::vector<std::string> &Sources);

/// Checks that every file of \p Changes still holds its Before bytes and
/// that no file is changed twice, then writes them all or none
/// (writeChangesInPlace). Errors name the file: it changed since the run
/// (nothing is written), two changes touch it, the write fails.
llvm::Error applyAll(const std::vector<FileChange> &Changes);

} // namespace codebase
} // namespace kloop

#endif
