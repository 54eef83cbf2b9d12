//===- kloop/Frontend/Preamble.h - Parses that share their headers ---------===//
///
/// \file
/// A cache of precompiled preambles (clang::PrecompiledPreamble, as clangd
/// uses them) for the parses of one process. Every CUDA parse starts with the
/// same implicit includes: clang's CUDA runtime wrapper, which pulls in the
/// CUDA runtime and the C++ headers it needs, and kloop's nvcc compatibility
/// header. On the bundled saxpy they are nearly all of a parse's time. kloop
/// optimize parses the incumbent four times per candidate (each side before
/// and after the edit); with this cache those headers are parsed once per
/// incumbent and loaded from memory afterwards (bench/apply/README.md: an
/// apply in about a quarter of the time).
///
/// What the preamble holds, and why no more: the implicit includes, in the
/// order the parse would process them, then the main file's leading
/// `#include <...>` lines, up to the last of them (blank lines and `//`
/// comments between them; a block comment, a quoted include, a `#define` or
/// any other line ends them); not those lines when the command line has
/// `-D` macros that kloop defers (commandLineMacrosPath(), docs/nvcc-compat.md),
/// which are processed after the preamble is loaded so that the inventory
/// sees their definitions. A user header or a `#define` inside a preamble
/// would be invisible to the preprocessor callbacks that record the
/// inventory's macros and their expansions: a build that enters a file
/// outside the system include directories (a `-I` header found with angle
/// brackets) is dropped and the preamble rebuilt with the implicit includes
/// only.
///
/// A preamble is reused only when clang's own check passes
/// (PrecompiledPreamble::CanReuse: every file it read unchanged, no file it
/// missed now present) and the parse has the same command line and working
/// directory. It is built only by a parse of the files as they are on disk
/// (no mapped files), and only when that build reports no warning or error;
/// otherwise the parse runs as before. Safe to use from several threads: a
/// preamble is built once per key, and a parse that finds it being built
/// runs without one.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_FRONTEND_PREAMBLE_H
#define KLOOP_FRONTEND_PREAMBLE_H

#include "clang/AST/DeclBase.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace llvm {
class MemoryBuffer;
}

namespace clang {
class CompilerInvocation;
class DiagnosticConsumer;
class FileManager;
class FrontendAction;
class PCHContainerOperations;
class PrecompiledPreamble;
} // namespace clang

namespace kloop {

/// Precompiled preambles by parse (command line and working directory).
/// Owned by the caller for as long as its parses should share them (kloop
/// optimize: one per run). The preambles live in memory, one per translation
/// unit and side (host, device): 10 to 50 MB each, 100 MB with CUB and
/// Thrust (Counts::Bytes; bench/apply/README.md).
class PreambleCache {
public:
  /// Keeps preambles of at most \p MaxBytes in all: a preamble that would
  /// go over is dropped once built, and its key then parses without one
  /// (nothing is evicted, so that parses that cycle through more keys than
  /// fit do not rebuild them in turn). The default, 2 GiB, holds some forty.
  explicit PreambleCache(uint64_t MaxBytes = uint64_t(2) << 30);
  ~PreambleCache();
  PreambleCache(const PreambleCache &) = delete;
  PreambleCache &operator=(const PreambleCache &) = delete;

  /// What the cache did, for tests and benchmarks.
  struct Counts {
    /// Preambles built (one per key, again after its files changed).
    unsigned Builds = 0;
    /// Parses that loaded a preamble.
    unsigned Reused = 0;
    /// Parses that ran without one: none could be reused or built (mapped
    /// files changed what it read, it was being built by another parse, its
    /// build failed or reported a diagnostic).
    unsigned Unused = 0;
    /// Bytes of the preambles held now (PrecompiledPreamble::getSize).
    uint64_t Bytes = 0;
  };
  Counts counts() const;

  /// Drops the preambles of parses whose working directory is not
  /// \p Directory (kloop optimize: those of a former incumbent's sources).
  /// A parse that holds one keeps it until it ends.
  void keepOnly(llvm::StringRef Directory);

  /// Runs \p Action on \p Invocation (a parse's, as tooling::ToolInvocation
  /// builds it from the command line; \p Files holds its file system) with
  /// the preamble of \p Key loaded when one can be reused, building it first
  /// when \p OnDisk (the parse maps no file) and there is none for \p Key or
  /// its files changed. \p UsedPreamble tells which happened. \p StateLost:
  /// the preamble did not carry over what the parse needed of it (a
  /// `#pragma pop_macro` found nothing pushed: the push was in a
  /// precompiled header), so the parse may differ from one without a
  /// preamble; that preamble is dropped and its key parses without one from
  /// then on. Returns what CompilerInstance::ExecuteAction returns.
  bool run(const std::string &Key, bool OnDisk, std::shared_ptr<clang::CompilerInvocation> Invocation,
           clang::FileManager *Files, std::shared_ptr<clang::PCHContainerOperations> PCHOps,
           clang::DiagnosticConsumer *Diags, std::unique_ptr<clang::FrontendAction> Action, bool &UsedPreamble,
           bool &StateLost);

  /// A preamble as the cache keeps it (Preamble.cpp).
  struct Stored;

private:
  struct Entry;
  /// \p Key's entry; a new one when there is none and \p Make, else null. Under M.
  std::shared_ptr<Entry> entry(const std::string &Key, bool Make);
  /// Drops \p Key's preamble and builds none again for it.
  void drop(const std::string &Key);
  /// The bytes of the preambles held. Under M.
  uint64_t heldBytes() const;
  /// The preamble of \p Key if it can be reused for \p Main, else a new one when \p OnDisk, else null.
  std::shared_ptr<const Stored> acquire(const std::string &Key, bool OnDisk,
                                                            const clang::CompilerInvocation &Invocation,
                                                            const llvm::MemoryBuffer &Main, clang::FileManager &Files,
                                                            std::shared_ptr<clang::PCHContainerOperations> PCHOps);
  mutable std::mutex M;
  std::map<std::string, std::shared_ptr<Entry>> Entries;
  uint64_t MaxBytes;
  Counts C;
};

/// The declarations of \p DC that this parse read from source, leaving out, and not reading back, those
/// loaded from a precompiled preamble. A preamble holds only headers found in system directories (the
/// implicit includes and the main file's leading `#include <...>` lines), parsed before anything an
/// edit can change: an edit inside that text makes the parse after it run without the preamble, and
/// then apply reruns the parse before it without one too (EditedCodeCheck::PreambleMismatch), so both
/// sides of a comparison leave out the same declarations. Reading every library declaration back from
/// the preamble costs a fifth of a parse.
inline auto parsedDecls(const clang::DeclContext *DC) {
  return llvm::make_filter_range(DC->noload_decls(), [](const clang::Decl *D) { return !D->isFromASTFile(); });
}

} // namespace kloop

#endif
