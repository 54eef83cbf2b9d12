//===- AddedCode.cpp - What an edit adds to a translation unit ------------===//
//
// The checks of AddedCode.h. One frontend action per re-parse: preprocessor
// callbacks see every #include and pragma (their expansion location tells
// whether an edit wrote them, so macros are followed), and at the end of the
// TU the declarations are compared with the census taken before the edit and
// the new expressions of set_constant / set_launch_config are searched for
// side effects.
//
//===----------------------------------------------------------------------===//
#include "AddedCode.h"
#include "kloop/Frontend/Frontend.h"
#include "kloop/Frontend/Preamble.h"
#include "llvm/Support/Process.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/Builtins.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Frontend/MultiplexConsumer.h"
#include "clang/Lex/HeaderSearchOptions.h"
#include "clang/Lex/Lexer.h"
#include "clang/Lex/PPCallbacks.h"
#include "clang/Lex/Preprocessor.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace clang;
using namespace llvm;

namespace kloop {

namespace {
/// The real path of \p P (symlinks resolved), or \p P when it does not exist.
std::string realPath(StringRef P) {
  SmallString<256> R;
  if (sys::fs::real_path(P, R))
    return P.str();
  return std::string(R);
}

bool isUnder(StringRef File, StringRef Dir) {
  if (Dir.empty())
    return false;
  return File.starts_with(Dir) && File.size() > Dir.size() && (Dir.ends_with("/") || File[Dir.size()] == '/');
}
} // namespace

std::optional<unsigned> editAt(const SourceManager &SM, SourceLocation L, const NewTextRanges &R, StringRef Dir) {
  if (L.isInvalid())
    return std::nullopt;
  auto [FID, Off] = SM.getDecomposedLoc(L);
  OptionalFileEntryRef F = SM.getFileEntryRefForID(FID);
  if (!F)
    return std::nullopt;
  auto It = R.find(absolutePath(F->getName(), Dir));
  if (It == R.end())
    return std::nullopt;
  for (auto [B, Len, E] : It->second)
    if (Off >= B && Off < B + Len)
      return E;
  return std::nullopt;
}

std::optional<unsigned> editOnChain(const SourceManager &SM, SourceLocation L, const NewTextRanges &R,
                                    StringRef Dir) {
  for (unsigned Steps = 0; L.isValid() && Steps < 64; ++Steps) {
    if (auto E = editAt(SM, SM.getSpellingLoc(L), R, Dir))
      return E;
    if (!L.isMacroID())
      return std::nullopt;
    L = SM.getImmediateExpansionRange(L).getBegin();
  }
  return std::nullopt;
}

std::string lineSuffix(const SourceManager &SM, SourceLocation L) {
  PresumedLoc PL = SM.getPresumedLoc(SM.getExpansionLoc(L));
  return PL.isValid() ? " (line " + std::to_string(PL.getLine()) + ")" : "";
}

std::vector<std::string> userIncludeDirs(const std::vector<std::string> &Args, StringRef Dir) {
  static const char *const Flags[] = {"-isystem-after", "-cxx-isystem", "-isystem", "-idirafter", "-iquote",
                                      "--include-directory=", "-I"};
  std::vector<std::string> Out;
  for (size_t I = 0; I < Args.size(); ++I)
    for (StringRef F : Flags) {
      StringRef A = Args[I];
      if (!A.consume_front(F))
        continue;
      if (A.empty() && !F.ends_with("=") && I + 1 < Args.size())
        A = Args[++I];
      if (!A.empty())
        Out.push_back(realPath(absolutePath(A, Dir)));
      break;
    }
  // clang also searches the directories these variables list, as if given with -I/-isystem.
  for (const char *Var : {"CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH"})
    if (std::optional<std::string> V = llvm::sys::Process::GetEnv(Var))
      for (StringRef D : llvm::split(*V, ':'))
        if (!D.empty())
          Out.push_back(realPath(absolutePath(D, Dir)));
  return Out;
}

// --- declarations -------------------------------------------------------------

namespace {
/// What a top-level declaration is, for the census and the refusal messages.
struct DeclClass {
  std::string What;     ///< "device function", "host function", "kernel", "global variable", ...
  bool NoCode = false;  ///< typedef, static_assert: nothing runs or is emitted
  /// A using-declaration or using-directive at namespace scope: it can change which function an
  /// existing call (host code included) resolves to, outside any region.
  bool ChangesLookup = false;
  bool Device = false;  ///< a __device__ function (or function template), not __host__ too
  bool Kernel = false;  ///< a __global__ function
  std::string Startup;  ///< non-empty: work done at program start or exit, and why
};

/// Why \p V does work at program start or exit: a dynamic initialiser or a destructor.
std::string startupWorkOf(const VarDecl *V, ASTContext &Ctx) {
  if (V->isTemplated() || V->getType()->isDependentType() || !V->hasGlobalStorage() || V->isStaticLocal())
    return "";
  if (V->isThisDeclarationADefinition() == VarDecl::DeclarationOnly)
    return "";
  const Expr *Init = V->getInit();
  if (Init && !Init->isValueDependent() && !V->hasConstantInitialization())
    return "a dynamic initialiser, which runs before main()";
  if (V->needsDestruction(Ctx))
    return "a destructor, which runs after main()";
  return "";
}

DeclClass classify(const Decl *D, ASTContext &Ctx) {
  DeclClass C;
  if (isa<UsingDecl, UsingDirectiveDecl, UsingShadowDecl, UsingEnumDecl>(D)) {
    C.What = "using-declaration or using-directive";
    C.ChangesLookup = true;
    return C;
  }
  if (isa<TypedefNameDecl, StaticAssertDecl, EmptyDecl, NamespaceAliasDecl>(D)) {
    C.What = "declaration without code";
    C.NoCode = true;
    return C;
  }
  if (isa<FileScopeAsmDecl>(D)) {
    C.What = "namespace-scope asm block";
    C.Startup = "assembly outside any function (it can add code or data sections, such as .init_array)";
    return C;
  }
  const FunctionDecl *FD = dyn_cast<FunctionDecl>(D);
  if (const auto *FT = dyn_cast<FunctionTemplateDecl>(D))
    FD = FT->getTemplatedDecl();
  if (FD) {
    C.Kernel = FD->hasAttr<CUDAGlobalAttr>();
    C.Device = FD->hasAttr<CUDADeviceAttr>() && !FD->hasAttr<CUDAHostAttr>() && !C.Kernel;
    C.What = C.Kernel ? "kernel" : C.Device ? "device function" : "host function";
    if (FD->hasAttr<ConstructorAttr>())
      C.Startup = "__attribute__((constructor)), which runs before main()";
    else if (FD->hasAttr<DestructorAttr>())
      C.Startup = "__attribute__((destructor)), which runs after main()";
    return C;
  }
  if (const auto *V = dyn_cast<VarDecl>(D)) {
    C.What = "global variable";
    C.Startup = startupWorkOf(V, Ctx);
    return C;
  }
  if (isa<VarTemplateDecl>(D)) {
    C.What = "global variable template";
    return C;
  }
  C.What = "declaration (" + std::string(D->getDeclKindName()) + ")";
  return C;
}

/// Calls \p Fn for every top-level declaration of \p DC parsed from source (parsedDecls), through
/// namespaces and linkage blocks, and for the static data members (and nested classes) of class
/// definitions (\p InRecord: \p DC is one).
void forEachTopLevel(const DeclContext *DC, const std::function<void(const Decl *)> &Fn, bool InRecord = false) {
  for (const Decl *D : parsedDecls(DC)) {
    if (D->isImplicit())
      continue;
    if (isa<NamespaceDecl, LinkageSpecDecl, ExportDecl>(D)) {
      forEachTopLevel(cast<DeclContext>(D), Fn);
      continue;
    }
    if (InRecord && !isa<VarDecl, CXXRecordDecl>(D))
      continue;
    Fn(D);
    if (const auto *RD = dyn_cast<CXXRecordDecl>(D))
      if (RD->isThisDeclarationADefinition() && !RD->isDependentContext())
        forEachTopLevel(RD, Fn, /*InRecord=*/true);
  }
}

std::string nameOf(const Decl *D) {
  if (const auto *ND = dyn_cast<NamedDecl>(D))
    return ND->getQualifiedNameAsString();
  return "";
}

std::string censusKey(const Decl *D, ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  DeclClass C = classify(D, Ctx);
  const FunctionDecl *FD = D->getAsFunction();
  bool Def = FD ? FD->doesThisDeclarationHaveABody()
                : isa<VarDecl>(D) && cast<VarDecl>(D)->isThisDeclarationADefinition() != VarDecl::DeclarationOnly;
  PresumedLoc PL = SM.getPresumedLoc(SM.getExpansionLoc(D->getLocation()));
  return C.What + "|" + D->getDeclKindName() + "|" + nameOf(D) + "|" +
         (FD ? std::to_string(FD->getNumParams()) : "-") + "|" + (Def ? "def" : "decl") + "|" +
         (PL.isValid() ? PL.getFilename() : "");
}
} // namespace

DeclCensus takeDeclCensus(ASTContext &Ctx) {
  DeclCensus Out;
  forEachTopLevel(Ctx.getTranslationUnitDecl(), [&](const Decl *D) { Out.insert(censusKey(D, Ctx)); });
  return Out;
}

// --- side effects -------------------------------------------------------------

namespace {
/// Proves functions free of side effects: no writes outside their own local
/// variables, no calls that are not themselves proven, no volatile access, no
/// asm, no new/delete/throw, no static locals, no recursion, calls at most
/// MaxPurityDepth deep.
class PurityProver {
public:
  explicit PurityProver(ASTContext &Ctx) : Ctx(Ctx) {}

