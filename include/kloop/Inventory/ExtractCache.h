//===- kloop/Inventory/ExtractCache.h - Reusing unchanged TU parses --------===//
///
/// \file
/// A content-addressed cache of per-translation-unit inventory results, so that
/// a second `kloop extract` of an unchanged codebase parses nothing.
///
/// An entry is keyed by everything that decides a parse's result:
///  - the identity of the kloop executable (a hash of its own file: a new kloop
///    never reads an old kloop's entries) and InventorySchemaVersion;
///  - both side command lines (flags, GPU architecture, include directories),
///    the working directory and the include paths clang reads from the
///    environment (CPATH, C_INCLUDE_PATH, CPLUS_INCLUDE_PATH);
/// and it is valid only while every file the parse read or probed (the main
/// file, every header, found through the FileManager of the parse) still has
/// the content it had: each is re-hashed (XXH3-128) on lookup. A change to any
/// header, or to one flag, is a miss.
///
/// Not covered (documented in docs/inventory.md): a header created after the
/// entry was written that would now shadow an included one earlier in the
/// search path. `--no-cache` or deleting the directory clears it.
///
/// Entries are one JSON file each, written by kloop/Support/AtomicFile.h, so
/// parallel and concurrent runs share a directory safely. A corrupt or
/// unreadable entry is a miss, never an error.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_INVENTORY_EXTRACTCACHE_H
#define KLOOP_INVENTORY_EXTRACTCACHE_H

#include "kloop/Inventory/Inventory.h"
#include "llvm/Support/Error.h"
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace kloop {

/// The default cache directory: $XDG_CACHE_HOME/kloop/extract, else
/// $HOME/.cache/kloop/extract; empty when neither variable is set.
std::string defaultExtractCacheDir();

/// TUResult <-> JSON, the cache's entry format (every field, including byte
/// offsets and the files each side read).
nlohmann::json tuResultToJSON(const TUResult &R);
/// Errors name the first missing or mistyped field.
llvm::Expected<TUResult> tuResultFromJSON(const nlohmann::json &J);

/// A cache directory shared by the threads of one `kloop extract`.
class ExtractCache {
public:
  /// \p Dir is created on first store. \p ExecutableId identifies the kloop
  /// build (see executableId()).
  ExtractCache(std::string Dir, std::string ExecutableId);

  /// The entry key of \p Job under \p Opts: a hex SHA-256 of the executable
  /// id, the schema version, the working directory, the include-path
  /// environment variables and both side command lines.
  std::string key(const CompileJob &Job, const FrontendOptions &Opts) const;

  /// The cached result for \p Key when every file it depends on still has its
  /// recorded content; std::nullopt on a miss (absent, stale, corrupt).
  /// The returned result's Job is \p Job.
  std::optional<TUResult> lookup(llvm::StringRef Key, const CompileJob &Job);

  /// Writes \p R, parsed starting at \p ParseStart, under \p Key. Not stored:
  /// a job that could not be planned (Job.Error), a side whose file list is
  /// empty, and a result one of whose files was modified at or after one second
  /// before \p ParseStart (it may have changed while clang read it, so the hash
  /// taken now need not be of the bytes parsed; the one second covers file
  /// systems with coarse timestamps; ccache's "file too new" rule). Errors name
  /// the entry's path and the reason, and the first is kept (firstStoreError());
  /// callers may ignore them (a failed store only costs a parse).
  llvm::Error store(llvm::StringRef Key, const TUResult &R,
                    std::chrono::system_clock::time_point ParseStart);

  /// The first store error of this run ("" when none), for one warning.
  std::string firstStoreError() const;

  /// Lookups that hit, and entries stored, so far.
  unsigned hits() const { return Hits; }
  unsigned stores() const { return Stores; }
  const std::string &dir() const { return Dir; }

private:
  /// Hex XXH3-128 of the file's content, memoized per path for this run;
  /// std::nullopt when it cannot be read.
  std::optional<std::string> contentHash(const std::string &Path);
  /// Writes the entry file of \p Key: \p Files (path -> hash) and \p R.
  llvm::Error writeEntry(llvm::StringRef Key, const nlohmann::json &Files, const TUResult &R);

  std::string Dir, ExeId;
  mutable std::mutex Mu;
  std::map<std::string, std::optional<std::string>> Hashes;
  std::string FirstStoreError; ///< guarded by Mu
  std::atomic<unsigned> Hits{0}, Stores{0};
};

/// The cache a command uses: in \p Dir, or defaultExtractCacheDir() when \p Dir
/// is empty; nullptr when \p Disabled (`--no-cache`) or no directory is known.
std::unique_ptr<ExtractCache> openExtractCache(llvm::StringRef Dir, bool Disabled);

/// A hash of the running executable's own file (/proc/self/exe), so that a
/// rebuilt kloop never reuses entries of another build; "unknown" when it
/// cannot be read (the cache is then keyed by the schema version only).
std::string executableId();

} // namespace kloop

#endif
