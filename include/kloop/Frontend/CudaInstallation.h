//===- kloop/Frontend/CudaInstallation.h - Locating the CUDA SDK ---------===//
///
/// \file
/// Finds the CUDA installation a translation unit is parsed against, and the
/// include directories nvcc adds implicitly (read from bin/nvcc.profile: CUDA 13
/// moved CCCL -- Thrust, CUB, libcu++ -- to include/cccl, which nvcc adds as a
/// system include directory and clang does not).
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_FRONTEND_CUDAINSTALLATION_H
#define KLOOP_FRONTEND_CUDAINSTALLATION_H

#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>
#include <vector>

namespace kloop {

/// A CUDA SDK on disk.
struct CudaInstallation {
  /// Root directory (the one holding bin/nvcc and include/cuda_runtime.h).
  std::string Path;
  /// Directories nvcc passes as -I (user include order).
  std::vector<std::string> Includes;
  /// Directories nvcc passes as -isystem (e.g. <root>/targets/x86_64-linux/include/cccl).
  std::vector<std::string> SystemIncludes;
};

/// Locates the CUDA installation. Order: \p Explicit (from --cuda-path) when non-empty,
/// then $CUDA_HOME, $CUDA_PATH, then /usr/local/cuda. A candidate counts only when
/// it has include/cuda_runtime.h. Returns std::nullopt when none qualifies (the
/// caller then lets clang report its own "cannot find CUDA installation" error,
/// or parses with -nocudainc).
std::optional<CudaInstallation> findCudaInstallation(llvm::StringRef Explicit);

/// Parses the INCLUDES and SYSTEM_INCLUDES lines of an nvcc.profile text
/// (\p Profile), expanding $(TOP), $(_HERE_) and $(_TARGET_DIR_) for an SDK rooted
/// at \p Root (targets/x86_64-linux). Only directories that exist are kept.
void readNvccProfile(llvm::StringRef Profile, llvm::StringRef Root, CudaInstallation &Out);

} // namespace kloop

#endif
