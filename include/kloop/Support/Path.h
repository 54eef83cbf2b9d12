//===- kloop/Support/Path.h - Paths as kloop compares them -----------------===//
#ifndef KLOOP_SUPPORT_PATH_H
#define KLOOP_SUPPORT_PATH_H

#include "llvm/ADT/StringRef.h"
#include <string>

namespace kloop {

/// \p P made absolute against \p Base when relative (against the process's
/// working directory when \p Base is empty), with `.` and `..` removed
/// lexically (symbolic links are not resolved).
std::string absolutePath(llvm::StringRef P, llvm::StringRef Base);

/// \p P relative to the directory \p Root when it lies below it (a textual prefix
/// test on both as given, no normalization); else \p P unchanged, as when \p Root is
/// empty. Inventory IDs and diffs name files this way (`kloop extract --root`).
std::string relativePath(llvm::StringRef P, llvm::StringRef Root);

} // namespace kloop

#endif
