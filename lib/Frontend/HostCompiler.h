//===- HostCompiler.h - What nvcc's host compiler provides (private) ------===//
///
/// \file
/// nvcc preprocesses both sides of a translation unit with its host compiler (gcc unless
/// -ccbin names another), which brings things clang's parse lacks. Today: OpenMP, for commands
/// whose host flags hold -fopenmp (docs/nvcc-compat.md).
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_LIB_FRONTEND_HOSTCOMPILER_H
#define KLOOP_LIB_FRONTEND_HOSTCOMPILER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <string>

namespace kloop {

/// The host compiler nvcc runs for a command: \p Ccbin is the value of -ccbin
/// (--compiler-bindir), empty when the command has none. A directory means its `gcc` (the name
/// nvcc runs on Linux), anything else names the compiler; no -ccbin means `gcc` from PATH.
std::string hostCompilerFor(llvm::StringRef Ccbin);

/// What the host compiler's -fopenmp brings.
struct HostOpenMP {
  /// The directory holding its omp.h (gcc: <libdir>/gcc/<target>/<version>/include).
  std::string IncludeDir;
  /// The value it gives _OPENMP under -fopenmp (gcc 12: 201511).
  std::string Version;
};

/// Asks \p Compiler (a path, or a name looked up in PATH) with
/// `-print-file-name=include/omp.h` and `-fopenmp -dM -E -x c++ /dev/null`, each within 30 s.
/// Answers are cached per compiler for the life of the process; safe from several threads.
/// \returns an error saying what failed: the compiler could not be run, it failed or timed out,
/// it knows no omp.h (printed no existing absolute path), or -fopenmp defines no _OPENMP.
llvm::Expected<HostOpenMP> queryHostOpenMP(llvm::StringRef Compiler);

} // namespace kloop

#endif
