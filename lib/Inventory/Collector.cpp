//===- Collector.cpp - Walks one parse and lists inventory entities -------===//
#include "AtomicTargets.h"
#include "FloatOps.h"
#include "Index2D.h"
#include "IndirectPointers.h"
#include "HardwareFacts.h"
#include "SharedArrayUses.h"
#include "DotProducts.h"
#include "ElementwiseLoops.h"
#include "LaunchFormulaBuilder.h"
#include "TreeReductions.h"
#include "kloop/Frontend/Preamble.h"
#include "kloop/Inventory/Inventory.h"
#include "kloop/Support/JSON.h"
#include "kloop/Inventory/KernelNames.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Mangle.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <iterator>
#include <map>
#include <optional>
#include <set>

using namespace clang;
using nlohmann::json;

namespace kloop {

const char *entityKindName(EntityKind K) {
  switch (K) {
  case EntityKind::Kernel: return "kernel";
  case EntityKind::DeviceFunction: return "device_function";
  case EntityKind::Loop: return "loop";
  case EntityKind::SharedArray: return "shared_array";
  case EntityKind::LocalConstant: return "local_constant";
  case EntityKind::TemplateParam: return "template_param";
  case EntityKind::Param: return "param";
  case EntityKind::LaunchBounds: return "launch_bounds";
  case EntityKind::LaunchSite: return "launch_site";
  case EntityKind::Constant: return "constant";
  }
  return "unknown";
}

json SourceSpan::toJson() const {
  return json{{"file", File},
              {"begin", {{"line", BeginLine}, {"column", BeginColumn}}},
              {"end", {{"line", EndLine}, {"column", EndColumn}}}};
}

namespace {

class Visitor;

/// Whether template arguments printed as \p Args name an unnamed type by its location ("(lambda at
/// f.cu:8:12)", "(unnamed struct at ...)", "(anonymous class at ...)"), which does not identify it.
bool printsUnnamedType(const std::string &Args) {
  return Args.find("(lambda at ") != std::string::npos || Args.find("(unnamed ") != std::string::npos ||
         Args.find("(anonymous ") != std::string::npos;
}

class Collector {
public:
  Collector(ASTContext &Ctx, Side Which, const MacroTable &Macros)
      : Ctx(Ctx), SM(Ctx.getSourceManager()), LO(Ctx.getLangOpts()), Which(Which), Macros(Macros),
        Mangler(Ctx.createMangleContext()) {}

  SideInventory run();

  // --- helpers shared with the visitor -----------------------------------
  /// The file range of \p R: where its tokens are spelled when they are all
  /// arguments of one macro invocation (`__launch_bounds__(BS)`), else where
  /// the macros are expanded.
  CharSourceRange fileRange(SourceRange R) const {
    CharSourceRange F = Lexer::makeFileCharRange(CharSourceRange::getTokenRange(R), SM, LO);
    if (F.isValid())
      return F;
    return SM.getExpansionRange(R);
  }

  SourceSpan spanOf(SourceRange R) const {
    SourceSpan S;
    CharSourceRange CR = fileRange(R);
    SourceLocation B = CR.getBegin(), E = CR.getEnd();
    if (CR.isTokenRange())
      E = Lexer::getLocForEndOfToken(E, 0, SM, LO);
    if (B.isInvalid())
      return S;
    PresumedLoc PB = SM.getPresumedLoc(B), PE = SM.getPresumedLoc(E.isValid() ? E : B);
    if (PB.isInvalid())
      return S;
    S.File = PB.getFilename();
    S.BeginLine = PB.getLine();
    S.BeginColumn = PB.getColumn();
    S.EndLine = PE.isValid() ? PE.getLine() : PB.getLine();
    S.EndColumn = PE.isValid() ? (PE.getColumn() > 1 ? PE.getColumn() - 1 : PE.getColumn()) : PB.getColumn();
    S.BeginOffset = SM.getFileOffset(B);
    S.EndOffset = E.isValid() ? SM.getFileOffset(E) : S.BeginOffset;
    return S;
  }

  std::string textOf(SourceRange R) const {
    CharSourceRange CR = fileRange(R);
    bool Invalid = false;
    StringRef T = Lexer::getSourceText(CR, SM, LO, &Invalid);
    return Invalid ? std::string() : T.str();
  }

  /// Not editable when one of the entity's anchor locations (its name, its
  /// first and last token; attribute macros such as `__global__` in front do
  /// not count) comes from a macro body, or the code is in a system header.
  /// Tokens that are macro arguments are spelled in the file and stay editable,
  /// and so does an entity that begins or ends with a whole macro invocation
  /// written inside it (`for (...) ACCUM(x);`): its file range holds the
  /// invocation, which an edit replaces or keeps as written.
  void setEditability(Entity &E, SourceRange R) const { setEditability(E, R.getBegin(), R.getEnd()); }
  void setEditability(Entity &E, SourceLocation B, SourceLocation End) const {
    if (std::optional<std::string> Why = macroProblem(B, End)) {
      E.Editable = false;
      E.NotEditableReason = *Why + "; edit the macro definition instead";
      return;
    }
    if (B.isValid() && SM.isInSystemHeader(B)) {
      E.Editable = false;
      E.NotEditableReason = "is in a system header";
    }
  }

  /// Why the entity from \p B to \p End cannot be edited in its file because of a macro: an
  /// anchor comes from a macro body, and the macro's invocation is not wholly inside the entity.
  std::optional<std::string> macroProblem(SourceLocation B, SourceLocation End) const {
    auto FromBody = [&](SourceLocation L) { return L.isMacroID() && !SM.isMacroArgExpansion(L); };
    if (!FromBody(B) && !FromBody(End))
      return std::nullopt;
    SourceLocation FileB = SM.getFileLoc(B), FileEnd = SM.getFileLoc(End);
    // The invocation written in the file that produced \p L, when \p L is its first (last) token.
    auto WholeInvocation = [&](SourceLocation L, bool AtStart) -> std::optional<CharSourceRange> {
      SourceLocation Edge;
      bool Ok = AtStart ? Lexer::isAtStartOfMacroExpansion(L, SM, LO, &Edge)
                        : Lexer::isAtEndOfMacroExpansion(L, SM, LO, &Edge);
      if (!Ok)
        return std::nullopt;
      return SM.getExpansionRange(L);
    };
    if (SM.getExpansionLoc(B) == SM.getExpansionLoc(End)) { // one invocation holds it all
      StringRef Name = Lexer::getImmediateMacroNameForDiagnostics(FromBody(B) ? B : End, SM, LO);
      return "comes from the expansion of macro '" + Name.str() + "'";
    }
    if (FromBody(B)) {
      std::optional<CharSourceRange> Inv = WholeInvocation(B, /*AtStart=*/true);
      if (!Inv || SM.isBeforeInTranslationUnit(FileEnd, Inv->getEnd()))
        return "begins inside the expansion of macro '" + invokedName(B) + "' (line " +
               std::to_string(SM.getExpansionLineNumber(B)) + "), which starts before it";
    }
    if (FromBody(End)) {
      std::optional<CharSourceRange> Inv = WholeInvocation(End, /*AtStart=*/false);
      if (!Inv || SM.isBeforeInTranslationUnit(Inv->getBegin(), FileB))
        return "ends inside the expansion of macro '" + invokedName(End) + "' (line " +
               std::to_string(SM.getExpansionLineNumber(End)) + "), which continues after it";
    }
    return std::nullopt;
  }

  /// The name of the macro invocation written in the file that \p L comes from.
  std::string invokedName(SourceLocation L) const {
    SourceLocation At = SM.getExpansionLoc(L);
    return Lexer::getSourceText(CharSourceRange::getTokenRange(At, At), SM, LO).str();
  }

  json evalInt(const Expr *E) const {
    if (!E)
      return nullptr;
    // Dependent code and clang's error recovery (RecoveryExpr) cannot be evaluated.
    if (E->isValueDependent() || E->isTypeDependent() || E->isInstantiationDependent() || E->containsErrors())
      return nullptr;
    Expr::EvalResult R;
    if (!E->EvaluateAsInt(R, Ctx) || R.Val.getInt().getBitWidth() > 64)
      return nullptr;
    // An unsigned 64-bit value above INT64_MAX (a size_t -1) is kept as its two's complement
    // (-1), which is what later checks report; APSInt::getExtValue asserts on it.
    const llvm::APSInt &V = R.Val.getInt();
    return V.isSigned() ? V.getSExtValue() : (long long)V.getZExtValue();
  }

  std::string kernelID(const FunctionDecl *FD) {
    const FunctionDecl *Pattern = FD;
    if (const FunctionDecl *P = FD->getTemplateInstantiationPattern())
      Pattern = P;
    auto It = KernelIDs.find(Pattern->getCanonicalDecl());
    if (It != KernelIDs.end())
      return It->second;
    std::string Name = Pattern->getQualifiedNameAsString();
    if (Pattern->getTemplateSpecializationKind() == TSK_ExplicitSpecialization) {
      std::string S;
      llvm::raw_string_ostream OS(S);
      if (const TemplateArgumentList *Args = Pattern->getTemplateSpecializationArgs())
        printTemplateArgumentList(OS, Args->asArray(), Ctx.getPrintingPolicy());
      Name += S;
    }
    return Name;
  }

  std::string typeString(QualType T) const { return T.getAsString(Ctx.getPrintingPolicy()); }

  /// An invalid declaration, or one whose type holds an error or is still
  /// dependent, has no symbol: the mangler is not asked (it may assert on them).
  static bool canMangle(const FunctionDecl *F) {
    return !F->isInvalidDecl() && !F->getType()->containsErrors() && !F->getType()->isDependentType();
  }

  /// Records the uses of tunable constants in a tunable context \p E.
  void noteContext(const Expr *E, StringRef Context, StringRef Owner) {
    if (!E)
      return;
    SourceSpan Sp = spanOf(E->getSourceRange());
    if (!Sp.File.empty())
      ContextRanges.push_back({Sp.File, Sp.BeginOffset, Sp.EndOffset, Context.str(), Owner.str()});
    noteRefs(E, Context, Owner, 0);
  }

  /// Records the constants in \p E, an operand that holds a hardware fact (\p Reason,
  /// HardwareFacts.h), as SideInventory::HardwareUses rather than tunable uses.
  void noteHardware(const Expr *E, StringRef Reason, StringRef Owner) {
    SourceSpan Sp = spanOf(E->getSourceRange());
    if (!Sp.File.empty())
      HardwareRanges.push_back({Sp.File, Sp.BeginOffset, Sp.EndOffset, Reason.str(), Owner.str()});
    size_t Before = Out.ConstantUses.size();
    noteRefs(E, Reason, Owner, 0);
    std::move(Out.ConstantUses.begin() + Before, Out.ConstantUses.end(), std::back_inserter(Out.HardwareUses));
    Out.ConstantUses.resize(Before);
  }

