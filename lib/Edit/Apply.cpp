//===- Apply.cpp - Resolve, check and apply a proposal --------------------===//
//
// applyProposal is the pipeline of docs/edits.md, one named step each:
//   1. resolve IDs: every TU is parsed on both sides and each edit is planned
//      by its kind on the AST (Plan.h, lib/Edit/Kinds/);
//   2. preconditions: two edits of one entity, IDs not found, retargets not
//      found, replacements outside the edit's region;
//   3. replacements: deduplicated, no two overlapping;
//   4. apply in memory;
//   5. re-parse every TU on both sides with the edited files mapped; any new
//      error or warning refuses;
//   6. added-code checks (AddedCode.h);
//   7. each kind's checks on the edited inventory (launch limits, ...);
// then the changed lines are formatted. Refusals are data (ApplyResult).
//
//===----------------------------------------------------------------------===//
#include "kloop/Edit/Apply.h"
#include "AddedCode.h"
#include "EditKind.h"
#include "Plan.h"
#include "kloop/Support/Path.h"

#include "clang/Basic/CharInfo.h"
#include "clang/Format/Format.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Tooling/Core/Replacement.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <map>
#include <set>

using namespace clang;
using namespace llvm;
using namespace kloop::edit;

namespace kloop {

std::string Refusal::str() const {
  if (EditIndex < 0)
    return "proposal: " + Reason;
  return "edit #" + std::to_string(EditIndex + 1) + " (" + EditLabel + "): " + Reason;
}

const std::vector<std::string> &checkedWarningFlags() {
  static const std::vector<std::string> F = {"-Wuninitialized", "-Wsometimes-uninitialized",
                                             "-Wconditional-uninitialized", "-Wreturn-type",
                                             "-Wunused-value", "-Wshadow-uncaptured-local",
                                             "-Wimplicit-fallthrough", "-Wsign-compare"};
  return F;
}

namespace {

/// Refuses edit \p I of \p P (or the whole proposal, I < 0) for \p Why.
void addRefusal(ApplyResult &Result, const Proposal &P, int I, std::string Why) {
  Refusal R;
  R.EditIndex = I;
  if (I >= 0)
    R.EditLabel = P.Edits[I].label();
  R.Reason = std::move(Why);
  Result.Refusals.push_back(std::move(R));
}

std::string editName(const Proposal &P, unsigned I) {
  return "edit #" + std::to_string(I + 1) + " (" + P.Edits[I].label() + ")";
}

ApplyOptions withRoot(const ApplyOptions &Opts) {
  ApplyOptions O = Opts;
  if (O.Root.empty()) {
    SmallString<256> Cwd;
    sys::fs::current_path(Cwd);
    O.Root = std::string(Cwd);
  }
  return O;
}

// --- 2. preconditions ---------------------------------------------------------------

/// The entity edit \p I changes as the parses resolved it, file-qualified (`k@a.cu/param:o`), so that
/// `k/param:o` and `k@a.cu/param:o` are one; its ID as written when no parse resolved it.
std::string resolvedEntity(const PlanState &St, unsigned I) {
  for (const Outcome &Oc : St.PerEdit[I])
    if (!Oc.Resolved.empty())
      return Oc.Resolved;
  return St.P.Edits[I].ID;
}

/// Two edits of one entity (replace_loop and set_unroll of one loop) conflict even when their
/// text ranges only touch, unless one adds code beside it or their kinds allow it. One entity:
/// one resolved entity, whether the IDs name it plainly or file-qualified.
bool refuseSameEntityEdits(const PlanState &St, ApplyResult &Result) {
  const Proposal &P = St.P;
  std::vector<std::string> Entities;
  for (unsigned I = 0; I < P.Edits.size(); ++I)
    Entities.push_back(resolvedEntity(St, I));
  for (unsigned I = 0; I < P.Edits.size(); ++I)
    for (unsigned J = I + 1; J < P.Edits.size(); ++J) {
      const Edit &A = P.Edits[I], &B = P.Edits[J];
      const EditKindPlanner &KA = editKindPlanner(A.Kind), &KB = editKindPlanner(B.Kind);
      if (Entities[I] != Entities[J] || KA.addsBeside() || KB.addsBeside() || KA.sharesEntityWith(A, B))
        continue;
      addRefusal(Result, P, -1,
                 editName(P, I) + " and " + editName(P, J) + " both change '" + A.ID + "'" +
                     (A.ID == B.ID ? "" : " (named '" + B.ID + "' in the second)") + "; merge them into one edit");
      return true;
    }
  return false;
}

/// Why no parse planned \p Ed: its ID names another kind of entity, a host function, or nothing.
std::string notFoundReason(const PlanState &St, const Edit &Ed) {
  const EditKindPlanner &K = editKindPlanner(Ed.Kind);
  EntityKind Want = K.target();
  auto It = St.KindOf.find(Ed.ID);
  std::string Base = splitAt(Ed.ID).first;
  std::string Fn = Base.substr(0, Base.find('/'));
  if (It != St.KindOf.end())
    return "'" + Ed.ID + "' is a " + entityKindName(It->second) + ", but " + K.name().str() + " needs a " +
           entityKindName(Want);
  bool Region = Want == EntityKind::Loop || Want == EntityKind::SharedArray || Want == EntityKind::LocalConstant;
  if (auto Broken = St.KernelErrors.find(Fn); Broken != St.KernelErrors.end() && Region && Ed.ID != Fn)
    return "'" + Ed.ID + "' is not in the inventory: kernel '" + Fn + "' does not compile (" +
           (Broken->second.empty() ? "clang marked its declaration invalid" : "first error: " + Broken->second) +
           "): the parse drops what it cannot recover around an error, so the region may be missing; fix the "
           "error first";
  if (St.HostFunctions.count(Fn) && K.sides() != EditKindPlanner::Sides::Host)
    return "'" + Fn + "' is a host function: an edit may change only kernels, their regions, launch-site "
                      "configurations and tunable constants, never host code such as main() or timing code";
  // An ID of a kernel (or of its region) whose name several files define, as the inventory writes it:
  // each file's form.
  auto severalFiles = [&](const std::string &ID) {
    auto Q = St.QualifiedOf.find(ID);
    return Q != St.QualifiedOf.end() && Q->second.size() > 1;
  };
  std::vector<std::string> Names;
  if (auto KnownIt = St.Known.find(Want); KnownIt != St.Known.end())
    for (const std::string &ID : KnownIt->second) {
      if (severalFiles(ID) || severalFiles(ID.substr(0, ID.find('/'))))
        Names.insert(Names.end(), St.QualifiedOf.at(ID).begin(), St.QualifiedOf.at(ID).end());
      else
        Names.push_back(ID);
    }
  std::string Known;
  for (size_t N = 0; N < Names.size(); ++N) {
    if (N == 30) {
      Known += ", ...";
      break;
    }
    Known += (Known.empty() ? "" : ", ") + Names[N];
  }
  return "unknown inventory ID '" + Ed.ID + "' (known IDs of that kind: " + (Known.empty() ? "none" : Known) + ")";
}

/// A retargeted launch site that no parse found.
std::optional<std::string> unknownRetarget(const PlanState &St, const Edit &Ed, const std::set<std::string> &Found) {
  for (const std::string &S : Ed.Retarget)
    if (!Found.count(S)) {
      std::string Known;
      auto KnownIt = St.Known.find(EntityKind::LaunchSite);
      if (KnownIt != St.Known.end())
        for (const std::string &K : KnownIt->second)
          Known += (Known.empty() ? "" : ", ") + K;
      return "retarget: unknown launch site '" + S + "' (known launch sites: " + (Known.empty() ? "none" : Known) +
             ")";
    }
  return std::nullopt;
}

/// A replacement of \p Ed outside every one of its regions.
std::optional<std::string> outsideRegion(const Edit &Ed, const std::vector<TextEdit> &Mine,
                                         const std::vector<Region> &Regions, StringRef Root) {
  for (const TextEdit &T : Mine) {
    bool Inside = false;
    for (const Region &R : Regions)
      Inside |= R.File == T.File && T.Offset >= R.Begin && T.Offset + T.Length <= R.End;
    if (!Inside)
      return "a replacement at " + relativePath(T.File, Root) + " offset " + std::to_string(T.Offset) +
             " lies outside the region of '" + Ed.ID + "'";
  }
  return std::nullopt;
}

/// What the parses made of one edit together: its replacements, or why it is refused.
struct MergedEdit {
  std::vector<TextEdit> Edits;
  std::string Refusal; ///< non-empty: refused
};

/// An edit whose plain ID the parses resolved to entities of several files (kernels of one name
/// in two files): which one is meant is not known, so none is changed.
std::optional<std::string> ambiguousID(const Edit &Ed, const std::vector<Outcome> &Outcomes) {
  std::set<std::string> Resolved;
  for (const Outcome &Oc : Outcomes)
    if (!Oc.Resolved.empty())
      Resolved.insert(Oc.Resolved);
  if (Resolved.size() < 2)
    return std::nullopt;
  std::string Names;
  for (const std::string &R : Resolved)
    Names += (Names.empty() ? "'" : Resolved.size() > 2 ? ", '" : " or '") + R + "'";
  return "'" + Ed.ID + "' is ambiguous: it names entities of " + std::to_string(Resolved.size()) +
         " files (a kernel of that name is defined in each); name one as " + Names;
}

MergedEdit mergeOutcomes(const PlanState &St, unsigned I) {
  const Edit &Ed = St.P.Edits[I];
  if (auto Why = ambiguousID(Ed, St.PerEdit[I]))
    return {{}, *Why};
  bool Ok = false;
  std::string Reason;
  std::set<std::string> FoundSites;
  std::vector<TextEdit> Mine;
  std::vector<Region> Regions;
  for (const Outcome &Oc : St.PerEdit[I]) {
    if (Oc.St == Outcome::Refused && Reason.empty())
      Reason = Oc.Reason;
    if (Oc.St != Outcome::Ok)
      continue;
    FoundSites.insert(Oc.FoundSites.begin(), Oc.FoundSites.end());
    Ok |= Oc.FoundSites.empty();
    for (TextEdit T : Oc.Edits) {
      T.EditIndex = I;
      Mine.push_back(std::move(T));
    }
    Regions.insert(Regions.end(), Oc.Regions.begin(), Oc.Regions.end());
  }
  if (Reason.empty() && !Ok)
    Reason = notFoundReason(St, Ed);
  if (Reason.empty())
    if (auto Why = unknownRetarget(St, Ed, FoundSites))
      Reason = *Why;
  if (Reason.empty())
    if (auto Why = outsideRegion(Ed, Mine, Regions, St.Opts.Root))
      Reason = *Why;
  if (!Reason.empty())
    return {{}, Reason};
  return {std::move(Mine), ""};
}

/// Every edit's replacements; edits that cannot be made are refused.
std::vector<TextEdit> resolvedReplacements(const PlanState &St, ApplyResult &Result) {
  std::vector<TextEdit> All;
  for (unsigned I = 0; I < St.P.Edits.size(); ++I) {
    MergedEdit M = mergeOutcomes(St, I);
    if (!M.Refusal.empty())
      addRefusal(Result, St.P, I, std::move(M.Refusal));
    else
      All.insert(All.end(), M.Edits.begin(), M.Edits.end());
  }
  return All;
}

// --- 3. replacements -----------------------------------------------------------------

/// \p All sorted, without repeats (a header seen from several TUs or sides).
std::vector<TextEdit> uniqueReplacements(std::vector<TextEdit> All) {
  std::sort(All.begin(), All.end(), [](const TextEdit &A, const TextEdit &B) {
    return std::tie(A.File, A.Offset, A.Length, A.EditIndex, A.Text) <
           std::tie(B.File, B.Offset, B.Length, B.EditIndex, B.Text);
  });
  std::vector<TextEdit> Uniq;
  for (const TextEdit &T : All)
    if (Uniq.empty() || Uniq.back().File != T.File || Uniq.back().Offset != T.Offset ||
        Uniq.back().Length != T.Length || Uniq.back().Text != T.Text || Uniq.back().EditIndex != T.EditIndex)
      Uniq.push_back(T);
  return Uniq;
}

/// Refuses two replacements (sorted) that overlap.
bool refuseOverlaps(const Proposal &P, const std::vector<TextEdit> &Uniq, StringRef Root, ApplyResult &Result) {
  for (size_t I = 1; I < Uniq.size(); ++I) {
    const TextEdit &A = Uniq[I - 1], &B = Uniq[I];
    if (A.File != B.File)
      continue;
    bool Overlap = B.Offset < A.Offset + A.Length || (B.Offset == A.Offset && (A.Length == 0 || B.Length == 0)) ||
                   (A.Length > 0 && B.Length > 0 && B.Offset < A.Offset + A.Length);
    if (!Overlap)
      continue;
    if (A.EditIndex == B.EditIndex) {
      addRefusal(Result, P, A.EditIndex,
                 "it resolves to two different changes of one range in different translation units");
      return true;
    }
    unsigned X = std::min(A.EditIndex, B.EditIndex), Y = std::max(A.EditIndex, B.EditIndex);
    addRefusal(Result, P, -1,
               editName(P, X) + " and " + editName(P, Y) + " change overlapping code in " + relativePath(A.File, Root) +
                   "; the proposal is refused as a whole");
    return true;
  }
  return false;
}

// --- 4. apply in memory ----------------------------------------------------------------

Expected<std::string> readFile(const std::string &Path) {
  auto B = MemoryBuffer::getFile(Path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!B)
    return createStringError(B.getError(), "cannot read " + Path + ": " + B.getError().message());
  return (*B)->getBuffer().str();
}

/// \p Text with the line endings of \p File's text: every bare "\n" becomes "\r\n" when \p File's first
/// line ends in "\r\n", so that an inserted line (a #pragma, a device function) does not mix endings.
std::string withLineEndingsOf(StringRef File, StringRef Text) {
  size_t NL = File.find('\n');
  if (NL == StringRef::npos || NL == 0 || File[NL - 1] != '\r')
    return Text.str();
  std::string Out;
  for (size_t I = 0; I < Text.size(); ++I) {
    if (Text[I] == '\n' && (I == 0 || Text[I - 1] != '\r'))
      Out += '\r';
    Out += Text[I];
  }
  return Out;
}

/// Result.Changes, Edits and Applied from the replacements \p Uniq; \p NewRanges: where each
/// edit's text lies in the edited files (begin, length, edit).
Error applyInMemory(const std::vector<TextEdit> &Uniq, StringRef Root, ApplyResult &Result,
                    NewTextRanges &NewRanges) {
  Result.Edits = Uniq; // their texts take each file's line endings below, as the fix-its kloop check exports
  std::map<std::string, std::vector<TextEdit *>> ByFile;
  for (TextEdit &T : Result.Edits)
    ByFile[T.File].push_back(&T);
  for (auto &[File, Edits] : ByFile) {
    auto Text = readFile(File);
    if (!Text)
      return Text.takeError();
    FileChange C;
    C.File = File;
    C.RelPath = relativePath(File, Root);
    C.Before = *Text;
    unsigned Pos = 0;
    for (TextEdit *T : Edits) {
      if (T->Offset + T->Length > C.Before.size())
        return createStringError(inconvertibleErrorCode(), File + " changed while kloop apply was running");
      T->Text = withLineEndingsOf(C.Before, T->Text);
      C.After += C.Before.substr(Pos, T->Offset - Pos);
      NewRanges[File].emplace_back((unsigned)C.After.size(), (unsigned)T->Text.size(), T->EditIndex);
      C.After += T->Text;
      Pos = T->Offset + T->Length;
    }
    C.After += C.Before.substr(Pos);
    Result.Changes.push_back(std::move(C));
  }
  std::set<unsigned> AppliedSet;
  for (const TextEdit &T : Uniq)
    AppliedSet.insert(T.EditIndex);
  Result.Applied.assign(AppliedSet.begin(), AppliedSet.end());
  return Error::success();
}

// --- 5-7. checks of the edited code ----------------------------------------------------

/// Line (1-based) of byte \p Off in \p S.
unsigned lineOf(StringRef S, unsigned Off) { return 1 + S.substr(0, Off).count('\n'); }

/// The new text of the edits whose text is a host expression (set_constant, set_launch_config).
NewTextRanges expressionRanges(const Proposal &P, const NewTextRanges &NewRanges) {
  NewTextRanges Out;
  for (auto &[File, Rs] : NewRanges)
    for (auto [B, L, E] : Rs)
      if (editKindPlanner(P.Edits[E].Kind).writesExpression())
        Out[File].emplace_back(B, L, E);
  return Out;
}

/// What the added-code check (AddedCode.h) of the re-parse of \p Job on side \p S needs:
/// the new text, the census before the edit, the variant kernels, the job's own include
/// directories and the CUDA toolkit's.
AddedCodeInput addedCodeInput(const Proposal &P, const CompileJob &Job, Side S, const FrontendOptions &FOpts,
                                     const NewTextRanges &NewRanges, const NewTextRanges &Expressions,
                                     const std::map<std::string, DeclCensus> &Census) {
  AddedCodeInput In;
  In.Ranges = &NewRanges;
  In.ExpressionRanges = &Expressions;
  In.Directory = Job.Directory;
  auto C = Census.find(parseKey(Job, S));
  In.Before = C == Census.end() ? nullptr : &C->second;
  for (unsigned I = 0; I < P.Edits.size(); ++I)
    if (P.Edits[I].Kind == EditKind::AddKernelVariant)
      In.VariantKernels[I] = P.Edits[I].Name;
  In.UserIncludeDirs = userIncludeDirs(Job.Args, Job.Directory);
  if (llvm::find(Job.Args, "-nocudainc") == Job.Args.end())
    if (auto Cuda = findCudaInstallation(FOpts.CudaPath)) {
      In.CudaIncludeDirs = Cuda->SystemIncludes;
      In.CudaIncludeDirs.insert(In.CudaIncludeDirs.end(), Cuda->Includes.begin(), Cuda->Includes.end());
      In.CudaIncludeDirs.push_back(Cuda->Path + "/include");
    }
  return In;
}

/// Steps 5 to 7: re-parse the edited code, then what the edits add, then each kind's checks on
/// the edited inventory. Each step runs only when the one before refused nothing, except that an
/// include or pragma the edits write is refused before the errors of the re-parse: it explains them
/// (`#include </etc/passwd>` otherwise shows up only as the errors of parsing that file).
class EditedCodeCheck {
public:
  EditedCodeCheck(const PlanState &St, const std::vector<CompileJob> &Jobs, const FrontendOptions &FOpts,
                  const NewTextRanges &NewRanges, ApplyResult &Result)
      : St(St), P(St.P), Jobs(Jobs), FOpts(FOpts), NewRanges(NewRanges), Result(Result),
        RefusedBefore(Result.Refusals.size()) {}

