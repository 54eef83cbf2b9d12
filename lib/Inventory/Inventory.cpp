//===- Inventory.cpp - Parsing both sides and merging the inventory -------===//
#include "kloop/Inventory/Inventory.h"
#include "kloop/Support/Path.h"
#include "kloop/Inventory/ExtractCache.h"
#include "kloop/Support/JSON.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Lex/MacroInfo.h"
#include "clang/Lex/PPCallbacks.h"
#include "clang/Lex/Preprocessor.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"

#include <functional>
#include <regex>
#include <chrono>
#include <map>
#include <set>

using namespace clang;
using nlohmann::json;

namespace kloop {

namespace {

class MacroRecorder : public PPCallbacks {
public:
  MacroRecorder(Preprocessor &PP, MacroTable &T) : PP(PP), SM(PP.getSourceManager()), T(T) {}

  void MacroDefined(const Token &Name, const MacroDirective *MD) override {
    const MacroInfo *MI = MD->getMacroInfo();
    if (!MI || !MI->isObjectLike())
      return;
    SourceLocation Loc = MI->getDefinitionLoc();
    if (Loc.isInvalid() || (!SM.isWrittenInMainFile(Loc) && SM.isInSystemHeader(Loc)))
      return;
    // Integer literal bodies only, optionally parenthesised / negated: tunable values.
    std::string Text;
    bool Neg = false;
    const Token *Lit = nullptr;
    for (const Token &Tok : MI->tokens()) {
      if (Tok.is(tok::l_paren) || Tok.is(tok::r_paren))
        continue;
      if (Tok.is(tok::minus) && !Lit) {
        Neg = !Neg;
        continue;
      }
      if (Tok.is(tok::numeric_constant) && !Lit) {
        Lit = &Tok;
        continue;
      }
      return;
    }
    if (!Lit)
      return;
    StringRef Spelling(Lit->getLiteralData(), Lit->getLength());
    std::string Digits = Spelling.str();
    while (!Digits.empty() && (Digits.back() == 'u' || Digits.back() == 'U' || Digits.back() == 'l' ||
                               Digits.back() == 'L'))
      Digits.pop_back();
    unsigned long long V;
    if (StringRef(Digits).getAsInteger(0, V))
      return; // floating point or otherwise not an integer
    MacroTable::Definition D;
    D.Name = Name.getIdentifierInfo()->getName().str();
    D.Value = Neg ? -(long long)V : (long long)V;
    D.InSystemHeader = SM.isInSystemHeader(Loc);
    D.CommandLine = SM.isWrittenInCommandLineFile(Loc);
    bool Invalid = false;
    CharSourceRange R = CharSourceRange::getCharRange(MI->getDefinitionLoc(),
                                                      Lexer::getLocForEndOfToken(MI->getDefinitionEndLoc(), 0, SM, PP.getLangOpts()));
    StringRef Whole = Lexer::getSourceText(R, SM, PP.getLangOpts(), &Invalid);
    D.Text = Invalid ? Spelling.str() : Whole.str();
    PresumedLoc P = SM.getPresumedLoc(Loc);
    if (P.isValid()) {
      D.Span.File = P.getFilename();
      D.Span.BeginLine = D.Span.EndLine = P.getLine();
      D.Span.BeginColumn = P.getColumn();
      D.Span.EndColumn = P.getColumn() + D.Text.size();
      D.Span.BeginOffset = SM.getFileOffset(Loc);
      D.Span.EndOffset = D.Span.BeginOffset + D.Text.size();
    }
    // A macro may be redefined; the last definition wins, as for the preprocessor.
    for (auto &Old : T.Definitions)
      if (Old.Name == D.Name) {
        Old = D;
        return;
      }
    T.Definitions.push_back(D);
  }

