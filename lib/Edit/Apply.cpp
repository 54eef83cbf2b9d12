//===- Apply.cpp - Resolve, check and apply a proposal --------------------===//
//
// Phase 1 (plan): each TU is parsed on the host side (launch sites, the
// pointers they pass) and then the device side (kernels and their regions); in
// HandleTranslationUnit, while the AST is alive, every edit is resolved through
// the inventory entity of its ID and turned into file-offset replacements.
// Phase 2 (check): replacements must lie in their entity's region and must not
// overlap; the edited files are re-parsed (in memory) on both sides and any new
// error or warning refuses the proposal; launch-bounds and block-size rules are
// checked on the re-parsed inventory (so constants are evaluated by clang).
//
//===----------------------------------------------------------------------===//
#include "kloop/Edit/Apply.h"
#include "kloop/Support/JSON.h"
#include "AddedCode.h"
#include "kloop/Inventory/Inventory.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/AST/TypeLoc.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Format/Format.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Lex/Lexer.h"
#include "clang/Tooling/Core/Replacement.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <set>

using namespace clang;
using namespace llvm;
using nlohmann::json;

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

std::string absPath(StringRef P, StringRef Dir) { return absolutePath(P, Dir); }

std::string relPath(StringRef P, StringRef Root) {
  if (Root.empty())
    return P.str();
  SmallString<256> R(Root);
  if (!R.ends_with("/"))
    R += "/";
  if (P.starts_with(R))
    return P.substr(R.size()).str();
  return P.str();
}

/// A region [Begin, End) of one file that an edit may change.
struct Region {
  std::string File;
  unsigned Begin = 0, End = 0;
};

/// What one side of one TU made of one edit.
struct Outcome {
  enum State { NotFound, Ok, Refused } St = NotFound;
  std::string Reason;
  std::vector<TextEdit> Edits;
  std::vector<Region> Regions;
};

/// One visible launch of a kernel from host code: the pairs of pointer
/// parameters that receive the same pointer (or one derived from it).
struct LaunchFacts {
  std::string SiteID, Kernel;
  struct Alias {
    std::string P1, P2, A1, A2, Base;
  };
  std::vector<Alias> Aliases;
};

/// Shared state of all plan parses.
struct PlanState {
  const Proposal &P;
  const ApplyOptions &Opts;
  std::mutex M;
  std::vector<std::vector<Outcome>> PerEdit; // [edit][parse]
  std::map<EntityKind, std::set<std::string>> Known;
  std::map<std::string, EntityKind> KindOf;
  std::set<std::string> HostFunctions;
  std::vector<LaunchFacts> Launches;
  /// Top-level declarations before the edit, per "job file|side" (AddedCode.h).
  std::map<std::string, DeclCensus> Census;
  PlanState(const Proposal &P, const ApplyOptions &O) : P(P), Opts(O), PerEdit(P.Edits.size()) {}
};

EntityKind wantedKind(EditKind K) {
  switch (K) {
  case EditKind::SetConstant: return EntityKind::Constant;
  case EditKind::SetUnroll:
  case EditKind::ReplaceLoop: return EntityKind::Loop;
  case EditKind::SetLaunchConfig: return EntityKind::LaunchSite;
  case EditKind::AddRestrict:
  case EditKind::AddConst: return EntityKind::Param;
  default: return EntityKind::Kernel;
  }
}

/// The part of an ID before `@file`, and the file (empty when none).
/// Names the parse of \p Job on side \p S: a file the compilation database lists with several
/// commands is several jobs (CompileJob::Entry), each parsed and checked on its own.
std::string parseKey(const CompileJob &Job, Side S) {
  return Job.File + "|" + std::to_string(Job.Entry) + "|" + sideName(S).str();
}

std::pair<std::string, std::string> splitAt(StringRef ID) {
  // `@` may appear in a launch-site file name only before ':'; kernel IDs use it as suffix.
  size_t At = ID.rfind('@');
  if (At == StringRef::npos || ID.find('/', At) != StringRef::npos)
    return {ID.str(), ""};
  return {ID.substr(0, At).str(), ID.substr(At + 1).str()};
}

class Planner {
public:
  Planner(PlanState &St, Side W, const CompileJob &Job, ASTContext &Ctx, const MacroTable &Macros,
          const ErrorTable &Errors)
      : St(St), W(W), Job(Job), Ctx(Ctx), SM(Ctx.getSourceManager()), LO(Ctx.getLangOpts()),
        Inv(collectSideInventory(Ctx, W, Macros, &Errors)) {
    for (Entity &E : Inv.Entities) {
      std::string ID = E.ID;
      if (E.Kind == EntityKind::LaunchSite)
        ID = relPath(absPath(E.Span.File, Job.Directory), St.Opts.Root) + ":" + E.ID;
      ByID.emplace(ID, &E);
      FileOf[&E] = absPath(E.Span.File, Job.Directory);
    }
  }

  void run() {
    if (W == Side::Host)
      collectLaunchFacts();
    std::vector<Outcome> Out(St.P.Edits.size());
    for (size_t I = 0; I < St.P.Edits.size(); ++I)
      Out[I] = plan(St.P.Edits[I]);
    std::lock_guard<std::mutex> L(St.M);
    for (auto &[ID, E] : ByID) {
      EntityKind K = E->Kind == EntityKind::LocalConstant ? EntityKind::Constant : E->Kind;
      if (W == Side::Device || K == EntityKind::LaunchSite || K == EntityKind::Constant) {
        St.Known[K].insert(ID);
        St.KindOf[ID] = K;
      }
    }
    for (const std::string &F : HostFns)
      St.HostFunctions.insert(F);
    for (size_t I = 0; I < Out.size(); ++I)
      St.PerEdit[I].push_back(std::move(Out[I]));
    for (LaunchFacts &F : Facts)
      St.Launches.push_back(std::move(F));
  }

private:
  PlanState &St;
  Side W;
  const CompileJob &Job;
  ASTContext &Ctx;
  SourceManager &SM;
  const LangOptions &LO;
  SideInventory Inv;
  std::map<std::string, Entity *> ByID;
  std::map<const Entity *, std::string> FileOf;
  std::vector<LaunchFacts> Facts;
  std::set<std::string> HostFns;

  // --- helpers ---------------------------------------------------------------
  struct FileRange {
    std::string File;
    unsigned Begin = 0, End = 0;
  };
  std::optional<FileRange> rangeOf(SourceRange R) const {
    CharSourceRange CR = Lexer::makeFileCharRange(CharSourceRange::getTokenRange(R), SM, LO);
    if (CR.isInvalid())
      return std::nullopt;
    FileRange F;
    F.File = absPath(SM.getFilename(CR.getBegin()), Job.Directory);
    F.Begin = SM.getFileOffset(CR.getBegin());
    F.End = SM.getFileOffset(CR.getEnd());
    return F;
  }
  std::optional<FileRange> pointOf(SourceLocation L) const {
    if (L.isMacroID()) {
      if (!SM.isMacroArgExpansion(L))
        return std::nullopt;
      L = SM.getSpellingLoc(L);
    }
    if (L.isInvalid())
      return std::nullopt;
    return FileRange{absPath(SM.getFilename(L), Job.Directory), SM.getFileOffset(L), SM.getFileOffset(L)};
  }
  StringRef bufferOf(const std::string &File) const {
    auto FE = SM.getFileManager().getOptionalFileRef(File);
    if (!FE)
      return {};
    FileID FID = SM.translateFile(*FE);
    if (FID.isInvalid())
      return {};
    return SM.getBufferData(FID);
  }
  std::string textOf(SourceRange R) const {
    auto F = rangeOf(R);
    if (!F)
      return "";
    return bufferOf(F->File).substr(F->Begin, F->End - F->Begin).str();
  }
  Region regionOf(const Entity &E) const {
    return Region{FileOf.at(&E), E.Span.BeginOffset, E.Span.EndOffset};
  }
  const Entity *owner(const Entity &E) const {
    auto It = ByID.find(E.Owner);
    return It == ByID.end() ? nullptr : It->second;
  }
  static Outcome refuse(std::string Why) {
    Outcome O;
    O.St = Outcome::Refused;
    O.Reason = std::move(Why);
    return O;
  }
  static const char *macroRefusal() {
    return "its source range crosses a macro expansion, so it cannot be edited safely; edit the macro "
           "definition instead";
  }