  /// True when the edited code refuses the proposal. Meaningless when PreambleMismatch is set.
  bool refuses() {
    reparse();
    if (PreambleMismatch)
      return true;
    refuseAddedCode(/*Preprocessor=*/true);
    if (refusedHere())
      return true;
    for (const auto &[U, Diags] : NewDiagnostics) {
      auto [J, S] = parseUnit(U, Jobs.size());
      refuseNewDiagnostics(J, S, parseKey(Jobs[J], S), sideName(S).str(), Diags);
    }
    for (size_t A = 0; A < St.ArchUnits.size(); ++A) {
      const ArchUnit &U = St.ArchUnits[A];
      refuseNewDiagnostics(U.Job, Side::Device, archKey(Jobs[U.Job], U), "device, " + U.Arch, ArchDiagnostics[A]);
    }
    if (refusedHere())
      return true;
    refuseAddedCode(/*Preprocessor=*/false);
    checkEditedInventory();
    return refusedHere();
  }

  /// A parse after the edit loaded a precompiled preamble where its parse before did not, or the
  /// other way round (ApplyOptions::Preambles).
  bool PreambleMismatch = false;

private:
  const PlanState &St;
  const Proposal &P;
  const std::vector<CompileJob> &Jobs;
  const FrontendOptions &FOpts;
  const NewTextRanges &NewRanges;
  ApplyResult &Result;
  size_t RefusedBefore;
  std::vector<SideInventory> HostAfter, DeviceAfter; // per job
  std::vector<AddedCodeFinding> Added;
  /// Each parse unit's diagnostics after the edit, in job order (unitsInJobOrder).
  std::vector<std::pair<size_t, std::vector<ParseDiagnostic>>> NewDiagnostics;
  /// The diagnostics of St.ArchUnits' parses after the edit, in that order.
  std::vector<std::vector<ParseDiagnostic>> ArchDiagnostics;
  std::set<std::string> Reported;
  /// Edits refused for a new diagnostic already.
  std::set<int> Blamed;

