//===- kloop/Inventory/KernelNames.h - Kernel symbols as nvcc names them --===//
///
/// \file
/// The symbol nvcc 13 gives a kernel, computed from the Itanium name clang
/// mangles, and the one rule that says whether a symbol seen at run time (a
/// CUPTI profile, a capture, a ptxas report, `readelf -sW` of a cubin) names
/// an inventory kernel.
///
/// nvcc and clang agree on the names of kernels with external linkage. They
/// differ where a name involves internal linkage; what nvcc 13 does was read
/// off `nvcc -cubin` + `readelf -sW` of small snippets (docs/inventory.md,
/// "Kernel names"; test/Extract/names-*.cu):
///  - an anonymous namespace is `_GLOBAL__N_<module id>` (clang:
///    `_GLOBAL__N_1`);
///  - a kernel's own internal linkage is not marked (clang writes `L`);
///  - an internal entity named inside the symbol (a static function or
///    variable, or one in an anonymous namespace, used as a template
///    argument) sits in a pseudo-namespace `_INTERNAL<module id>`, which is
///    then a substitution candidate like any namespace;
///  - with `-rdc=true` an internal kernel's symbol is prefixed with
///    `__nv_static_<length of module id>_<module id>_`.
/// The module id is `_<crc32 of the source's real path, 8 hex digits>_<length>_
/// <file name, every byte other than [A-Za-z0-9] made '_'>_<tail>`, where the
/// tail is the Itanium name of the translation unit's first definition with
/// external linkage that is neither inline nor a template specialization (a
/// function, or a variable with an initializer), itself when at most 8
/// characters long, else its crc32 in 8 hex digits. Without such a definition
/// nvcc makes the tail from the time and its process id, so the symbol
/// cannot be predicted; the inventory then carries the match key alone.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_INVENTORY_KERNELNAMES_H
#define KLOOP_INVENTORY_KERNELNAMES_H

#include "kloop/Inventory/Model.h"
#include "nlohmann/json.hpp"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace kloop {

/// nvcc's module id (the format is in the file comment) for the translation
/// unit whose main file has the real path \p SourceRealPath (symbolic links
/// resolved, as nvcc's `--orig_src_path_name`) and whose first external,
/// non-inline definition has the Itanium (or extern "C") name
/// \p FirstExternalName.
std::string nvccModuleId(llvm::StringRef SourceRealPath, llvm::StringRef FirstExternalName);

/// The symbol nvcc gives the kernel that clang mangles as \p ClangMangled in
/// the translation unit with module id \p ModuleId (nvccModuleId()). With
/// \p Rdc (`-rdc=true`, clang's `-fgpu-rdc`) a kernel nvcc gives internal
/// linkage gets the `__nv_static_` prefix: one that is static, in an anonymous
/// namespace, or instantiated with an internal entity or anonymous-namespace
/// type (a parameter of such a type does not count). A name that is not an
/// Itanium name (extern "C") is returned as is.
/// Errors: \p ClangMangled does not demangle, or it uses a construct whose
/// nvcc spelling was not established (an internal entity under a
/// substitution or inside a local name); the message names the construct.
llvm::Expected<std::string> nvccSymbol(llvm::StringRef ClangMangled, llvm::StringRef ModuleId, bool Rdc);

/// The key that names a kernel whatever module id nvcc chose: the demangled
/// name (the symbol itself when it does not demangle, e.g. extern "C") with
/// nvcc's `__nv_static_` prefix dropped and every `_INTERNAL_...::` qualifier
/// removed. The same for clang's name and nvcc's name of one kernel.
std::string kernelMatchKey(llvm::StringRef Symbol);

/// The names of one kernel (or template instantiation) in the inventory.
struct KernelSymbol {
  /// nvcc's symbol; empty when it cannot be predicted (see the file comment).
  std::string Nvcc;
  /// Why Nvcc is empty ("" when it is known).
  std::string Unknown;
  /// clang's Itanium name.
  std::string Clang;
  /// The symbol depends on the translation unit (internal linkage, or an
  /// anonymous namespace or internal entity in the name).
  bool Internal = false;
  /// kernelMatchKey() of the kernel's name.
  std::string Key;
};

/// True when \p Seen, a symbol seen at run time or in a build's output, names
/// the kernel \p K: it equals nvcc's or clang's name, or, for a kernel with
/// internal linkage, its kernelMatchKey() equals K.Key (so a build from
/// another path, or one whose module id could not be predicted, still matches;
/// two internal kernels with one qualified name and signature in different
/// translation units then both match).
bool symbolNamesKernel(const KernelSymbol &K, llvm::StringRef Seen);

/// The inventory's JSON spelling: {"mangled": nvcc's or, when unknown, clang's
/// name, "clang_mangled", "nvcc_known", "linkage": "internal"|"external",
/// "match_key"}, plus "nvcc_unknown_reason" when nvcc's name is unknown.
/// docs/inventory.md, "Kernel names".
nlohmann::json toJson(const KernelSymbol &K);

/// The names of inventory symbol \p S (the typed form of toJson()'s object,
/// kloop/Inventory/Model.h): nvcc's name when known, clang's, the linkage and
/// the match key.
KernelSymbol kernelSymbolOf(const inv::Symbol &S);

/// The symbols of inventory kernel \p Kernel: one per entry of its "symbols"
/// (every instantiation's, for a template).
std::vector<KernelSymbol> inventoryKernelSymbols(const inv::Kernel &Kernel);

} // namespace kloop

#endif