  void noteRefs(const Stmt *S, StringRef Context, StringRef Owner, int Depth) {
    if (!S || Depth > 8)
      return;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
      const ValueDecl *VD = DRE->getDecl();
      if (const auto *NTTP = dyn_cast<NonTypeTemplateParmDecl>(VD)) {
        addUse(tparamID(NTTP), Context, Owner, DRE->getLocation());
      } else if (const auto *Var = dyn_cast<VarDecl>(VD)) {
        if (isTunableConstant(Var)) {
          addUse(constantID(Var), Context, Owner, DRE->getLocation());
          if (Var->getInit() && Visited.insert(Var).second) {
            noteRefs(Var->getInit(), Context, Owner, Depth + 1);
            Visited.erase(Var);
          }
        } else if (Var->hasLocalStorage() && Var->getInit() &&
                   typeString(Var->getType().getUnqualifiedType()) == "dim3" &&
                   Visited.insert(Var).second) {
          // `dim3 block(BLOCK); k<<<g, block>>>`: the initializer feeds the launch.
          noteContext(Var->getInit(), Context, Owner);
          Visited.erase(Var);
        }
      }
    }
    for (const Stmt *C : S->children())
      noteRefs(C, Context, Owner, Depth);
  }

  bool isTunableConstant(const VarDecl *V) const {
    QualType T = V->getType();
    if (!T.isConstQualified() && !V->isConstexpr())
      return false;
    if (!T->isIntegralOrEnumerationType())
      return false;
    if (!V->getInit())
      return false;
    if (V->getLocation().isValid() && SM.isInSystemHeader(V->getLocation()))
      return false;
    return true;
  }

  std::string tparamID(const NonTypeTemplateParmDecl *P) const {
    const DeclContext *DC = P->getDeclContext();
    if (const auto *FD = dyn_cast<FunctionDecl>(DC))
      return const_cast<Collector *>(this)->kernelID(FD) + "/tparam:" + P->getNameAsString();
    return "tparam:" + P->getNameAsString();
  }

  std::string constantID(const VarDecl *V) {
    if (V->isLocalVarDecl()) {
      if (const auto *FD = dyn_cast<FunctionDecl>(V->getDeclContext()->getNonClosureAncestor()))
        if (FD->hasAttr<CUDAGlobalAttr>())
          return kernelID(FD) + "/const:" + V->getNameAsString();
      return "const:" + V->getQualifiedNameAsString();
    }
    if (!V->isLocalVarDecl())
      GlobalConstants.insert(V->getCanonicalDecl());
    return "const:" + V->getQualifiedNameAsString();
  }

  void addUse(const std::string &ID, StringRef Context, StringRef Owner, SourceLocation Loc) {
    PresumedLoc P = SM.getPresumedLoc(SM.getExpansionLoc(Loc));
    json U{{"constant", ID}, {"context", Context}, {"owner", Owner}};
    if (P.isValid()) {
      U["file"] = P.getFilename();
      U["line"] = P.getLine();
      U["column"] = P.getColumn();
    }
    Out.ConstantUses.push_back(std::move(U));
  }

  void collectKernel(const FunctionDecl *FD);
  /// Traverses with \p V every declaration of \p DC written outside system headers, and lists the
  /// kernels that library declarations define (collectLibraryKernel).
  void walk(DeclContext *DC, Visitor &V);
  void collectLibraryKernel(const FunctionDecl *FD);
  /// name, qualified_name, static, anonymous_namespace, explicit_specialization.
  void addKernelIdentity(Entity &K, const FunctionDecl *FD);
  /// The kernel's names: clang's, nvcc's (KernelNames.h), the match key.
  KernelSymbol kernelSymbol(const FunctionDecl *F);
  /// clang's Itanium (or extern "C") name of \p D; a kernel is named as the
  /// device function, not as its host-side stub.
  std::string mangledName(const NamedDecl *D);
  /// nvcc's module id of this translation unit; "" when nvcc would make one
  /// up (no first external definition) or the main file has no path.
  const std::string &moduleId();
  /// The first definition in \p DC, in source order, that nvcc makes the
  /// module id from: countsForModuleId() and a name that does not itself
  /// contain the module id (`void f(Anon)`, Anon in an anonymous namespace,
  /// is passed over; read off nvcc 13).
  /// Stops at, and returns, a function with which nvcc settles the module id
  /// before any definition can give it (settlesModuleIdEarly); then nvcc
  /// takes the time.
  const NamedDecl *firstExternalDefinition(const DeclContext *DC);
  /// True when nvcc's spelling of \p Mangled involves the module id.
  bool dependsOnModuleId(const std::string &Mangled);
  /// Per kernel: "mangled" (every symbol), "symbols" and the instantiations
  /// of a template (with their symbols).
  /// \p OnlyDefined: list only instantiations whose body was instantiated.
  void addKernelNames(Entity &K, const FunctionDecl *FD, const std::string &KID, bool OnlyDefined = false);
  void collectDeviceFunction(const FunctionDecl *FD);
  void collectLaunch(const CallExpr *CE, const FunctionDecl *Enclosing);
  void collectBrokenLaunch(const RecoveryExpr *RE, const FunctionDecl *Enclosing);
  /// A launch-site entity at \p Site with the next ID of \p Enclosing (configuration not yet set).
  Entity newLaunch(const Expr *Site, const FunctionDecl *Enclosing, StringRef Via, const FunctionDecl *Kernel,
                   const Expr *CalleeExpr);
  void finishGlobalConstants();
  void classifyMacroUses();

  struct ContextRange {
    std::string File;
    unsigned Begin, End;
    std::string Context, Owner;
  };

  ASTContext &Ctx;
  SourceManager &SM;
  const LangOptions &LO;
  Side Which;
  const MacroTable &Macros;
  std::unique_ptr<MangleContext> Mangler;
  std::optional<std::string> ModuleIdCache;
  /// Why nvcc's module id cannot be known, when moduleId() is "".
  std::string ModuleIdUnknownReason;
  SideInventory Out;
  std::map<const Decl *, std::string> KernelIDs;
  std::map<const FunctionDecl *, unsigned> LaunchCounts;
  std::vector<ContextRange> ContextRanges;
  /// Operands that hold hardware facts; Context is the reason.
  std::vector<ContextRange> HardwareRanges;
  std::set<const VarDecl *> GlobalConstants;
  llvm::SmallPtrSet<const VarDecl *, 8> Visited;
};

// ---------------------------------------------------------------------------
// Parameter write analysis: does the kernel store through a pointer parameter?
// Conservative: a store through the parameter, through a local pointer derived
// from it, passing it to a callee that takes a pointer to non-const (or as a C
// variadic argument), or handing it (or anything derived from it) to inline asm
// counts. A callee's body is not read: adding `const` to the argument may choose
// another overload or instantiation (`f(const float *)`, `is_const<T>`), which
// builds and behaves differently (found by a break test).
// ---------------------------------------------------------------------------
class WriteAnalysis {
public:
  WriteAnalysis(const FunctionDecl *FD, ASTContext &Ctx) : Ctx(Ctx) {
    for (const ParmVarDecl *P : FD->parameters())
      Aliases[P] = {P, 0};
    if (FD->hasBody())
      walk(FD->getBody());
  }
  /// Parameter -> first evidence of a write ("line 12: assignment", ...).
  std::map<const ParmVarDecl *, std::string> Written;

private:
  /// A parameter an expression derives from, and how: Level 0 is a pointer into its pointee (`p`,
  /// `p + i`, `&p[i]`), 1 an lvalue of the pointee (`p[i]`, `*p`, `p->x`), -1 what holds such pointers
  /// (an array `float *a[1] = {p}`).
  struct Root {
    const ParmVarDecl *P = nullptr;
    int Level = 0;
    /// Reached through a local pointer or reference to const (`const float *q = out + i`): no store or
    /// call writes through it, but a cast to non-const, an integer kept or asm may (markAny).
    bool ThroughConst = false;
  };

  /// Every parameter \p E derives from (both branches of `?:`, the right operand of `,`).
  std::vector<Root> rootsOf(const Expr *E) const {
    std::vector<Root> Out;
    collectRoots(E, 0, Out);
    return Out;
  }
  void collectRoots(const Expr *E, int Up, std::vector<Root> &Out) const {
    if (!E)
      return;
    E = E->IgnoreParenImpCasts();
    if (const auto *C = dyn_cast<ExplicitCastExpr>(E))
      return collectRoots(C->getSubExpr(), Up, Out);
    if (const auto *AS = dyn_cast<ArraySubscriptExpr>(E))
      return collectRoots(AS->getBase(), Up + 1, Out);
    if (const auto *M = dyn_cast<MemberExpr>(E))
      return collectRoots(M->getBase(), Up + (M->isArrow() ? 1 : 0), Out);
    if (const auto *U = dyn_cast<UnaryOperator>(E)) {
      if (U->getOpcode() == UO_Deref)
        return collectRoots(U->getSubExpr(), Up + 1, Out);
      if (U->getOpcode() == UO_AddrOf)
        return collectRoots(U->getSubExpr(), Up - 1, Out);
      if (U->isIncrementDecrementOp())
        return collectRoots(U->getSubExpr(), Up, Out);
      return;
    }
    if (const auto *B = dyn_cast<BinaryOperator>(E)) {
      if (B->getOpcode() == BO_Comma || B->isAssignmentOp())
        return collectRoots(B->getOpcode() == BO_Comma ? B->getRHS() : B->getLHS(), Up, Out);
      if (B->isAdditiveOp())
        return pointerOperandRoots(B->getLHS(), B->getRHS(), Up, Out);
      return;
    }
    if (const auto *C = dyn_cast<AbstractConditionalOperator>(E)) {
      collectRoots(C->getTrueExpr(), Up, Out);
      return collectRoots(C->getFalseExpr(), Up, Out);
    }
    if (const auto *OC = dyn_cast<CXXOperatorCallExpr>(E)) {
      // A template's pattern where some operator overload is visible (cuda_bf16.h's) spells the
      // builtin operators on dependent operands as calls.
      OverloadedOperatorKind K = OC->getOperator();
      unsigned N = OC->getNumArgs();
      if ((K == OO_Plus || K == OO_Minus) && N == 2)
        return pointerOperandRoots(OC->getArg(0), OC->getArg(1), Up, Out);
      if (K == OO_Subscript || K == OO_Arrow || (K == OO_Star && N == 1))
        return collectRoots(OC->getArg(0), Up + 1, Out);
      if (K == OO_Amp && N == 1)
        return collectRoots(OC->getArg(0), Up - 1, Out);
      if (K == OO_Comma && N == 2)
        return collectRoots(OC->getArg(1), Up, Out);
      return;
    }
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
      if (auto It = Aliases.find(DRE->getDecl()); It != Aliases.end())
        Out.push_back({It->second.P, It->second.Level + Up, It->second.ThroughConst});
  }
  /// A sum's roots: its pointer operand's, in a template's pattern whichever operand may be a pointer
  /// (`out + b * n` with `TOut *out`, whose type is dependent).
  void pointerOperandRoots(const Expr *L, const Expr *R, int Up, std::vector<Root> &Out) const {
    for (const Expr *Side : {L, R})
      if (mayBePointer(Side->getType()))
        collectRoots(Side, Up, Out);
  }