  bool refusedHere() const { return Result.Refusals.size() > RefusedBefore; }

  /// The edit whose new text holds \p D's line, or -1.
  int blame(const ParseDiagnostic &D, const CompileJob &Job) const {
    std::string F = absolutePath(D.File, Job.Directory);
    auto Ranges = NewRanges.find(F);
    if (Ranges == NewRanges.end())
      return -1;
    for (const FileChange &C : Result.Changes) {
      if (C.File != F)
        continue;
      for (auto [B, L, E] : Ranges->second)
        if (D.Line >= lineOf(C.After, B) && D.Line <= lineOf(C.After, B + L))
          return (int)E;
    }
    return -1;
  }

  /// The edits \p D is blamed on: the one whose new text holds its line (blame), else every edit whose
  /// new text lies inside the kernel or device function, as job \p J's side \p S parsed it after the
  /// edit, that holds \p D's line (the innermost one); empty when neither finds one. An error in a body
  /// whose only change is its parameter's new `const` is that edit's (a rule's `add_const` on a pointer
  /// the body passes where `float *` is needed).
  std::vector<int> blamed(const ParseDiagnostic &D, size_t J, Side S) const {
    const CompileJob &Job = Jobs[J];
    if (int E = blame(D, Job); E >= 0)
      return {E};
    std::string F = absolutePath(D.File, Job.Directory);
    auto Ranges = NewRanges.find(F);
    if (Ranges == NewRanges.end())
      return {};
    const SourceSpan *Inner = nullptr;
    for (const Entity &En : (S == Side::Host ? HostAfter : DeviceAfter)[J].Entities)
      if ((En.Kind == EntityKind::Kernel || En.Kind == EntityKind::DeviceFunction) &&
          D.Line >= En.Span.BeginLine && D.Line <= En.Span.EndLine &&
          absolutePath(En.Span.File, Job.Directory) == F &&
          (!Inner || En.Span.EndOffset - En.Span.BeginOffset < Inner->EndOffset - Inner->BeginOffset))
        Inner = &En.Span;
    std::set<int> In;
    if (Inner)
      for (auto [B, L, E] : Ranges->second)
        if (B >= Inner->BeginOffset && B + L <= Inner->EndOffset)
          In.insert(static_cast<int>(E));
    return namedOnLine({In.begin(), In.end()}, D, F);
  }