  /// Finds the entity of \p ID on this side.
  const Entity *find(const std::string &ID) const {
    auto It = ByID.find(ID);
    if (It != ByID.end())
      return It->second;
    auto [Base, File] = splitAt(ID);
    if (File.empty())
      return nullptr;
    It = ByID.find(Base);
    if (It != ByID.end() && relPath(FileOf.at(It->second), St.Opts.Root) == File)
      return It->second;
    return nullptr;
  }

  // --- launch facts (host side) ----------------------------------------------
  static const Expr *strip(const Expr *E) {
    for (;;) {
      const Expr *Prev = E;
      E = E->IgnoreParenImpCasts();
      if (const auto *C = dyn_cast<ExplicitCastExpr>(E))
        E = C->getSubExpr();
      if (E == Prev)
        return E;
    }
  }
  /// The variable a pointer expression is derived from: p, p + k, &p[k], (T*)p.
  static const ValueDecl *baseOf(const Expr *E) {
    E = strip(E);
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
      return DRE->getDecl();
    if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
      if (BO->isAdditiveOp()) {
        if (BO->getLHS()->getType()->isPointerType())
          return baseOf(BO->getLHS());
        if (BO->getRHS()->getType()->isPointerType())
          return baseOf(BO->getRHS());
      }
      if (BO->getOpcode() == BO_Comma)
        return baseOf(BO->getRHS());
    }
    if (const auto *UO = dyn_cast<UnaryOperator>(E))
      if (UO->getOpcode() == UO_AddrOf)
        if (const auto *AS = dyn_cast<ArraySubscriptExpr>(strip(UO->getSubExpr())))
          return baseOf(AS->getBase());
    if (const auto *ME = dyn_cast<MemberExpr>(E))
      return ME->getMemberDecl();
    return nullptr;
  }

  void collectLaunchFacts() {
    for (auto &[ID, E] : ByID) {
      if (E->Kind != EntityKind::LaunchSite || !E->S)
        continue;
      const auto *KCE = dyn_cast<CUDAKernelCallExpr>(E->S);
      if (!KCE || !E->Data["kernel"].is_string())
        continue;
      const FunctionDecl *K = KCE->getDirectCallee();
      if (!K)
        continue;
      LaunchFacts F;
      F.SiteID = ID;
      F.Kernel = E->Data["kernel"].get<std::string>();
      unsigned N = std::min<unsigned>(KCE->getNumArgs(), K->getNumParams());
      for (unsigned I = 0; I < N; ++I)
        for (unsigned J = I + 1; J < N; ++J) {
          const ParmVarDecl *PI = K->getParamDecl(I), *PJ = K->getParamDecl(J);
          if (!PI->getType()->isPointerType() || !PJ->getType()->isPointerType())
            continue;
          const ValueDecl *BI = baseOf(KCE->getArg(I)), *BJ = baseOf(KCE->getArg(J));
          std::string TI = textOf(KCE->getArg(I)->getSourceRange()), TJ = textOf(KCE->getArg(J)->getSourceRange());
          bool Same = (BI && BI == BJ) || (!TI.empty() && TI == TJ);
          if (Same)
            F.Aliases.push_back({PI->getNameAsString(), PJ->getNameAsString(), TI, TJ,
                                 BI ? BI->getNameAsString() : TI});
        }
      Facts.push_back(std::move(F));
    }
    std::function<void(const DeclContext *)> Walk = [&](const DeclContext *DC) {
      for (const Decl *D : DC->decls()) {
        if (const auto *NS = dyn_cast<NamespaceDecl>(D))
          Walk(NS);
        else if (const auto *FD = dyn_cast<FunctionDecl>(D))
          if (!FD->hasAttr<CUDAGlobalAttr>() && FD->doesThisDeclarationHaveABody() &&
              !SM.isInSystemHeader(FD->getLocation()))
            HostFns.insert(FD->getQualifiedNameAsString());
      }
    };
    Walk(Ctx.getTranslationUnitDecl());
  }

  // --- planning ----------------------------------------------------------------
  Outcome plan(const Edit &Ed) {
    bool HostEdit = Ed.Kind == EditKind::SetLaunchConfig;
    bool Both = Ed.Kind == EditKind::SetConstant;
    if (Ed.Kind == EditKind::AddKernelVariant && W == Side::Host)
      return retarget(Ed);
    if (!Both && (HostEdit != (W == Side::Host)))
      return {};
    const Entity *E = find(Ed.ID);
    if (!E)
      return {};
    EntityKind Want = wantedKind(Ed.Kind);
    EntityKind Have = E->Kind == EntityKind::LocalConstant ? EntityKind::Constant : E->Kind;
    if (Ed.Kind == EditKind::ReplaceStmt && Have != EntityKind::Kernel && Have != EntityKind::Loop)
      return refuse("'" + Ed.ID + "' is a " + entityKindName(E->Kind) +
                    ", but replace_stmt needs a kernel or a loop (whose body holds the statement)");
    if (Ed.Kind != EditKind::ReplaceStmt && Have != Want)
      return refuse("'" + Ed.ID + "' is a " + entityKindName(E->Kind) + ", but " + editKindName(Ed.Kind) +
                    " needs a " + entityKindName(Want));
    if (!E->Editable)
      return refuse("'" + Ed.ID + "' " + E->NotEditableReason);
    if (E->Kind == EntityKind::Loop || E->Kind == EntityKind::Param || E->Kind == EntityKind::LocalConstant) {
      const Entity *K = owner(*E);
      if (K && !K->Editable)
        return refuse("its kernel '" + K->ID + "' " + K->NotEditableReason);
    }
    if (auto Why = slotProblem(Ed))
      return refuse(*Why);
    Outcome O;
    switch (Ed.Kind) {
    case EditKind::SetConstant: O = setConstant(Ed, *E); break;
    case EditKind::SetUnroll: O = setUnroll(Ed, *E); break;
    case EditKind::SetLaunchBounds: O = setLaunchBounds(Ed, *E); break;
    case EditKind::SetLaunchConfig: O = setLaunchConfig(Ed, *E); break;
    case EditKind::AddRestrict: O = addRestrict(Ed, *E); break;
    case EditKind::AddConst: O = addConst(Ed, *E); break;
    case EditKind::ReplaceBody: O = replaceBody(Ed, *E); break;
    case EditKind::ReplaceLoop: O = replaceLoop(Ed, *E); break;
    case EditKind::ReplaceStmt: O = replaceStmt(Ed, *E); break;
    case EditKind::InsertDeviceFunction: O = insertDeviceFunction(Ed, *E); break;
    case EditKind::AddKernelVariant: O = addVariant(Ed, *E); break;
    }
    if (O.St == Outcome::Ok && O.Regions.empty()) {
      const Entity *Reg = E;
      if (E->Kind == EntityKind::Loop || E->Kind == EntityKind::Param)
        Reg = owner(*E) ? owner(*E) : E;
      O.Regions.push_back(regionOf(*Reg));
    }
    return O;
  }

  /// The proposal's text must stay in the place it replaces: a region check on
  /// the replaced range alone lets `128>>>(a); hostCode(); k<<<1, 128` through.
  static std::optional<std::string> slotProblem(const Edit &Ed) {
    auto expr = [](const char *Field, const std::string &V) -> std::optional<std::string> {
      if (auto Why = codeSlotProblem(V, CodeSlot::Expression))
        return "field '" + std::string(Field) + "' must be one C++ expression on one line: " + *Why;
      return std::nullopt;
    };
    auto code = [&](CodeSlot S, const char *Where) -> std::optional<std::string> {
      if (auto Why = codeSlotProblem(StringRef(Ed.Code).trim(), S))
        return "'code' must stay " + std::string(Where) + ": " + *Why;
      return std::nullopt;
    };
    switch (Ed.Kind) {
    case EditKind::SetConstant: return expr("value", Ed.Value);
    case EditKind::SetLaunchConfig:
      for (auto [F, V] : {std::pair{"grid", &Ed.Grid}, {"block", &Ed.Block}, {"shared_memory", &Ed.SharedMemory}})
        if (*V)
          if (auto Why = expr(F, **V))
            return Why;
      return std::nullopt;
    case EditKind::ReplaceBody: {
      StringRef Code = StringRef(Ed.Code).trim();
      if (!Code.starts_with("{") || !Code.ends_with("}"))
        return std::nullopt; // replaceBody says so
      return code(CodeSlot::Body, "one body in braces { ... }");
    }
    case EditKind::ReplaceLoop:
    case EditKind::ReplaceStmt: return code(CodeSlot::Statements, "inside the enclosing body");
    case EditKind::InsertDeviceFunction:
    case EditKind::AddKernelVariant: return code(CodeSlot::TopLevel, "whole declarations beside the kernel");
    default: return std::nullopt;
    }
  }

  Outcome ok(std::vector<TextEdit> Edits) {
    Outcome O;
    O.St = Outcome::Ok;
    O.Edits = std::move(Edits);
    return O;
  }
  TextEdit te(const FileRange &R, std::string Text) { return TextEdit{R.File, R.Begin, R.End - R.Begin, std::move(Text), 0}; }

  Outcome setConstant(const Edit &Ed, const Entity &E) {
    if (E.Data.value("constant_kind", "") == "macro") {
      std::string File = FileOf.at(&E);
      StringRef Buf = bufferOf(File);
      if (Buf.empty() || E.Span.EndOffset > Buf.size())
        return refuse("cannot read the definition of '" + Ed.ID + "'");
      StringRef Def = Buf.substr(E.Span.BeginOffset, E.Span.EndOffset - E.Span.BeginOffset);
      std::string Name = E.Data["name"].get<std::string>();
      if (!Def.starts_with(Name))
        return refuse("the definition of '" + Ed.ID + "' is not where the preprocessor recorded it");
      size_t Body = Name.size();
      while (Body < Def.size() && (Def[Body] == ' ' || Def[Body] == '\t'))
        ++Body;
      if (Body >= Def.size())
        return refuse("macro '" + Name + "' has an empty body");
      FileRange R{File, E.Span.BeginOffset + (unsigned)Body, E.Span.EndOffset};
      return ok({te(R, Ed.Value)});
    }
    const auto *V = dyn_cast_or_null<VarDecl>(E.D);
    if (!V || !V->getInit())
      return refuse("'" + Ed.ID + "' has no initializer to replace");
    auto R = rangeOf(V->getInit()->getSourceRange());
    if (!R)
      return refuse(macroRefusal());
    return ok({te(*R, Ed.Value)});
  }

  Outcome setUnroll(const Edit &Ed, const Entity &E) {
    std::string File = FileOf.at(&E);
    StringRef Buf = bufferOf(File);
    if (Buf.empty())
      return refuse("cannot read " + File);
    auto LineStart = [&](unsigned Off) {
      while (Off > 0 && Buf[Off - 1] != '\n')
        --Off;
      return Off;
    };
    unsigned LoopBegin = E.Span.BeginOffset, LS = LineStart(LoopBegin);
    StringRef Before = Buf.substr(LS, LoopBegin - LS);
    std::string Indent = Before.substr(0, Before.find_first_not_of(" \t")).str();
    std::string Pragma = Ed.Count ? "#pragma unroll " + std::to_string(*Ed.Count) : "";
    const json &U = E.Data["unroll"];
    if (!U.is_null()) {
      if (!U.contains("line"))
        return refuse("its unroll hint has no source line");
      // Find the pragma's line above the loop.
      unsigned Want = U["line"].get<unsigned>(), Line = E.Span.BeginLine, Off = LS;
      while (Line > Want && Off > 0) {
        Off = LineStart(Off - 1);
        --Line;
      }
      size_t EOL = Buf.find('\n', Off);
      StringRef Text = Buf.substr(Off, EOL == StringRef::npos ? StringRef::npos : EOL - Off);
      if (Line != Want || !Text.ltrim().starts_with("#pragma"))
        return refuse("its unroll hint (line " + std::to_string(Want) +
                      ") is not a #pragma line of its own (a macro or _Pragma?); cannot rewrite it");
      StringRef PragmaIndent = Text.substr(0, Text.find_first_not_of(" \t"));
      FileRange R{File, Off, (unsigned)(EOL == StringRef::npos ? Buf.size() : EOL + 1)};
      return ok({te(R, Ed.Count ? PragmaIndent.str() + Pragma + "\n" : std::string())});
    }
    if (!Ed.Count)
      return refuse("the loop has no unroll pragma to remove");
    if (!StringRef(Before).trim().empty())
      return ok({te(FileRange{File, LoopBegin, LoopBegin}, "\n" + Indent + Pragma + "\n" + Indent)});
    return ok({te(FileRange{File, LS, LS}, Indent + Pragma + "\n")});
  }

  Outcome setLaunchBounds(const Edit &Ed, const Entity &E) {
    const auto *FD = dyn_cast_or_null<FunctionDecl>(E.D);
    if (!FD)
      return refuse("no declaration for '" + Ed.ID + "'");
    std::string Args = std::to_string(Ed.MaxThreads) + (Ed.MinBlocks ? ", " + std::to_string(*Ed.MinBlocks) : "");
    if (const auto *LB = FD->getAttr<CUDALaunchBoundsAttr>()) {
      SourceRange AR(LB->getMaxThreads()->getBeginLoc(),
                     (LB->getMinBlocks() ? LB->getMinBlocks() : LB->getMaxThreads())->getEndLoc());
      auto R = rangeOf(AR);
      if (!R)
        return refuse(std::string("its __launch_bounds__ arguments: ") + macroRefusal());
      return ok({te(*R, Args)});
    }
    SourceLocation At = FD->getQualifierLoc() ? FD->getQualifierLoc().getBeginLoc() : FD->getLocation();
    auto R = pointOf(At);
    if (!R)
      return refuse(std::string("its name: ") + macroRefusal());
    return ok({te(*R, "__launch_bounds__(" + Args + ") ")});
  }

  Outcome setLaunchConfig(const Edit &Ed, const Entity &E) {
    const Expr *Grid = nullptr, *Block = nullptr, *Smem = nullptr;
    const Expr *AfterBlock = nullptr; // insert ", smem" after this when there is none
    if (const auto *K = dyn_cast_or_null<CUDAKernelCallExpr>(E.S)) {
      const CallExpr *C = K->getConfig();
      Grid = C->getArg(0);
      Block = C->getArg(1);
      if (C->getNumArgs() > 2 && !isa<CXXDefaultArgExpr>(C->getArg(2)))
        Smem = C->getArg(2);
      AfterBlock = Block;
    } else if (const auto *C = dyn_cast_or_null<CallExpr>(E.S)) {
      std::string Via = E.Data.value("via", "");
      if (Via != "cudaLaunchKernel" && Via != "cudaLaunchCooperativeKernel")
        return refuse("launch sites via " + Via +
                      " keep their configuration in a cudaLaunchConfig_t; set_launch_config supports <<<>>>, "
                      "cudaLaunchKernel and cudaLaunchCooperativeKernel");
      if (C->getNumArgs() < 5)
        return refuse("unexpected argument count of " + Via);
      Grid = C->getArg(1);
      Block = C->getArg(2);
      if (!isa<CXXDefaultArgExpr>(C->getArg(4)))
        Smem = C->getArg(4);
    } else {
      return refuse("the launch site has no call expression");
    }
    std::vector<TextEdit> Out;
    auto Set = [&](const Expr *X, const std::optional<std::string> &V, const char *What) -> std::optional<std::string> {
      if (!V)
        return std::nullopt;
      auto R = rangeOf(X->getSourceRange());
      if (!R)
        return std::string("its ") + What + " expression: " + macroRefusal();
      Out.push_back(te(*R, *V));
      return std::nullopt;
    };
    if (auto Err = Set(Grid, Ed.Grid, "grid"))
      return refuse(*Err);
    if (auto Err = Set(Block, Ed.Block, "block"))
      return refuse(*Err);
    if (Ed.SharedMemory) {
      if (Smem) {
        if (auto Err = Set(Smem, Ed.SharedMemory, "shared-memory"))
          return refuse(*Err);
      } else {
        if (!AfterBlock)
          return refuse("the launch has no shared-memory argument to set");
        auto R = rangeOf(AfterBlock->getSourceRange());
        if (!R)
          return refuse(std::string("its block expression: ") + macroRefusal());
        Out.push_back(te(FileRange{R->File, R->End, R->End}, ", " + *Ed.SharedMemory));
      }
    }
    return ok(std::move(Out));
  }

  const LaunchFacts::Alias *aliasFor(const std::string &Kernel, const std::string &Param, std::string &Site) {
    std::lock_guard<std::mutex> L(St.M);
    for (const LaunchFacts &F : St.Launches)
      if (F.Kernel == Kernel)
        for (const LaunchFacts::Alias &A : F.Aliases)
          if (A.P1 == Param || A.P2 == Param) {
            Site = F.SiteID;
            return &A;
          }
    return nullptr;
  }

  Outcome addRestrict(const Edit &Ed, const Entity &E) {
    const auto *P = dyn_cast_or_null<ParmVarDecl>(E.D);
    if (!P || !P->getType()->isPointerType())
      return refuse("parameter '" + E.Data.value("name", "") + "' is not a pointer");
    if (P->getType().isRestrictQualified())
      return refuse("parameter '" + P->getNameAsString() + "' is already __restrict__");
    std::string Site;
    if (const LaunchFacts::Alias *A = aliasFor(E.Owner, P->getNameAsString(), Site))
      return refuse("launch site " + Site + " passes '" + A->A1 + "' and '" + A->A2 +
                    "' (both derived from '" + A->Base + "') to parameters '" + A->P1 + "' and '" + A->P2 +
                    "', which may overlap");
    TypeLoc TL = P->getTypeSourceInfo()->getTypeLoc();
    while (auto Q = TL.getAs<QualifiedTypeLoc>())
      TL = Q.getUnqualifiedLoc();
    if (auto PTL = TL.getAs<PointerTypeLoc>()) {
      auto R = pointOf(PTL.getStarLoc());
      if (!R)
        return refuse(std::string("its type: ") + macroRefusal());
      StringRef Buf = bufferOf(R->File);
      unsigned After = R->Begin + 1;
      bool Space = After < Buf.size() && (Buf[After] == ' ' || Buf[After] == '\t');
      return ok({te(FileRange{R->File, After, After}, Space ? " __restrict__" : "__restrict__ ")});
    }
    // A pointer typedef: `fptr __restrict__ p`.
    auto R = pointOf(P->getLocation());
    if (!R || P->getName().empty())
      return refuse(std::string("its name: ") + macroRefusal());
    return ok({te(*R, "__restrict__ ")});
  }

  Outcome addConst(const Edit &Ed, const Entity &E) {
    const auto *P = dyn_cast_or_null<ParmVarDecl>(E.D);
    if (!P || !P->getType()->isPointerType())
      return refuse("parameter '" + E.Data.value("name", "") + "' is not a pointer");
    QualType Pointee = P->getType()->getPointeeType();
    if (Pointee.isConstQualified())
      return refuse("parameter '" + P->getNameAsString() + "' already points to const");
    if (E.Data.value("written", false)) {
      std::string Ev = E.Data["write_evidence"].is_null() ? std::string("") : dumpJSON(E.Data["write_evidence"]);
      return refuse("the kernel writes through parameter '" + P->getNameAsString() + "'" +
                    (Ev.empty() ? "" : " (" + Ev + ")"));
    }
    const auto *FD = dyn_cast<FunctionDecl>(P->getDeclContext());
    if (FD && FD->getPreviousDecl())
      return refuse("the kernel is also declared at " +
                    FD->getPreviousDecl()->getLocation().printToString(SM) +
                    "; adding const to the definition alone would declare a different overload");
    TypeLoc TL = P->getTypeSourceInfo()->getTypeLoc();
    while (auto Q = TL.getAs<QualifiedTypeLoc>())
      TL = Q.getUnqualifiedLoc();
    auto PTL = TL.getAs<PointerTypeLoc>();
    if (!PTL)
      return refuse("the pointer type of '" + P->getNameAsString() + "' is spelled through a typedef");
    auto R = pointOf(PTL.getPointeeLoc().getBeginLoc());
    if (!R)
      return refuse(std::string("its type: ") + macroRefusal());
    return ok({te(*R, "const ")});
  }

  Outcome replaceBody(const Edit &Ed, const Entity &E) {
    const auto *FD = dyn_cast_or_null<FunctionDecl>(E.D);
    if (!FD || !FD->getBody())
      return refuse("kernel '" + Ed.ID + "' has no body here");
    StringRef Code = StringRef(Ed.Code).trim();
    if (!Code.starts_with("{") || !Code.ends_with("}"))
      return refuse("'code' must be a whole body in braces: { ... }");
    auto R = rangeOf(FD->getBody()->getSourceRange());
    if (!R)
      return refuse(std::string("its body: ") + macroRefusal());
    return ok({te(*R, Code.str())});
  }

  Outcome replaceLoop(const Edit &Ed, const Entity &E) {
    if (!E.S)
      return refuse("no statement for '" + Ed.ID + "'");
    auto R = rangeOf(E.S->getSourceRange());
    if (!R)
      return refuse(macroRefusal());
    return ok({te(*R, StringRef(Ed.Code).trim().str())});
  }

  /// The statement whose end decides whether a `;` after \p S's source range
  /// still belongs to \p S: `if (c) x = 1;` ends like `x = 1`.
  static const Stmt *lastSubStmt(const Stmt *S) {
    for (;;) {
      const Stmt *Next = nullptr;
      if (const auto *I = dyn_cast<IfStmt>(S))
        Next = I->getElse() ? I->getElse() : I->getThen();
      else if (const auto *F = dyn_cast<ForStmt>(S))
        Next = F->getBody();
      else if (const auto *Wh = dyn_cast<WhileStmt>(S))
        Next = Wh->getBody();
      else if (const auto *RF = dyn_cast<CXXForRangeStmt>(S))
        Next = RF->getBody();
      else if (const auto *Sw = dyn_cast<SwitchStmt>(S))
        Next = Sw->getBody();
      else if (const auto *L = dyn_cast<LabelStmt>(S))
        Next = L->getSubStmt();
      else if (const auto *A = dyn_cast<AttributedStmt>(S))
        Next = A->getSubStmt();
      else if (const auto *C = dyn_cast<SwitchCase>(S))
        Next = C->getSubStmt();
      if (!Next)
        return S;
      S = Next;
    }
  }

  /// replace_stmt: statement Ed.StmtIndex (1-based) among the direct statements
  /// of a kernel's body or a loop's body (a loop body without braces is one
  /// statement; the code then goes in braces so that it stays inside the loop).
  Outcome replaceStmt(const Edit &Ed, const Entity &E) {
    const Stmt *Body = nullptr;
    std::string What;
    if (E.Kind == EntityKind::Kernel) {
      const auto *FD = dyn_cast_or_null<FunctionDecl>(E.D);
      Body = FD ? FD->getBody() : nullptr;
      What = "the body of kernel '" + Ed.ID + "'";
    } else if (E.S) {
      if (const auto *F = dyn_cast<ForStmt>(E.S))
        Body = F->getBody();
      else if (const auto *Wh = dyn_cast<WhileStmt>(E.S))
        Body = Wh->getBody();
      else if (const auto *D = dyn_cast<DoStmt>(E.S))
        Body = D->getBody();
      else if (const auto *RF = dyn_cast<CXXForRangeStmt>(E.S))
        Body = RF->getBody();
      What = "the body of loop '" + Ed.ID + "'";
    }
    if (!Body)
      return refuse("no body for '" + Ed.ID + "' here");
    std::vector<const Stmt *> Stmts;
    bool Braced = isa<CompoundStmt>(Body);
    if (const auto *CS = dyn_cast<CompoundStmt>(Body))
      Stmts.assign(CS->body_begin(), CS->body_end());
    else
      Stmts.push_back(Body);
    if (Ed.StmtIndex < 1 || (size_t)Ed.StmtIndex > Stmts.size())
      return refuse("'stmt' " + std::to_string(Ed.StmtIndex) + " is out of range: " + What + " has " +
                    std::to_string(Stmts.size()) + " direct statement" + (Stmts.size() == 1 ? "" : "s") +
                    " (1-based)");
    const Stmt *S = Stmts[Ed.StmtIndex - 1];
    // Attributes and pragmas on the statement (#pragma unroll above a loop) stay.
    while (const auto *A = dyn_cast<AttributedStmt>(S))
      S = A->getSubStmt();
    auto R = rangeOf(S->getSourceRange());
    if (!R)
      return refuse("statement " + std::to_string(Ed.StmtIndex) + ": " + macroRefusal());
    const Stmt *Last = lastSubStmt(S);
    if (!isa<CompoundStmt, DeclStmt, NullStmt, CXXTryStmt>(Last)) {
      // The `;` that ends it lies after its source range: take it too.
      StringRef Buf = bufferOf(R->File);
      size_t I = R->End;
      for (;;) {
        while (I < Buf.size() && isspace((unsigned char)Buf[I]))
          ++I;
        if (Buf.substr(I).starts_with("//")) {
          I = Buf.find('\n', I);
          I = I == StringRef::npos ? Buf.size() : I;
        } else if (Buf.substr(I).starts_with("/*")) {
          I = Buf.find("*/", I + 2);
          I = I == StringRef::npos ? Buf.size() : I + 2;
        } else {
          break;
        }
      }
      if (I >= Buf.size() || Buf[I] != ';')
        return refuse("statement " + std::to_string(Ed.StmtIndex) + ": cannot find the ';' that ends it (" +
                      macroRefusal() + ")");
      R->End = I + 1;
    }
    std::string Code = StringRef(Ed.Code).trim().str();
    if (!Braced)
      Code = "{ " + Code + " }";
    return ok({te(*R, Code)});
  }

  Outcome insertDeviceFunction(const Edit &Ed, const Entity &E) {
    StringRef Code = StringRef(Ed.Code).trim();
    if (!Code.contains("__device__"))
      return refuse("'code' must define a __device__ function");
    if (Code.contains("__global__"))
      return refuse("'code' defines a __global__ kernel; use add_kernel_variant for new kernels");
    Outcome O = ok({TextEdit{FileOf.at(&E), E.Span.BeginOffset, 0, Code.str() + "\n\n", 0}});
    O.Regions.push_back(regionOf(E));
    return O;
  }

  Outcome addVariant(const Edit &Ed, const Entity &E) {
    StringRef Code = StringRef(Ed.Code).trim();
    if (!Code.contains("__global__"))
      return refuse("'code' must be a whole __global__ kernel definition");
    if (find(Ed.Name) || ByID.count(Ed.Name))
      return refuse("a kernel named '" + Ed.Name + "' already exists");
    return ok({TextEdit{FileOf.at(&E), E.Span.EndOffset, 0, "\n\n" + Code.str(), 0}});
  }

  /// Host part of add_kernel_variant: rename the callee at each retargeted launch.
  Outcome retarget(const Edit &Ed) {
    Outcome O;
    for (const std::string &SiteID : Ed.Retarget) {
      const Entity *S = find(SiteID);
      if (!S)
        continue; // another TU may have it; checked after all parses
      if (S->Kind != EntityKind::LaunchSite)
        return refuse("retarget: '" + SiteID + "' is a " + entityKindName(S->Kind) + ", not a launch site");
      if (S->Data["kernel"] != Ed.ID && splitAt(Ed.ID).first != S->Data["kernel"])
        return refuse("retarget: launch site " + SiteID + " launches '" +
                      (S->Data["kernel"].is_string() ? S->Data["kernel"].get<std::string>() : "?") +
                      "', not '" + Ed.ID + "'");
      if (!S->Editable)
        return refuse("retarget: launch site " + SiteID + " " + S->NotEditableReason);
      const auto *C = dyn_cast_or_null<CallExpr>(S->S);
      const Expr *Callee = nullptr;
      if (const auto *K = dyn_cast_or_null<CUDAKernelCallExpr>(S->S))
        Callee = K->getCallee();
      else if (C && C->getNumArgs() > 0)
        Callee = C->getArg(S->Data.value("via", "") == "cudaLaunchKernelEx" ? 1 : 0);
      SourceLocation NameLoc;
      const Expr *X = Callee ? strip(Callee) : nullptr;
      if (const auto *U = dyn_cast_or_null<UnaryOperator>(X))
        X = strip(U->getSubExpr());
      if (const auto *DRE = dyn_cast_or_null<DeclRefExpr>(X))
        NameLoc = DRE->getNameInfo().getLoc();
      else if (const auto *ULE = dyn_cast_or_null<UnresolvedLookupExpr>(X))
        NameLoc = ULE->getNameLoc();
      if (NameLoc.isInvalid())
        return refuse("retarget: cannot find the kernel name at launch site " + SiteID);
      auto R = rangeOf(SourceRange(NameLoc, NameLoc));
      if (!R)
        return refuse("retarget: launch site " + SiteID + ": " + macroRefusal());
      O.Edits.push_back(te(*R, Ed.Name));
      O.Regions.push_back(regionOf(*S));
      O.St = Outcome::Ok;
      O.Reason += SiteID + "\n"; // found sites, one a line
    }
    return O;
  }
};