  /// A pointer, or a type not known before instantiation (dependent, or `auto` not yet deduced).
  static bool mayBePointer(QualType T) {
    return T->isPointerType() || T->isArrayType() || T->isDependentType() || T->isUndeducedType();
  }
  /// A pointer or reference whose pointee may be written: not to const, or not known before instantiation.
  static bool mayWriteThrough(QualType T) {
    if (T->isPointerType())
      return !T->getPointeeType().isConstQualified();
    if (T->isReferenceType())
      return !T.getNonReferenceType().isConstQualified();
    return T->isDependentType() || T->isUndeducedType();
  }

  /// Records a write through every parameter \p E reaches as an lvalue of its pointee (a store, not a
  /// new value of the pointer itself).
  void mark(const Expr *E, const std::string &What, SourceLocation Loc) {
    for (const Root &R : rootsOf(E))
      if (R.Level >= 1 && !R.ThroughConst)
        record(R.P, What, Loc);
  }
  /// Records a possible write through every pointer parameter \p E derives from, at any level (asm
  /// operands, casts to a pointer to non-const).
  void markAny(const Expr *E, const std::string &What, SourceLocation Loc) {
    for (const Root &R : rootsOf(E))
      if (R.P->getType()->isPointerType())
        record(R.P, What, Loc);
  }
  /// Keeps the first evidence of a write through \p P: \p What at \p Loc's line.
  void record(const ParmVarDecl *P, const std::string &What, SourceLocation Loc) {
    if (Written.count(P))
      return;
    PresumedLoc PL = Ctx.getSourceManager().getPresumedLoc(Ctx.getSourceManager().getExpansionLoc(Loc));
    Written[P] = What + (PL.isValid() ? " at line " + std::to_string(PL.getLine()) : "");
  }

  /// A local that aliases a parameter's memory: a pointer (`float *row = out + i`, `auto *q = &p[1]`), a
  /// reference (`auto &r = p[i]`), an array of such pointers. One to const is kept ThroughConst: a cast
  /// that drops the const writes through it (`((float *)q)[i] = v`, found on Bruce-Lee-LY/cuda_hgemm's
  /// `const half *src = &C[i]; *((int4 *)(src + j)) = ...`).
  void noteAlias(const VarDecl &V) {
    QualType T = V.getType();
    const Expr *Init = V.getInit();
    if (!Init)
      return;
    if (const auto *IL = dyn_cast<InitListExpr>(Init->IgnoreParenImpCasts()); IL && T->isArrayType()) {
      for (const Expr *E : IL->inits())
        for (const Root &R : rootsOf(E))
          if (R.Level <= 0)
            Aliases[&V] = {R.P, R.Level - 1};
      return;
    }
    if (!mayBePointer(T.getNonReferenceType()) && !T->isReferenceType())
      return;
    // A reference is what it binds to (`auto &r = p[i]`, `T *&rp = p`); a pointer (or a type not yet
    // deduced) holds an address.
    bool Reference = T->isReferenceType();
    for (const Root &R : rootsOf(Init))
      if (Reference || R.Level <= 0)
        Aliases[&V] = {R.P, R.Level, !mayWriteThrough(T)};
  }

  /// A local pointer given a parameter's address later than its declaration (`q = p + i;`).
  void noteAssignedAlias(const Expr *LHS, const Expr *RHS) {
    const auto *D = dyn_cast<DeclRefExpr>(LHS->IgnoreParenImpCasts());
    const auto *V = D ? dyn_cast<VarDecl>(D->getDecl()) : nullptr;
    if (!V || isa<ParmVarDecl>(V) || V->getType()->isReferenceType() || !mayBePointer(V->getType()))
      return;
    for (const Root &R : rootsOf(RHS))
      if (R.Level <= 0)
        Aliases[V] = {R.P, R.Level, !mayWriteThrough(V->getType())};
  }

  /// The type of \p F's parameter that argument \p I of \p CE binds: an operator call of a member
  /// function (a lambda's or functor's `operator()`) passes the object as argument 0 (std::nullopt); an
  /// argument past the parameters binds a trailing pack in a template's pattern (its type), or is a C
  /// variadic argument: a pointer is what it is (`va_arg(ap, float *)` may write through it), a value
  /// (`printf("%f", p[0])`) binds nothing; else std::nullopt.
  static std::optional<QualType> paramTypeOf(const CallExpr *CE, const FunctionDecl *F, unsigned I) {
    if (isa<CXXOperatorCallExpr>(CE) && isa<CXXMethodDecl>(F) && !cast<CXXMethodDecl>(F)->isStatic()) {
      if (I == 0)
        return std::nullopt;
      --I;
    }
    unsigned N = F->getNumParams();
    if (I < N)
      return F->getParamDecl(I)->getType();
    if (N && F->getParamDecl(N - 1)->isParameterPack())
      return F->getParamDecl(N - 1)->getType();
    const Expr *Arg = CE->getArg(isa<CXXOperatorCallExpr>(CE) && isa<CXXMethodDecl>(F) ? I + 1 : I);
    if (F->isVariadic() && Arg->IgnoreParenImpCasts()->getType()->isPointerType()) // a value (`p[0]`) is a copy
      return Arg->IgnoreParenImpCasts()->getType();
    return std::nullopt;
  }

  /// Whether argument \p I of \p CE may be written through by the callee: unless every function the
  /// call may reach (its callee, or in a template's pattern each candidate of the overload set) takes
  /// it by value or as a pointer or reference to const.
  static bool callMayWrite(const CallExpr *CE, unsigned I) {
    std::vector<const FunctionDecl *> Candidates;
    if (const FunctionDecl *F = CE->getDirectCallee())
      Candidates.push_back(F);
    else if (const auto *O = dyn_cast<OverloadExpr>(CE->getCallee()->IgnoreParenImpCasts()))
      for (const NamedDecl *D : O->decls()) {
        D = D->getUnderlyingDecl();
        if (const auto *FT = dyn_cast<FunctionTemplateDecl>(D))
          Candidates.push_back(FT->getTemplatedDecl());
        else if (const auto *F = dyn_cast<FunctionDecl>(D))
          Candidates.push_back(F);
      }
    if (Candidates.empty())
      return true; // an indirect call
    for (const FunctionDecl *F : Candidates)
      if (std::optional<QualType> T = paramTypeOf(CE, F, I); T && mayWriteThrough(*T))
        return true;
    return false;
  }

  /// Records a write through each parameter an argument of \p CE reaches when the callee may write
  /// through it: a pointer into the parameter's memory, or an lvalue of it bound to a reference.
  /// The pointer \p E makes an integer of (`(unsigned long long)p`, `reinterpret_cast<uintptr_t>(p + i)`),
  /// or nullptr.
  static const Expr *pointerMadeInteger(const Expr *E) {
    const auto *C = E ? dyn_cast<ExplicitCastExpr>(E->IgnoreParenImpCasts()) : nullptr;
    if (!C || !C->getType()->isIntegerType() || !C->getSubExpr()->IgnoreParenImpCasts()->getType()->isPointerType())
      return nullptr;
    return C->getSubExpr();
  }
  /// A pointer made an integer that is kept (a variable's value) or handed to a call may become a pointer
  /// to non-const again (`*(float *)u = v`, there or in the callee); one only computed with
  /// (`(uintptr_t)p % 16 == 0`, an alignment test) is not.
  void markKeptInteger(const Expr *E, const std::string &Where, SourceLocation Loc) {
    if (const Expr *P = pointerMadeInteger(E))
      markAny(P, "cast to an integer " + Where, Loc);
  }

  void markCall(const CallExpr *CE) {
    for (unsigned I = 0; I < CE->getNumArgs(); ++I) {
      markKeptInteger(CE->getArg(I), "and passed to " + (calleeName(CE).empty() ? std::string("an indirect call")
                                                                                 : calleeName(CE)),
                      CE->getBeginLoc());
      std::vector<Root> Rs = rootsOf(CE->getArg(I));
      // The address of the parameter itself (`memcpy(&q, &p, 8)`): the callee may copy the pointer out.
      for (const Root &R : Rs)
        if (R.Level < 0 && R.P->getType()->isPointerType())
          record(R.P, "its address passed to " + (calleeName(CE).empty() ? std::string("an indirect call")
                                                                        : calleeName(CE)),
                 CE->getBeginLoc());
      if (Rs.empty() || !callMayWrite(CE, I))
        continue;
      std::string Name = calleeName(CE);
      if (Name.empty())
        Name = "an indirect call";
      for (const Root &R : Rs)
        if (!R.ThroughConst)
          record(R.P, (R.Level >= 1 ? "passed to " + Name + " by reference to non-const"
                                    : "passed to " + Name + " as a pointer to non-const"),
                 CE->getBeginLoc());
    }
  }

  void walk(const Stmt *S) {
    if (!S)
      return;
    if (const auto *DS = dyn_cast<DeclStmt>(S)) {
      for (const Decl *D : DS->decls())
        if (const auto *V = dyn_cast<VarDecl>(D)) {
          noteAlias(*V);
          markKeptInteger(V->getInit(), "and kept", V->getLocation());
        }
    } else if (const auto *B = dyn_cast<BinaryOperator>(S)) {
      if (B->isAssignmentOp())
        mark(B->getLHS(), "store", B->getOperatorLoc());
      if (B->getOpcode() == BO_Assign)
        markKeptInteger(B->getRHS(), "and kept", B->getOperatorLoc());
      if (B->getOpcode() == BO_Assign)
        noteAssignedAlias(B->getLHS(), B->getRHS());
    } else if (const auto *U = dyn_cast<UnaryOperator>(S)) {
      if (U->isIncrementDecrementOp())
        mark(U->getSubExpr(), "increment/decrement", U->getOperatorLoc());
    } else if (const auto *OC = dyn_cast<CXXOperatorCallExpr>(S)) {
      if (OC->isAssignmentOp() && OC->getNumArgs() > 0)
        mark(OC->getArg(0), "store", OC->getOperatorLoc());
      if (OC->getOperator() == OO_Call) // a lambda's or functor's operator() takes arguments as any call
        markCall(OC);
    } else if (const auto *A = dyn_cast<AsmStmt>(S)) {
      // asm may store through any address it is given (red.global.add, st.global, ...).
      for (const Stmt *Operand : A->children())
        if (const auto *E = dyn_cast_or_null<Expr>(Operand))
          markAny(E, "handed to inline asm", A->getAsmLoc());
    } else if (const auto *EC = dyn_cast<ExplicitCastExpr>(S)) {
      // A cast to a pointer (or reference) to non-const may be written through, and adding const to the
      // parameter would make a reinterpret_cast or static_cast ill-formed (casts away qualifiers):
      // `reinterpret_cast<float4 *>(&A[4 * i])[0]` (found on siboehm/SGEMM_CUDA's vectorized kernels).
      QualType T = EC->getTypeAsWritten();
      if ((T->isPointerType() || T->isReferenceType()) && mayWriteThrough(T))
        markAny(EC->getSubExpr(), "cast to a pointer to non-const", EC->getBeginLoc());
    } else if (const auto *CE = dyn_cast<CallExpr>(S)) {
      markCall(CE);
      // A non-const member function called on the pointee (`p->reset()`, `p[i].add(v)`).
      if (const auto *MC = dyn_cast<CXXMemberCallExpr>(CE))
        if (const CXXMethodDecl *M = MC->getMethodDecl(); M && !M->isConst())
          mark(MC->getCallee(), "non-const member function " + M->getNameAsString() + " called", CE->getBeginLoc());
    }
    for (const Stmt *C : S->children())
      walk(C);
  }

