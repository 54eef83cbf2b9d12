//===- kloop/Capture/Capture.h - Captures for kloop's own code ------------===//
///
/// \file
/// kloop's side of a capture directory (format: kloop/Capture/Manifest.h,
/// docs/capture.md): reading one with llvm::Error results, and the figures
/// `kloop capture` prints.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_CAPTURE_CAPTURE_H
#define KLOOP_CAPTURE_CAPTURE_H

#include "kloop/Capture/Manifest.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <map>
#include <string>
#include <vector>

namespace kloop {
namespace capture {

/// How thoroughly readCapture checks the blobs.
enum class BlobCheck {
  Exist,    ///< every blob the manifest names exists (cheap)
  Contents, ///< ... and decompresses to the size and FNV-1a 64 its name says
};

/// Reads the capture directory \p Dir (readManifest, then verifyBlobs for
/// BlobCheck::Contents). Errors name the file and the member or blob:
/// "/c/manifest.json: schema: expected \"kloop-capture/1\", found ...",
/// "/c/blobs/...: blob named in /c/manifest.json is missing".
llvm::Expected<Manifest> readCapture(llvm::StringRef Dir, BlobCheck Check = BlobCheck::Contents);

/// Totals of one kernel in a capture.
struct KernelTotals {
  /// Demangled name (the mangled one for extern "C" kernels).
  std::string Name;
  /// Launches captured.
  unsigned Launches = 0;
  /// Distinct launch configurations (grid, block, dynamic shared memory)
  /// among them.
  unsigned Configs = 0;
  /// Bytes of the allocations restored before its launches (sum over
  /// launches).
  uint64_t Bytes = 0;
  /// Launches refused.
  unsigned Refused = 0;
};

/// Per mangled kernel name, what \p M captured and refused.
std::map<std::string, KernelTotals> kernelTotals(const Manifest &M);

/// The distinct reasons of \p M's refusals with how many launches each
/// covers, most frequent first.
std::vector<std::pair<std::string, unsigned>> refusalReasons(const Manifest &M);

} // namespace capture
} // namespace kloop

#endif