  /// The edits whose new text lies in file \p F (absolute), in index order.
  std::vector<int> editsIn(const std::string &F) const {
    std::set<int> In;
    if (auto Ranges = NewRanges.find(F); Ranges != NewRanges.end())
      for (auto [B, L, E] : Ranges->second)
        In.insert(static_cast<int>(E));
    return {In.begin(), In.end()};
  }

  /// The edits in the files job \p J's parses before the edit read other than its main file: its edited
  /// headers. When a precompiled preamble hid what it read (PlanState::FilesRead), every edited file
  /// that is no job's main file.
  std::vector<int> editsInHeadersOf(size_t J) const {
    std::set<std::string> Mains;
    for (const CompileJob &Job : Jobs)
      Mains.insert(absolutePath(Job.File, Job.Directory));
    const std::optional<std::set<std::string>> &Read = St.FilesRead[J];
    std::set<int> In;
    for (const auto &[File, Ranges] : NewRanges)
      if (Read ? Read->count(File) && File != absolutePath(Jobs[J].File, Jobs[J].Directory) : !Mains.count(File))
        for (auto [B, L, E] : Ranges)
          In.insert(static_cast<int>(E));
    return {In.begin(), In.end()};
  }

  /// Of \p Edits, those of a parameter (`.../param:NAME`) whose name is an identifier on \p D's line
  /// of edited file \p F; all of \p Edits when none is. One parameter's `const` that breaks a line
  /// then costs that parameter's edits, not every edit of its kernel; were the line's error caused by
  /// another edit, the next round (applyWithoutRefused) sees it again and drops the rest.
  std::vector<int> namedOnLine(std::vector<int> Edits, const ParseDiagnostic &D, const std::string &F) const {
    std::set<std::string> Identifiers;
    for (const FileChange &C : Result.Changes)
      if (C.File == F) {
        SmallVector<StringRef> Lines;
        StringRef(C.After).split(Lines, '\n');
        if (D.Line >= 1 && D.Line <= Lines.size())
          for (StringRef Rest = Lines[D.Line - 1]; !Rest.empty();) {
            Rest = Rest.drop_until([](char C) { return clang::isAsciiIdentifierStart(C); });
            StringRef Name = Rest.take_while([](char C) { return clang::isAsciiIdentifierContinue(C); });
            Identifiers.insert(Name.str());
            Rest = Rest.drop_front(Name.size());
          }
      }
    std::vector<int> Named;
    for (int E : Edits) {
      StringRef ID = P.Edits[E].ID;
      size_t At = ID.rfind("/param:");
      if (At != StringRef::npos && Identifiers.count(ID.substr(At + 7).str()))
        Named.push_back(E);
    }
    return Named.empty() ? Edits : Named;
  }