  ASTContext &Ctx;
  /// The parameters and the locals that alias one (noteAlias), with their Level.
  std::map<const Decl *, Root> Aliases;
};

// ---------------------------------------------------------------------------
// Kernel body walk: loops, shared arrays, local constants, callees.
// ---------------------------------------------------------------------------
class BodyWalker {
public:
  BodyWalker(Collector &C, const std::string &KID, const Entity &Kernel) : C(C), KID(KID), Kernel(Kernel) {}

  void walk(const Stmt *S, int Depth, const std::string &ParentLoop,
            const AttributedStmt *Attrs = nullptr) {
    if (!S)
      return;
    for (const HardwareOperand &H : hardwareOperands(S, C.Ctx))
      C.noteHardware(H.Operand, H.Reason, KID);
    if (const auto *AS = dyn_cast<AttributedStmt>(S)) {
      walk(AS->getSubStmt(), Depth, ParentLoop, AS);
      return;
    }
    if (isa<ForStmt, WhileStmt, DoStmt, CXXForRangeStmt>(S)) {
      std::string ID = loop(S, Depth, ParentLoop, Attrs);
      for (const Stmt *Ch : S->children())
        walk(Ch, Depth + 1, ID);
      return;
    }
    if (const auto *DS = dyn_cast<DeclStmt>(S)) {
      for (const Decl *D : DS->decls())
        if (const auto *V = dyn_cast<VarDecl>(D)) {
          var(V);
          if (V->getInit())
            walk(V->getInit(), Depth, ParentLoop);
        }
      return;
    }
    if (const auto *CE = dyn_cast<CallExpr>(S)) {
      if (const FunctionDecl *F = CE->getDirectCallee()) {
        if ((F->hasAttr<CUDADeviceAttr>() || F->hasAttr<CUDAGlobalAttr>()) && !F->getBuiltinID() &&
            F->getLocation().isValid() && !C.SM.isInSystemHeader(F->getLocation())) {
          const FunctionDecl *P = F->getTemplateInstantiationPattern() ? F->getTemplateInstantiationPattern() : F;
          Callees.insert("device:" + P->getQualifiedNameAsString());
        }
      } else if (const auto *ULE = dyn_cast<UnresolvedLookupExpr>(CE->getCallee()->IgnoreParenImpCasts())) {
        for (const NamedDecl *ND : ULE->decls()) {
          const NamedDecl *U = ND->getUnderlyingDecl();
          const FunctionDecl *F = dyn_cast<FunctionDecl>(U);
          if (const auto *FT = dyn_cast<FunctionTemplateDecl>(U))
            F = FT->getTemplatedDecl();
          if (F && F->hasAttr<CUDADeviceAttr>() && F->getLocation().isValid() &&
              !C.SM.isInSystemHeader(F->getLocation()))
            Callees.insert("device:" + F->getQualifiedNameAsString());
        }
      }
    }
    for (const Stmt *Ch : S->children())
      walk(Ch, Depth, ParentLoop);
  }

  std::set<std::string> Callees;

private:
  /// The loop's `unroll` object (docs/inventory.md, "loop") for the unroll hint \p LH. Two hints clang
  /// reads and nvcc ignores are `state: "ignored"` with no count, since the loop compiles as if they were
  /// not written: `#pragma GCC unroll N` (nvcc 13.0: "warning #1675-D: unrecognized GCC pragma"),
  /// `#pragma nounroll` and `#pragma clang loop ...` ("warning #20199-D: unrecognized #pragma in device
  /// code"); each gives the PTX of no pragma (checked with nvcc 13.0, -arch=sm_90).
  json unrollHint(const LoopHintAttr &LH) {
    bool Gcc = writtenAsGccUnroll(LH);
    StringRef Spelling = LH.getSpelling();
    bool Ignored = Gcc || Spelling == "nounroll" || Spelling == "loop"; // `#pragma clang loop ...` too
    json U{{"spelling", Gcc ? "GCC unroll" : Spelling.str()}};
    if (LH.getOption() == LoopHintAttr::UnrollCount) {
      U["count_expr"] = LH.getValue() ? C.textOf(LH.getValue()->getSourceRange()) : "";
      U["count"] = Ignored ? json(nullptr) : C.evalInt(LH.getValue());
      if (!Ignored)
        C.noteContext(LH.getValue(), "unroll", KID);
    } else {
      U["count"] = LH.getState() == LoopHintAttr::Disable && !Ignored ? json(1) : json(nullptr);
      U["state"] = LH.getState() == LoopHintAttr::Disable ? "disable" : "full";
    }
    if (Ignored)
      U["state"] = "ignored";
    PresumedLoc P = C.SM.getPresumedLoc(C.SM.getExpansionLoc(LH.getLocation()));
    if (P.isValid())
      U["line"] = P.getLine();
    return U;
  }

  /// Whether \p LH was written `#pragma GCC unroll` or `_Pragma("GCC unroll ...")` (its pragma name,
  /// where the hint's spelling location points, follows `GCC` on its line).
  bool writtenAsGccUnroll(const LoopHintAttr &LH) const {
    SourceLocation L = C.SM.getSpellingLoc(LH.getLocation());
    if (L.isInvalid())
      return false;
    bool Invalid = false;
    StringRef Buf = C.SM.getBufferData(C.SM.getFileID(L), &Invalid);
    unsigned Off = C.SM.getFileOffset(L);
    if (Invalid || Off > Buf.size())
      return false;
    size_t LineStart = Buf.rfind('\n', Off);
    LineStart = LineStart == StringRef::npos ? 0 : LineStart + 1;
    return Buf.slice(LineStart, Off).rtrim().ends_with("GCC");
  }

  std::string loop(const Stmt *S, int Depth, const std::string &Parent, const AttributedStmt *Attrs) {
    Entity E;
    E.Kind = EntityKind::Loop;
    E.ID = KID + "/loop#" + std::to_string(++LoopCount);
    E.Owner = KID;
    E.S = S;
    E.Span = C.spanOf(S->getSourceRange());
    C.setEditability(E, S->getSourceRange());
    if (!Kernel.Editable) {
      E.Editable = false;
      E.NotEditableReason = "its kernel " + Kernel.NotEditableReason;
    }
    const char *Kind = isa<ForStmt>(S) ? "for" : isa<WhileStmt>(S) ? "while" : isa<DoStmt>(S) ? "do" : "range_for";
    E.Data["loop_kind"] = Kind;
    E.Data["depth"] = Depth;
    E.Data["parent"] = Parent.empty() ? json(nullptr) : json(Parent);
    json Unroll = nullptr;
    if (Attrs)
      for (const Attr *A : Attrs->getAttrs())
        if (const auto *LH = dyn_cast<LoopHintAttr>(A))
          if (LH->getOption() == LoopHintAttr::Unroll || LH->getOption() == LoopHintAttr::UnrollCount)
            Unroll = unrollHint(*LH);
    E.Data["unroll"] = Unroll;
    json Trip = nullptr;
    if (const auto *F = dyn_cast<ForStmt>(S)) {
      if (F->getCond())
        C.noteContext(F->getCond(), "loop_bound", KID);
      Trip = tripCount(F);
      E.Data["condition"] = F->getCond() ? C.textOf(F->getCond()->getSourceRange()) : "";
    } else if (const auto *W = dyn_cast<WhileStmt>(S)) {
      C.noteContext(W->getCond(), "loop_bound", KID);
      E.Data["condition"] = W->getCond() ? C.textOf(W->getCond()->getSourceRange()) : "";
    } else if (const auto *D = dyn_cast<DoStmt>(S)) {
      C.noteContext(D->getCond(), "loop_bound", KID);
      E.Data["condition"] = D->getCond() ? C.textOf(D->getCond()->getSourceRange()) : "";
    }
    E.Data["trip_count"] = Trip;
    const auto *For = dyn_cast<ForStmt>(S);
    E.Data["elementwise"] = For ? elementwiseLoop(For, dyn_cast_or_null<FunctionDecl>(Kernel.D), C.Ctx) : json(nullptr);
    E.Data["dot_product"] = For ? dotProductLoop(For, dyn_cast_or_null<FunctionDecl>(Kernel.D), C.Ctx) : json(nullptr);
    C.Out.Entities.push_back(std::move(E));
    return C.Out.Entities.back().ID;
  }

  /// for (T i = A; i < B; i += S) with A, B, S constant: ceil((B - A) / S).
  json tripCount(const ForStmt *F) {
    const auto *Init = dyn_cast_or_null<DeclStmt>(F->getInit());
    if (!Init || !Init->isSingleDecl())
      return nullptr;
    const auto *IV = dyn_cast<VarDecl>(Init->getSingleDecl());
    if (!IV || !IV->getInit())
      return nullptr;
    json A = C.evalInt(IV->getInit());
    const auto *Cond = dyn_cast_or_null<BinaryOperator>(F->getCond() ? F->getCond()->IgnoreParenImpCasts() : nullptr);
    if (A.is_null() || !Cond)
      return nullptr;
    auto IsIV = [&](const Expr *E) {
      const auto *D = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
      return D && D->getDecl() == IV;
    };
    json B;
    BinaryOperatorKind Op = Cond->getOpcode();
    if (IsIV(Cond->getLHS()))
      B = C.evalInt(Cond->getRHS());
    else if (IsIV(Cond->getRHS())) {
      B = C.evalInt(Cond->getLHS());
      Op = Op == BO_GT ? BO_LT : Op == BO_GE ? BO_LE : Op;
    } else
      return nullptr;
    if (B.is_null())
      return nullptr;
    long long Step = 0;
    const Expr *Inc = F->getInc() ? F->getInc()->IgnoreParenImpCasts() : nullptr;
    if (const auto *U = dyn_cast_or_null<UnaryOperator>(Inc)) {
      if (IsIV(U->getSubExpr()))
        Step = U->isIncrementOp() ? 1 : -1;
    } else if (const auto *BO = dyn_cast_or_null<BinaryOperator>(Inc)) {
      if (IsIV(BO->getLHS()) && (BO->getOpcode() == BO_AddAssign || BO->getOpcode() == BO_SubAssign)) {
        json S = C.evalInt(BO->getRHS());
        if (!S.is_null())
          Step = BO->getOpcode() == BO_AddAssign ? S.get<long long>() : -S.get<long long>();
      }
    }
    if (Step <= 0)
      return nullptr;
    long long Lo = A.get<long long>(), Hi = B.get<long long>();
    if (Op == BO_LE)
      ++Hi;
    else if (Op != BO_LT && Op != BO_NE)
      return nullptr;
    if (Hi <= Lo)
      return 0;
    return (Hi - Lo + Step - 1) / Step;
  }