  /// Why a call of \p F may have a side effect (a phrase about F), or std::nullopt.
  std::optional<std::string> call(const FunctionDecl *F) {
    if (unsigned ID = F->getBuiltinID())
      return builtin(F, ID);
    if (const auto *M = dyn_cast<CXXMethodDecl>(F); M && M->isVirtual())
      return "'" + F->getNameAsString() + "' is virtual, so the function that runs is not known";
    const FunctionDecl *Def = nullptr;
    if (!F->hasBody(Def) || !Def->getBody())
      return "the body of '" + F->getNameAsString() + "' is not visible";
    for (const FunctionDecl *S : Stack)
      if (S->getCanonicalDecl() == Def->getCanonicalDecl())
        return "'" + F->getNameAsString() + "' is recursive, so its call depth has no bound kloop can check";
    if (Stack.size() >= MaxPurityDepth)
      return "its calls nest more than " + std::to_string(MaxPurityDepth) + " deep";
    Stack.push_back(Def);
    std::optional<std::string> Why;
    if (const auto *Ctor = dyn_cast<CXXConstructorDecl>(Def))
      for (const CXXCtorInitializer *I : Ctor->inits())
        if (!Why && I->getInit())
          Why = body(I->getInit(), Def);
    if (!Why)
      Why = body(Def->getBody(), Def);
    Stack.pop_back();
    return Why;
  }

  /// Why the default arguments that \p Call (a CallExpr or CXXConstructExpr) takes from the
  /// declaration of \p Callee may have a side effect: they run at the call, but are written
  /// where the callee is declared, outside the new text.
  std::optional<std::string> defaultArguments(const Expr *Call, const FunctionDecl *Callee) {
    for (const Stmt *A : Call->children())
      if (const auto *DA = dyn_cast_or_null<CXXDefaultArgExpr>(A))
        if (auto Why = body(DA->getExpr(), Callee))
          return "a default argument of '" + Callee->getNameAsString() + "': " + *Why;
    return std::nullopt;
  }

private:
  ASTContext &Ctx;
  std::vector<const FunctionDecl *> Stack;