class PlanConsumer : public ASTConsumer {
public:
  PlanConsumer(PlanState &St, Side W, const CompileJob &Job, MacroTable &M, ErrorTable &Errors)
      : St(St), W(W), Job(Job), M(M), Errors(Errors) {}
  void HandleTranslationUnit(ASTContext &Ctx) override {
    // An imperfect TU is planned on clang's recovered AST (entities its errors touch are not
    // editable); after a fatal error nothing is trusted.
    if (Ctx.getDiagnostics().hasFatalErrorOccurred())
      return;
    Planner(St, W, Job, Ctx, M, Errors).run();
    DeclCensus C = takeDeclCensus(Ctx);
    std::lock_guard<std::mutex> L(St.M);
    St.Census[parseKey(Job, W)] = std::move(C);
  }

private:
  PlanState &St;
  Side W;
  const CompileJob &Job;
  MacroTable &M;
  ErrorTable &Errors;
};

class PlanAction : public ASTFrontendAction {
public:
  PlanAction(PlanState &St, Side W, const CompileJob &Job) : St(St), W(W), Job(Job) {}
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &CI, StringRef) override {
    recordMacros(CI.getPreprocessor(), Macros);
    recordErrors(CI.getDiagnostics(), W, Errors);
    return std::make_unique<PlanConsumer>(St, W, Job, Macros, Errors);
  }