  void MacroExpands(const Token &Name, const MacroDefinition &MD, SourceRange Range,
                    const MacroArgs *) override {
    const MacroInfo *MI = MD.getMacroInfo();
    if (!MI || !MI->isObjectLike())
      return;
    SourceLocation Loc = SM.getExpansionLoc(Range.getBegin());
    if (SM.isInSystemHeader(Loc))
      return;
    PresumedLoc P = SM.getPresumedLoc(Loc);
    if (P.isInvalid())
      return;
    T.Expansions.push_back({Name.getIdentifierInfo()->getName().str(), P.getFilename(),
                            SM.getFileOffset(Loc), P.getLine(), P.getColumn()});
  }

private:
  Preprocessor &PP;
  SourceManager &SM;
  MacroTable &T;
};

class InventoryConsumer : public ASTConsumer {
public:
  InventoryConsumer(Side W, SideInventory &Out, MacroTable &Macros, ErrorTable &Errors)
      : W(W), Out(Out), Macros(Macros), Errors(Errors) {}
  void HandleTranslationUnit(ASTContext &Ctx) override {
    // After a fatal error clang reports nothing more: no entity could be trusted.
    // Other errors leave a recovered AST whose entities carry the errors that touch them.
    if (Ctx.getDiagnostics().hasFatalErrorOccurred())
      return;
    Out = collectSideInventory(Ctx, W, Macros, &Errors);
  }

private:
  Side W;
  SideInventory &Out;
  MacroTable &Macros;
  ErrorTable &Errors;
};

class InventoryAction : public ASTFrontendAction {
public:
  InventoryAction(Side W, SideInventory &Out) : W(W), Out(Out) {}
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &CI, StringRef) override {
    recordMacros(CI.getPreprocessor(), Macros);
    recordErrors(CI.getDiagnostics(), W, Errors);
    return std::make_unique<InventoryConsumer>(W, Out, Macros, Errors);
  }

private:
  Side W;
  SideInventory &Out;
  MacroTable Macros;
  ErrorTable Errors;
};

} // namespace

void recordMacros(Preprocessor &PP, MacroTable &Table) {
  PP.addPPCallbacks(std::make_unique<MacroRecorder>(PP, Table));
}

std::unique_ptr<FrontendAction> makeInventoryAction(Side Which, SideInventory &Out) {
  return std::make_unique<InventoryAction>(Which, Out);
}

/// Parses side \p Which of \p R's job into \p R.
static void parseOneSide(TUResult &R, Side Which, const FrontendOptions &Opts) {
  SideInventory &Inv = Which == Side::Device ? R.DeviceInv : R.HostInv;
  (Which == Side::Device ? R.Device : R.Host) = parseSide(R.Job, Which, Opts, makeInventoryAction(Which, Inv));
}

std::vector<TUResult> runInventory(const std::vector<CompileJob> &Jobs, const FrontendOptions &Opts,
                                   ExtractCache *Cache) {
  std::vector<TUResult> Results(Jobs.size());
  std::vector<std::string> Keys(Jobs.size());
  std::vector<char> Hit(Jobs.size(), 0);
  parallelFor(Jobs.size(), Opts.Jobs, [&](size_t I) {
    Results[I].Job = Jobs[I];
    if (!Cache || Jobs[I].Error)
      return;
    Keys[I] = Cache->key(Jobs[I], Opts);
    if (std::optional<TUResult> H = Cache->lookup(Keys[I], Jobs[I])) {
      Results[I] = std::move(*H);
      Hit[I] = 1;
    }
  });
  std::vector<size_t> Parse;
  for (size_t I = 0; I < Jobs.size(); ++I)
    if (!Hit[I] && !Jobs[I].Error)
      Parse.push_back(I);
  // The two sides of a translation unit are independent parses: each is a unit of work of its own, so
  // that one changed file (a pre-commit run) keeps two threads busy instead of one.
  std::vector<std::chrono::system_clock::time_point> Start(2 * Parse.size());
  parallelFor(2 * Parse.size(), Opts.Jobs, [&](size_t U) {
    Start[U] = std::chrono::system_clock::now();
    parseOneSide(Results[Parse[U / 2]], U % 2 ? Side::Host : Side::Device, Opts);
  });
  for (size_t K = 0; K < Parse.size(); ++K) {
    TUResult &R = Results[Parse[K]];
    // Each side's entities also carry the other side's errors inside them.
    attributeErrors(R.DeviceInv, R.HostInv.Errors);
    attributeErrors(R.HostInv, R.DeviceInv.Errors);
    // A crashed parse says nothing about the file: the next run parses it again.
    if (Cache && !R.Device.Crash && !R.Host.Crash)
      llvm::consumeError(Cache->store(Keys[Parse[K]], R, std::min(Start[2 * K], Start[2 * K + 1])));
  }
  return Results;
}

