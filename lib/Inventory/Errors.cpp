//===- Errors.cpp - Recording a parse's errors and attributing them -------===//
//
// A translation unit with errors still yields the entities its errors do not
// touch (docs/inventory.md, "Errors"). The errors are recorded while clang
// parses, with their context notes, and attributed to entities by source range.
//
//===----------------------------------------------------------------------===//
#include "kloop/Inventory/Inventory.h"
#include "kloop/Frontend/Diagnostics.h"

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Path.h"

#include <map>
#include <set>

using namespace clang;

namespace kloop {

namespace {

/// Notes that say where an error's context comes from. Their text is clang's
/// (DiagnosticSemaKinds.td: note_*_instantiation_here, note_*_substitution*,
/// note_called_by); a note "declared here" or "candidate ..." is not context.
bool isContextNote(StringRef Message) {
  return Message.starts_with("in instantiation of") || Message.starts_with("while substituting") ||
         Message.starts_with("during template argument deduction") || Message.starts_with("called by");
}

SourcePoint pointOf(const Diagnostic &Info) {
  SourcePoint P;
  if (Info.getLocation().isInvalid() || !Info.hasSourceManager())
    return P;
  const SourceManager &SM = Info.getSourceManager();
  SourceLocation L = SM.getExpansionLoc(Info.getLocation());
  PresumedLoc PL = SM.getPresumedLoc(L);
  if (PL.isInvalid())
    return P;
  P.File = PL.getFilename();
  P.Offset = SM.getFileOffset(L);
  return P;
}


/// Wraps the consumer a parse already has: every diagnostic still reaches it,
/// and errors with their context notes are also recorded.
class ErrorRecorder : public DiagnosticConsumer {
public:
  ErrorRecorder(DiagnosticConsumer *Next, std::unique_ptr<DiagnosticConsumer> Owned, Side Which,
                ErrorTable &Table)
      : Next(Next), Owned(std::move(Owned)), Which(Which), Table(Table) {}

  void BeginSourceFile(const LangOptions &LO, const Preprocessor *PP) override {
    if (Next)
      Next->BeginSourceFile(LO, PP);
  }
  void EndSourceFile() override {
    if (Next)
      Next->EndSourceFile();
  }
  void finish() override {
    if (Next)
      Next->finish();
  }
  void clear() override {
    DiagnosticConsumer::clear();
    if (Next)
      Next->clear();
  }
  bool IncludeInDiagnosticCounts() const override { return !Next || Next->IncludeInDiagnosticCounts(); }

