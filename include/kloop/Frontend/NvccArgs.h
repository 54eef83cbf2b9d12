//===- kloop/Frontend/NvccArgs.h - nvcc command lines to clang CUDA flags -===//
///
/// \file
/// Compilation databases of CUDA projects hold nvcc command lines, and users write
/// nvcc flags after `kloop extract FILES --`. Clang does not understand nvcc's
/// driver flags, so each command is translated into the equivalent clang CUDA
/// flags before it is parsed. One table classifies every flag of CUDA 13.0's
/// `nvcc --help`: translated, dropped (irrelevant to parsing) or unsupported.
/// Anything else is left for the clang driver, whose option table decides
/// whether it is known; a flag nobody knows is reported, not passed on.
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

/// How kloop's parse treats one nvcc flag (the table in lib/Frontend/NvccArgs.cpp holds every
/// flag of CUDA 13.0's `nvcc --help`, checked by unittests/Frontend/NvccFlagTableTest.cpp).
enum class NvccFlagClass {
  /// Changes what the front end sees; turned into the clang flag(s) with the same effect.
  Translated,
  /// Steers code generation, ptxas, the linker, output files or nvcc itself: dropped.
  Dropped,
  /// Changes the parse in a way kloop does not reproduce: dropped with a warning
  /// (an error under `kloop extract --strict-flags`).
  Unsupported,
};

/// One row of the nvcc flag table, as nvcc --help spells it.
struct NvccFlagInfo {
  /// The long spelling, e.g. "--gpu-architecture".
  llvm::StringRef Long;
  /// The short spelling, e.g. "-arch"; empty when nvcc has none.
  llvm::StringRef Short;
  /// True when the flag takes a value (separate, or joined with '=').
  bool TakesValue = false;
  /// What kloop does with it.
  NvccFlagClass Class = NvccFlagClass::Dropped;
  /// What it becomes (Translated) or why it does not matter or cannot be mirrored.
  llvm::StringRef Note;
};

/// Every row of the table, in nvcc --help order.
llvm::ArrayRef<NvccFlagInfo> nvccFlagTable();

/// The row whose long or short spelling is \p Name exactly (no value, no '='), or nullptr.
const NvccFlagInfo *findNvccFlag(llvm::StringRef Name);

/// Result of translating one nvcc command line.
struct TranslatedCommand {
  /// The clang arguments, without argv[0]. Source files stay in place.
  std::vector<std::string> Args;
  /// GPU architectures named by -arch/-gencode/--gpu-architecture, as clang
  /// spells them ("sm_90"); empty when the command named none.
  std::vector<std::string> GpuArchs;
  /// Flags that were recognised and dropped because they do not affect
  /// parsing (e.g. "-lineinfo", "-ccbin", host flags given with -Xcompiler that clang does
  /// not need, and -fopenmp, which would make clang look for an omp.h it does not ship).
  std::vector<std::string> Dropped;
  /// Flags neither nvcc's table nor clang's driver knows, as written; not passed to clang.
  std::vector<std::string> Unknown;
  /// nvcc flags of class Unsupported that the command used, as written; not passed to clang.
  std::vector<std::string> Unsupported;
  /// The value of -ccbin (--compiler-bindir): nvcc's host compiler or its directory; empty when
  /// the command names none (nvcc then runs gcc from PATH).
  std::string HostCompilerBindir;
  /// True when the host compiler gets -fopenmp (through -Xcompiler, or bare as nvcc forwards it
  /// with -forward-unknown-to-host-compiler): nvcc's host passes then find the host compiler's
  /// omp.h and see _OPENMP, which the caller provides (the flag itself is in Dropped).
  bool HostOpenMP = false;
};

/// Translates the arguments of an nvcc command (\p Args excludes argv[0]) with the flag
/// table: `--long value`, `--long=value`, `-short value`, `-short=value`, the joined
/// single-letter forms nvcc accepts (-DX, -Idir, -O3, -t0, -lfoo, -Ldir), comma-separated
/// lists (-DA=1,B=2, -Xcompiler -fPIC,-Wall) and response files (@file, --options-file/-optf
/// FILE, resolved relative to \p Directory). Host compiler flags (-Xcompiler) are kept only
/// when they matter for parsing and clang knows them (-D, -U, -I, -isystem, -include, -std,
/// -O, -w, -f*), except -fopenmp* (HostOpenMP says whether -fopenmp was among them). Arguments
/// that are not nvcc flags are kept when clang's driver knows them (with their values), else
/// listed in Unknown; a bare -fopenmp is the host compiler's too.
///
/// \returns an error naming the flag when a flag that takes a value has none,
/// or when a response file cannot be read.
llvm::Expected<TranslatedCommand> translateNvccArgs(llvm::ArrayRef<std::string> Args,
                                                    llvm::StringRef Directory);

/// The architectures nvcc's `-arch=native` builds on this machine, as clang spells them ("sm_90"): each
/// distinct GPU's, in the order `nvidia-smi --query-gpu=compute_cap --format=csv,noheader` lists them
/// ("9.0" is sm_90; the environment variable KLOOP_NVIDIA_SMI names another program). Where no GPU
/// answers (no nvidia-smi, an error, no line of that form, more than 20 s), nvcc 13.0's default, sm_75:
/// nvcc then warns "Cannot find valid GPU for '-arch=native', default arch is used" and compiles
/// `__CUDA_ARCH__` 750 (`nvcc -arch=native --dryrun` on a machine without a GPU). Asked once per process.
const std::vector<std::string> &nativeGpuArchs();

/// Returns the arguments in \p ClangArgs (without argv[0]) that clang's driver
/// option table does not know, in order. Positional inputs are not reported.
std::vector<std::string> findUnknownClangFlags(llvm::ArrayRef<std::string> ClangArgs);

} // namespace kloop

#endif