// --------------------------------------------------------------------------
// Merge
// --------------------------------------------------------------------------

/// The `hardware_fact` of constant \p C (docs/inventory.md): its uses where the value is a hardware
/// fact, the first one's reason leading; else, as the weaker signal, a name that says warp or lane
/// together with the value that name means (32, or 31 for a lane mask); else null.
static json hardwareFact(const json &C, const json &HwUses) {
  if (HwUses.is_array() && !HwUses.empty()) {
    const json &U = HwUses[0];
    std::string Where = U.value("file", "") + ":" + std::to_string(U.value("line", 0));
    return {{"reason", "used as the " + U.value("context", "") + " at " + Where}, {"uses", HwUses}};
  }
  std::string Name = llvm::StringRef(C.value("name", "")).upper();
  json V = C.contains("value") ? C["value"] : json(nullptr);
  if (!V.is_number_integer())
    return nullptr;
  bool Warp = Name.find("WARP") != std::string::npos && V.get<long long>() == 32;
  bool Lane = Name.find("LANE") != std::string::npos && V.get<long long>() == 31;
  if (!Warp && !Lane)
    return nullptr;
  return {{"reason", "named like a " + std::string(Warp ? "warp size" : "lane mask") + " and equal to " +
                         std::to_string(V.get<long long>()) + ", what that name means on every NVIDIA GPU"},
          {"uses", json::array()}};
}

/// Each device function's `called_by`: the kernels and device functions whose `calls` name it
/// directly, sorted (the reverse edges of the call graph).
static void addCallers(const json &Kernels, std::map<std::string, json> &DeviceFns) {
  std::map<std::string, std::set<std::string>> Callers;
  auto AddEdges = [&](const json &Caller) {
    if (Caller.contains("calls") && Caller["calls"].is_array())
      for (const json &Callee : Caller["calls"])
        if (Callee.is_string())
          Callers[Callee.get<std::string>()].insert(Caller.value("id", ""));
  };
  for (const json &K : Kernels)
    AddEdges(K);
  for (auto &[ID, F] : DeviceFns)
    AddEdges(F);
  for (auto &[ID, F] : DeviceFns)
    F["called_by"] = json(std::vector<std::string>(Callers[ID].begin(), Callers[ID].end()));
}


/// One line per distinct error, "file:line:col: level: message [device, host]",
/// naming every side that reported it; \p Rel rewrites the file name.
static json sideTaggedErrors(const std::vector<std::pair<ParseDiagnostic, Side>> &Errs,
                             const std::function<std::string(StringRef)> &Rel) {
  std::vector<std::pair<std::string, std::set<Side>>> Lines;
  for (const auto &[D, S] : Errs) {
    ParseDiagnostic X = D;
    X.File = Rel(D.File);
    std::string L = X.str();
    auto It = llvm::find_if(Lines, [&](const auto &P) { return P.first == L; });
    if (It == Lines.end())
      Lines.push_back({L, {S}});
    else
      It->second.insert(S);
  }
  json Out = json::array();
  for (const auto &[L, Sides] : Lines) {
    std::string Tag;
    for (Side S : Sides)
      Tag += (Tag.empty() ? "" : ", ") + sideName(S).str();
    Out.push_back(L + " [" + Tag + "]");
  }
  return Out;
}

