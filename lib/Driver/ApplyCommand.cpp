//===- ApplyCommand.cpp - `kloop apply` -----------------------------------===//
//
// kloop apply PROPOSAL.json [FILES...] [-- ARGS] | -p DIR
// kloop apply --rule NAME [FILES...] [-- ARGS]
// Prints a unified diff (default), writes clang-apply-replacements YAML
// (--export-fixes FILE) or rewrites the files atomically (--in-place).
// A refused proposal prints `kloop apply: refused: ...` lines, exit 1, writes nothing.
//
//===----------------------------------------------------------------------===//
#include "RuleOutputs.h"
#include "VerifyBuild.h"
#include "kloop/Driver/Command.h"
#include "kloop/Support/JSON.h"
#include "kloop/Support/AtomicFile.h"
#include "kloop/Support/Ptxas.h"
#include "kloop/Edit/ApplyFile.h"
#include "kloop/Edit/Rules.h"
#include "kloop/Inventory/Extract.h"
#include "kloop/Inventory/ExtractCache.h"
#include "kloop/Inventory/WorkloadScope.h"
#include "kloop/Measure/Config.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <set>

using namespace llvm;

namespace {
cl::SubCommand ApplySub("apply", "Apply a proposal (typed edits on inventory IDs) after checking it");
cl::list<std::string> Positional(cl::Positional, cl::desc("<proposal.json> [<file or directory>...]"),
                                 cl::sub(ApplySub));
cl::opt<std::string> BuildPath("p", cl::desc("Build directory holding compile_commands.json"),
                               cl::value_desc("dir"), cl::sub(ApplySub));
cl::opt<std::string> RuleName("rule", cl::desc("Apply a built-in rule instead of a proposal file"),
                              cl::value_desc("name"), cl::sub(ApplySub));
cl::opt<std::string> ConfigPath("config",
                                cl::desc("With --rule: the workload description (.kloop.yaml); the rule edits only its "
                                         "targets and the device functions they call, in its sources, never in "
                                         "protected files"),
                                cl::value_desc("file"), cl::sub(ApplySub));
cl::opt<std::string> ExportFixes("export-fixes", cl::desc("Write clang-apply-replacements YAML to this file"),
                                 cl::value_desc("file"), cl::sub(ApplySub));
cl::opt<bool> InPlace("in-place", cl::desc("Rewrite the files (atomically: temporary file, then rename)"),
                      cl::sub(ApplySub));
cl::opt<bool> NoFormat("no-format", cl::desc("Do not clang-format changed lines even with a .clang-format"),
                       cl::sub(ApplySub));
cl::opt<bool> VerifyBuild("verify-build",
                          cl::desc("Compile before and after with nvcc -Xptxas -v; print the resource report"),
                          cl::sub(ApplySub));
cl::opt<std::string> Nvcc("nvcc", cl::desc("nvcc for --verify-build (default: <cuda-path>/bin/nvcc)"),
                          cl::sub(ApplySub));
cl::opt<std::string> CudaPath("cuda-path", cl::desc("CUDA installation (default: $CUDA_HOME, /usr/local/cuda)"),
                              cl::sub(ApplySub));
cl::opt<std::string> GpuArch("cuda-gpu-arch", cl::desc("GPU architecture (default: the command's, else sm_75, nvcc's)"),
                             cl::sub(ApplySub));
cl::opt<std::string> Root("root", cl::desc("Launch-site IDs and diff paths are relative to this directory"),
                          cl::sub(ApplySub));
cl::opt<unsigned> Jobs("j", cl::desc("Translation units parsed in parallel"), cl::init(0), cl::Prefix,
                       cl::sub(ApplySub));

std::string rootDir() {
  SmallString<256> R(Root);
  if (R.empty())
    sys::fs::current_path(R);
  else
    sys::fs::make_absolute(R);
  sys::path::remove_dots(R, true);
  return std::string(R);
}

/// \p E, followed by each translation unit of \p Inv that could not be parsed and its first error (a
/// rule that matched nothing may have had nothing to read).
Error withLostUnits(Error E, const kloop::inv::Inventory &Inv) {
  std::string Msg = toString(std::move(E));
  for (const kloop::inv::TranslationUnit &TU : Inv.TranslationUnits)
    if (TU.Status && *TU.Status == "error")
      Msg += "\n  " + TU.File + " could not be parsed" + (TU.Errors.empty() ? "" : ": " + TU.Errors.front());
  return createStringError(inconvertibleErrorCode(), Msg);
}

/// Where \p L begins, as `file:line:column`: what names one definition in any extract of its files.
std::string placeOf(const kloop::inv::Location &L) {
  return L.File + ":" + std::to_string(L.Begin.Line) + ":" + std::to_string(L.Begin.Column);
}

/// Adds to \p Inv the launch sites that other units of the compilation database have of its kernels
/// defined in a header. A rule reads every launch of a kernel it edits (a block proved square, or
/// (T, T, 1)), and a header's kernel may be launched from a unit the command line did not name, which its
/// edit then changes too. Found by an extract of the whole database (through the extract cache); a kernel
/// is matched by where it is defined, each site it lacks appended to its LaunchSites and to the
/// inventory's. Nothing when \p Opts names no files, has no database or no kernel is in a header.
Error addDatabaseLaunches(kloop::inv::Inventory &Inv, const kloop::FrontendOptions &Opts, const std::string &RootDir) {
  std::set<std::string> Units;
  for (const kloop::inv::TranslationUnit &TU : Inv.TranslationUnits)
    Units.insert(TU.File);
  bool InHeader = llvm::any_of(Inv.Kernels, [&](const kloop::inv::Kernel &K) { return !Units.count(K.Loc.File); });
  if (Opts.BuildPath.empty() || Opts.Inputs.empty() || !InHeader)
    return Error::success();
  kloop::FrontendOptions All = Opts;
  All.Inputs.clear();
  std::unique_ptr<kloop::ExtractCache> Cache = kloop::openExtractCache("", /*Disabled=*/false);
  Expected<kloop::Extraction> E = kloop::extractInventory(All, {RootDir, Cache.get()});
  if (!E)
    return E.takeError();
  std::map<std::string, const kloop::inv::Kernel *> ByPlace;
  for (const kloop::inv::Kernel &K : E->Inventory.Kernels)
    ByPlace.emplace(placeOf(K.Loc), &K);
  for (kloop::inv::Kernel &K : Inv.Kernels) {
    auto It = ByPlace.find(placeOf(K.Loc));
    for (const std::string &ID : It == ByPlace.end() ? std::vector<std::string>() : It->second->LaunchSites) {
      const kloop::inv::LaunchSite *L = E->Inventory.launchSite(ID);
      if (!L || llvm::is_contained(K.LaunchSites, ID))
        continue;
      K.LaunchSites.push_back(ID);
      if (!Inv.launchSite(ID)) {
        Inv.LaunchSites.push_back(*L);
        Inv.LaunchSites.back().Kernel = K.ID;
      }
    }
  }
  return Error::success();
}

/// --rule NAME: the rule's proposal for the inventory of the inputs, applied with refused candidate edits
/// dropped (they are reported as skipped).
Expected<kloop::ProposalApplication> applyRule(const kloop::FrontendOptions &Opts, kloop::ApplyOptions AO,
                                               bool WriteNow) {
  kloop::ExtractOptions EO;
  EO.Root = AO.Root;
  Expected<kloop::Extraction> E = kloop::extractInventory(Opts, EO);
  if (!E)
    return E.takeError();
  kloop::inv::Inventory Inv = std::move(E->Inventory);
  if (Error Err = addDatabaseLaunches(Inv, Opts, EO.Root))
    return std::move(Err);
  std::optional<std::vector<kloop::OutputTolerance>> Outputs;
  if (!ConfigPath.empty()) { // the workload bounds what the rule may touch
    Expected<kloop::measure::WorkloadConfig> C = kloop::measure::loadConfig(ConfigPath);
    if (!C)
      return C.takeError();
    Outputs = kloop::ruleOutputs(*C);
    kloop::WorkloadScope Scope{C->Targets, C->Dir, C->Sources, C->Protected};
    std::vector<std::string> LeftOut;
    Inv = kloop::scopeInventory(Inv, &Scope, LeftOut);
    for (const std::string &N : LeftOut)
      errs() << "kloop apply: left out: " << kloop::terminalSafe(N) << "\n";
  }
  Expected<kloop::Proposal> P = kloop::proposalFromRule(RuleName, Inv, Outputs ? &*Outputs : nullptr);
  if (!P)
    return withLostUnits(P.takeError(), Inv);
  AO.DropRefused = true;
  Expected<kloop::ProposalApplication> A = kloop::applyProposalToInputs(*P, Opts, AO, WriteNow);
  if (A)
    A->RecoveryNotes.insert(A->RecoveryNotes.begin(), E->RecoveryNotes.begin(), E->RecoveryNotes.end());
  return A;
}

/// --verify-build: every unit that reads a changed file compiled before and after with nvcc -Xptxas -v
/// (VerifyBuild.h), the report printed; false (after printing why) when the edited code does not build
/// or nvcc cannot run. A changed file that no unit reads is named in a warning.
bool verifyBuild(const kloop::ProposalApplication &A) {
  std::string NvccPath = Nvcc;
  if (NvccPath.empty()) {
    auto CI = kloop::findCudaInstallation(CudaPath);
    if (!CI) {
      errs() << "kloop apply: error: --verify-build: no CUDA installation found (use --cuda-path or --nvcc)\n";
      return false;
    }
    NvccPath = CI->Path + "/bin/nvcc";
  }
  Expected<kloop::BuildCheck> B = kloop::verifyBuild(A, NvccPath, GpuArch, rootDir());
  if (!B) {
    errs() << "kloop apply: error: --verify-build: " << kloop::terminalSafe(toString(B.takeError())) << "\n";
    return false;
  }
  if (B->EditedFails) {
    errs() << "kloop apply: refused: --verify-build: the edited code does not build: "
           << kloop::terminalSafe(*B->EditedFails) << "\n";
    return false;
  }
  for (const std::string &F : B->NotCompiled)
    errs() << "kloop apply: warning: --verify-build: no unit compiled reads " << kloop::terminalSafe(F)
           << "; its edits are not verified\n";
  errs() << "kloop apply: ptxas report " << kloop::dumpJSON(B->Report, 2) << "\n";
  return true;
}

/// Prints the refusals of \p A (`refused:`, or `skipped:` for the edits a rule dropped, then a count of
/// the edits applied and skipped); true when the proposal is refused or changes nothing (exit 1).
bool reportRefusals(const kloop::ProposalApplication &A, bool Dropped) {
  for (const std::string &U : A.Result.Unparsed)
    errs() << "kloop apply: skipped: " << kloop::terminalSafe(U) << "\n";
  for (const kloop::Refusal &R : A.Result.Refusals)
    errs() << "kloop apply: " << (Dropped ? "skipped: " : "refused: ") << kloop::terminalSafe(R.str()) << "\n";
  if (Dropped && A.P)
    errs() << "kloop apply: " << A.Result.Applied.size() << " of " << A.P->Edits.size() << " edit(s) applied, "
           << A.Result.Refusals.size() << " skipped; " << A.Result.Unparsed.size()
           << " translation unit(s) skipped\n";
  if (A.Unchanged)
    errs() << "kloop apply: nothing to change\n";
  return A.Refused || A.Unchanged;
}

/// Writes \p A's changes as asked: in place (unless already written), as --export-fixes YAML, or as a
/// diff on stdout. The exit code.
int writeOutput(const kloop::ProposalApplication &A, StringRef ProposalName) {
  if (InPlace) {
    if (!A.Written)
      if (Error E = kloop::writeChangesInPlace(A.Result.Changes)) {
        errs() << "kloop apply: error: " << toString(std::move(E)) << "\n";
        return 1;
      }
    for (const kloop::FileChange &C : A.Result.Changes)
      errs() << "kloop apply: wrote " << C.RelPath << "\n";
    return 0;
  }
  if (!ExportFixes.empty()) {
    std::string Main = A.Jobs.empty() ? "" : A.Jobs.front().File;
    if (Error E = kloop::writeFileAtomically(ExportFixes, kloop::exportFixesYaml(A.Result.Changes, Main))) {
      errs() << "kloop apply: error: " << toString(std::move(E)) << "\n";
      return 1;
    }
    return 0;
  }
  // The diff carries the proposal's rationale and code: escaped on a terminal, as written in a pipe
  // (a patch file keeps the bytes of the code).
  std::string Diff = kloop::renderDiff(A.Result.Changes, *A.P, ProposalName);
  outs() << (sys::Process::StandardOutIsDisplayed() ? kloop::terminalSafe(Diff) : Diff);
  return 0;
}

int runApply(const kloop::CommandContext &Ctx) {
  std::vector<std::string> Pos(Positional.begin(), Positional.end());
  if (RuleName.empty() && Pos.empty()) {
    errs() << "kloop apply: error: missing PROPOSAL.json (or --rule NAME)\n";
    return 2;
  }
  if (InPlace && !ExportFixes.empty()) {
    errs() << "kloop apply: error: --in-place and --export-fixes exclude each other\n";
    return 2;
  }
  if (!ConfigPath.empty() && RuleName.empty()) {
    errs() << "kloop apply: error: --config bounds a built-in rule; use it with --rule NAME\n";
    return 2;
  }
  std::string ProposalName = RuleName.empty() ? Pos.front() : "rule " + RuleName;
  if (RuleName.empty())
    Pos.erase(Pos.begin());
  kloop::FrontendOptions Opts;
  Opts.BuildPath = BuildPath;
  Opts.Inputs = Pos;
  Opts.ExtraArgs = Ctx.ExtraArgs;
  Opts.HasExtraArgs = Ctx.HasDoubleDash;
  Opts.CudaPath = CudaPath;
  Opts.GpuArch = GpuArch;
  Opts.Jobs = Jobs;
  kloop::ApplyOptions AO;
  AO.Root = rootDir();
  AO.Format = !NoFormat;
  // With --verify-build the files are written only once the edited code is known to build.
  bool WriteNow = InPlace && !VerifyBuild;
  Expected<kloop::ProposalApplication> A = RuleName.empty()
                                               ? kloop::applyProposalFile(ProposalName, Opts, AO, WriteNow)
                                               : applyRule(Opts, AO, WriteNow);
  if (!A) {
    errs() << "kloop apply: error: " << kloop::terminalSafe(toString(A.takeError())) << "\n";
    return 1;
  }
  for (const std::string &N : A->RecoveryNotes)
    errs() << "kloop apply: note: " << N << "\n";
  for (const std::string &N : A->Notes)
    errs() << "kloop apply: note: " << kloop::terminalSafe(N) << "\n";
  for (const std::string &N : A->Result.Unchecked)
    errs() << "kloop apply: note: " << kloop::terminalSafe(N) << "\n";
  if (reportRefusals(*A, /*Dropped=*/!RuleName.empty()))
    return 1;
  if (VerifyBuild && !verifyBuild(*A))
    return 1;
  return writeOutput(*A, ProposalName);
}

kloop::CommandRegistration Reg(ApplySub, runApply);
} // namespace