  void HandleDiagnostic(DiagnosticsEngine::Level Level, const Diagnostic &Info) override {
    DiagnosticConsumer::HandleDiagnostic(Level, Info);
    if (Next)
      Next->HandleDiagnostic(Level, Info);
    // nvcc accepts some code clang refuses; the parse reports those as nvcc's warnings.
    if (Level == DiagnosticsEngine::Error && nvccAcceptedError(Info)) {
      InError = false;
      return;
    }
    if (Level == DiagnosticsEngine::Error || Level == DiagnosticsEngine::Fatal) {
      LocatedError E;
      E.Diag = toParseDiagnostic(Level, Info);
      E.Which = Which;
      E.At = pointOf(Info);
      Table.Errors.push_back(std::move(E));
      InError = true;
      return;
    }
    if (Level != DiagnosticsEngine::Note) {
      InError = false; // the notes that follow belong to a warning
      return;
    }
    if (!InError)
      return;
    SmallString<128> Msg;
    Info.FormatDiagnostic(Msg);
    if (!isContextNote(Msg))
      return;
    SourcePoint P = pointOf(Info);
    if (!P.File.empty())
      Table.Errors.back().Context.push_back(std::move(P));
  }

private:
  DiagnosticConsumer *Next;
  std::unique_ptr<DiagnosticConsumer> Owned;
  Side Which;
  ErrorTable &Table;
  bool InError = false;
};

bool sameError(const LocatedError &A, const LocatedError &B) {
  return A.Which == B.Which && A.Diag.str() == B.Diag.str();
}

} // namespace

/// True when \p P lies inside \p S: same file, offset in [BeginOffset, EndOffset].
static bool inSpan(const SourcePoint &P, const SourceSpan &S) {
  return !P.File.empty() && P.File == S.File && P.Offset >= S.BeginOffset && P.Offset <= S.EndOffset;
}

bool LocatedError::at(const SourceSpan &S) const { return inSpan(At, S); }

bool LocatedError::touches(const SourceSpan &S) const {
  return inSpan(At, S) || llvm::any_of(Context, [&](const SourcePoint &P) { return inSpan(P, S); });
}

void recordErrors(DiagnosticsEngine &Diags, Side Which, ErrorTable &Table) {
  DiagnosticConsumer *Next = Diags.getClient();
  std::unique_ptr<DiagnosticConsumer> Owned = Diags.takeClient();
  Diags.setClient(new ErrorRecorder(Next, std::move(Owned), Which, Table), /*ShouldOwnClient=*/true);
}

std::string errorReason(const std::vector<std::string> &ErrorLines) {
  if (ErrorLines.empty())
    return "has an invalid declaration (clang could not make sense of it; see the translation unit's "
           "errors)";
  return "has " + std::to_string(ErrorLines.size()) + " compile error" + (ErrorLines.size() == 1 ? "" : "s") +
         ", the first: " + ErrorLines.front();
}

/// The first device function with errors that \p E (a kernel or device function) calls, directly or
/// through other device functions of \p Inv ("calls": "device:NAME", overloads alike); null when none.
static const Entity *brokenCallee(const Entity &E, const std::multimap<std::string, const Entity *> &Functions) {
  std::vector<const Entity *> Work{&E};
  std::set<std::string> Seen{E.ID};
  for (size_t I = 0; I < Work.size(); ++I) {
    const nlohmann::json &Calls = Work[I]->Data.contains("calls") ? Work[I]->Data["calls"] : nlohmann::json();
    for (const auto &Callee : Calls.is_array() ? Calls : nlohmann::json::array()) {
      std::string ID = Callee.is_string() ? Callee.get<std::string>() : "";
      auto [B, End] = Functions.equal_range(ID);
      for (auto It = B; It != End; ++It)
        if (It->second != &E && It->second->hasErrors())
          return It->second;
      if (Seen.insert(ID).second)
        for (auto It = B; It != End; ++It) // every overload's calls
          Work.push_back(It->second);
    }
  }
  return nullptr;
}

/// A kernel without errors that calls a device function with errors (directly or through others) stays
/// "ok", but its "indirect_pointer" names that call when it names nothing else: clang's recovery dropped
/// the code it could not read there (an assignment in a fold expression, which nvcc accepts), so what
/// that code reaches is not known, and add_restrict must not rest on it.
static void markBrokenCallees(SideInventory &Inv) {
  std::multimap<std::string, const Entity *> Functions;
  for (const Entity &E : Inv.Entities)
    if (E.Kind == EntityKind::DeviceFunction)
      Functions.emplace(E.ID, &E);
  for (Entity &E : Inv.Entities) {
    if (E.Kind != EntityKind::Kernel || E.hasErrors() || !E.Data.contains("indirect_pointer") ||
        !E.Data["indirect_pointer"].is_null())
      continue;
    if (const Entity *Callee = brokenCallee(E, Functions))
      E.Data["indirect_pointer"] = "a call of '" + Callee->Data.value("name", Callee->ID) + "' (" +
                                   llvm::sys::path::filename(Callee->Span.File).str() + ":" +
                                   std::to_string(Callee->Span.BeginLine) +
                                   "), which has compile errors: clang drops the code it cannot read, so what "
                                   "that code reaches is not known";
  }
}

void attributeErrors(SideInventory &Inv, const std::vector<LocatedError> &Errors) {
  for (Entity &E : Inv.Entities) {
    if (E.Kind != EntityKind::Kernel && E.Kind != EntityKind::DeviceFunction &&
        E.Kind != EntityKind::LaunchSite)
      continue;
    for (const LocatedError &X : Errors)
      if (X.touches(E.Span) &&
          llvm::none_of(E.Errors, [&](const LocatedError &Y) { return sameError(X, Y); }))
        E.Errors.push_back(X);
    if (!E.hasErrors())
      continue;
    std::vector<std::string> Lines;
    for (const LocatedError &X : E.Errors)
      Lines.push_back(X.Diag.str() + " [" + sideName(X.Which).str() + "]");
    E.Editable = false;
    E.NotEditableReason = errorReason(Lines);
  }
  markBrokenCallees(Inv);
}

bool parseUnusable(const ParseResult &R) {
  return llvm::any_of(R.Diagnostics, [](const ParseDiagnostic &D) {
    return D.Level == "fatal" || (D.Level == "error" && D.File.empty());
  });
}

} // namespace kloop