  std::optional<std::string> builtin(const FunctionDecl *F, unsigned ID) {
    const Builtin::Context &BI = Ctx.BuiltinInfo;
    if (BI.isConst(ID) || BI.isPure(ID) || (BI.isConstWithoutErrnoAndExceptions(ID) && !Ctx.getLangOpts().MathErrno) ||
        ID == Builtin::BI__builtin_is_constant_evaluated || ID == Builtin::BI__builtin_expect ||
        ID == Builtin::BI__builtin_assume)
      return std::nullopt;
    return "'" + F->getNameAsString() + "' is a library function that may have side effects";
  }

  /// Why writing \p Target from \p F is a write outside F's locals, or std::nullopt.
  std::optional<std::string> write(const Expr *Target, const FunctionDecl *F) {
    const Expr *X = Target->IgnoreParenImpCasts();
    for (;;) {
      if (const auto *AS = dyn_cast<ArraySubscriptExpr>(X)) {
        const Expr *Base = AS->getBase()->IgnoreParenImpCasts();
        if (!Base->getType()->isArrayType())
          return "'" + F->getNameAsString() + "' writes through a pointer";
        X = Base;
      } else if (const auto *ME = dyn_cast<MemberExpr>(X)) {
        if (ME->isArrow())
          return "'" + F->getNameAsString() + "' writes '" + ME->getMemberDecl()->getNameAsString() +
                 "' through a pointer";
        X = ME->getBase()->IgnoreParenImpCasts();
      } else {
        break;
      }
    }
    const auto *DRE = dyn_cast<DeclRefExpr>(X);
    const auto *V = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
    if (V && V->isLocalVarDeclOrParm() && !V->isStaticLocal() && !V->getType()->isReferenceType() &&
        V->getParentFunctionOrMethod() == F)
      return std::nullopt;
    return "'" + F->getNameAsString() + "' writes " + (V ? "'" + V->getNameAsString() + "'" : "memory") +
           ", which is not one of its local variables";
  }

  /// Why the statements of \p S (in \p F) may have a side effect.
  std::optional<std::string> body(const Stmt *Root, const FunctionDecl *F) {
    std::vector<const Stmt *> Work{Root};
    std::string In = "'" + F->getNameAsString() + "' ";
    while (!Work.empty()) {
      const Stmt *S = Work.back();
      Work.pop_back();
      if (!S)
        continue;
      if (isa<AsmStmt>(S))
        return In + "holds inline asm";
      if (const auto *DS = dyn_cast<DeclStmt>(S))
        for (const Decl *D : DS->decls())
          if (const auto *V = dyn_cast<VarDecl>(D)) {
            if (V->isStaticLocal() || V->getTLSKind())
              return In + "has the static local variable '" + V->getNameAsString() + "'";
            if (V->getType().isVolatileQualified())
              return In + "has the volatile variable '" + V->getNameAsString() + "'";
            if (V->needsDestruction(Ctx))
              return In + "has the local '" + V->getNameAsString() + "' of a type with a destructor";
            if (V->hasAttr<CleanupAttr>())
              return In + "has the local '" + V->getNameAsString() +
                     "' with __attribute__((cleanup)), which calls a function when it goes out of scope";
          }
      if (const auto *E = dyn_cast<Expr>(S)) {
        if (auto Why = expr(E, F))
          return Why;
        if (const auto *DA = dyn_cast<CXXDefaultArgExpr>(E))
          Work.push_back(DA->getExpr());
        if (const auto *DI = dyn_cast<CXXDefaultInitExpr>(E))
          Work.push_back(DI->getExpr());
      }
      for (const Stmt *C : S->children())
        Work.push_back(C);
    }
    return std::nullopt;
  }

  /// Why the expression node \p E itself (not its children) may have a side effect.
  std::optional<std::string> expr(const Expr *E, const FunctionDecl *F) {
    std::string In = "'" + F->getNameAsString() + "' ";
    if (E->getType().isVolatileQualified())
      return In + "accesses a volatile object";
    if (isa<CXXNewExpr, CXXDeleteExpr, CXXThrowExpr, LambdaExpr, AtomicExpr, CUDAKernelCallExpr>(E))
      return In + "holds a " + std::string(E->getStmtClassName());
    if (const auto *BT = dyn_cast<CXXBindTemporaryExpr>(E))
      if (const CXXDestructorDecl *D = BT->getTemporary()->getDestructor(); D && !D->isTrivial())
        if (auto Why = call(D))
          return In + "destroys a temporary: " + *Why;
    if (const auto *B = dyn_cast<BinaryOperator>(E); B && B->isAssignmentOp())
      return write(B->getLHS(), F);
    if (const auto *U = dyn_cast<UnaryOperator>(E); U && U->isIncrementDecrementOp())
      return write(U->getSubExpr(), F);
    if (const auto *CE = dyn_cast<CXXConstructExpr>(E)) {
      const CXXConstructorDecl *Ctor = CE->getConstructor();
      if (Ctor->isTrivial())
        return std::nullopt;
      if (auto Why = call(Ctor))
        return In + "constructs a '" + Ctor->getParent()->getNameAsString() + "': " + *Why;
      return std::nullopt;
    }
    const auto *C = dyn_cast<CallExpr>(E);
    if (!C)
      return std::nullopt;
    if (const auto *OC = dyn_cast<CXXOperatorCallExpr>(C)) {
      OverloadedOperatorKind K = OC->getOperator();
      if ((OC->isAssignmentOp() || K == OO_PlusPlus || K == OO_MinusMinus) && OC->getNumArgs() > 0)
        if (auto Why = write(OC->getArg(0), F))
          return Why;
    }
    const FunctionDecl *Callee = C->getDirectCallee();
    if (!Callee)
      return In + "makes an indirect call";
    if (auto Why = call(Callee))
      return In + "calls '" + Callee->getNameAsString() + "': " + *Why;
    return std::nullopt;
  }
};

/// Side effects in the expressions that set_constant and set_launch_config wrote: assignments,
/// increments, new/delete/throw, GNU statement expressions, indirect calls and calls to functions
/// that kloop cannot prove free of side effects (cudaFree(b), a host helper that caches results).
/// A launch configuration or a constant is evaluated on the host, outside any kernel's region, so
/// it must compute a value and do nothing else. Expressions are found by their expansion and
/// spelling locations, so a macro body is checked where the macro is used.
class SideEffectVisitor : public RecursiveASTVisitor<SideEffectVisitor> {
public:
  SideEffectVisitor(ASTContext &Ctx, const NewTextRanges &R, StringRef Dir, std::vector<AddedCodeFinding> &Out)
      : SM(Ctx.getSourceManager()), R(R), Dir(Dir), Out(Out), Prover(Ctx) {}

