//===- kloop/Support/Ptxas.h - ptxas resource usage, one parser -----------===//
///
/// \file
/// The one reader of ptxas's resource report (issue 13, item 3), used by the
/// build step of `kloop optimize` and by `kloop apply --verify-build`, and the
/// one JSON form of it that the journal, the report and the builtin search read.
///
/// Where the text comes from: `ptxas -v` (nvcc `-Xptxas -v`) prints, per
/// function and target architecture,
///   ptxas info    : Compiling entry function '_Z5saxpyifPKfPf' for 'sm_90'
///   ptxas info    : Function properties for _Z5saxpyifPKfPf
///       256 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
///   ptxas info    : Used 40 registers, used 1 barriers, 512 bytes smem, 380 bytes cmem[0]
/// ("Function properties for F" without a "Compiling entry function" line
/// before it is a non-inlined __device__ function). kloop optimize reads
/// these lines from the candidate's own build, with `-Xptxas -v` added
/// through nvcc's NVCC_APPEND_FLAGS environment variable (nvcc 11.5+), so no
/// source is compiled a second time for the report.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_SUPPORT_PTXAS_H
#define KLOOP_SUPPORT_PTXAS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kloop {

/// One function's resources for one architecture, as ptxas reports them.
struct PtxasFunction {
  std::string Name;   ///< mangled name, as ptxas prints it
  std::string Arch;   ///< target, e.g. "sm_90" ("" when ptxas did not say)
  bool Entry = false; ///< a __global__ kernel ("Compiling entry function")
  unsigned Registers = 0;       ///< registers per thread
  unsigned StackBytes = 0;      ///< stack frame per thread, bytes
  unsigned SpillStoreBytes = 0; ///< bytes of spill stores per thread
  unsigned SpillLoadBytes = 0;  ///< bytes of spill loads per thread
  unsigned SharedBytes = 0;     ///< static shared memory per block, bytes ("smem")
  unsigned ConstBytes = 0;      ///< constant memory, bytes, summed over the cmem[N] banks
};

/// Parses ptxas's verbose output (the lines in the file comment) in \p Text,
/// which may hold the output of many compilations and other lines, which are
/// ignored. Kernels and non-inlined device functions, in the order ptxas
/// reported them. An empty result is not an error.
std::vector<PtxasFunction> parsePtxasVerbose(llvm::StringRef Text);

/// The JSON form: {"kernels": [F...], "device_functions": [F...]} with
/// F = {"name", "arch", "registers", "stack_bytes", "spill_store_bytes",
/// "spill_load_bytes", "shared_bytes", "const_bytes"} (entries in "kernels").
nlohmann::json toJSON(llvm::ArrayRef<PtxasFunction> Fs);

/// Reads toJSON()'s form back, and the form kloop wrote before issue 13 (a
/// "kernels" array with "spill_stores", "spill_loads", "smem", "stack",
/// "cmem"), which old journals hold. null is an empty report.
/// Errors, naming what is wrong: not an object, "kernels" not an array, an
/// entry without a string "name" or with a count that is not a non-negative
/// integer.
llvm::Expected<std::vector<PtxasFunction>> ptxasFromJSON(const nlohmann::json &J);

/// Total spill traffic (stores + loads, bytes per thread) over \p Fs.
uint64_t spillBytes(llvm::ArrayRef<PtxasFunction> Fs);

/// The compiler arguments (given after `--`, in clang's terms) that an nvcc
/// compile also understands: -I/-isystem/-D/-U (joined or separate), -include
/// and -std=. Everything else (--cuda-path, --cuda-gpu-arch, -nocudainc,
/// -x cuda, warnings...) is clang's alone and would make nvcc fail.
std::vector<std::string> nvccCompatibleArgs(llvm::ArrayRef<std::string> ClangArgs);

/// \p Existing (the value of NVCC_APPEND_FLAGS, may be empty) with
/// `-Xptxas -v` appended, unless it already asks for it.
std::string withPtxasVerbose(llvm::StringRef Existing);

} // namespace kloop

#endif
