//===- NvccCompat.h - kloop's nvcc compatibility layer (private) ----------===//
///
/// \file
/// The parts of the nvcc compatibility layer (docs/nvcc-compat.md) that are not the
/// force-included header: a file system that serves the header and normalizes spaced launch
/// chevrons, and the one clang error that nvcc reports as a warning.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_LIB_FRONTEND_NVCCCOMPAT_H
#define KLOOP_LIB_FRONTEND_NVCCCOMPAT_H

#include "llvm/ADT/IntrusiveRefCntPtr.h"
#include "llvm/Support/VirtualFileSystem.h"

namespace clang {
class Diagnostic;
}

namespace kloop {

/// \p Base with the compatibility header added at nvccCompatHeaderPath() and every file read
/// through normalizeLaunchChevrons().
llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem>
withNvccCompat(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> Base);

// isNvccSharedInitWarning is declared in kloop/Frontend/Frontend.h (the inventory's error
// recorder asks it too).

} // namespace kloop

#endif