  bool VisitExpr(Expr *E) {
    std::optional<unsigned> Edit = editOnChain(SM, E->getBeginLoc(), R, Dir);
    if (!Edit)
      return true;
    std::string What = problem(E);
    if (!What.empty())
      Out.push_back({(int)*Edit, "the new expression contains " + What + lineSuffix(SM, E->getBeginLoc()) +
                                     ": a constant or launch configuration must compute a value without side "
                                     "effects"});
    return true;
  }

private:
  const SourceManager &SM;
  const NewTextRanges &R;
  StringRef Dir;
  std::vector<AddedCodeFinding> &Out;
  PurityProver Prover;

  /// A call of \p F: "" when proven free of side effects.
  std::string callProblem(const FunctionDecl *F) {
    std::optional<std::string> Why = Prover.call(F);
    if (!Why)
      return "";
    const FunctionDecl *Def = nullptr;
    if (!F->isConstexpr() && (F->getBuiltinID() || !F->hasBody(Def)))
      return "a call to '" + F->getNameAsString() + "', which is not constexpr";
    return "a call to '" + F->getNameAsString() + "', which kloop cannot prove free of side effects (" + *Why + ")";
  }

  std::string problem(const Expr *E) {
    if (const auto *B = dyn_cast<BinaryOperator>(E))
      return B->isAssignmentOp() ? "an assignment" : "";
    if (const auto *U = dyn_cast<UnaryOperator>(E))
      return U->isIncrementDecrementOp() ? "an increment or decrement" : "";
    if (isa<CXXNewExpr, CXXDeleteExpr, CXXThrowExpr, StmtExpr>(E))
      return "a " + std::string(E->getStmtClassName());
    if (const auto *CE = dyn_cast<CXXConstructExpr>(E)) {
      if (std::optional<std::string> Why = Prover.defaultArguments(CE, CE->getConstructor()))
        return *Why;
      return CE->getConstructor()->isTrivial() ? "" : callProblem(CE->getConstructor());
    }
    if (const auto *BT = dyn_cast<CXXBindTemporaryExpr>(E)) {
      const CXXDestructorDecl *D = BT->getTemporary()->getDestructor();
      return D && !D->isTrivial() ? callProblem(D) : "";
    }
    const auto *C = dyn_cast<CallExpr>(E);
    if (!C)
      return "";
    if (const auto *OC = dyn_cast<CXXOperatorCallExpr>(C); OC && OC->isAssignmentOp())
      return "an assignment";
    const FunctionDecl *F = C->getDirectCallee();
    if (!F)
      return "an indirect call";
    if (std::optional<std::string> Why = Prover.defaultArguments(C, F))
      return *Why;
    return callProblem(F);
  }
};

/// Runs the SideEffectVisitor on the top-level declarations parsed from source (parsedDecls): no new
/// text, and no expansion of a macro the new text defines, can be in a precompiled preamble's.
void checkSideEffects(ASTContext &Ctx, const NewTextRanges &R, StringRef Dir, std::vector<AddedCodeFinding> &Out) {
  SideEffectVisitor V(Ctx, R, Dir, Out);
  for (const Decl *D : parsedDecls(Ctx.getTranslationUnitDecl()))
    V.TraverseDecl(const_cast<Decl *>(D));
}

// --- device code nvcc refuses without a flag ---------------------------------------------------

/// New text inside a device-only function (a kernel, a `__device__` function, a lambda in one) that nvcc
/// 13.0 refuses unless the command has the flag that defines \p Relaxed / \p Extended
/// (`__CUDACC_RELAXED_CONSTEXPR__`, `__CUDACC_EXTENDED_LAMBDA__`; NvccArgs defines them as nvcc does),
/// while clang accepts it: clang makes every constexpr function `__host__ __device__` implicitly, and
/// takes lambda annotations without a flag. Checked with nvcc 13.0 (`std::max`, a constexpr function of
/// the file, `std::numeric_limits<float>::max()`, in constant expressions too: "calling a constexpr
/// __host__ function ... is not allowed"; `[] __device__ (float v) {...}`: "annotation on lambda
/// requires --extended-lambda"; `std::complex<float>` arithmetic: "calling a __host__ function", with
/// or without a flag). clang resolves `std::max` to the overloads of its own cuda_wrappers/algorithm,
/// which count as the constexpr host functions nvcc finds. Instantiations are read too (a call a template resolves only there);
/// each place is reported once.
class NvccFlagUses : public RecursiveASTVisitor<NvccFlagUses> {
public:
  NvccFlagUses(ASTContext &Ctx, const NewTextRanges &R, StringRef Dir, bool Relaxed, bool Extended,
               std::vector<AddedCodeFinding> &Out)
      : SM(Ctx.getSourceManager()), R(R), Dir(Dir), Relaxed(Relaxed), Extended(Extended), Out(Out) {}