  /// 5. Both sides of every TU with the edited files mapped in memory, FOpts.Jobs at a time;
  /// their diagnostics and added code are judged in job order, host side first.
  void reparse() {
    std::vector<std::pair<std::string, std::string>> Mapped;
    for (const FileChange &C : Result.Changes)
      Mapped.emplace_back(C.File, C.After);
    NewTextRanges Expressions = expressionRanges(P, NewRanges);
    size_t N = Jobs.size();
    HostAfter.assign(N, {});
    DeviceAfter.assign(N, {});
    std::vector<ParseResult> Parses(2 * N + St.ArchUnits.size()); // the architectures' parses last
    std::vector<std::vector<AddedCodeFinding>> AddedBy(2 * N);
    parallelFor(Parses.size(), FOpts.Jobs, [&](size_t U) {
      if (U >= 2 * N) {
        const ArchUnit &A = St.ArchUnits[U - 2 * N];
        Parses[U] = parseArchUnit(Jobs[A.Job], A, FOpts, Mapped);
        return;
      }
      auto [J, S] = parseUnit(U, N);
      AddedCodeInput In = addedCodeInput(P, Jobs[J], S, FOpts, NewRanges, Expressions, St.Census);
      SideInventory &Inv = (S == Side::Host ? HostAfter : DeviceAfter)[J];
      Parses[U] = parseCommandLine(checkedCommandLine(Jobs[J], S, FOpts), Jobs[J].Directory,
                                   withAddedCodeCheck(makeInventoryAction(S, Inv), In, AddedBy[U]), Mapped,
                                   St.Opts.Preambles);
    });
    for (size_t U : unitsInJobOrder(N)) {
      auto [J, S] = parseUnit(U, N);
      const CompileJob &Job = Jobs[J];
      if (Parses[U].UsedPreamble != (St.WithPreamble.count(parseKey(Job, S)) > 0) || Parses[U].PreambleStateLost)
        PreambleMismatch = true;
      NewDiagnostics.emplace_back(U, std::move(Parses[U].Diagnostics));
      Added.insert(Added.end(), AddedBy[U].begin(), AddedBy[U].end());
    }
    for (size_t U = 2 * N; U < Parses.size(); ++U)
      ArchDiagnostics.push_back(std::move(Parses[U].Diagnostics));
  }

