//===- kloop/Frontend/NvccArgs.h - nvcc command lines to clang CUDA flags -===//
///
/// \file
/// Compilation databases of CUDA projects hold nvcc command lines. Clang does
/// not understand nvcc's driver flags, so each entry is translated into the
/// equivalent clang CUDA flags before it is parsed. Flags are taken from the
/// nvcc manual ("NVCC Command Options", CUDA 13.0): the ones that change what
/// the front end sees are translated, the ones that only steer code generation,
/// ptxas or the host linker are dropped, and anything else is left for the
/// clang driver, whose option table decides whether it is known.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_FRONTEND_NVCCARGS_H
#define KLOOP_FRONTEND_NVCCARGS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace kloop {

/// True when \p Compiler (argv[0] of a compile command, a path or a bare name)
/// names nvcc, e.g. "/usr/local/cuda/bin/nvcc" or "nvcc".
bool isNvccCompiler(llvm::StringRef Compiler);

/// Result of translating one nvcc command line.
struct TranslatedCommand {
  /// The clang arguments, without argv[0]. Source files stay in place.
  std::vector<std::string> Args;
  /// GPU architectures named by -arch/-gencode/--gpu-architecture, as clang
  /// spells them ("sm_90"); empty when the command named none.
  std::vector<std::string> GpuArchs;
  /// nvcc flags that were recognised and dropped because they do not affect
  /// parsing (e.g. "-lineinfo", "-ccbin"), for diagnostics.
  std::vector<std::string> Dropped;
};

/// Translates the arguments of an nvcc command (\p Args excludes argv[0]).
/// Handles -arch/--gpu-architecture (sm_XX, compute_XX, native, all),
/// -gencode/--generate-code arch=...,code=..., -code, -Xcompiler/--compiler-options
/// (comma-separated lists), -x cu, --expt-relaxed-constexpr,
/// --expt-extended-lambda/--extended-lambda, -rdc/--relocatable-device-code,
/// -dc, -lineinfo, -G, -ccbin/--compiler-bindir, -Xptxas/-Xnvlink/-Xlinker/-Xcudafe,
/// --std X, --default-stream, -maxrregcount, --use_fast_math, --threads,
/// --diag-suppress and response files (@file, --options-file/-optf FILE,
/// resolved relative to \p Directory).
///
/// \returns an error naming the flag when a flag that takes a value has none,
/// or when a response file cannot be read.
llvm::Expected<TranslatedCommand> translateNvccArgs(llvm::ArrayRef<std::string> Args,
                                                    llvm::StringRef Directory);

/// Returns the arguments in \p ClangArgs (without argv[0]) that clang's driver
/// option table does not know, in order. Positional inputs are not reported.
std::vector<std::string> findUnknownClangFlags(llvm::ArrayRef<std::string> ClangArgs);

} // namespace kloop

#endif
