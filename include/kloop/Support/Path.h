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

/// The installation prefix of the running executable: the parent of the
/// directory that holds it (`<prefix>/bin/kloop` -> `<prefix>`, the build
/// tree's `build/bin/kloop` -> `build`), found with
/// llvm::sys::fs::getMainExecutable(\p Argv0, \p MainAddr), which reads
/// /proc/self/exe on Linux, so a symbolic link to kloop leads to the real
/// prefix. "" when the executable cannot be found. kloop's own files are
/// looked up under it (docs/install.md), so a moved prefix keeps working.
std::string installPrefix(const char *Argv0, void *MainAddr);

/// \p P relative to the directory \p Root when it lies below it (a textual prefix
/// test on both as given, no normalization); else \p P unchanged, as when \p Root is
/// empty. Inventory IDs and diffs name files this way (`kloop extract --root`).
std::string relativePath(llvm::StringRef P, llvm::StringRef Root);

/// True when the path \p P is the directory \p Dir or lies below it (a textual
/// test on whole components as given, no normalization: "/a/bc" is not below "/a/b").
bool isAtOrBelow(llvm::StringRef P, llvm::StringRef Dir);

} // namespace kloop

#endif
