//===- kloop/Inventory/WorkloadScope.h - What a workload lets kloop tune -----===//
///
/// \file
/// The part of a workload description (`.kloop.yaml`, docs/kloop-yaml.md) that
/// bounds what a proposer may edit, and the filter that applies it to an
/// inventory (docs/inventory.md): only kernels that are targets, or device
/// functions they call, in files listed in `sources:` and not in `protected:`;
/// never a constant whose value is a hardware fact (`hardware_fact`). Every
/// exclusion comes with a sentence naming what was left out and why
/// (docs/builtin-search.md, "What is tuned").
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_PROPOSE_WORKLOADSCOPE_H
#define KLOOP_PROPOSE_WORKLOADSCOPE_H

#include "kloop/Inventory/Model.h"
#include "nlohmann/json.hpp"
#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kloop {

/// The workload's bounds, as `kloop optimize` passes them to proposers in the
/// context key "workload": {"targets", "dir", "sources", "protected"}.
struct WorkloadScope {
  /// `targets:`: substrings of demangled kernel names (the rule of
  /// measure::WorkloadConfig::isTarget and libkloop-cupti.so).
  std::vector<std::string> Targets;
  /// Absolute directory that Sources and Protected are relative to.
  std::string Dir;
  /// `sources:` (files kloop may edit) and `protected:` (files that must not change).
  std::vector<std::string> Sources, Protected;
};

/// True when \p Pattern (an entry of `targets:` or `outputs[].kernel`) is a substring of \p Kernel's
/// qualified name or of one of its symbols' match keys (the rule of libkloop-cupti.so).
bool kernelNameMatches(const inv::Kernel &Kernel, llvm::StringRef Pattern);

/// {"targets": [...], "dir": "...", "sources": [...], "protected": [...]}.
nlohmann::json toJSON(const WorkloadScope &S);
/// Reads toJSON's form. Error naming the field when a key is missing or not of
/// its type (an array of strings; "dir" a non-empty string).
llvm::Expected<WorkloadScope> workloadScopeFromJSON(const nlohmann::json &J);

/// The filter of one inventory under one scope (or under none: every kernel,
/// any file, only hardware facts excluded).
class ScopeFilter {
public:
  /// \p Inventory: `kloop extract`'s inventory (its Root resolves relative
  /// locations); \p Scope: nullptr for no workload bounds.
  ScopeFilter(const inv::Inventory &Inventory, const WorkloadScope *Scope);

  /// Why kernel \p Kernel (an entry of the inventory's Kernels) is not tuned, as a
  /// clause to follow its ID ("is not a target of the workload ..."), or
  /// std::nullopt when it is in scope.
  std::optional<std::string> kernelExcluded(const inv::Kernel &Kernel) const;
  /// Why constant \p Constant (an entry of the inventory's Constants) is not tuned:
  /// a hardware fact, defined outside `sources:` or in `protected:`, or used
  /// only by kernels (device functions, launch sites) out of scope; a clause
  /// to follow its ID, as for kernelExcluded.
  std::optional<std::string> constantExcluded(const inv::Constant &Constant) const;
  /// True when \p ID names a target kernel, a device function reachable from
  /// one through the call graph (`calls`), or a launch site of a target.
  bool ownerInScope(const std::string &ID) const;

private:
  std::optional<std::string> fileExcluded(const inv::Location &Loc) const;
  const WorkloadScope *Scope;
  std::string Root;
  std::set<std::string> SourceFiles, ProtectedFiles; ///< absolute
  std::set<std::string> Targets, Reachable;          ///< kernel IDs; device function IDs
  std::map<std::string, std::string> SiteKernel;     ///< launch site -> kernel
};

/// \p Inventory with everything ScopeFilter leaves out marked `editable:
/// false`, its `not_editable_reason` the filter's clause: kernels out of scope
/// (their loops, parameters and launch bounds with them, since whoever reads
/// the document skips a kernel that is not editable) and constants out of
/// scope or hardware facts. Appends one note per entity left out to \p Notes:
/// "<ID>: <clause>". An entity already not editable keeps its own reason.
/// Used by the builtin search and by `kloop apply --rule --config`.
inv::Inventory scopeInventory(const inv::Inventory &Inventory, const WorkloadScope *Scope,
                              std::vector<std::string> &Notes);

} // namespace kloop

#endif