private:
  PlanState &St;
  Side W;
  const CompileJob &Job;
  MacroTable Macros;
  ErrorTable Errors;
};

std::vector<std::string> checkedCommandLine(const CompileJob &Job, Side S, const FrontendOptions &FOpts) {
  std::vector<std::string> CL = sideCommandLine(Job, S, FOpts);
  for (const std::string &F : checkedWarningFlags())
    CL.push_back(F);
  return CL;
}

Expected<std::string> readFile(const std::string &Path) {
  auto B = MemoryBuffer::getFile(Path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!B)
    return createStringError(B.getError(), "cannot read " + Path + ": " + B.getError().message());
  return (*B)->getBuffer().str();
}

std::string diagKey(const ParseDiagnostic &D) {
  return D.Level + "|" + sys::path::filename(D.File).str() + "|" + D.Message;
}

/// Line (1-based) of byte \p Off in \p S.
unsigned lineOf(StringRef S, unsigned Off) { return 1 + S.substr(0, Off).count('\n'); }

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

} // namespace

/// Edits that add code next to their kernel rather than change it.
static bool addsBeside(EditKind K) {
  return K == EditKind::AddKernelVariant || K == EditKind::InsertDeviceFunction;
}

/// The new text of the edits whose text is a host expression (set_constant, set_launch_config).
static NewTextRanges expressionRanges(const Proposal &P, const NewTextRanges &NewRanges) {
  NewTextRanges Out;
  for (auto &[File, Rs] : NewRanges)
    for (auto [B, L, E] : Rs)
      if (P.Edits[E].Kind == EditKind::SetConstant || P.Edits[E].Kind == EditKind::SetLaunchConfig)
        Out[File].emplace_back(B, L, E);
  return Out;
}