  /// New: an error inside the new text, or a diagnostic the baseline does not have as often. \p Key
  /// names the parse before the edit (parseKey, archKey); \p Where, in the reason: its side (and
  /// architecture).
  void refuseNewDiagnostics(size_t J, Side S, const std::string &Key, const std::string &Where,
                            const std::vector<ParseDiagnostic> &Diags) {
    const CompileJob &Job = Jobs[J];
    auto BeforeIt = St.BeforeDiags.find(Key);
    std::multiset<std::string> Before;
    if (BeforeIt != St.BeforeDiags.end())
      Before = BeforeIt->second;
    for (const ParseDiagnostic &D : Diags) {
      bool InNewText = D.Level != "warning" && blame(D, Job) >= 0;
      auto It = InNewText ? Before.end() : Before.find(diagKey(D));
      if (It != Before.end()) {
        Before.erase(It);
        continue;
      }
      ParseDiagnostic Rel = rootRelative(D, Job, St.Opts.Root);
      if (!Reported.insert(Rel.str()).second)
        continue; // the same diagnostic from the other side
      std::string Why = "the edited code " + std::string(D.Level == "warning" ? "adds a warning" : "does not compile") +
                        ": " + Rel.str() + " [" + Where + "]";
      std::vector<int> Edits = blamed(D, J, S);
      if (Edits.empty() && St.Opts.DropRefused) { // no one edit: those of the file it is in, not the whole proposal
        Edits = editsIn(absolutePath(D.File, Job.Directory));
        Why += Edits.empty() ? "" : " (no one edit of the file is to blame: each is dropped)";
      }
      if (Edits.empty() && St.Opts.DropRefused) { // a file without edits: those of the edited headers it reads
        Edits = editsInHeadersOf(J);
        Why += Edits.empty() ? "" : " (in a file without edits: each edit of the edited headers its unit reads is dropped)";
      }
      if (Edits.empty())
        addRefusal(Result, P, -1, Why);
      for (int E : Edits)
        if (Blamed.insert(E).second) // its first new diagnostic is reason enough
          addRefusal(Result, P, E, Why);
    }
  }

  /// 6. What the edits add to each TU (AddedCode.h): with \p Preprocessor the includes and pragmas,
  /// else the declarations and side effects.
  void refuseAddedCode(bool Preprocessor) {
    std::set<std::pair<int, std::string>> Seen;
    for (const AddedCodeFinding &F : Added)
      if (F.Preprocessor == Preprocessor && Seen.insert({F.Edit, F.Reason}).second)
        addRefusal(Result, P, F.Edit, F.Reason);
  }