  bool shouldVisitTemplateInstantiations() const { return true; }

  bool TraverseDecl(Decl *D) {
    const auto *F = dyn_cast_or_null<FunctionDecl>(D);
    if (F)
      Functions.push_back(F);
    bool Go = RecursiveASTVisitor::TraverseDecl(D);
    if (F)
      Functions.pop_back();
    return Go;
  }

  bool VisitCallExpr(CallExpr *C) {
    if (const FunctionDecl *F = C->getDirectCallee())
      check(C->getBeginLoc(), *F);
    return true;
  }
  bool VisitCXXConstructExpr(CXXConstructExpr *C) {
    check(C->getBeginLoc(), *C->getConstructor());
    return true;
  }
  // Unevaluated operands call nothing (nvcc builds `sizeof(f(x))` and `decltype(f(x))` without the flag).
  bool TraverseUnaryExprOrTypeTraitExpr(UnaryExprOrTypeTraitExpr *) { return true; }
  bool TraverseCXXNoexceptExpr(CXXNoexceptExpr *) { return true; }
  bool TraverseDecltypeTypeLoc(DecltypeTypeLoc, bool = true) { return true; }

  bool VisitLambdaExpr(LambdaExpr *L) {
    const CXXMethodDecl *Op = L->getCallOperator();
    auto Written = [](const Attr *A) { return A && !A->isImplicit(); };
    if (Extended || !Op || !(Written(Op->getAttr<CUDADeviceAttr>()) || Written(Op->getAttr<CUDAHostAttr>())))
      return true;
    if (std::optional<unsigned> Edit = editOf(L->getBeginLoc()))
      report(*Edit, L->getBeginLoc(), "annotates a lambda __device__ or __host__: nvcc refuses that without "
                                      "--extended-lambda, which the command does not pass (clang accepts it)");
    return true;
  }

private:
  const SourceManager &SM;
  const NewTextRanges &R;
  StringRef Dir;
  bool Relaxed, Extended;
  std::vector<AddedCodeFinding> &Out;
  std::vector<const FunctionDecl *> Functions;
  std::set<SourceLocation> Reported;

  /// Reports a call of \p F at \p At when nvcc refuses it, or when \p F is a template instantiation whose
  /// body (the code the new call makes nvcc compile, an existing template's included) calls such a function.
  /// Only a call of new text in device-only code is judged (editOf), so existing code costs no scan.
  void check(SourceLocation At, const FunctionDecl &F) {
    std::optional<unsigned> Edit = editOf(At);
    if (!Edit)
      return;
    std::set<const FunctionDecl *> Seen;
    if (std::optional<std::string> Why = problem(F))
      report(*Edit, At, *Why);
    else if (std::optional<std::string> Why = problemInside(F, Seen, 0))
      report(*Edit, At, "instantiates '" + F.getQualifiedNameAsString() + "', which " + *Why);
  }

  /// Why nvcc refuses a call of \p F in device code, as "calls ...", or nothing.
  std::optional<std::string> problem(const FunctionDecl &F) const {
    if (F.getBuiltinID() || !(isImplicitlyDevice(F) || inClangAlgorithmWrapper(F)))
      return std::nullopt; // std::move, std::forward and the like are builtins nvcc takes too
    std::string Name = "'" + F.getQualifiedNameAsString() + "'";
    if (!F.isConstexpr())
      return "calls " + Name + ", a host function to nvcc (clang's wrapper of <complex> makes it __host__ __device__)";
    if (!Relaxed)
      return "calls the constexpr function " + Name + ", which is not __device__: nvcc refuses that in device code "
             "without --expt-relaxed-constexpr, which the command does not pass (clang accepts it)";
    return std::nullopt;
  }

  /// The first refused call in the body of template instantiation \p F or of the instantiations it calls
  /// (8 deep at most), outside the system headers.
  std::optional<std::string> problemInside(const FunctionDecl &F, std::set<const FunctionDecl *> &Seen, unsigned Depth) const {
    const Stmt *Body = F.getBody();
    if (!Body || !F.isTemplateInstantiation() || Depth > 8 || SM.isInSystemHeader(F.getLocation()) ||
        !Seen.insert(&F).second)
      return std::nullopt;
    std::vector<const FunctionDecl *> Callees = calleesOf(Body);
    for (const FunctionDecl *G : Callees)
      if (std::optional<std::string> Why = problem(*G))
        return Why;
    for (const FunctionDecl *G : Callees)
      if (std::optional<std::string> Why = problemInside(*G, Seen, Depth + 1))
        return Why;
    return std::nullopt;
  }

  /// The functions and constructors \p Body calls directly (an instantiated body: resolved).
  static std::vector<const FunctionDecl *> calleesOf(const Stmt *Body) {
    struct Finder : RecursiveASTVisitor<Finder> {
      bool VisitCallExpr(CallExpr *C) {
        if (const FunctionDecl *G = C->getDirectCallee())
          Found.push_back(G);
        return true;
      }
      bool VisitCXXConstructExpr(CXXConstructExpr *C) {
        Found.push_back(C->getConstructor());
        return true;
      }
      std::vector<const FunctionDecl *> Found;
    } Fi;
    Fi.TraverseStmt(const_cast<Stmt *>(Body));
    return Fi.Found;
  }

  /// A function written without `__device__` that clang made `__host__ __device__`: a constexpr one, or
  /// one of libstdc++'s <complex> under clang's `force_cuda_host_device` wrapper. Not one the compiler
  /// declares, a defaulted member or a lambda's call operator, which nvcc takes as both too.
  static bool isImplicitlyDevice(const FunctionDecl &F) {
    const auto *D = F.getAttr<CUDADeviceAttr>();
    const auto *M = dyn_cast<CXXMethodDecl>(&F);
    return D && D->isImplicit() && !F.isImplicit() && !F.isDefaulted() && !(M && M->getParent()->isLambda());
  }