/// What the added-code check (AddedCode.h) of the re-parse of \p Job on side \p S needs:
/// the new text, the census before the edit, the variant kernels, the job's own include
/// directories and the CUDA toolkit's.
static AddedCodeInput addedCodeInput(const Proposal &P, const CompileJob &Job, Side S, const FrontendOptions &FOpts,
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

Expected<ApplyResult> applyProposal(const Proposal &P, const std::vector<CompileJob> &Jobs,
                                    const FrontendOptions &FOpts, const ApplyOptions &Opts) {
  ApplyResult Result;
  ApplyOptions O = Opts;
  if (O.Root.empty()) {
    SmallString<256> Cwd;
    sys::fs::current_path(Cwd);
    O.Root = std::string(Cwd);
  }
  PlanState St(P, O);
  std::map<std::string, std::multiset<std::string>> BeforeDiags; // parseKey -> keys
  for (const CompileJob &Job : Jobs) {
    if (Job.Error)
      return createStringError(inconvertibleErrorCode(), Job.File + ": " + *Job.Error);
    for (Side S : {Side::Host, Side::Device}) {
      ParseResult R = parseCommandLine(checkedCommandLine(Job, S, FOpts), Job.Directory,
                                       std::make_unique<PlanAction>(St, S, Job));
      if (parseUnusable(R)) {
        std::string Msg = Job.File + " cannot be parsed (" + sideName(S).str() +
                          " side) before the edit; kloop apply edits only code clang can read:";
        for (const ParseDiagnostic &D : R.Diagnostics)
          if (D.Level != "warning")
            Msg += "\n  " + D.str();
        return createStringError(inconvertibleErrorCode(), Msg);
      }
      for (const ParseDiagnostic &D : R.Diagnostics)
        BeforeDiags[parseKey(Job, S)].insert(diagKey(D));
    }
  }

  auto refuse = [&](int I, std::string Why) {
    Refusal R;
    R.EditIndex = I;
    if (I >= 0)
      R.EditLabel = P.Edits[I].label();
    R.Reason = std::move(Why);
    Result.Refusals.push_back(std::move(R));
  };

  // Two edits of one entity (replace_loop and set_unroll of one loop) conflict
  // even when their text ranges only touch.
  for (unsigned I = 0; I < P.Edits.size(); ++I)
    for (unsigned J = I + 1; J < P.Edits.size(); ++J)
      if (P.Edits[I].ID == P.Edits[J].ID && !addsBeside(P.Edits[I].Kind) && !addsBeside(P.Edits[J].Kind) &&
          // Two replace_stmt of different statements of one body: their text ranges are disjoint.
          !(P.Edits[I].Kind == EditKind::ReplaceStmt && P.Edits[J].Kind == EditKind::ReplaceStmt &&
            P.Edits[I].StmtIndex != P.Edits[J].StmtIndex) &&
          !(P.Edits[I].Kind != P.Edits[J].Kind &&
            (P.Edits[I].Kind == EditKind::AddConst || P.Edits[I].Kind == EditKind::AddRestrict) &&
            (P.Edits[J].Kind == EditKind::AddConst || P.Edits[J].Kind == EditKind::AddRestrict))) {
        refuse(-1, "edit #" + std::to_string(I + 1) + " (" + P.Edits[I].label() + ") and edit #" +
                       std::to_string(J + 1) + " (" + P.Edits[J].label() +
                       ") both change '" + P.Edits[I].ID + "'; merge them into one edit");
        return Result;
      }

  // Merge outcomes per edit.
  std::vector<TextEdit> All;
  std::vector<std::vector<Region>> Regions(P.Edits.size());
  std::set<unsigned> Refused;
  for (unsigned I = 0; I < P.Edits.size(); ++I) {
    const Edit &Ed = P.Edits[I];
    bool Ok = false;
    std::string Reason;
    std::set<std::string> FoundSites;
    std::vector<TextEdit> Mine;
    for (const Outcome &Oc : St.PerEdit[I]) {
      if (Oc.St == Outcome::Refused && Reason.empty())
        Reason = Oc.Reason;
      if (Oc.St != Outcome::Ok)
        continue;
      if (Ed.Kind == EditKind::AddKernelVariant && !Oc.Reason.empty()) {
        for (StringRef L : llvm::split(StringRef(Oc.Reason).trim(), '\n'))
          FoundSites.insert(L.str());
      } else {
        Ok = true;
      }
      for (TextEdit T : Oc.Edits) {
        T.EditIndex = I;
        Mine.push_back(std::move(T));
      }
      for (const Region &R : Oc.Regions)
        Regions[I].push_back(R);
    }
    if (Reason.empty() && !Ok) {
      EntityKind Want = wantedKind(Ed.Kind);
      auto It = St.KindOf.find(Ed.ID);
      std::string Base = splitAt(Ed.ID).first;
      std::string Fn = Base.substr(0, Base.find('/'));
      if (It != St.KindOf.end())
        Reason = "'" + Ed.ID + "' is a " + entityKindName(It->second) + ", but " + editKindName(Ed.Kind) +
                 " needs a " + entityKindName(Want);
      else if (St.HostFunctions.count(Fn) && Ed.Kind != EditKind::SetLaunchConfig)
        Reason = "'" + Fn + "' is a host function: an edit may change only kernels, their regions, launch-site "
                 "configurations and tunable constants, never host code such as main() or timing code";
      else {
        std::string Known;
        unsigned N = 0;
        for (const std::string &K : St.Known[Want]) {
          if (++N > 30) {
            Known += ", ...";
            break;
          }
          Known += (Known.empty() ? "" : ", ") + K;
        }
        Reason = "unknown inventory ID '" + Ed.ID + "' (known IDs of that kind: " +
                 (Known.empty() ? "none" : Known) + ")";
      }
    }
    if (Reason.empty() && Ed.Kind == EditKind::AddKernelVariant)
      for (const std::string &S : Ed.Retarget)
        if (!FoundSites.count(S)) {
          std::string Known;
          for (const std::string &K : St.Known[EntityKind::LaunchSite])
            Known += (Known.empty() ? "" : ", ") + K;
          Reason = "retarget: unknown launch site '" + S + "' (known launch sites: " +
                   (Known.empty() ? "none" : Known) + ")";
          break;
        }
    // Region check: every replacement inside one of the edit's regions.
    if (Reason.empty())
      for (const TextEdit &T : Mine) {
        bool Inside = false;
        for (const Region &R : Regions[I])
          Inside |= R.File == T.File && T.Offset >= R.Begin && T.Offset + T.Length <= R.End;
        if (!Inside) {
          Reason = "a replacement at " + relPath(T.File, O.Root) + " offset " + std::to_string(T.Offset) +
                   " lies outside the region of '" + Ed.ID + "'";
          break;
        }
      }
    if (!Reason.empty()) {
      refuse(I, Reason);
      Refused.insert(I);
      continue;
    }
    All.insert(All.end(), Mine.begin(), Mine.end());
  }
  if (!Result.Refusals.empty() && !O.DropRefused)
    return Result;

  // Deduplicate (a header seen from several TUs or sides) and check overlaps.
  std::sort(All.begin(), All.end(), [](const TextEdit &A, const TextEdit &B) {
    return std::tie(A.File, A.Offset, A.Length, A.EditIndex, A.Text) <
           std::tie(B.File, B.Offset, B.Length, B.EditIndex, B.Text);
  });
  std::vector<TextEdit> Uniq;
  for (const TextEdit &T : All)
    if (Uniq.empty() || Uniq.back().File != T.File || Uniq.back().Offset != T.Offset ||
        Uniq.back().Length != T.Length || Uniq.back().Text != T.Text || Uniq.back().EditIndex != T.EditIndex)
      Uniq.push_back(T);
  for (size_t I = 1; I < Uniq.size(); ++I) {
    const TextEdit &A = Uniq[I - 1], &B = Uniq[I];
    if (A.File != B.File)
      continue;
    bool Overlap = B.Offset < A.Offset + A.Length || (B.Offset == A.Offset && (A.Length == 0 || B.Length == 0)) ||
                   (A.Length > 0 && B.Length > 0 && B.Offset < A.Offset + A.Length);
    if (Overlap) {
      if (A.EditIndex == B.EditIndex) {
        refuse(A.EditIndex, "it resolves to two different changes of one range in different translation units");
        return Result;
      }
      unsigned X = std::min(A.EditIndex, B.EditIndex), Y = std::max(A.EditIndex, B.EditIndex);
      refuse(-1, "edit #" + std::to_string(X + 1) + " (" + P.Edits[X].label() + ") and edit #" +
                     std::to_string(Y + 1) + " (" + P.Edits[Y].label() +
                     ") change overlapping code in " + relPath(A.File, O.Root) + "; the proposal is refused as a whole");
      return Result;
    }
  }
  if (Uniq.empty()) {
    if (Result.Refusals.empty())
      refuse(-1, "no edit produced a change");
    return Result;
  }

  // Apply in memory.
  std::map<std::string, std::vector<const TextEdit *>> ByFile;
  for (const TextEdit &T : Uniq)
    ByFile[T.File].push_back(&T);
  std::vector<std::pair<std::string, std::string>> Mapped;
  NewTextRanges NewRanges; // begin, len, edit
  for (auto &[File, Edits] : ByFile) {
    auto Text = readFile(File);
    if (!Text)
      return Text.takeError();
    FileChange C;
    C.File = File;
    C.RelPath = relPath(File, O.Root);
    C.Before = *Text;
    std::string Out;
    unsigned Pos = 0;
    for (const TextEdit *T : Edits) {
      if (T->Offset + T->Length > C.Before.size())
        return createStringError(inconvertibleErrorCode(), File + " changed while kloop apply was running");
      Out += C.Before.substr(Pos, T->Offset - Pos);
      NewRanges[File].emplace_back((unsigned)Out.size(), (unsigned)T->Text.size(), T->EditIndex);
      Out += T->Text;
      Pos = T->Offset + T->Length;
    }
    Out += C.Before.substr(Pos);
    C.After = Out;
    Mapped.emplace_back(File, Out);
    Result.Changes.push_back(std::move(C));
  }
  Result.Edits = Uniq;
  std::set<unsigned> AppliedSet;
  for (const TextEdit &T : Uniq)
    AppliedSet.insert(T.EditIndex);
  Result.Applied.assign(AppliedSet.begin(), AppliedSet.end());

  // Re-parse both sides of every TU with the edited files mapped in memory.
  if (O.Reparse) {
    size_t RefusedBefore = Result.Refusals.size();
    auto blame = [&](const ParseDiagnostic &D, const CompileJob &Job) -> int {
      std::string F = absPath(D.File, Job.Directory);
      for (const FileChange &C : Result.Changes) {
        if (C.File != F)
          continue;
        for (auto [B, L, E] : NewRanges[F])
          if (D.Line >= lineOf(C.After, B) && D.Line <= lineOf(C.After, B + L))
            return (int)E;
      }
      return -1;
    };
    std::vector<SideInventory> HostAfter, DeviceAfter;
    std::set<std::string> Reported;
    NewTextRanges Expressions = expressionRanges(P, NewRanges);
    std::vector<AddedCodeFinding> Added; // reported below when the edited code compiles
    for (const CompileJob &Job : Jobs)
      for (Side S : {Side::Host, Side::Device}) {
        SideInventory Inv;
        AddedCodeInput In = addedCodeInput(P, Job, S, FOpts, NewRanges, Expressions, St.Census);
        ParseResult R = parseCommandLine(checkedCommandLine(Job, S, FOpts), Job.Directory,
                                         withAddedCodeCheck(makeInventoryAction(S, Inv), In, Added), Mapped);
        std::multiset<std::string> Before = BeforeDiags[parseKey(Job, S)];
        for (const ParseDiagnostic &D : R.Diagnostics) {
          // New: an error inside the new text, or a diagnostic the baseline does not have as often.
          bool InNewText = D.Level != "warning" && blame(D, Job) >= 0;
          auto It = InNewText ? Before.end() : Before.find(diagKey(D));
          if (It != Before.end()) {
            Before.erase(It);
            continue;
          }
          ParseDiagnostic Rel = D;
          Rel.File = relPath(absPath(D.File, Job.Directory), O.Root);
          if (!Reported.insert(Rel.str()).second)
            continue; // the same diagnostic from the other side
          refuse(blame(D, Job), "the edited code " + std::string(D.Level == "warning" ? "adds a warning" : "does not compile") +
                                    ": " + Rel.str() + " [" + sideName(S).str() + "]");
        }
        (S == Side::Host ? HostAfter : DeviceAfter).push_back(std::move(Inv));
      }
    if (Result.Refusals.size() > RefusedBefore) {
      Result.Applied.clear();
      return Result;
    }
    // What the edits add to each TU: includes, pragmas, declarations, side effects (AddedCode.h).
    std::set<std::pair<int, std::string>> SeenAdded;
    for (const AddedCodeFinding &F : Added)
      if (SeenAdded.insert({F.Edit, F.Reason}).second)
        refuse(F.Edit, F.Reason);
    // Checks on the edited inventory, where clang evaluated the constants.
    std::map<std::string, const Entity *> Sites, Kernels;
    for (size_t J = 0; J < Jobs.size(); ++J) {
      for (const Entity &E : HostAfter[J].Entities)
        if (E.Kind == EntityKind::LaunchSite)
          Sites[relPath(absPath(E.Span.File, Jobs[J].Directory), O.Root) + ":" + E.ID] = &E;
      for (const Entity &E : DeviceAfter[J].Entities)
        if (E.Kind == EntityKind::Kernel)
          Kernels[E.ID] = &E;
    }
    auto threads = [](const json &Block) -> std::optional<long long> {
      if (!Block.is_object() || !Block["value"].is_array())
        return std::nullopt;
      long long T = 1;
      for (const json &V : Block["value"])
        T *= V.get<long long>();
      return T;
    };
    auto dims = [](const json &Block) {
      std::string S;
      for (const json &V : Block["value"])
        S += (S.empty() ? "" : "x") + dumpJSON(V);
      return S;
    };
    // "block 64x32x1 = 2048 threads; ..." when a constant block is outside 1 to 1024 threads.
    auto blockOutOfRange = [&](const json &Block) -> std::optional<std::string> {
      auto T = threads(Block);
      if (!T || (*T >= 1 && *T <= 1024))
        return std::nullopt;
      return "block " + dims(Block) + " = " + std::to_string(*T) + " threads; a block holds 1 to 1024 threads";
    };
    // A launch site's inventory member, or null (const json's operator[] must not miss).
    auto member = [](const json &Data, const char *Name) -> const json & {
      static const json Null;
      return Data.is_object() && Data.contains(Name) ? Data[Name] : Null;
    };
    // "grid 0x1x1: x is 0, but ..." when a constant grid is outside CUDA's maximum grid size
    // (CUDA C Programming Guide, "Features and Technical Specifications": x 2^31-1, y and z 65535).
    auto gridOutOfRange = [&](const json &Grid) -> std::optional<std::string> {
      if (!Grid.is_object() || !Grid.contains("value") || !Grid["value"].is_array() || Grid["value"].size() != 3)
        return std::nullopt;
      static const char *const Axis[] = {"x", "y", "z"};
      const long long *Limit = MaxGridDim;
      for (unsigned D = 0; D < 3; ++D) {
        const json &V = Grid["value"][D];
        if (!V.is_number_integer())
          return std::nullopt;
        long long N = V.get<long long>();
        if (N >= 1 && N <= Limit[D])
          continue;
        std::string Why = "grid " + dims(Grid) + ": " + Axis[D] + " is " + std::to_string(N) +
                          (N < 1 ? ", but every dimension is at least 1"
                                 : ", more than " + std::to_string(Limit[D]));
        // dim3 holds unsigned ints: a negative component arrives as N + 2^32.
        if (N > 2147483647LL && N <= 4294967295LL)
          Why += " (" + std::to_string(N) + " is what " + std::to_string(N - 4294967296LL) +
                 " becomes as the unsigned int of a dim3)";
        return Why + "; CUDA's maximum grid size is 2147483647 x 65535 x 65535 blocks";
      }
      return std::nullopt;
    };
    // "shared memory '-1' = -1 bytes, which is negative ..." when a constant dynamic shared-memory size
    // is below 0 or above 227 KiB, the most one block may use on sm_90 (H100/H200) with opt-in; smaller
    // limits of other GPUs (sm_80: 163 KiB, sm_86/sm_89: 99 KiB) are not checked: the target GPU is
    // not known here.
    auto sharedMemoryOutOfRange = [&](const json &Smem) -> std::optional<std::string> {
      constexpr long long Max = MaxDynamicSharedMemory;
      if (!Smem.is_object() || !Smem.contains("value") || !Smem["value"].is_number_integer())
        return std::nullopt;
      long long N = Smem["value"].get<long long>();
      std::string Expr = Smem.value("expr", std::string());
      if (N < 0)
        return "shared memory '" + Expr + "' = " + std::to_string(N) +
               " bytes, which is negative (the size_t launch argument turns it into " +
               std::to_string(static_cast<std::uint64_t>(N)) + " bytes); dynamic shared memory is 0 to " +
               std::to_string(Max) + " bytes";
      if (N > Max)
        return "shared memory '" + Expr + "' = " + std::to_string(N) + " bytes, more than " + std::to_string(Max) +
               " bytes (227 KiB), the most dynamic shared memory one block may use on sm_90 (H100/H200), with "
               "opt-in";
      return std::nullopt;
    };
    for (unsigned I : Result.Applied) {
      const Edit &Ed = P.Edits[I];
      if (Ed.Kind == EditKind::SetLaunchConfig && (Ed.Grid || Ed.SharedMemory)) {
        auto It = Sites.find(Ed.ID);
        if (It != Sites.end()) {
          // Grids and sizes that are not compile-time constants cannot be checked here (docs/edits.md).
          if (auto Why = Ed.Grid ? gridOutOfRange(member(It->second->Data, "grid")) : std::nullopt)
            refuse(I, *Why);
          else if (auto Why = Ed.SharedMemory ? sharedMemoryOutOfRange(member(It->second->Data, "shared_memory"))
                                              : std::nullopt)
            refuse(I, *Why);
        }
      }
      if (Ed.Kind == EditKind::SetLaunchConfig && Ed.Block) {
        auto It = Sites.find(Ed.ID);
        if (It == Sites.end())
          continue;
        const json &B = It->second->Data["block"];
        auto T = threads(B);
        if (!T)
          continue; // not a compile-time constant: cannot be checked here (docs/edits.md)
        if (auto Why = blockOutOfRange(B))
          refuse(I, *Why);
        else if (*T % 32 && !Ed.AllowOddBlock)
          refuse(I, "block " + dims(B) + " = " + std::to_string(*T) +
                        " threads is not a multiple of the warp size 32 (say why in \"allow_odd_block\" to allow it)");
      }
      // Launch bounds against constant block sizes of visible launches.
      std::string KernelID;
      if (Ed.Kind == EditKind::SetLaunchBounds)
        KernelID = splitAt(Ed.ID).first;
      if (Ed.Kind == EditKind::SetLaunchConfig && Ed.Block && Sites.count(Ed.ID) &&
          Sites[Ed.ID]->Data["kernel"].is_string())
        KernelID = Sites[Ed.ID]->Data["kernel"].get<std::string>();
      if (KernelID.empty() || !Kernels.count(KernelID))
        continue;
      const json &LB = Kernels[KernelID]->Data["launch_bounds"];
      if (!LB.is_object() || !LB["max_threads"]["value"].is_number_integer())
        continue;
      long long Max = LB["max_threads"]["value"].get<long long>();
      for (auto &[SID, S] : Sites) {
        if (S->Data["kernel"] != KernelID)
          continue;
        if (Ed.Kind == EditKind::SetLaunchConfig && SID != Ed.ID)
          continue;
        auto T = threads(S->Data["block"]);
        if (T && *T > Max) {
          refuse(I, "launch site " + SID + " launches '" + KernelID + "' with block " + dims(S->Data["block"]) +
                        " = " + std::to_string(*T) + " threads, more than __launch_bounds__ max_threads " +
                        std::to_string(Max));
          break;
        }
      }
    }
    // A set_constant can change a block size or launch bounds without naming a launch (a macro that is
    // one factor of a dim3, e.g. BLOCK_X with BLOCK_Y = 8): every launch whose block clang could
    // evaluate, and every constant __launch_bounds__, must stay within 1 to 1024 threads; every
    // constant grid and dynamic shared-memory size must stay within the limits above.
    std::vector<unsigned> ConstantEdits;
    for (unsigned I : Result.Applied)
      if (P.Edits[I].Kind == EditKind::SetConstant)
        ConstantEdits.push_back(I);
    if (!ConstantEdits.empty()) {
      std::string Problem;
      for (auto &[SID, S] : Sites) {
        std::optional<std::string> Why = blockOutOfRange(S->Data["block"]);
        if (!Why)
          Why = gridOutOfRange(member(S->Data, "grid"));
        if (!Why)
          Why = sharedMemoryOutOfRange(member(S->Data, "shared_memory"));
        if (Why) {
          Problem = "launch site " + SID + " then launches '" + S->Data.value("kernel", std::string("?")) +
                    "' with " + *Why;
          break;
        }
      }
      if (Problem.empty())
        for (auto &[KID, K] : Kernels) {
          const json &LB = K->Data["launch_bounds"];
          if (LB.is_object() && LB["max_threads"].is_object() && LB["max_threads"]["value"].is_number_integer() &&
              LB["max_threads"]["value"].get<long long>() > 1024) {
            Problem = "kernel '" + KID + "' then has __launch_bounds__ max_threads " +
                      std::to_string(LB["max_threads"]["value"].get<long long>()) + ", more than 1024";
            break;
          }
        }
      if (!Problem.empty())
        for (unsigned I : ConstantEdits)
          refuse(I, Problem);
    }
    for (unsigned I : Result.Applied) {
      const Edit &Ed = P.Edits[I];
      if (Ed.Kind != EditKind::AddKernelVariant)
        continue;
      bool Found = false;
      for (auto &[ID, K] : Kernels)
        Found |= K->Data.value("name", "") == Ed.Name;
      if (!Found)
        refuse(I, "'code' does not define a __global__ kernel named '" + Ed.Name + "'");
    }
    if (Result.Refusals.size() > RefusedBefore) {
      Result.Applied.clear();
      return Result;
    }
  }

  if (O.Format)
    for (FileChange &C : Result.Changes) {
      std::vector<std::pair<unsigned, unsigned>> R;
      for (auto [B, L, E] : NewRanges[C.File])
        R.emplace_back(B, L);
      C.After = formatChanged(C.File, C.After, R);
    }
  return Result;
}

} // namespace kloop