  void var(const VarDecl *V) {
    if (V->hasAttr<CUDASharedAttr>()) {
      Entity E;
      E.Kind = EntityKind::SharedArray;
      E.ID = KID + "/shared:" + V->getNameAsString();
      E.Owner = KID;
      E.D = V;
      E.Span = C.spanOf(V->getSourceRange());
      C.setEditability(E, V->getLocation(), V->getEndLoc());
      QualType T = V->getType();
      E.Data["name"] = V->getNameAsString();
      E.Data["type"] = C.typeString(T);
      E.Data["extern"] = V->hasExternalStorage();
      E.Data["dynamic"] = T->isIncompleteArrayType();
      json Dims = json::array();
      json Bytes = nullptr;
      if (TypeSourceInfo *TSI = V->getTypeSourceInfo()) {
        TypeLoc TL = TSI->getTypeLoc();
        while (auto AL = TL.getAs<ArrayTypeLoc>()) {
          if (const Expr *Size = AL.getSizeExpr()) {
            Dims.push_back({{"expr", C.textOf(Size->getSourceRange())}, {"value", C.evalInt(Size)}});
            C.noteContext(Size, "array_size", KID);
          }
          TL = AL.getElementLoc();
        }
        E.Data["element_type"] = C.typeString(TL.getType());
      }
      if (!V->isInvalidDecl() && !T->isDependentType() && !T->isIncompleteType() && T->isConstantArrayType())
        Bytes = (long long)C.Ctx.getTypeSizeInChars(T).getQuantity();
      E.Data["dims"] = Dims;
      E.Data["bytes"] = Bytes;
      E.Data.update(sharedArrayUses(V, dyn_cast_or_null<FunctionDecl>(Kernel.D), C.Ctx));
      C.Out.Entities.push_back(std::move(E));
      return;
    }
    if (C.isTunableConstant(V)) {
      Entity E;
      E.Kind = EntityKind::LocalConstant;
      E.ID = KID + "/const:" + V->getNameAsString();
      E.Owner = KID;
      E.D = V;
      E.Span = C.spanOf(V->getSourceRange());
      C.setEditability(E, V->getLocation(), V->getEndLoc());
      E.Data["name"] = V->getNameAsString();
      E.Data["type"] = C.typeString(V->getType());
      E.Data["constexpr"] = V->isConstexpr();
      E.Data["init"] = C.textOf(V->getInit()->getSourceRange());
      E.Data["value"] = C.evalInt(V->getInit());
      C.Out.Entities.push_back(std::move(E));
    }
  }

  Collector &C;
  std::string KID;
  const Entity &Kernel;
  unsigned LoopCount = 0;
};

/// True when \p D is a definition nvcc's module id can be made from: external
/// linkage, not inline, not a template or a specialization, and for a
/// variable an initializer (KernelNames.h; `int x;` and `template<> void
/// f<int>() {}` do not count, read off nvcc 13's module ids).
static bool countsForModuleId(const Decl *D) {
  if (D->isImplicit() || D->isInvalidDecl())
    return false;
  if (const auto *F = dyn_cast<FunctionDecl>(D))
    return F->doesThisDeclarationHaveABody() && !F->isInlined() && !F->isDeleted() &&
           !F->isDefaulted() && !F->isDependentContext() &&
           F->getTemplatedKind() == FunctionDecl::TK_NonTemplate && F->hasExternalFormalLinkage();
  if (const auto *V = dyn_cast<VarDecl>(D))
    return V->isThisDeclarationADefinition() == VarDecl::Definition && V->hasInit() && !V->isInline() &&
           !V->getDescribedVarTemplate() && !isa<VarTemplateSpecializationDecl>(V) &&
           !V->getDeclContext()->isDependentContext() && V->hasExternalFormalLinkage();
  return false;
}

/// True when \p T is, or has among its template arguments (recursively), a
/// class local to \p F.
static bool involvesClassLocalTo(QualType T, const FunctionDecl *F) {
  const auto *RD = T.isNull() ? nullptr : T->getBaseElementTypeUnsafe()->getAsCXXRecordDecl();
  if (!RD)
    return false;
  if (RD->isLocalClass() == F)
    return true;
  const auto *Spec = dyn_cast<ClassTemplateSpecializationDecl>(RD);
  if (!Spec)
    return false;
  for (const TemplateArgument &A : Spec->getTemplateArgs().asArray())
    if (A.getKind() == TemplateArgument::Type && involvesClassLocalTo(A.getAsType(), F))
      return true;
  return false;
}

/// True when a base or a field of \p RD has a class type whose default
/// constructor is not trivial: a generated default constructor of RD then
/// calls a function (a pointer member with a default initializer does not).
static bool defaultConstructsNonTrivialParts(const CXXRecordDecl *RD) {
  auto nonTrivial = [](QualType T) {
    const auto *C = T->getBaseElementTypeUnsafe()->getAsCXXRecordDecl();
    return C && C->hasDefinition() && !C->hasTrivialDefaultConstructor();
  };
  for (const CXXBaseSpecifier &B : RD->bases())
    if (nonTrivial(B.getType()))
      return true;
  for (const FieldDecl *Fd : RD->fields())
    if (nonTrivial(Fd->getType()))
      return true;
  return false;
}

/// A class with a constructor or destructor that is a function
/// of its own: written by the user, or generated and not trivial.
static bool hasOwnStructor(const CXXRecordDecl *RD) {
  if (!RD->hasDefinition())
    return false;
  for (const CXXConstructorDecl *C : RD->ctors())
    if (C->isUserProvided())
      return true;
  const CXXDestructorDecl *Dtor = RD->getDestructor();
  return (Dtor && Dtor->isUserProvided()) || !RD->hasTrivialDestructor() ||
         defaultConstructsNonTrivialParts(RD);
}

/// The default constructor that initializes \p V, when one does.
static const CXXConstructorDecl *defaultConstructorCalled(const VarDecl *V) {
  const Expr *Init = V->getInit();
  const auto *E = dyn_cast_or_null<CXXConstructExpr>(Init ? Init->IgnoreImplicit() : nullptr);
  return E && E->getConstructor()->isDefaultConstructor() ? E->getConstructor() : nullptr;
}

/// True when nvcc settles the translation unit's module id inside \p F's
/// body: \p F has internal linkage and either a class local to it has a
/// constructor or destructor of its own, or a variable of it is
/// default-initialized with a class that involves such a local class and
/// whose generated default constructor calls a non-trivial one (`static
/// std::unordered_map<Key, V, Hash> Cache;`, Key and Hash local). nvcc then
/// makes the module id from the time, even when an external definition
/// follows. Read off nvcc 13 (docs/inventory.md); a local class with only
/// ordinary member functions, a class in an anonymous namespace, and a local
/// class of an inline function do not do it.
static bool settlesModuleIdEarly(const FunctionDecl *F) {
  if (!F->doesThisDeclarationHaveABody() || F->isDependentContext() || F->isInvalidDecl() ||
      F->getTemplatedKind() != FunctionDecl::TK_NonTemplate || F->getFormalLinkage() != Linkage::Internal)
    return false;
  for (const Decl *D : F->decls()) {
    if (const auto *RD = dyn_cast<CXXRecordDecl>(D); RD && !RD->isLambda() && hasOwnStructor(RD))
      return true;
    const auto *V = dyn_cast<VarDecl>(D);
    const CXXConstructorDecl *Ctor = V ? defaultConstructorCalled(V) : nullptr;
    if (Ctor && !Ctor->isUserProvided() && involvesClassLocalTo(V->getType(), F) &&
        defaultConstructsNonTrivialParts(Ctor->getParent()))
      return true;
  }
  return false;
}

const NamedDecl *Collector::firstExternalDefinition(const DeclContext *DC) {
  for (const Decl *D : DC->decls()) {
    if (isa<NamespaceDecl, LinkageSpecDecl>(D)) {
      if (const NamedDecl *N = firstExternalDefinition(cast<DeclContext>(D)))
        return N;
    } else if (countsForModuleId(D) && !dependsOnModuleId(mangledName(cast<NamedDecl>(D)))) {
      return cast<NamedDecl>(D);
    } else if (const auto *F = dyn_cast<FunctionDecl>(D); F && settlesModuleIdEarly(F)) {
      return F;
    }
  }
  return nullptr;
}

bool Collector::dependsOnModuleId(const std::string &Mangled) {
  llvm::Expected<std::string> N = nvccSymbol(Mangled, "_", /*Rdc=*/false);
  if (!N) {
    llvm::consumeError(N.takeError());
    return true;
  }
  return *N != Mangled;
}

std::string Collector::mangledName(const NamedDecl *D) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  if (!Mangler->shouldMangleDeclName(D)) {
    OS << D->getDeclName().getAsString();
    return S;
  }
  // nvcc's module id names a constructor (destructor) by its complete-object
  // variant, C1 (D1); read off nvcc 13.
  const auto *F = dyn_cast<FunctionDecl>(D);
  if (const auto *Ctor = dyn_cast<CXXConstructorDecl>(D))
    Mangler->mangleName(GlobalDecl(Ctor, Ctor_Complete), OS);
  else if (const auto *Dtor = dyn_cast<CXXDestructorDecl>(D))
    Mangler->mangleName(GlobalDecl(Dtor, Dtor_Complete), OS);
  else if (F && F->hasAttr<CUDAGlobalAttr>())
    Mangler->mangleName(GlobalDecl(F, KernelReferenceKind::Kernel), OS);
  else if (F)
    Mangler->mangleName(GlobalDecl(F), OS);
  else
    Mangler->mangleName(GlobalDecl(cast<VarDecl>(D)), OS);
  return S;
}

const std::string &Collector::moduleId() {
  if (ModuleIdCache)
    return *ModuleIdCache;
  ModuleIdCache.emplace();
  OptionalFileEntryRef Main = SM.getFileEntryRefForID(SM.getMainFileID());
  const NamedDecl *First = firstExternalDefinition(Ctx.getTranslationUnitDecl());
  ModuleIdUnknownReason = "nvcc makes this translation unit's module id from the time: it has no "
                          "non-inline definition with external linkage";
  if (First && !countsForModuleId(First)) {
    ModuleIdUnknownReason = "nvcc makes this translation unit's module id from the time: '" +
                            First->getQualifiedNameAsString() +
                            "' (internal linkage) builds a constructor or destructor of a class local to it "
                            "before the first non-inline definition with external linkage";
    First = nullptr;
  }
  if (Main && First) {
    StringRef Path = SM.getFileManager().getCanonicalName(*Main);
    if (!Path.empty())
      *ModuleIdCache = nvccModuleId(Path, mangledName(First));
  }
  return *ModuleIdCache;
}