/// Sets "errors", "status" and, for an entity with errors (or an invalid
/// declaration), "editable": false with the reason.
static void setStatus(json &J, const json &Errors, bool InvalidDecl) {
  J["errors"] = Errors;
  bool Bad = InvalidDecl || !Errors.empty();
  J["status"] = Bad ? "error" : "ok";
  if (Bad) {
    J["editable"] = false;
    J["not_editable_reason"] = errorReason(Errors.get<std::vector<std::string>>());
  }
}

/// A translation unit's entry without its status: "file", "sides" (whether each
/// parse reported an error) and "errors" (Job.Error, or both parses' errors).
static json tuEntry(const TUResult &R, const std::string &File,
                    const std::function<std::string(StringRef)> &Rel) {
  json TU{{"file", File}};
  if (R.Job.Entry)
    TU["entry"] = R.Job.Entry; // one of several commands the database has for this file
  if (R.Job.Error) {
    TU["errors"] = json::array({R.Job.Error.value()});
    return TU;
  }
  TU["sides"] = {{"device", R.Device.Ok ? "ok" : "error"}, {"host", R.Host.Ok ? "ok" : "error"}};
  std::vector<std::pair<ParseDiagnostic, Side>> Errs;
  for (const ParseResult *P : {&R.Device, &R.Host})
    for (const ParseDiagnostic &D : P->Diagnostics)
      if (D.Level == "error" || D.Level == "fatal")
        Errs.push_back({D, P == &R.Device ? Side::Device : Side::Host});
  TU["errors"] = sideTaggedErrors(Errs, Rel);
  return TU;
}

/// \p Insts (a kernel's "instantiations") with the file of every unnamed type their template arguments
/// print ("(lambda at FILE:L:C)", "(unnamed struct at ...)") as \p Rel writes a file (relative to the
/// root, as every other file of the inventory): the IDs then do not depend on where the tree is checked out.
static json rootRelativeTypes(json Insts, const std::function<std::string(StringRef)> &Rel) {
  static const std::regex At(R"(\((lambda|unnamed [a-z]+|anonymous [a-z]+) at ([^()]+?)(:[0-9]+:[0-9]+)\))");
  for (json &I : Insts)
    for (const char *Key : {"id", "template_args"}) {
      if (!I.contains(Key) || !I[Key].is_string())
        continue;
      std::string Text = I[Key], Out;
      std::sregex_iterator It(Text.begin(), Text.end(), At), End;
      size_t Done = 0;
      for (; It != End; ++It) {
        const std::smatch &M = *It;
        Out += Text.substr(Done, M.position(2) - Done) + Rel(M.str(2));
        Done = M.position(2) + M.length(2);
      }
      I[Key] = Out + Text.substr(Done);
    }
  return Insts;
}

/// \p Insts of a kernel whose ID \p From became \p To (`k@b.cu`: another file defines a kernel of the
/// same name): each instantiation's ID starts with the kernel's, so that `k<1>` of each stays apart.
static json renamedInstantiations(json Insts, const std::string &From, const std::string &To) {
  if (From != To)
    for (json &I : Insts)
      if (I.contains("id") && I["id"].is_string() && I["id"].get<std::string>().rfind(From, 0) == 0)
        I["id"] = To + I["id"].get<std::string>().substr(From.size());
  return Insts;
}

/// The kernel names that translation units of \p Results define in more than one file (each TU's
/// kernels as mergeInventory takes them): every such kernel's ID ends with `@<file>`, whatever the
/// order the units were parsed in, so that no plain ID names two kernels.
static std::set<std::string> kernelNamesInSeveralFiles(const std::vector<TUResult> &Results) {
  std::map<std::string, std::set<std::string>> Files;
  for (const TUResult &R : Results) {
    if (R.lost())
      continue;
    const SideInventory &KSide = R.DeviceInv.Entities.empty() ? R.HostInv : R.DeviceInv;
    for (const Entity &E : KSide.Entities)
      if (E.Kind == EntityKind::Kernel)
        Files[E.ID].insert(absolutePath(E.Span.File, R.Job.Directory));
  }
  std::set<std::string> Out;
  for (const auto &[Name, Fs] : Files)
    if (Fs.size() > 1)
      Out.insert(Name);
  return Out;
}