  /// One of the `__host__ __device__` overloads of std::min/std::max that clang's cuda_wrappers/algorithm
  /// adds; nvcc's toolchain has only libstdc++'s constexpr host ones.
  bool inClangAlgorithmWrapper(const FunctionDecl &F) const {
    return SM.getFilename(SM.getSpellingLoc(F.getLocation())).ends_with("cuda_wrappers/algorithm");
  }

  /// The edit whose new text holds \p L, when \p L lies in a device-only function and was not reported yet.
  std::optional<unsigned> editOf(SourceLocation L) const {
    if (Functions.empty() || !isDeviceOnly(*Functions.back()) || Reported.count(SM.getExpansionLoc(L)))
      return std::nullopt;
    return editOnChain(SM, L, R, Dir);
  }

  void report(unsigned Edit, SourceLocation L, const std::string &What) {
    Reported.insert(SM.getExpansionLoc(L));
    Out.push_back({(int)Edit, "the new code " + What + lineSuffix(SM, L)});
  }
};

/// Runs NvccFlagUses on the top-level declarations parsed from source.
void checkNvccFlagUses(ASTContext &Ctx, Preprocessor &PP, const NewTextRanges &R, StringRef Dir,
                       std::vector<AddedCodeFinding> &Out) {
  bool Relaxed = PP.isMacroDefined("__CUDACC_RELAXED_CONSTEXPR__");
  bool Extended = PP.isMacroDefined("__CUDACC_EXTENDED_LAMBDA__");
  if (Relaxed && Extended)
    return;
  NvccFlagUses V(Ctx, R, Dir, Relaxed, Extended, Out);
  for (const Decl *D : parsedDecls(Ctx.getTranslationUnitDecl()))
    V.TraverseDecl(const_cast<Decl *>(D));
}

// --- includes and pragmas -----------------------------------------------------

/// The identifiers of a pragma as written: for `#pragma clang diagnostic ignored "-Wx"` the
/// words after `pragma`; for `_Pragma("...")` those of its string. Empty when kloop cannot read it
/// (a _Pragma whose string comes from a macro argument, say), which refuses it.
std::vector<std::string> pragmaWords(const SourceManager &SM, SourceLocation Loc, PragmaIntroducerKind K) {
  bool Invalid = false;
  SourceLocation S = SM.getSpellingLoc(Loc);
  const char *P = SM.getCharacterData(S, &Invalid);
  if (Invalid || !P)
    return {};
  auto [FID, Off] = SM.getDecomposedLoc(S);
  StringRef Buf = SM.getBufferData(FID, &Invalid);
  if (Invalid)
    return {};
  StringRef Text = Buf.substr(Off);
  std::string Words;
  if (K == PIK_HashPragma) {
    Words = Text.substr(0, Text.find_first_of("\r\n")).str();
  } else if (K == PIK__Pragma) {
    // _Pragma ( [L|u8|u|U] "..." ), all in the text where the _Pragma token is spelled.
    size_t Q = Text.find('"'), Paren = Text.find('(');
    if (!Text.starts_with("_Pragma") || Q == StringRef::npos || Paren == StringRef::npos || Paren > Q ||
        !Text.slice(7, Paren).trim().empty())
      return {};
    StringRef Prefix = Text.slice(Paren + 1, Q).trim();
    if (!(Prefix.empty() || Prefix == "L" || Prefix == "u8" || Prefix == "u" || Prefix == "U"))
      return {};
    for (size_t I = Q + 1; I < Text.size() && Text[I] != '"' && Text[I] != '\n'; ++I) {
      if (Text[I] == '\\' && I + 1 < Text.size())
        ++I;
      Words += Text[I];
    }
  } else {
    return {};
  }
  std::vector<std::string> Out;
  for (size_t I = 0; I < Words.size();) {
    if (isalpha((unsigned char)Words[I]) || Words[I] == '_') {
      size_t J = I;
      while (J < Words.size() && (isalnum((unsigned char)Words[J]) || Words[J] == '_'))
        ++J;
      Out.push_back(Words.substr(I, J - I));
      I = J;
    } else {
      ++I;
    }
  }
  if (K == PIK_HashPragma && !Out.empty() && Out.front() == "pragma")
    Out.erase(Out.begin());
  else if (K == PIK_HashPragma)
    Out.clear();
  return Out;
}

const char *const IncludeRule =
    "edited code may include only headers of the CUDA toolkit and of the compiler's system include directories, "
    "written #include <header>";

/// Preprocessor checks of new text: includes and pragmas.
class NewTextPP : public PPCallbacks {
public:
  NewTextPP(const SourceManager &SM, const LangOptions &LO, const AddedCodeInput &In,
            std::vector<std::string> Trusted, std::vector<AddedCodeFinding> &Out)
      : SM(SM), LO(LO), In(In), Trusted(std::move(Trusted)), Out(Out) {}