KernelSymbol Collector::kernelSymbol(const FunctionDecl *F) {
  KernelSymbol K;
  K.Clang = mangledName(F);
  K.Key = kernelMatchKey(K.Clang);
  const std::string &Mod = moduleId();
  bool Rdc = LO.GPURelocatableDeviceCode;
  llvm::Expected<std::string> N = nvccSymbol(K.Clang, Mod.empty() ? "_a" : Mod, Rdc);
  if (!N) {
    K.Unknown = llvm::toString(N.takeError());
  } else if (!Mod.empty()) {
    K.Nvcc = *N;
  } else if (llvm::Expected<std::string> Other = nvccSymbol(K.Clang, "_b", Rdc); Other && *Other == *N) {
    K.Nvcc = *N; // the same under two stand-in module ids: the name does not involve it
  } else {
    if (!Other)
      llvm::consumeError(Other.takeError());
    K.Unknown = ModuleIdUnknownReason;
  }
  K.Internal = K.Nvcc != K.Clang;
  return K;
}

void Collector::addKernelNames(Entity &K, const FunctionDecl *FD, const std::string &KID, bool OnlyDefined) {
  json Mangled = json::array(), Symbols = json::array(), Insts = json::array();
  auto add = [&](const FunctionDecl *F) {
    if (!canMangle(F))
      return json::object(); // an invalid declaration has no symbol (tolerant parsing)
    json J = toJson(kernelSymbol(F));
    Mangled.push_back(J["mangled"]);
    Symbols.push_back(J);
    return J;
  };
  const FunctionTemplateDecl *FT = FD->getDescribedFunctionTemplate();
  if (!FT) {
    add(FD);
  } else {
    for (const FunctionDecl *Spec : FT->specializations()) {
      if (!Spec->isTemplateInstantiation() && Spec->getTemplateSpecializationKind() != TSK_ExplicitSpecialization)
        continue;
      if (OnlyDefined && !Spec->isDefined())
        continue;
      std::string Args;
      llvm::raw_string_ostream OS(Args);
      if (const TemplateArgumentList *TAL = Spec->getTemplateSpecializationArgs())
        printTemplateArgumentList(OS, TAL->asArray(), Ctx.getPrintingPolicy());
      json Names = add(Spec);
      if (Names.empty())
        continue; // an instantiation that failed (tolerant parsing) has no symbol to list
      // An unnamed type (a lambda's closure) prints as its location, which two instantiations can share
      // (one lambda in a function template instantiated twice): its symbol tells them apart.
      std::string ID = KID + Args;
      if (printsUnnamedType(Args))
        ID += "@" + Names["mangled"].get<std::string>();
      json I{{"id", ID}, {"template_args", Args}};
      I.update(Names);
      Insts.push_back(I);
    }
  }
  K.Data["instantiations"] = Insts;
  K.Data["mangled"] = Mangled;
  K.Data["symbols"] = Symbols;
}

void Collector::collectKernel(const FunctionDecl *FD) {
  std::string KID = kernelID(FD);
  KernelIDs[FD->getCanonicalDecl()] = KID;
  Entity K;
  K.Kind = EntityKind::Kernel;
  K.ID = KID;
  K.D = FD;
  K.InvalidDecl = FD->isInvalidDecl();
  const FunctionTemplateDecl *FT = FD->getDescribedFunctionTemplate();
  SourceRange Whole = FT ? FT->getSourceRange() : FD->getSourceRange();
  K.Span = spanOf(Whole);
  setEditability(K, FD->getLocation(), FD->getBody() ? FD->getBody()->getEndLoc() : FD->getEndLoc());
  addKernelIdentity(K, FD);
  {
    std::string Sig;
    for (const ParmVarDecl *P : FD->parameters())
      Sig += (Sig.empty() ? "" : ",") + typeString(P->getType());
    K.Data["signature"] = "(" + Sig + ")";
  }
  json TParams = json::array();
  if (FT) {
    for (const NamedDecl *P : *FT->getTemplateParameters()) {
      json TP{{"name", P->getNameAsString()}};
      if (const auto *N = dyn_cast<NonTypeTemplateParmDecl>(P)) {
        TP["kind"] = "value";
        TP["type"] = typeString(N->getType());
        TP["default"] = N->hasDefaultArgument()
                            ? json(textOf(N->getDefaultArgument().getSourceRange()))
                            : json(nullptr);
        Entity E;
        E.Kind = EntityKind::TemplateParam;
        E.ID = KID + "/tparam:" + N->getNameAsString();
        E.Owner = KID;
        E.D = N;
        E.Span = spanOf(N->getSourceRange());
        setEditability(E, N->getSourceRange());
        E.Data = TP;
        Out.Entities.push_back(E);
      } else if (isa<TemplateTypeParmDecl>(P)) {
        TP["kind"] = "type";
      } else {
        TP["kind"] = "template";
      }
      TParams.push_back(TP);
    }
  }
  K.Data["template_params"] = TParams;
  K.Data["library"] = false;
  addKernelNames(K, FD, KID);

  // __launch_bounds__
  if (const auto *LB = FD->getAttr<CUDALaunchBoundsAttr>()) {
    json J{{"max_threads", {{"expr", textOf(LB->getMaxThreads()->getSourceRange())},
                            {"value", evalInt(LB->getMaxThreads())}}}};
    J["min_blocks"] = LB->getMinBlocks() ? json{{"expr", textOf(LB->getMinBlocks()->getSourceRange())},
                                                {"value", evalInt(LB->getMinBlocks())}}
                                         : json(nullptr);
    J["max_blocks_per_cluster"] = LB->getMaxBlocks()
                                      ? json{{"expr", textOf(LB->getMaxBlocks()->getSourceRange())},
                                             {"value", evalInt(LB->getMaxBlocks())}}
                                      : json(nullptr);
    noteContext(LB->getMaxThreads(), "launch_bounds", KID);
    if (LB->getMinBlocks())
      noteContext(LB->getMinBlocks(), "launch_bounds", KID);
    if (LB->getMaxBlocks())
      noteContext(LB->getMaxBlocks(), "launch_bounds", KID);
    K.Data["launch_bounds"] = J;
    Entity E;
    E.Kind = EntityKind::LaunchBounds;
    E.ID = KID + "/launch_bounds";
    E.Owner = KID;
    E.D = FD;
    SourceRange Args = launchBoundsArguments(*LB);
    E.Span = spanOf(Args);
    setEditability(E, Args);
    E.Data = J;
    Out.Entities.push_back(E);
  } else {
    K.Data["launch_bounds"] = nullptr;
  }

  // Parameters.
  WriteAnalysis WA(FD, Ctx);
  json Params = json::array();
  for (const ParmVarDecl *P : FD->parameters()) {
    QualType T = P->getType();
    json PJ{{"name", P->getNameAsString()}, {"type", typeString(T)}};
    bool Ptr = T->isPointerType();
    PJ["pointer"] = Ptr;
    PJ["const_pointee"] = Ptr && T->getPointeeType().isConstQualified();
    PJ["restrict"] = T.isRestrictQualified();
    auto W = WA.Written.find(P);
    PJ["written"] = Ptr ? json(W != WA.Written.end()) : json(nullptr);
    PJ["write_evidence"] = W != WA.Written.end() ? json(W->second) : json(nullptr);
    Params.push_back(PJ);
    if (!P->getName().empty()) {
      Entity E;
      E.Kind = EntityKind::Param;
      E.ID = KID + "/param:" + P->getNameAsString();
      E.Owner = KID;
      E.D = P;
      E.Span = spanOf(P->getSourceRange());
      setEditability(E, P->getSourceRange());
      E.Data = PJ;
      Out.Entities.push_back(E);
    }
  }
  K.Data["params"] = Params;

  // The walker appends to Out.Entities, so it reads the kernel from a copy.
  BodyWalker Walker(*this, KID, K);
  Walker.walk(FD->getBody(), 0, "");
  K.Data["calls"] = json(std::vector<std::string>(Walker.Callees.begin(), Walker.Callees.end()));
  K.Data["tree_reductions"] = treeReductions(FD, KID, Ctx);
  K.Data["atomic_targets"] = atomicTargets(FD, KID, Ctx);
  K.Data["float_ops"] = floatOps(FD, Ctx);
  K.Data["index_2d"] = index2D(FD, Ctx);
  K.Data["indirect_pointer"] = indirectPointer(FD, Ctx);
  Out.Entities.push_back(std::move(K));
}

void Collector::addKernelIdentity(Entity &K, const FunctionDecl *FD) {
  K.Data["name"] = FD->getNameAsString();
  K.Data["qualified_name"] = FD->getQualifiedNameAsString();
  K.Data["static"] = FD->getStorageClass() == SC_Static;
  K.Data["anonymous_namespace"] = FD->isInAnonymousNamespace();
  K.Data["explicit_specialization"] = FD->getTemplateSpecializationKind() == TSK_ExplicitSpecialization;
}

void Collector::collectLibraryKernel(const FunctionDecl *FD) {
  Entity K;
  K.Kind = EntityKind::Kernel;
  K.ID = kernelID(FD);
  K.D = FD;
  addKernelNames(K, FD, K.ID, /*OnlyDefined=*/true);
  // A template is listed for the instantiations the translation unit defines; a kernel that is
  // not one is defined here, so nvcc emits it (every kernel a translation unit defines is in its
  // cubin, used or not).
  const FunctionTemplateDecl *FT = FD->getDescribedFunctionTemplate();
  if (FT ? K.Data["instantiations"].empty() : K.Data["symbols"].empty())
    return;
  K.Span = spanOf(FT ? FT->getSourceRange() : FD->getSourceRange());
  K.Editable = false;
  K.NotEditableReason = "is a library kernel in a system header; listed so that profiles and captures can name it";
  addKernelIdentity(K, FD);
  K.Data["library"] = true;
  K.Data["signature"] = nullptr;
  K.Data["template_params"] = json::array();
  K.Data["launch_bounds"] = nullptr;
  K.Data["params"] = json::array();
  K.Data["calls"] = json::array();
  K.Data["tree_reductions"] = json::array();
  K.Data["atomic_targets"] = json::array();
  K.Data["float_ops"] = nullptr;
  K.Data["index_2d"] = nullptr;
  K.Data["indirect_pointer"] = nullptr;
  Out.Entities.push_back(std::move(K));
}

void Collector::collectDeviceFunction(const FunctionDecl *FD) {
  Entity E;
  E.Kind = EntityKind::DeviceFunction;
  E.ID = "device:" + FD->getQualifiedNameAsString();
  E.D = FD;
  E.InvalidDecl = FD->isInvalidDecl();
  const FunctionTemplateDecl *FT = FD->getDescribedFunctionTemplate();
  SourceRange Whole = FT ? FT->getSourceRange() : FD->getSourceRange();
  E.Span = spanOf(Whole);
  setEditability(E, FD->getLocation(), FD->getBody() ? FD->getBody()->getEndLoc() : FD->getEndLoc());
  E.Data["name"] = FD->getNameAsString();
  E.Data["host_device"] = FD->hasAttr<CUDAHostAttr>();
  E.Data["template"] = FT != nullptr;
  Entity Dummy;
  BodyWalker W(*this, E.ID, Dummy);
  // Device functions' loops are not tunable regions of a kernel; only record callees.
  size_t Before = Out.Entities.size();
  W.walk(FD->getBody(), 0, "");
  Out.Entities.resize(Before);
  E.Data["calls"] = json(std::vector<std::string>(W.Callees.begin(), W.Callees.end()));
  Out.Entities.push_back(std::move(E));
}

