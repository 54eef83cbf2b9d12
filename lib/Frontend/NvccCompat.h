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

/// True for clang's "initialization is not supported for __shared__ variables" on a
/// declaration with no initializer written (`__shared__ cuda::barrier<...> b;`, whose type has
/// a non-empty constructor or destructor). nvcc accepts it with warning 20054-D ("dynamic
/// initialization is not supported for a function-scope static __shared__ variable") and runs
/// no constructor; an initializer that is written stays an error, as in nvcc.
bool isNvccSharedInitWarning(const clang::Diagnostic &Info);

} // namespace kloop

#endif
