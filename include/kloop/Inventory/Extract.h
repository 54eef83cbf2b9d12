//===- kloop/Inventory/Extract.h - The whole extract sequence ---*- C++ -*-===//
///
/// \file
/// `kloop extract` as one library call: plan the compile jobs
/// (planCompileJobs), finish or roll back an interrupted `kloop apply
/// --in-place` next to their files (recoverInterruptedWrites), parse every
/// translation unit on both sides (runInventory, optionally through the
/// extract cache) and merge the results into the inventory document
/// (mergeInventory, docs/inventory.md). The `kloop extract` command and
/// `kloop optimize`'s extract stage both call extractInventory, so the two
/// cannot drift apart; neither runs kloop's own binary.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_INVENTORY_EXTRACT_H
#define KLOOP_INVENTORY_EXTRACT_H

#include "kloop/Inventory/Inventory.h"
#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace kloop {

class ExtractCache;

/// What extractInventory needs besides the inputs.
struct ExtractOptions {
  /// Paths in the document are relative to this directory when they lie below
  /// it (`--root`). Empty: the current directory. Made absolute, dots removed.
  std::string Root;
  /// Reuse and store parses here (kloop/Inventory/ExtractCache.h); nullptr: parse everything.
  ExtractCache *Cache = nullptr;
};

/// What extractInventory produced.
struct Extraction {
  /// The planned jobs; their CompileJob::Warnings are for the caller to print with the file name.
  std::vector<CompileJob> Jobs;
  /// One line per action the recovery of interrupted writes took, for the caller to print.
  std::vector<std::string> RecoveryNotes;
  /// Per translation unit, in the order of Jobs (the AST pointers of its entities are dangling).
  std::vector<TUResult> Results;
  /// The inventory as typed values (typedInventory); inv::toJSON of it is the document kloop
  /// writes (docs/inventory.md).
  inv::Inventory Inventory;
  /// Translation units with status "error" (lost whole) and "partial" (parsed with errors).
  unsigned Lost = 0, Partial = 0;
};

/// Runs the extract sequence on \p Inputs. Errors: those of planCompileJobs
/// and of typedInventory (a member the typed model lacks: a kloop bug),
/// (nothing can be done at all, e.g. `-p DIR` without a readable
/// compile_commands.json) and of recoverInterruptedWrites (a manifest that
/// cannot be recovered). A translation unit that does not parse, or whose
/// parse crashed (TUResult's ParseResult::Crash), is not an error here: it has
/// status "error" in the document and counts in Extraction::Lost; callers that
/// need every unit use requireAllParsed.
llvm::Expected<Extraction> extractInventory(const FrontendOptions &Inputs, const ExtractOptions &Opts);

/// Success when no translation unit of \p E has status "error" (what makes
/// `kloop extract` exit 1). Else a ParseCrashError (stage "extract") when a
/// parse crashed, otherwise an llvm::StringError naming the first such unit:
/// "<file>: does not parse, so its kernels cannot be inventoried:" and its
/// errors, one per line.
llvm::Error requireAllParsed(const Extraction &E);

} // namespace kloop

#endif