static const FunctionDecl *kernelFromExpr(const Expr *E) {
  if (!E)
    return nullptr;
  E = E->IgnoreParenCasts();
  if (const auto *U = dyn_cast<UnaryOperator>(E))
    if (U->getOpcode() == UO_AddrOf)
      E = U->getSubExpr()->IgnoreParenCasts();
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
    if (const auto *FD = dyn_cast<FunctionDecl>(DRE->getDecl()))
      if (FD->hasAttr<CUDAGlobalAttr>())
        return FD;
  return nullptr;
}

/// The first function (or function template's pattern) an unresolved callee names.
static const FunctionDecl *lookedUpCallee(const Expr *Callee) {
  const auto *ULE = dyn_cast_or_null<UnresolvedLookupExpr>(Callee ? Callee->IgnoreParenImpCasts() : nullptr);
  if (!ULE)
    return nullptr;
  for (const NamedDecl *ND : ULE->decls()) {
    const NamedDecl *U = ND->getUnderlyingDecl();
    if (const auto *FT = dyn_cast<FunctionTemplateDecl>(U))
      return FT->getTemplatedDecl();
    if (const auto *F = dyn_cast<FunctionDecl>(U))
      return F;
  }
  return nullptr;
}

void Collector::collectLaunch(const CallExpr *CE, const FunctionDecl *Enclosing) {
  const FunctionDecl *Kernel = nullptr;
  std::string Via;
  const Expr *Grid = nullptr, *Block = nullptr, *Smem = nullptr, *Stream = nullptr;
  const Expr *CalleeExpr = nullptr;
  if (const auto *KC = dyn_cast<CUDAKernelCallExpr>(CE)) {
    Via = "<<<>>>";
    CalleeExpr = KC->getCallee();
    Kernel = KC->getDirectCallee();
    if (!Kernel)
      Kernel = lookedUpCallee(KC->getCallee());
    if (const CallExpr *Cfg = KC->getConfig()) {
      if (Cfg->getNumArgs() > 0) Grid = Cfg->getArg(0);
      if (Cfg->getNumArgs() > 1) Block = Cfg->getArg(1);
      if (Cfg->getNumArgs() > 2 && !isa<CXXDefaultArgExpr>(Cfg->getArg(2))) Smem = Cfg->getArg(2);
      if (Cfg->getNumArgs() > 3 && !isa<CXXDefaultArgExpr>(Cfg->getArg(3))) Stream = Cfg->getArg(3);
    }
  } else {
    const FunctionDecl *Callee = CE->getDirectCallee();
    if (!Callee || !Callee->getIdentifier())
      return; // operators, conversions: never a launch API
    StringRef N = Callee->getName();
    if (N == "cudaLaunchKernel" || N == "cudaLaunchCooperativeKernel") {
      if (CE->getNumArgs() < 3)
        return;
      Via = N.str();
      CalleeExpr = CE->getArg(0);
      Kernel = kernelFromExpr(CE->getArg(0));
      Grid = CE->getArg(1);
      Block = CE->getArg(2);
      if (CE->getNumArgs() > 4 && !isa<CXXDefaultArgExpr>(CE->getArg(4))) Smem = CE->getArg(4);
      if (CE->getNumArgs() > 5 && !isa<CXXDefaultArgExpr>(CE->getArg(5))) Stream = CE->getArg(5);
    } else if (N == "cudaLaunchKernelEx" || N == "cudaLaunchKernelExC") {
      if (CE->getNumArgs() < 2)
        return;
      Via = N.str();
      CalleeExpr = CE->getArg(1);
      Kernel = kernelFromExpr(CE->getArg(1));
      // The configuration is a cudaLaunchConfig_t variable: find its field assignments.
      const Expr *Cfg = CE->getArg(0)->IgnoreParenImpCasts();
      if (const auto *U = dyn_cast<UnaryOperator>(Cfg))
        if (U->getOpcode() == UO_AddrOf)
          Cfg = U->getSubExpr()->IgnoreParenImpCasts();
      if (const auto *DRE = dyn_cast<DeclRefExpr>(Cfg))
        if (const auto *CfgVar = dyn_cast<VarDecl>(DRE->getDecl())) {
          std::function<void(const Stmt *)> Find = [&](const Stmt *S) {
            if (!S) return;
            const Expr *LHS = nullptr, *RHS = nullptr;
            if (const auto *B = dyn_cast<BinaryOperator>(S)) {
              if (B->getOpcode() == BO_Assign)
                LHS = B->getLHS(), RHS = B->getRHS();
            } else if (const auto *OC = dyn_cast<CXXOperatorCallExpr>(S)) {
              // cfg.gridDim = dim3(...) is dim3's (class) copy assignment.
              if (OC->getOperator() == OO_Equal && OC->getNumArgs() == 2)
                LHS = OC->getArg(0), RHS = OC->getArg(1);
            }
            if (LHS)
              if (const auto *ME = dyn_cast<MemberExpr>(LHS->IgnoreParenImpCasts()))
                if (const auto *Base = dyn_cast<DeclRefExpr>(ME->getBase()->IgnoreParenImpCasts()))
                  if (Base->getDecl() == CfgVar) {
                    const IdentifierInfo *II = ME->getMemberDecl()->getIdentifier();
                    StringRef F = II ? II->getName() : StringRef();
                    if (F == "gridDim") Grid = RHS;
                    else if (F == "blockDim") Block = RHS;
                    else if (F == "dynamicSmemBytes") Smem = RHS;
                    else if (F == "stream") Stream = RHS;
                  }
            for (const Stmt *C : S->children())
              Find(C);
          };
          if (Enclosing && Enclosing->getBody())
            Find(Enclosing->getBody());
        }
    } else {
      return;
    }
  }
  Entity E = newLaunch(CE, Enclosing, Via, Kernel, CalleeExpr);
  auto dim = [&](const Expr *X, const char *Ctxt) -> json {
    if (!X)
      return nullptr;
    json J{{"expr", textOf(X->getSourceRange())}};
    noteContext(X, Ctxt, E.ID);
    // Evaluate dim3(a, b, c), integers, and dim3 locals initialised that way.
    const Expr *S = stripDim3(X);
    if (const auto *DRE = dyn_cast<DeclRefExpr>(S))
      if (const auto *V = dyn_cast<VarDecl>(DRE->getDecl()))
        if (V->getInit() && typeString(V->getType().getUnqualifiedType()) == "dim3") {
          S = stripDim3(V->getInit());
          J["via_variable"] = V->getNameAsString();
        }
    if (const auto *CC = dyn_cast<CXXConstructExpr>(S)) {
      json V = json::array();
      bool All = true;
      for (unsigned I = 0; I < 3; ++I) {
        json X1 = I < CC->getNumArgs() && !isa<CXXDefaultArgExpr>(CC->getArg(I)) ? evalInt(CC->getArg(I)) : json(1);
        if (X1.is_null()) All = false;
        V.push_back(X1);
      }
      J["value"] = All ? V : json(nullptr);
      return J;
    }
    json V = evalInt(X);
    J["value"] = V.is_null() ? json(nullptr) : json::array({V, 1, 1});
    return J;
  };
  E.Data["grid"] = dim(Grid, "grid_size");
  E.Data["block"] = dim(Block, "block_size");
  if (Smem) {
    E.Data["shared_memory"] = {{"expr", textOf(Smem->getSourceRange())}, {"value", evalInt(Smem)}};
    noteContext(Smem, "shared_memory_size", E.ID);
  } else {
    E.Data["shared_memory"] = nullptr;
  }
  E.Data["stream"] = Stream ? json{{"expr", textOf(Stream->getSourceRange())}} : json(nullptr);
  // Explicit template arguments at the launch: k<256><<<...>>>.
  json TArgs = json::array();
  if (CalleeExpr) {
    const Expr *CEx = CalleeExpr->IgnoreParenCasts();
    if (const auto *U = dyn_cast<UnaryOperator>(CEx))
      if (U->getOpcode() == UO_AddrOf)
        CEx = U->getSubExpr()->IgnoreParenCasts();
    ArrayRef<TemplateArgumentLoc> Locs;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(CEx))
      Locs = DRE->template_arguments();
    else if (const auto *ULE = dyn_cast<UnresolvedLookupExpr>(CEx))
      Locs = ULE->template_arguments();
    for (const TemplateArgumentLoc &TAL : Locs) {
      json A{{"expr", textOf(TAL.getSourceRange())}};
      if (TAL.getArgument().getKind() == TemplateArgument::Expression) {
        A["value"] = evalInt(TAL.getSourceExpression());
        noteContext(TAL.getSourceExpression(), "template_arg", E.ID);
      } else {
        A["value"] = nullptr;
      }
      TArgs.push_back(A);
    }
  }
  E.Data["template_args"] = TArgs;
  if (const auto *KC = dyn_cast<CUDAKernelCallExpr>(CE)) {
    inv::LaunchFormula F = launchFormula(KC, Enclosing, Ctx);
    if (const FunctionDecl *Callee = KC->getDirectCallee(); Callee && canMangle(Callee)) {
      KernelSymbol S = kernelSymbol(Callee);
      F.Symbol = S.Nvcc.empty() ? S.Clang : S.Nvcc;
    }
    E.Data["config_formula"] = inv::toJSON(F);
  }
  Out.Entities.push_back(std::move(E));
}

Entity Collector::newLaunch(const Expr *Site, const FunctionDecl *Enclosing, StringRef Via,
                            const FunctionDecl *Kernel, const Expr *CalleeExpr) {
  std::string KernelName;
  if (Kernel)
    KernelName = Kernel->getTemplateInstantiationPattern()
                     ? kernelID(Kernel->getTemplateInstantiationPattern())
                     : kernelID(Kernel);
  std::string Fn = Enclosing ? Enclosing->getQualifiedNameAsString() : std::string("<global>");
  unsigned N = ++LaunchCounts[Enclosing];
  Entity E;
  E.Kind = EntityKind::LaunchSite;
  E.ID = Fn + "/launch#" + std::to_string(N); // the merge step prefixes the file
  E.Owner = Fn;
  E.S = Site;
  E.Span = spanOf(Site->getSourceRange());
  setEditability(E, Site->getSourceRange());
  E.Data["via"] = Via;
  E.Data["kernel"] = Kernel ? json(KernelName) : json(nullptr);
  E.Data["callee"] = CalleeExpr ? textOf(CalleeExpr->getSourceRange()) : "";
  E.Data["function"] = Fn;
  return E;
}

