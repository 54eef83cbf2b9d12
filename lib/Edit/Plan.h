//===- Plan.h - Resolve a proposal's IDs on the AST of every parse -*- C++ -*-===//
//
// Internal to kloopEdit. The first step of applyProposal (docs/edits.md): each
// translation unit is parsed on the host side (launch sites, the pointers they
// pass) and then the device side (kernels and their regions); while the AST is
// alive every edit is resolved through the inventory entity of its ID and
// handed to its kind (EditKind.h), which turns it into replacements.
//
//===----------------------------------------------------------------------===//
#ifndef KLOOP_LIB_EDIT_PLAN_H
#define KLOOP_LIB_EDIT_PLAN_H

#include "AddedCode.h"
#include "EditKind.h"

#include <condition_variable>
#include <map>
#include <mutex>
#include <set>

namespace clang {
class FrontendAction;
} // namespace clang

namespace kloop {
namespace edit {

/// A device-side parse of job \p Job (an index) under GPU architecture \p Arch, one of the other
/// architectures its command names (checkedArchs): read for its diagnostics before and after the edit,
/// so that an edit breaking code under `#if __CUDA_ARCH__ >= 900` is refused where the command builds
/// sm_90 too, and before the edit for the facts of its kernels and parameters (ArchFact). No edit is
/// planned on it: IDs of loops and launches can differ between architectures.
struct ArchUnit {
  size_t Job = 0;
  std::string Arch;
};

/// What a job's device side under another architecture (an ArchUnit's parse before the edit) says of
/// one kernel or parameter, for the edits whose soundness rests on what the code does rather than on
/// whether it compiles (add_restrict, add_const): code under `#if __CUDA_ARCH__ == 800` that writes
/// through a parameter, or reaches memory through a pointer that is no parameter, exists in that
/// architecture's parse only.
struct ArchFact {
  /// The architecture, e.g. "sm_80".
  std::string Arch;
  /// The entity's inventory data in that parse (docs/inventory.md): a kernel's "indirect_pointer", a
  /// parameter's "written" and "write_evidence".
  nlohmann::json Data;
  /// A kernel: where that parse's device code launches it (PlanContext::deviceLaunchOf), `file:line`.
  std::optional<std::string> DeviceLaunch;
  /// A kernel: where that parse defines it (definitionKey): `#if __CUDA_ARCH__ == 800` around a whole
  /// definition gives that architecture another one.
  std::string Definition;
};

/// Shared state of all plan parses.
struct PlanState {
  const Proposal &P;
  const ApplyOptions &Opts;
  std::mutex M;
  std::vector<std::vector<Outcome>> PerEdit; // [edit][parse]
  /// IDs seen, by entity kind, and the kind of each (for "unknown ID" and "wrong kind" reasons).
  std::map<EntityKind, std::set<std::string>> Known;
  std::map<std::string, EntityKind> KindOf;
  /// Each seen ID's file-qualified forms (PlanContext::qualifiedID): more than one when files define
  /// kernels (constants) of one name, and the "unknown ID" reason then lists those forms.
  std::map<std::string, std::set<std::string>> QualifiedOf;
  std::set<std::string> HostFunctions;
  /// Kernels with compile errors (clang's recovery may have dropped some of their regions), by ID: the
  /// first error, with its file relative to the root ("" when clang only marked the declaration invalid).
  std::map<std::string, std::string> KernelErrors;
  /// What one parse's planner made, per parse unit (parseUnit).
  struct UnitPlan {
    std::vector<Outcome> Outcomes;     ///< per edit; empty when the planner did not run (a fatal error)
    std::vector<LaunchFacts> Launches; ///< host side: the launches of the TU
  };
  std::vector<UnitPlan> Units;
  /// Host-side parses not yet finished; a device-side planner waits for none (PlanContext::aliasFor
  /// reads every TU's launches).
  size_t HostsPending = 0;
  /// Other architectures' parses before the edit (ArchUnit) not yet finished; a device-side planner
  /// waits for none when an edit reads their facts (ArchFacts).
  size_t ArchsPending = 0;
  std::condition_variable HostsDone;
  /// The kernel definitions each job's host side compiles, by definitionKey, per parseKey(Job, Side::Host);
  /// collected only when the proposal has an add_const edit (PlanContext::hostCompiles).
  std::map<std::string, std::set<std::string>> HostKernels;
  /// The facts of the other architectures' parses before the edit, per parseKey(Job, Side::Device) and
  /// entity (kernels and parameters); collected only when an edit reads them (readsArchFacts).
  /// (Entities are named by archFactKey; each one's facts are by the ArchUnit's index in archUnits, so in
  /// architecture order.)
  std::map<std::string, std::map<std::string, std::map<size_t, ArchFact>>> ArchFacts;
  /// Top-level declarations before the edit, per parseKey (AddedCode.h).
  std::map<std::string, DeclCensus> Census;
  /// Diagnostics of each parse before the edit (diagKey), per parseKey.
  std::map<std::string, std::multiset<std::string>> BeforeDiags;
  /// The parses before the edit that loaded a precompiled preamble (ApplyOptions::Preambles), by parseKey.
  std::set<std::string> WithPreamble;
  /// A parse before the edit loaded a preamble that lost state (ParseResult::PreambleStateLost).
  bool PreambleStateLost = false;
  /// ApplyOptions::DropRefused: the jobs (indices) that cannot be parsed before the edit, and why
  /// (ApplyResult::Unparsed's lines).
  std::map<size_t, std::string> Unparsed;
  /// Per job: the files on disk its two parses before the edit read (ParseResult::InputFiles), or
  /// nothing when either loaded a precompiled preamble, whose files InputFiles lacks.
  std::vector<std::optional<std::set<std::string>>> FilesRead;
  /// The device-side parses under a job's other GPU architectures (archUnits) that were usable before
  /// the edit: the re-parse checks each of these, and no other, for new diagnostics.
  std::vector<ArchUnit> ArchUnits;
  /// Those that were not usable, one sentence each (ApplyResult::Unchecked).
  std::vector<std::string> ArchUnchecked;
  PlanState(const Proposal &P, const ApplyOptions &O) : P(P), Opts(O), PerEdit(P.Edits.size()) {}
};

/// The GPU architectures besides the first (which every parse of \p Job reads) that the check also
/// parses \p Job's device side under: every other distinct architecture its command names, in command order
/// (code under `#if __CUDA_ARCH__ == 800` is read by sm_80 alone; sm_90a's `__CUDA_ARCH_FEAT_SM90_ALL`
/// code by sm_90a alone). None when --cuda-gpu-arch names one (FrontendOptions::GpuArch): the user chose
/// the architecture to read.
std::vector<std::string> checkedArchs(const CompileJob &Job, const FrontendOptions &FOpts);
/// Every job's checkedArchs, in job order.
std::vector<ArchUnit> archUnits(const std::vector<CompileJob> &Jobs, const FrontendOptions &FOpts);
/// The key of St.ArchFacts for \p E, a kernel or a parameter of the parse of \p C.
std::string archFactKey(const Entity &E, const PlanContext &C);
/// Whether an edit of \p P reads the other architectures' facts (ArchFact): add_restrict or add_const.
bool readsArchFacts(const Proposal &P);
/// Names the diagnostics of \p U's parses (PlanState::BeforeDiags): parseKey's device side and the
/// architecture.
std::string archKey(const CompileJob &Job, const ArchUnit &U);
/// The parse of \p Job's device side under \p U's architecture, with \p Mapped files (the edited text)
/// in memory; no precompiled preamble, before or after. Syntax only, unless \p Action is given.
ParseResult parseArchUnit(const CompileJob &Job, const ArchUnit &U, const FrontendOptions &FOpts,
                          const std::vector<std::pair<std::string, std::string>> &Mapped,
                          std::unique_ptr<clang::FrontendAction> Action = nullptr);

/// Names the parse of \p Job on side \p S: a file the compilation database lists with several
/// commands is several jobs (CompileJob::Entry), each parsed and checked on its own.
std::string parseKey(const CompileJob &Job, Side S);
/// A diagnostic as compared before and after the edit: level, file name and message.
std::string diagKey(const ParseDiagnostic &D);
/// \p File of \p Job (relative to its directory when not absolute) relative to \p Root, as apply's
/// messages name files.
std::string rootRelative(const std::string &File, const CompileJob &Job, llvm::StringRef Root);
/// \p D with its file rootRelative.
ParseDiagnostic rootRelative(const ParseDiagnostic &D, const CompileJob &Job, llvm::StringRef Root);
/// The command line of a parse, with checkedWarningFlags() added.
std::vector<std::string> checkedCommandLine(const CompileJob &Job, Side S, const FrontendOptions &FOpts);

/// Parse unit \p U of the 2 x \p NJobs that planEdits and the re-parse run: the job and the side.
/// Every job's host side comes first, then every job's device side (planEdits schedules them, and the
/// other architectures, by scheduledUnit).
std::pair<size_t, Side> parseUnit(size_t U, size_t NJobs);
/// The unit (a parseUnit, or 2 x \p NJobs + an ArchUnit's index) that planEdits schedules \p I-th of
/// 2 x \p NJobs + \p NArchs: every host side, then every other architecture, then every device side, so
/// that a device-side planner, which waits for the first two, never holds a thread one of them needs.
size_t scheduledUnit(size_t I, size_t NJobs, size_t NArchs);
/// The 2 x \p NJobs parse units in job order, each job's host side before its device side: the order
/// their results are judged in, whatever order the parses ran in.
std::vector<size_t> unitsInJobOrder(size_t NJobs);

/// Parses every job on both sides and plans every edit of St.P on each parse
/// (St.PerEdit, St.Known, ...), FOpts.Jobs parses at a time. St.PerEdit holds each
/// edit's outcomes in job order, host side before device side, however the parses were
/// scheduled. An error when a job cannot be parsed at all (the first such job and side),
/// unless St.Opts.DropRefused, where such jobs are listed in St.Unparsed.
llvm::Error planEdits(PlanState &St, const std::vector<CompileJob> &Jobs, const FrontendOptions &FOpts);

} // namespace edit
} // namespace kloop

#endif
