//===- VerifyBuild.h - `kloop apply --verify-build` ------------*- C++ -*-===//
//
// Compiles every unit an applied proposal changes, before and after, with nvcc -Xptxas -v: a unit whose
// main file changed, and a unit that reads a changed header (an edit of a header-only kernel changes no
// main file at all).
//
//===----------------------------------------------------------------------===//
#ifndef KLOOP_DRIVER_VERIFYBUILD_H
#define KLOOP_DRIVER_VERIFYBUILD_H

#include "kloop/Edit/ApplyFile.h"
#include "kloop/Support/JSON.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace kloop {

/// What --verify-build found.
struct BuildCheck {
  /// Per compiled unit, by its main file's path relative to the root: `{"before": R, "after": R,
  /// "edited_files": [...]}`, R a ptxas report (kloop/Support/Ptxas.h's form) and edited_files the
  /// changed files (root-relative) that the unit reads. A unit that reads no changed file is not in it.
  nlohmann::json Report = nlohmann::json::object();
  /// Changed files (root-relative) that no compiled unit reads: their edits are not verified.
  std::vector<std::string> NotCompiled;
  /// The first unit whose edited code does not build: nvcc's exit status and output, naming the unit.
  std::optional<std::string> EditedFails;
};

/// Compiles the units of \p A (its jobs: the named ones and the database's others that read an edited
/// header) with \p Nvcc, `-arch=` \p Arch when not empty (else each job's first architecture, else
/// kloop::DefaultGpuArch), `-c -Xptxas -v` and each job's `-I/-isystem/-D/-U/-include/-std` flags, its
/// paths made absolute against the job's directory. Before: the files as they are, with `-MD` for the
/// headers the unit reads. After, for a unit whose main file changed or that read a changed file: a
/// copy of its main file and of the changed files in a temporary tree that keeps their paths below
/// \p Root (a quoted include finds the edited header where it found the original), whose directories
/// come first on the include path. nvcc runs at most 300 s per compile.
/// Errors: no temporary file or directory, nvcc failing on the unedited code (naming the unit).
llvm::Expected<BuildCheck> verifyBuild(const ProposalApplication &A, const std::string &Nvcc, const std::string &Arch,
                                       const std::string &Root);

} // namespace kloop

#endif