/// `k<<<g, b>>>(args)` whose arguments do not compile: clang keeps a RecoveryExpr holding the
/// callee (and the arguments), without the configuration. It is listed, with an unknown
/// configuration, so that the IDs of the launches after it in the function do not shift; the
/// errors inside it give it status "error".
void Collector::collectBrokenLaunch(const RecoveryExpr *RE, const FunctionDecl *Enclosing) {
  ArrayRef<const Expr *> Subs = RE->subExpressions();
  if (Subs.empty() || !Subs.front())
    return;
  const Expr *Callee = Subs.front();
  const FunctionDecl *Kernel = kernelFromExpr(Callee);
  if (!Kernel)
    Kernel = lookedUpCallee(Callee);
  if (!Kernel || !Kernel->hasAttr<CUDAGlobalAttr>() || textOf(RE->getSourceRange()).find("<<<") == std::string::npos)
    return;
  Entity E = newLaunch(RE, Enclosing, "<<<>>>", Kernel, Callee);
  for (const char *Field : {"grid", "block", "shared_memory", "stream"})
    E.Data[Field] = nullptr;
  E.Data["template_args"] = json::array();
  Out.Entities.push_back(std::move(E));
}

class Visitor : public RecursiveASTVisitor<Visitor> {
public:
  explicit Visitor(Collector &C) : C(C) {}
  bool shouldVisitTemplateInstantiations() const { return false; }
  bool shouldVisitImplicitCode() const { return false; }

  bool TraverseFunctionDecl(FunctionDecl *FD) {
    Stack.push_back(FD);
    bool R = RecursiveASTVisitor::TraverseFunctionDecl(FD);
    Stack.pop_back();
    return R;
  }
  bool TraverseCXXMethodDecl(CXXMethodDecl *FD) {
    Stack.push_back(FD);
    bool R = RecursiveASTVisitor::TraverseCXXMethodDecl(FD);
    Stack.pop_back();
    return R;
  }

  bool VisitFunctionDecl(FunctionDecl *FD) {
    if (!FD->doesThisDeclarationHaveABody() || FD->isImplicit())
      return true;
    if (FD->isTemplateInstantiation())
      return true;
    if (FD->getLocation().isValid() && C.SM.isInSystemHeader(FD->getLocation())) {
      // Library (CUB, Thrust) kernels: only their names (a template's: its instantiations').
      if (FD->hasAttr<CUDAGlobalAttr>() && C.Which == Side::Device)
        C.collectLibraryKernel(FD);
      return true;
    }
    if (FD->hasAttr<CUDAGlobalAttr>()) {
      C.collectKernel(FD);
    } else if (FD->hasAttr<CUDADeviceAttr>() && C.Which == Side::Device) {
      C.collectDeviceFunction(FD);
    }
    return true;
  }

  bool VisitCallExpr(CallExpr *CE) {
    if (C.Which != Side::Host)
      return true;
    const FunctionDecl *Enclosing = Stack.empty() ? nullptr : Stack.back();
    if (Enclosing && Enclosing->hasAttr<CUDAGlobalAttr>() && !isa<CUDAKernelCallExpr>(CE))
      return true;
    if (CE->getBeginLoc().isValid() && C.SM.isInSystemHeader(C.SM.getExpansionLoc(CE->getBeginLoc())))
      return true;
    C.collectLaunch(CE, Enclosing);
    return true;
  }

  bool VisitRecoveryExpr(RecoveryExpr *RE) {
    if (C.Which != Side::Host)
      return true;
    if (RE->getBeginLoc().isValid() && C.SM.isInSystemHeader(C.SM.getExpansionLoc(RE->getBeginLoc())))
      return true;
    C.collectBrokenLaunch(RE, Stack.empty() ? nullptr : Stack.back());
    return true;
  }

  Collector &C;
  std::vector<const FunctionDecl *> Stack;
};

void Collector::finishGlobalConstants() {
  for (const VarDecl *V : GlobalConstants) {
    const VarDecl *Def = V->getDefinition() ? V->getDefinition() : V;
    Entity E;
    E.Kind = EntityKind::Constant;
    E.ID = "const:" + Def->getQualifiedNameAsString();
    E.D = Def;
    E.Span = spanOf(Def->getSourceRange());
    setEditability(E, Def->getLocation(), Def->getEndLoc());
    E.Data["constant_kind"] = Def->isConstexpr() ? "constexpr" : "const";
    E.Data["name"] = Def->getQualifiedNameAsString();
    E.Data["type"] = typeString(Def->getType());
    const Expr *Init = Def->getInit();
    E.Data["init"] = Init ? textOf(Init->getSourceRange()) : "";
    E.Data["value"] = evalInt(Init);
    Out.Entities.push_back(std::move(E));
  }
}

/// The first range of \p Ranges that holds expansion \p X, or nullptr.
template <typename RangeT>
static const RangeT *rangeHolding(const std::vector<RangeT> &Ranges, const MacroTable::Expansion &X) {
  for (const RangeT &R : Ranges)
    if (R.File == X.File && X.Offset >= R.Begin && X.Offset < R.End)
      return &R;
  return nullptr;
}

void Collector::classifyMacroUses() {
  std::set<std::string> Used;
  auto UseOf = [](const MacroTable::Expansion &X, const ContextRange &R) {
    return json{{"constant", "macro:" + X.Name}, {"context", R.Context}, {"owner", R.Owner},
                {"file", X.File},                {"line", X.Line},       {"column", X.Column}};
  };
  for (const MacroTable::Expansion &X : Macros.Expansions) {
    if (const ContextRange *R = rangeHolding(ContextRanges, X)) {
      Out.ConstantUses.push_back(UseOf(X, *R));
      Used.insert(X.Name);
    }
    if (const ContextRange *R = rangeHolding(HardwareRanges, X))
      Out.HardwareUses.push_back(UseOf(X, *R));
  }
  for (const MacroTable::Definition &D : Macros.Definitions) {
    if (!Used.count(D.Name) || D.InSystemHeader)
      continue;
    Entity E;
    E.Kind = EntityKind::Constant;
    E.ID = "macro:" + D.Name;
    E.Span = D.Span;
    E.Data["constant_kind"] = "macro";
    E.Data["name"] = D.Name;
    E.Data["init"] = D.Text;
    E.Data["value"] = D.Value;
    E.Data["command_line"] = D.CommandLine;
    if (D.CommandLine) {
      // Rewriting the compilation database would not change the build that wrote it.
      StringRef Body = StringRef(D.Text).drop_front(D.Name.size()).trim();
      E.Editable = false;
      E.NotEditableReason = "is defined on the command line (-D" + D.Name + "=" + Body.str() +
                            " in the compile command), not in a source file: kloop edits sources, not "
                            "build flags; change the value where the build writes the flag";
    }
    Out.Entities.push_back(std::move(E));
  }
}

namespace {
bool inSystemHeader(const Decl *D, const SourceManager &SM) {
  return D->getLocation().isValid() && SM.isInSystemHeader(D->getLocation());
}

/// The function \p D declares, itself or as a template's pattern; null for anything else.
FunctionDecl *declaredFunction(Decl *D) {
  if (auto *FT = dyn_cast<FunctionTemplateDecl>(D))
    return FT->getTemplatedDecl();
  return dyn_cast<FunctionDecl>(D);
}

/// The declarations inside \p D that can declare a kernel: a namespace's, a linkage or export
/// block's, a class definition's (also a class template's pattern); null for any other \p D.
DeclContext *kernelScope(Decl *D) {
  if (isa<NamespaceDecl, LinkageSpecDecl, ExportDecl>(D))
    return cast<DeclContext>(D);
  if (auto *CT = dyn_cast<ClassTemplateDecl>(D))
    D = CT->getTemplatedDecl();
  auto *RD = dyn_cast<CXXRecordDecl>(D);
  return RD && RD->isThisDeclarationADefinition() ? RD : nullptr;
}
} // namespace

void Collector::walk(DeclContext *DC, Visitor &V) {
  auto One = [&](Decl *D) {
    if (!inSystemHeader(D, SM))
      V.TraverseDecl(D);
    // A library's declarations yield only its kernels' names (Visitor::VisitFunctionDecl), and a
    // kernel is never declared inside a function's body: its bodies, which a precompiled preamble
    // would have to read back, are not walked.
    else if (FunctionDecl *FD = declaredFunction(D))
      V.VisitFunctionDecl(FD);
    else if (DeclContext *Inner = kernelScope(D))
      walk(Inner, V);
  };
  // The host side lists nothing from a library: it need not read a preamble's declarations back.
  if (Which == Side::Host)
    for (const Decl *D : parsedDecls(DC))
      One(const_cast<Decl *>(D));
  else
    for (Decl *D : DC->decls())
      One(D);
}

SideInventory Collector::run() {
  Out.Which = Which;
  Visitor V(*this);
  // Not TraverseDecl of the translation unit, which follows the traversal scope that
  // UserCodeParentMap sets.
  walk(Ctx.getTranslationUnitDecl(), V);
  finishGlobalConstants();
  classifyMacroUses();
  // Deduplicate constant uses (a context can be noted twice, e.g. via a dim3 variable).
  std::set<std::string> Seen;
  std::vector<json> Uses;
  for (json &U : Out.ConstantUses) {
    std::string Key = dumpJSON(U);
    if (Seen.insert(Key).second)
      Uses.push_back(std::move(U));
  }
  Out.ConstantUses = std::move(Uses);
  Seen.clear();
  Uses.clear();
  for (json &U : Out.HardwareUses)
    if (Seen.insert(dumpJSON(U)).second)
      Uses.push_back(std::move(U));
  Out.HardwareUses = std::move(Uses);
  return std::move(Out);
}

} // namespace

namespace {
/// While it lives, ASTContext::getParents maps only the top-level declarations outside system headers: the
/// collector asks for the parents of nodes in the kernels, device and host functions written there, never
/// in a library's (VisitFunctionDecl records only their names). Mapping every system header's bodies cost
/// a tenth of an apply, more when they come from a precompiled preamble and must be read back first.
class UserCodeParentMap {
public:
  explicit UserCodeParentMap(ASTContext &Ctx) : Ctx(Ctx), Old(Ctx.getTraversalScope()) {
    std::vector<Decl *> Scope;
    for (Decl *D : Ctx.getTranslationUnitDecl()->decls())
      if (D->getLocation().isInvalid() || !Ctx.getSourceManager().isInSystemHeader(D->getLocation()))
        Scope.push_back(D);
    Ctx.setTraversalScope(Scope);
  }
  ~UserCodeParentMap() { Ctx.setTraversalScope(Old); }

private:
  ASTContext &Ctx;
  std::vector<Decl *> Old;
};
} // namespace

SideInventory collectSideInventory(ASTContext &Ctx, Side Which, const MacroTable &Macros,
                                   const ErrorTable *Errors) {
  UserCodeParentMap Parents(Ctx);
  Collector C(Ctx, Which, Macros);
  SideInventory Inv = C.run();
  Inv.Parsed = true;
  if (Errors) {
    Inv.Errors = Errors->Errors;
    attributeErrors(Inv, Inv.Errors);
  }
  return Inv;
}

SourceRange launchBoundsArguments(const CUDALaunchBoundsAttr &LB) {
  const Expr *Last = LB.getMaxBlocks() ? LB.getMaxBlocks() : LB.getMinBlocks() ? LB.getMinBlocks() : LB.getMaxThreads();
  return SourceRange(LB.getMaxThreads()->getBeginLoc(), Last->getEndLoc());
}

} // namespace kloop