  void InclusionDirective(SourceLocation HashLoc, const Token &IncludeTok, StringRef FileName, bool IsAngled,
                          CharSourceRange FilenameRange, OptionalFileEntryRef File, StringRef, StringRef,
                          const Module *, bool, SrcMgr::CharacteristicKind) override {
    std::optional<unsigned> E = editAt(SM, SM.getExpansionLoc(HashLoc), *In.Ranges, In.Directory);
    if (!E)
      return;
    std::string Directive = IncludeTok.getIdentifierInfo() ? IncludeTok.getIdentifierInfo()->getName().str() : "?";
    std::string Spelled = Lexer::getSourceText(FilenameRange, SM, LO).str();
    std::string Name = IsAngled ? "<" + FileName.str() + ">" : "\"" + FileName.str() + "\"";
    std::string Head = "it writes #" + Directive + " " + Spelled + lineSuffix(SM, HashLoc);
    std::string Why;
    if (Directive != "include")
      Why = "#" + Directive + " is not #include";
    else if (!StringRef(Spelled).starts_with("<"))
      Why = StringRef(Spelled).starts_with("\"") ? "the header is written with quotes, which searches the "
                                                   "project's own directories first"
                                                 : "the header name comes from a macro (it expands to " + Name + ")";
    else if (!File)
      Why = "it does not resolve to a file";
    else if (std::string Real = realPath(File->getName()); !trusted(Real))
      Why = "clang's header search resolves it to " + Real +
            ", outside the CUDA toolkit's and the compiler's system include directories";
    if (!Why.empty())
      Out.push_back({(int)*E, Head + ": " + Why + "; " + IncludeRule, /*Preprocessor=*/true});
  }

  void PragmaDirective(SourceLocation Loc, PragmaIntroducerKind K) override {
    std::optional<unsigned> E = editOnChain(SM, Loc, *In.Ranges, In.Directory);
    if (!E)
      return;
    std::vector<std::string> W = pragmaWords(SM, Loc, K);
    if (!W.empty() && (W.front() == "unroll" || W.front() == "nounroll"))
      return;
    std::string Shown;
    for (size_t I = 0; I < W.size() && I < 3; ++I)
      Shown += (I ? " " : "") + W[I];
    std::string Via = K == PIK_HashPragma ? "#pragma" : K == PIK__Pragma ? "_Pragma" : "__pragma";
    if (Loc.isMacroID())
      Via += " from a macro";
    Out.push_back({(int)*E, "it writes the pragma '" + (Shown.empty() ? std::string("?") : Shown) + "' (" + Via +
                                ")" + lineSuffix(SM, Loc) +
                                ": only #pragma unroll and #pragma nounroll may appear in edited code; other "
                                "pragmas can switch off the warnings kloop checks (clang/GCC diagnostic, "
                                "nv_diag_suppress, diag_suppress, warning) or change how the code after the edit "
                                "compiles",
                    /*Preprocessor=*/true});
  }

  bool trusted(StringRef Real) const {
    return llvm::any_of(Trusted, [&](const std::string &D) { return isUnder(Real, D); });
  }

private:
  const SourceManager &SM;
  const LangOptions &LO;
  const AddedCodeInput &In;
  std::vector<std::string> Trusted;
  std::vector<AddedCodeFinding> &Out;
};

/// Where inserted code may include headers from: the CUDA toolkit's include directories and
/// the system include directories of the compiler's own configuration (clang's resource
/// directory, the C++ library, /usr/include), without those the job's flags name.
std::vector<std::string> trustedIncludeDirs(const HeaderSearchOptions &HSO, const AddedCodeInput &In) {
  std::vector<std::string> Out;
  for (const HeaderSearchOptions::Entry &E : HSO.UserEntries) {
    if (E.Group != frontend::System && E.Group != frontend::ExternCSystem && E.Group != frontend::CSystem &&
        E.Group != frontend::CXXSystem)
      continue;
    std::string Real = realPath(absolutePath(E.Path, In.Directory));
    if (!llvm::is_contained(In.UserIncludeDirs, Real))
      Out.push_back(Real);
  }
  if (!HSO.ResourceDir.empty())
    Out.push_back(realPath(HSO.ResourceDir + "/include"));
  for (const std::string &D : In.CudaIncludeDirs)
    Out.push_back(realPath(D));
  return Out;
}

/// New top-level declarations: each key counted after the edit beyond its count before is new.
class NewDeclChecker {
public:
  NewDeclChecker(ASTContext &Ctx, const AddedCodeInput &In, const NewTextPP &PP, std::vector<AddedCodeFinding> &Out)
      : Ctx(Ctx), SM(Ctx.getSourceManager()), In(In), PP(PP), Out(Out) {}

  void run() {
    std::map<std::string, size_t> Seen;
    forEachTopLevel(Ctx.getTranslationUnitDecl(), [&](const Decl *D) {
      std::string Key = censusKey(D, Ctx);
      if (++Seen[Key] > In.Before->count(Key))
        check(D);
    });
  }

private:
  ASTContext &Ctx;
  const SourceManager &SM;
  const AddedCodeInput &In;
  const NewTextPP &PP;
  std::vector<AddedCodeFinding> &Out;

  /// Whether a function with the unqualified name of \p Name (a qualified name) was in the TU before
  /// the edit, in any scope (the census key's third field, censusKey): a using-directive, argument-
  /// dependent lookup or a member operator can put both in one overload set.
  bool namedBefore(const std::string &Name) const {
    StringRef Unqualified = StringRef(Name).rsplit("::").second;
    if (Unqualified.empty())
      Unqualified = Name;
    if (Unqualified.empty())
      return false;
    for (const std::string &Key : *In.Before) {
      SmallVector<StringRef, 6> Fields;
      StringRef(Key).split(Fields, '|');
      if (Fields.size() <= 2 || (!Fields[0].contains("function") && Fields[0] != "kernel"))
        continue; // functions and kernels only: a variable's name does not join an overload set
      StringRef Old = Fields[2].rsplit("::").second;
      if ((Old.empty() ? Fields[2] : Old) == Unqualified)
        return true;
    }
    return false;
  }

  /// The edit whose new text holds \p L or the #include that brought its file in.
  std::optional<unsigned> editOf(SourceLocation L) const {
    for (L = SM.getExpansionLoc(L); L.isValid(); L = SM.getIncludeLoc(SM.getFileID(L)))
      if (auto E = editAt(SM, L, *In.Ranges, In.Directory))
        return E;
    return std::nullopt;
  }