  /// 7. Each applied edit's kind checks the edited inventory, where clang evaluated the constants.
  void checkEditedInventory() {
    EditedInventory Inv;
    for (size_t J = 0; J < Jobs.size(); ++J) {
      for (const Entity &E : HostAfter[J].Entities)
        if (E.Kind == EntityKind::LaunchSite)
          Inv.Sites[relativePath(absolutePath(E.Span.File, Jobs[J].Directory), St.Opts.Root) + ":" + E.ID] = &E;
      for (const Entity &E : DeviceAfter[J].Entities)
        if (E.Kind == EntityKind::Kernel)
          Inv.Kernels[E.ID] = &E;
    }
    for (unsigned I : Result.Applied)
      for (std::string &Why : editKindPlanner(P.Edits[I].Kind).checkEdited(P.Edits[I], Inv))
        addRefusal(Result, P, I, std::move(Why));
    if (!refusedHere())
      keepLaunchFormulas(Inv);
  }

  /// The edited code's launch formulas (ApplyResult::LaunchFormulas).
  void keepLaunchFormulas(const EditedInventory &Inv) {
    for (const auto &[ID, E] : Inv.Sites) {
      if (!E->Data.contains("config_formula"))
        continue;
      if (Expected<inv::LaunchFormula> F = inv::launchFormulaFromJSON(E->Data["config_formula"], ID))
        Result.LaunchFormulas[ID] = std::move(*F);
      else
        consumeError(F.takeError()); // the collector wrote it: cannot happen; the site then stays unknown
    }
  }
};

/// \p O without precompiled preambles: every parse reads every header.
ApplyOptions withoutPreambles(ApplyOptions O) {
  O.Preambles = nullptr;
  return O;
}

/// Formats the changed lines of \p After when a .clang-format governs \p File.
std::string formatChanged(const std::string &File, const std::string &After,
                          const std::vector<std::pair<unsigned, unsigned>> &NewRanges) {
  auto Style = format::getStyle("file", File, "none");
  if (!Style) {
    consumeError(Style.takeError());
    return After;
  }
  if (Style->DisableFormat)
    return After;
  std::vector<tooling::Range> Ranges;
  for (auto [B, L] : NewRanges)
    Ranges.emplace_back(B, L);
  tooling::Replacements R = format::reformat(*Style, After, Ranges, File);
  auto New = tooling::applyAllReplacements(After, R);
  if (!New) {
    consumeError(New.takeError());
    return After;
  }
  return *New;
}

/// The changed lines of every file, formatted where a .clang-format governs it.
void formatChanges(ApplyResult &Result, const NewTextRanges &NewRanges) {
  for (FileChange &C : Result.Changes) {
    std::vector<std::pair<unsigned, unsigned>> R;
    auto Ranges = NewRanges.find(C.File);
    if (Ranges != NewRanges.end())
      for (auto [B, L, E] : Ranges->second)
        R.emplace_back(B, L);
    C.After = formatChanged(C.File, C.After, R);
  }
}

} // namespace

/// ApplyOptions::DropRefused, after the edited code refused \p Result: \p P applied again without every
/// edit a refusal names, with the second apply's refusals and edit indices in \p P's numbering after
/// \p Result's refusals. Each round drops at least one edit, so it ends. \p Result itself (nothing
/// applied) when a refusal names no edit (the proposal as a whole) or no edit is left.
static Expected<ApplyResult> applyWithoutRefused(const Proposal &P, const std::vector<CompileJob> &Jobs,
                                                 const FrontendOptions &FOpts, const ApplyOptions &Opts,
                                                 ApplyResult Result) {
  std::set<int> Dropped;
  for (const Refusal &R : Result.Refusals)
    Dropped.insert(R.EditIndex);
  std::vector<unsigned> Keep;
  for (unsigned I = 0; I < P.Edits.size(); ++I)
    if (!Dropped.count(static_cast<int>(I)))
      Keep.push_back(I);
  Result.Applied.clear();
  if (Dropped.count(-1) || Keep.empty())
    return Result;
  Proposal Rest = P;
  Rest.Edits.clear();
  for (unsigned I : Keep)
    Rest.Edits.push_back(P.Edits[I]);
  Expected<ApplyResult> Again = applyProposal(Rest, Jobs, FOpts, Opts);
  if (!Again)
    return Again.takeError();
  for (Refusal &R : Again->Refusals)
    if (R.EditIndex >= 0)
      R.EditIndex = static_cast<int>(Keep[R.EditIndex]);
  for (unsigned &I : Again->Applied)
    I = Keep[I];
  for (TextEdit &T : Again->Edits)
    T.EditIndex = Keep[T.EditIndex];
  Again->Refusals.insert(Again->Refusals.begin(), Result.Refusals.begin(), Result.Refusals.end());
  return Again;
}

/// The jobs that have no command to parse with (CompileJob::Error: a file the compilation database
/// does not list), by index, each with its reason.
static std::map<size_t, std::string> jobsInError(const std::vector<CompileJob> &Jobs, StringRef Root) {
  std::map<size_t, std::string> Out;
  for (size_t J = 0; J < Jobs.size(); ++J)
    if (Jobs[J].Error)
      Out[J] = rootRelative(Jobs[J].File, Jobs[J], Root) + ": " + *Jobs[J].Error;
  return Out;
}

/// ApplyOptions::DropRefused, when some of \p Jobs have no command or cannot be parsed before the edit (\p Unparsed, by
/// index): \p P applied to the others, those named in ApplyResult::Unparsed.
static Expected<ApplyResult> applyWithoutUnparsed(const Proposal &P, const std::vector<CompileJob> &Jobs,
                                                  const FrontendOptions &FOpts, const ApplyOptions &Opts,
                                                  const std::map<size_t, std::string> &Unparsed) {
  std::vector<CompileJob> Parsed;
  for (size_t J = 0; J < Jobs.size(); ++J)
    if (!Unparsed.count(J))
      Parsed.push_back(Jobs[J]);
  ApplyResult Result;
  if (!Parsed.empty()) {
    Expected<ApplyResult> R = applyProposal(P, Parsed, FOpts, Opts);
    if (!R)
      return R.takeError();
    Result = std::move(*R);
  }
  for (const auto &[J, Why] : Unparsed)
    Result.Unparsed.push_back(Why);
  return Result;
}

/// One note per function whose callers the alias check could not see (LaunchFacts::CallersUnseen) and on
/// which an add_restrict edit of \p St's proposal that \p Result does not refuse rests: its kernel is
/// launched with that function's pointer parameters.
static std::vector<std::string> restrictAssumptions(const PlanState &St, const ApplyResult &Result) {
  std::map<std::string, std::set<std::string>> KernelsOf; // function -> kernels
  for (size_t I = 0; I < St.P.Edits.size(); ++I) {
    const Edit &E = St.P.Edits[I];
    bool Refused = llvm::any_of(Result.Refusals, [&](const Refusal &R) { return R.EditIndex == int(I); });
    size_t Slash = E.ID.find("/param:");
    if (E.Kind != EditKind::AddRestrict || Refused || Slash == std::string::npos)
      continue;
    std::string Kernel = E.ID.substr(0, Slash);
    for (const PlanState::UnitPlan &U : St.Units)
      for (const LaunchFacts &F : U.Launches)
        if (F.Kernel == Kernel)
          for (const std::string &Fn : F.CallersUnseen)
            KernelsOf[Fn].insert(Kernel);
  }
  std::vector<std::string> Out;
  for (const auto &[Fn, Kernels] : KernelsOf)
    Out.push_back("add_restrict on the parameters of " + llvm::join(Kernels, ", ") + " assumes that the callers of " +
                  Fn + " pass pointers that do not overlap: it launches the kernel with its pointer parameters, "
                  "and its translation unit calls it nowhere, so the alias check does not see its callers");
  return Out;
}

Expected<ApplyResult> applyProposal(const Proposal &P, const std::vector<CompileJob> &Jobs,
                                    const FrontendOptions &FOpts, const ApplyOptions &Opts) {
  ApplyOptions O = withRoot(Opts);
  if (O.DropRefused)
    if (std::map<size_t, std::string> Unplanned = jobsInError(Jobs, O.Root); !Unplanned.empty())
      return applyWithoutUnparsed(P, Jobs, FOpts, Opts, Unplanned);
  PlanState St(P, O);
  // 1. Resolve IDs: plan every edit on the AST of every parse.
  if (Error E = planEdits(St, Jobs, FOpts))
    return E;
  if (!St.Unparsed.empty())
    return applyWithoutUnparsed(P, Jobs, FOpts, Opts, St.Unparsed);
  if (St.PreambleStateLost)
    return applyProposal(P, Jobs, FOpts, withoutPreambles(Opts));
  // 2. Preconditions.
  ApplyResult Result;
  Result.Unchecked = St.ArchUnchecked;
  if (refuseSameEntityEdits(St, Result))
    return Result;
  std::vector<TextEdit> All = resolvedReplacements(St, Result);
  for (std::string &Note : restrictAssumptions(St, Result))
    Result.Unchecked.push_back(std::move(Note));
  if (!Result.Refusals.empty() && !O.DropRefused)
    return Result;
  // 3. Replacements.
  std::vector<TextEdit> Uniq = uniqueReplacements(std::move(All));
  if (refuseOverlaps(P, Uniq, O.Root, Result))
    return Result;
  if (Uniq.empty()) {
    if (Result.Refusals.empty())
      addRefusal(Result, P, -1, "no edit produced a change");
    return Result;
  }
  // 4. Apply in memory.
  NewTextRanges NewRanges;
  if (Error E = applyInMemory(Uniq, O.Root, Result, NewRanges))
    return E;
  // 5-7. Re-parse, added code, checks on the edited inventory.
  if (O.Reparse) {
    EditedCodeCheck Check(St, Jobs, FOpts, NewRanges, Result);
    bool Refused = Check.refuses();
    if (Check.PreambleMismatch)
      return applyProposal(P, Jobs, FOpts, withoutPreambles(Opts));
    if (Refused) {
      if (O.DropRefused)
        return applyWithoutRefused(P, Jobs, FOpts, Opts, std::move(Result));
      Result.Applied.clear();
      return Result;
    }
  }
  if (O.Format)
    formatChanges(Result, NewRanges);
  return Result;
}

} // namespace kloop