/// \p ID with kernel ID \p From renamed \p To: the kernel itself, or a region of it (`From/...`); any
/// other ID unchanged.
static std::string renamedID(const std::string &ID, const std::string &From, const std::string &To) {
  if (From == To)
    return ID;
  if (ID == From)
    return To;
  if (StringRef(ID).starts_with(From + "/"))
    return To + ID.substr(From.size());
  return ID;
}

/// Renames, everywhere in \p J, the references to kernel \p From and its regions that entries hold
/// (`function` of tree reductions, atomics and float operations, a loop's `parent`, a use's `owner`).
static void renameReferences(json &J, const std::string &From, const std::string &To) {
  if (J.is_array()) {
    for (json &X : J)
      renameReferences(X, From, To);
    return;
  }
  if (!J.is_object())
    return;
  for (auto It = J.begin(); It != J.end(); ++It) {
    if ((It.key() == "function" || It.key() == "parent" || It.key() == "owner") && It->is_string())
      *It = renamedID(It->get<std::string>(), From, To);
    else
      renameReferences(*It, From, To);
  }
}

json mergeInventory(const std::vector<TUResult> &Results, StringRef Root) {
  json Doc;
  Doc["schema"] = "kloop-inventory";
  Doc["version"] = InventorySchemaVersion;
  Doc["root"] = Root.str();
  json TUs = json::array();
  // Kernels: ID -> entry. A name defined in several files (static kernels, or the kernels of
  // separate programs) gets an @file suffix on every definition; two definitions of one name in
  // one file (other macros in other TUs) keep the name on the first seen and the suffix on the rest.
  std::map<std::string, json> Kernels;              // final ID -> kernel JSON
  std::map<std::string, std::string> KernelDefSite; // ID -> file:offset of definition
  const std::set<std::string> InSeveralFiles = kernelNamesInSeveralFiles(Results);
  std::map<std::string, std::vector<json>> Regions;  // kernel ID -> regions by kind (json with "kind")
  std::map<std::string, json> DeviceFns, LaunchSites, Constants;
  std::map<std::string, std::set<std::string>> UseKeys;
  std::map<std::string, json> Uses;
  std::map<std::string, std::set<std::string>> HardwareKeys;
  std::map<std::string, json> HardwareUses; // constant ID -> uses where its value is a hardware fact

  std::string Dir; // the current TU's working directory: clang reports paths as given
  auto absPath = [&](StringRef P) -> std::string {
    // clang's pseudo-files (`<command line>`, `<built-in>`) are no paths.
    if (P.empty() || P.starts_with("<") || Dir.empty())
      return P.str();
    return absolutePath(P, Dir);
  };
  auto spanJson = [&](const SourceSpan &S) {
    json J = S.toJson();
    J["file"] = relativePath(absPath(S.File), Root);
    return J;
  };

  auto rel = [&](StringRef F) { return F.empty() ? std::string() : relativePath(absPath(F), Root); };
  auto entityErrors = [&](const Entity &E) {
    std::vector<std::pair<ParseDiagnostic, Side>> Errs;
    for (const LocatedError &X : E.Errors)
      Errs.push_back({X.Diag, X.Which});
    return sideTaggedErrors(Errs, rel);
  };

  for (const TUResult &R : Results) {
    Dir = R.Job.Directory;
    json TU = tuEntry(R, relativePath(R.Job.File, Root), rel);
    if (R.lost()) {
      TU["status"] = "error";
      TUs.push_back(TU);
      continue;
    }
    // "partial" when at least one kernel or launch site has no error (device functions alone
    // are nothing to tune).
    bool AnyOk = false;
    auto noteStatus = [&](const Entity &E) { AnyOk |= !E.hasErrors(); };

    // The device side owns kernels and their regions; the host side contributes
    // launch sites (and kernels only when the device side produced nothing).
    const SideInventory &KSide = R.DeviceInv.Entities.empty() ? R.HostInv : R.DeviceInv;
    std::map<std::string, std::string> Renamed; // kernel ID in this TU -> final ID
    for (const Entity &E : KSide.Entities) {
      if (E.Kind != EntityKind::Kernel)
        continue;
      noteStatus(E);
      std::string Site = absPath(E.Span.File) + ":" + std::to_string(E.Span.BeginOffset);
      std::string ID = E.ID;
      auto It = KernelDefSite.find(ID);
      if (InSeveralFiles.count(E.ID) || (It != KernelDefSite.end() && It->second != Site))
        ID = E.ID + "@" + relativePath(absPath(E.Span.File), Root);
      Renamed[E.ID] = ID;
      json Insts = renamedInstantiations(rootRelativeTypes(E.Data["instantiations"], rel), E.ID, ID);
      if (Kernels.count(ID)) {
        // Same kernel seen from another TU: union the instantiations.
        json &K = Kernels[ID];
        for (const json &I : Insts) {
          bool Have = false;
          for (const json &J : K["instantiations"])
            Have |= J["id"] == I["id"];
          if (!Have)
            K["instantiations"].push_back(I);
        }
        for (const json &M : E.Data["mangled"])
          if (std::find(K["mangled"].begin(), K["mangled"].end(), M) == K["mangled"].end())
            K["mangled"].push_back(M);
        for (const json &Sym : E.Data["symbols"])
          if (std::find(K["symbols"].begin(), K["symbols"].end(), Sym) == K["symbols"].end())
            K["symbols"].push_back(Sym);
        // An error inside the kernel seen from any translation unit marks it.
        json Errs = K["errors"];
        for (const json &X : entityErrors(E))
          if (std::find(Errs.begin(), Errs.end(), X) == Errs.end())
            Errs.push_back(X);
        setStatus(K, Errs, E.InvalidDecl || (K["status"] == "error" && K["errors"].empty()));
        continue;
      }
      KernelDefSite[ID] = Site;
      json K = E.Data;
      renameReferences(K, E.ID, ID);
      K["instantiations"] = Insts;
      K["id"] = ID;
      K["location"] = spanJson(E.Span);
      K["editable"] = E.Editable;
      if (!E.Editable)
        K["not_editable_reason"] = E.NotEditableReason;
      setStatus(K, entityErrors(E), E.InvalidDecl);
      Kernels[ID] = K;
    }
    // Constants: one ID per definition. Two files defining one macro name
    // differently (BLOCK_SIZE 256 here, 128 there) get `@<file>` suffixes.
    std::map<std::string, std::string> ConstRenamed;
    auto addConstant = [&](const Entity &E, json J) {
      std::string Site = J["location"]["file"].get<std::string>() + ":" +
                         std::to_string(J["location"]["begin"]["line"].get<int>());
      std::string ID = E.ID;
      auto It = Constants.find(ID);
      if (It != Constants.end()) {
        std::string Other = It->second["location"]["file"].get<std::string>() + ":" +
                            std::to_string(It->second["location"]["begin"]["line"].get<int>());
        if (Other != Site)
          ID = E.ID + "@" + J["location"]["file"].get<std::string>();
      }
      ConstRenamed[E.ID] = ID;
      J["id"] = ID;
      Constants.emplace(ID, J);
    };
    auto rename = [&](const std::string &ID) {
      for (const auto &[From, To] : Renamed)
        if (std::string New = renamedID(ID, From, To); New != ID)
          return New;
      return ID;
    };
    for (const Entity &E : KSide.Entities) {
      json J = E.Data;
      J["location"] = spanJson(E.Span);
      J["editable"] = E.Editable;
      if (!E.Editable)
        J["not_editable_reason"] = E.NotEditableReason;
      switch (E.Kind) {
      case EntityKind::Kernel:
      case EntityKind::LaunchSite:
        break;
      case EntityKind::DeviceFunction:
        J["id"] = E.ID;
        setStatus(J, entityErrors(E), E.InvalidDecl);
        DeviceFns.emplace(E.ID, J);
        break;
      case EntityKind::Constant:
        addConstant(E, J);
        break;
      default: {
        std::string Owner = Renamed.count(E.Owner) ? Renamed[E.Owner] : E.Owner;
        renameReferences(J, E.Owner, Owner);
        J["id"] = rename(E.ID);
        J["kind"] = entityKindName(E.Kind);
        auto &V = Regions[Owner];
        bool Have = false;
        for (const json &X : V)
          Have |= X["id"] == J["id"];
        if (!Have)
          V.push_back(J);
      }
      }
    }
    // Host side: launch sites and the constants they use.
    for (const Entity &E : R.HostInv.Entities) {
      if (E.Kind == EntityKind::LaunchSite) {
        json J = E.Data;
        std::string ID = relativePath(absPath(E.Span.File), Root) + ":" + E.ID;
        J["id"] = ID;
        J["location"] = spanJson(E.Span);
        J["editable"] = E.Editable;
        if (!E.Editable)
          J["not_editable_reason"] = E.NotEditableReason;
        if (!J["kernel"].is_null() && Renamed.count(J["kernel"].get<std::string>()))
          J["kernel"] = Renamed[J["kernel"].get<std::string>()];
        noteStatus(E);
        setStatus(J, entityErrors(E), E.InvalidDecl);
        LaunchSites.emplace(ID, J);
      } else if (E.Kind == EntityKind::Constant) {
        json J = E.Data;
        J["location"] = spanJson(E.Span);
        J["editable"] = E.Editable;
        if (!E.Editable)
          J["not_editable_reason"] = E.NotEditableReason;
        addConstant(E, J);
      }
    }
    // A use with its file relative to the root and its owner and constant renamed as the entities were.
    auto NormalUse = [&](const json &U, const SideInventory *S) {
        json V = U;
        V["file"] = relativePath(absPath(U.value("file", "")), Root);
        std::string Owner = U["owner"];
        if (S == &R.HostInv && Owner.find("/launch#") != std::string::npos)
          Owner = relativePath(absPath(U.value("file", "")), Root) + ":" + Owner;
        else
          Owner = rename(Owner);
        V["owner"] = Owner;
        std::string C = U["constant"];
        if (C.find("/tparam:") != std::string::npos || C.find("/const:") != std::string::npos)
          C = rename(C);
        else if (ConstRenamed.count(C))
          C = ConstRenamed[C];
        V["constant"] = C;
        return V;
    };
    for (const SideInventory *S : {&R.DeviceInv, &R.HostInv}) {
      for (const json &U : S->ConstantUses) {
        json V = NormalUse(U, S);
        std::string C = V["constant"];
        if (UseKeys[C].insert(dumpJSON(V)).second)
          Uses[C].push_back(V);
      }
      for (const json &U : S->HardwareUses) {
        json V = NormalUse(U, S);
        std::string C = V["constant"];
        if (HardwareKeys[C].insert(dumpJSON(V)).second)
          HardwareUses[C].push_back(V);
      }
    }
    TU["status"] = TU["errors"].empty() ? "ok" : AnyOk ? "partial" : "error";
    TUs.push_back(TU);
  }

  // A constant name defined differently in several files: every definition
  // carries `@<file>`, not only the later ones, so IDs do not depend on the
  // order in which translation units were parsed.
  {
    std::set<std::string> Ambiguous;
    for (auto &[ID, C] : Constants)
      if (ID.find('@') != std::string::npos)
        Ambiguous.insert(ID.substr(0, ID.find('@')));
    for (const std::string &Base : Ambiguous) {
      auto It = Constants.find(Base);
      if (It == Constants.end())
        continue;
      std::string New = Base + "@" + It->second["location"]["file"].get<std::string>();
      json C = It->second;
      C["id"] = New;
      Constants.erase(It);
      Constants.emplace(New, C);
      for (std::map<std::string, json> *M : {&Uses, &HardwareUses})
        if (M->count(Base)) {
          for (json &U : (*M)[Base])
            U["constant"] = New;
          (*M)[New] = std::move((*M)[Base]);
          M->erase(Base);
        }
    }
  }

  // Attach regions to kernels.
  json KernelArr = json::array();
  for (auto &[ID, K] : Kernels) {
    json Loops = json::array(), Shared = json::array(), Locals = json::array(), TParams = json::array(),
         Params = json::array(), LB = nullptr;
    for (json &Rg : Regions[ID]) {
      if (K["status"] == "error" && Rg.value("editable", true)) {
        Rg["editable"] = false;
        Rg["not_editable_reason"] = "is in kernel '" + ID + "', which " + K["not_editable_reason"].get<std::string>();
      }
      std::string Kind = Rg["kind"];
      if (Kind == "loop") Loops.push_back(Rg);
      else if (Kind == "shared_array") Shared.push_back(Rg);
      else if (Kind == "local_constant") Locals.push_back(Rg);
      else if (Kind == "template_param") TParams.push_back(Rg);
      else if (Kind == "param") Params.push_back(Rg);
      else if (Kind == "launch_bounds") LB = Rg;
    }
    std::sort(Loops.begin(), Loops.end(), [](const json &A, const json &B) {
      auto N = [](const json &X) { std::string S = X["id"]; return std::stoi(S.substr(S.rfind('#') + 1)); };
      return N(A) < N(B);
    });
    K["loops"] = Loops;
    K["shared_arrays"] = Shared;
    K["local_constants"] = Locals;
    // Parameters: the per-kernel list already holds the analysis; add IDs.
    for (json &P : K["params"])
      P["id"] = ID + "/param:" + P["name"].get<std::string>();
    for (json &TP : K["template_params"])
      if (TP["kind"] == "value")
        TP["id"] = ID + "/tparam:" + TP["name"].get<std::string>();
    if (!K["launch_bounds"].is_null())
      K["launch_bounds"]["id"] = ID + "/launch_bounds";
    json LS = json::array();
    for (auto &[LID, L] : LaunchSites)
      if (L["kernel"] == ID)
        LS.push_back(LID);
    K["launch_sites"] = LS;
    KernelArr.push_back(K);
  }
  std::sort(KernelArr.begin(), KernelArr.end(), [](const json &A, const json &B) {
    return std::make_tuple(A["location"]["file"].get<std::string>(), A["location"]["begin"]["line"].get<int>()) <
           std::make_tuple(B["location"]["file"].get<std::string>(), B["location"]["begin"]["line"].get<int>());
  });
  Doc["kernels"] = KernelArr;
  addCallers(KernelArr, DeviceFns);
  json DF = json::array();
  for (auto &[ID, F] : DeviceFns)
    DF.push_back(F);
  Doc["device_functions"] = DF;
  json LSA = json::array();
  for (auto &[ID, L] : LaunchSites)
    LSA.push_back(L);
  Doc["launch_sites"] = LSA;
  // Tunable constants: macros, namespace-scope constants, local constants and
  // value template parameters, each with every use in a tunable context.
  json CA = json::array();
  for (auto &[ID, C] : Constants) {
    json X = C;
    X["uses"] = Uses.count(ID) ? json(Uses[ID]) : json::array();
    X["hardware_fact"] = hardwareFact(X, HardwareUses[ID]);
    if (!X["uses"].empty())
      CA.push_back(X);
  }
  for (auto &[KID, Rgs] : Regions)
    for (json &Rg : Rgs)
      if (Rg["kind"] == "local_constant" || Rg["kind"] == "template_param") {
        std::string ID = Rg["id"];
        if (!Uses.count(ID))
          continue;
        json X = Rg;
        X["constant_kind"] = Rg["kind"];
        X["uses"] = Uses[ID];
        X["hardware_fact"] = hardwareFact(X, HardwareUses[ID]);
        CA.push_back(X);
      }
  Doc["constants"] = CA;
  Doc["translation_units"] = TUs;
  return Doc;
}

Expected<inv::Inventory> typedInventory(const std::vector<TUResult> &Results, StringRef Root) {
  return inv::inventoryFromJSON(mergeInventory(Results, Root),
                                "the merged inventory (a member the typed model lacks is a kloop bug)",
                                /*Strict=*/true);
}

} // namespace kloop