  void check(const Decl *D) {
    DeclClass C = classify(D, Ctx);
    SourceLocation L = SM.getExpansionLoc(D->getLocation());
    std::optional<unsigned> E = editOf(L);
    OptionalFileEntryRef F = SM.getFileEntryRefForID(SM.getFileID(L));
    bool InNewText = editAt(SM, L, *In.Ranges, In.Directory).has_value();
    bool System = !InNewText && F && PP.trusted(realPath(F->getName()));
    std::string Name = nameOf(D).empty() ? "" : " '" + nameOf(D) + "'";
    if (System) { // a toolkit or compiler header: trusted, unless it does work at program start
      if (!C.Startup.empty())
        Out.push_back({E ? (int)*E : -1, "the header " + F->getName().str() + " that the edit includes declares a " +
                                             C.What + Name + " with " + C.Startup +
                                             ": code that runs outside any kernel is not allowed"});
      return;
    }
    bool VariantKernel = C.Kernel && E && In.VariantKernels.count(*E) &&
                         In.VariantKernels.at(*E) == cast<NamedDecl>(D)->getNameAsString();
    if (C.ChangesLookup) {
      if (InNewText)
        Out.push_back({E ? (int)*E : -1, "the inserted code declares a " + C.What + lineSuffix(SM, D->getLocation()) +
                                             " at namespace scope: it can change which function existing code "
                                             "calls; qualify names inside the inserted functions instead"});
      return;
    }
    if ((C.Device || VariantKernel) && InNewText && namedBefore(nameOf(D))) {
      Out.push_back({E ? (int)*E : -1, "the inserted code declares a " + C.What + Name +
                                           lineSuffix(SM, D->getLocation()) +
                                           ", a name the translation unit already declares (in some scope): it "
                                           "can join that overload set or specialize that template, and can change which "
                                           "function existing calls resolve to; give it a name of its own"});
      return;
    }
    if (C.NoCode || ((C.Device || VariantKernel) && C.Startup.empty()))
      return;
    std::string Where = lineSuffix(SM, D->getLocation());
    if (!InNewText) {
      PresumedLoc PL = SM.getPresumedLoc(L);
      Where = PL.isValid() ? " (" + std::string(PL.getFilename()) + ":" + std::to_string(PL.getLine()) + ")" : "";
    }
    std::string Head = std::string(InNewText ? "the inserted code" : "the edited translation unit") + " declares a " +
                       C.What + Name + Where;
    int Edit = E ? (int)*E : -1;
    if (!C.Startup.empty() && C.What != "global variable") {
      Out.push_back({Edit, Head + " with " + C.Startup + ": code that runs outside any kernel is not allowed"});
      return;
    }
    bool Variant = E && In.VariantKernels.count(*E);
    Out.push_back({Edit, Head + ", not a __device__ function: inserted code may add only device functions" +
                             (Variant ? " and the variant kernel" : "") +
                             " (host code and global variables are outside any kernel's region)"});
  }
};

/// The consumer of the checks, with the preprocessor callbacks registered on \p CI.
std::unique_ptr<ASTConsumer> makeAddedCodeConsumer(CompilerInstance &CI, const AddedCodeInput &In,
                                                   std::vector<AddedCodeFinding> &Out) {
  auto PP = std::make_unique<NewTextPP>(CI.getSourceManager(), CI.getLangOpts(), In,
                                        trustedIncludeDirs(CI.getHeaderSearchOpts(), In), Out);
  const NewTextPP *Checker = PP.get();
  CI.getPreprocessor().addPPCallbacks(std::move(PP));
  struct Consumer : ASTConsumer {
    Consumer(const AddedCodeInput &In, const NewTextPP &PP, Preprocessor &Pre, std::vector<AddedCodeFinding> &Out)
        : In(In), PP(PP), Pre(Pre), Out(Out) {}
    void HandleTranslationUnit(ASTContext &Ctx) override {
      if (In.Before)
        NewDeclChecker(Ctx, In, PP, Out).run();
      if (In.ExpressionRanges && !In.ExpressionRanges->empty())
        checkSideEffects(Ctx, *In.ExpressionRanges, In.Directory, Out);
      if (In.Ranges && !In.Ranges->empty())
        checkNvccFlagUses(Ctx, Pre, *In.Ranges, In.Directory, Out);
    }
    const AddedCodeInput &In;
    const NewTextPP &PP;
    Preprocessor &Pre;
    std::vector<AddedCodeFinding> &Out;
  };
  return std::make_unique<Consumer>(In, *Checker, CI.getPreprocessor(), Out);
}

/// Runs the wrapped action and the checks in one parse (a MultiplexConsumer of both consumers).
class AddedCodeAction : public WrapperFrontendAction {
public:
  AddedCodeAction(std::unique_ptr<FrontendAction> Wrapped, const AddedCodeInput &In,
                  std::vector<AddedCodeFinding> &Out)
      : WrapperFrontendAction(std::move(Wrapped)), In(In), Out(Out) {}

protected:
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &CI, StringRef InFile) override {
    std::vector<std::unique_ptr<ASTConsumer>> Consumers;
    if (auto C = WrapperFrontendAction::CreateASTConsumer(CI, InFile))
      Consumers.push_back(std::move(C));
    Consumers.push_back(makeAddedCodeConsumer(CI, In, Out));
    return std::make_unique<MultiplexConsumer>(std::move(Consumers));
  }

private:
  const AddedCodeInput &In;
  std::vector<AddedCodeFinding> &Out;
};
} // namespace

std::unique_ptr<FrontendAction> withAddedCodeCheck(std::unique_ptr<FrontendAction> Wrapped, const AddedCodeInput &In,
                                                   std::vector<AddedCodeFinding> &Out) {
  return std::make_unique<AddedCodeAction>(std::move(Wrapped), In, Out);
}

} // namespace kloop
