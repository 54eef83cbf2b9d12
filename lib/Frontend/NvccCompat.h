//===- NvccCompat.h - kloop's nvcc compatibility layer (private) ----------===//
///
/// \file
/// The parts of the nvcc compatibility layer (docs/nvcc-compat.md) that are not the
/// force-included header: a file system that serves the header and normalizes spaced launch
/// chevrons, the clang errors that nvcc does not report, and what lets the parse read its Sema for
/// them.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_LIB_FRONTEND_NVCCCOMPAT_H
#define KLOOP_LIB_FRONTEND_NVCCCOMPAT_H

#include "llvm/ADT/IntrusiveRefCntPtr.h"
#include "llvm/Support/VirtualFileSystem.h"
#include <memory>
#include <string>
#include <vector>

namespace clang {
class Diagnostic;
class FrontendAction;
}

namespace kloop {

/// \p Base with the compatibility header added at nvccCompatHeaderPath(), \p CommandLineMacros
/// (when not empty) at commandLineMacrosPath(), and every file read through
/// normalizeLaunchChevrons() and normalizePragmaMacros().
llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem>
withNvccCompat(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> Base,
               llvm::StringRef CommandLineMacros = {});

/// Absolute path of the in-memory header that defines the command line's deferred macros
/// (deferCommandLineMacros); no such file exists on disk.
llvm::StringRef commandLineMacrosPath();

/// A clang command line whose -D/-U of ordinary names are moved into a header.
struct DeferredMacros {
  /// The command line without the deferred -D/-U, and with `-include commandLineMacrosPath()`
  /// right after the compatibility header's -include (after argv[0] when there is none).
  std::vector<std::string> CommandLine;
  /// `#line 1 "<command line>"`, then one `#define`/`#undef` per deferred flag, in command-line
  /// order; empty when nothing was deferred (CommandLine is then the input).
  std::string Header;
};

/// Moves the -D/-U flags (`-DN=64`, `-D N`, `--define-macro=...`, `-UX`) of \p CommandLine
/// (argv[0] included) whose macro name is ordinary into a header that is included after
/// clang's CUDA wrapper and the compatibility header, so that they take effect before any code
/// of the translation unit but not in the headers clang's wrapper includes and nvcc does not
/// (cuda.h, curand_mtgp32_kernel.h and clang's __clang_cuda_*.h use names such as N and X).
/// Macros that configure those headers keep their place (macroConfiguresHeaders).
DeferredMacros deferCommandLineMacros(const std::vector<std::string> &CommandLine);

/// True for a macro name that the headers read before the translation unit's code (clang's
/// wrapper, the CUDA runtime, libc, libstdc++, the compatibility header) may be configured by:
/// a reserved name (a leading underscore: feature-test macros, _GLIBCXX_*, __CUDA_*), NDEBUG
/// (<assert.h>), NOMINMAX, QUALIFIERS (cuRAND), and names beginning with CUDA_, CUDART_,
/// CURAND_, NV_ or PSTL_ (CUDA_API_PER_THREAD_DEFAULT_STREAM, NV_MATH_USE_TEMPLATE, ...).
bool macroConfiguresHeaders(llvm::StringRef Name);

/// \p Action with a consumer beside its own that lets nvccAcceptedError read the parse's Sema
/// (the instantiation stack at the error), on the thread that runs the parse, and a warning at each
/// preprocessor condition outside the system headers that tests __NVCC__ (which nvcc defines and the
/// parse does not; docs/nvcc-compat.md).
std::unique_ptr<clang::FrontendAction> withSemaWatch(std::unique_ptr<clang::FrontendAction> Action);

// nvccAcceptedError is declared in kloop/Frontend/Frontend.h (the inventory's error
// recorder asks it too).

} // namespace kloop

#endif
