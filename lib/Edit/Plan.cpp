//===- Plan.cpp - Resolve a proposal's IDs on the AST of every parse ------===//
//
// Each TU is parsed on the host side (launch sites, the pointers they pass) and
// then the device side (kernels and their regions); in HandleTranslationUnit,
// while the AST is alive, every edit is resolved through the inventory entity
// of its ID, checked against the entity (kind, editable, slot) and handed to
// its kind (lib/Edit/Kinds/), which turns it into file-offset replacements.
//
//===----------------------------------------------------------------------===//
#include "Plan.h"
#include "kloop/Support/JSON.h"
#include "kloop/Support/Path.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/AST/TypeLoc.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Frontend/FrontendActions.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"

#include <set>

using namespace clang;
using namespace llvm;

namespace kloop {
namespace edit {

// --- small shared helpers (EditKind.h) ------------------------------------------

Outcome refuse(std::string Why) {
  Outcome O;
  O.St = Outcome::Refused;
  O.Reason = std::move(Why);
  return O;
}

Outcome accept(std::vector<TextEdit> Edits) {
  Outcome O;
  O.St = Outcome::Ok;
  O.Edits = std::move(Edits);
  return O;
}

TextEdit replaceRange(const FileRange &R, std::string Text) {
  return TextEdit{R.File, R.Begin, R.End - R.Begin, std::move(Text), 0};
}

/// The statement whose end decides whether a `;` after \p S's source range
/// still belongs to \p S: `if (c) x = 1;` ends like `x = 1`.
const Stmt *lastSubStmt(const Stmt *S) {
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

/// The offset of the `;` at or after \p I in \p Buf, past whitespace and comments.
unsigned lineStart(StringRef Buf, unsigned Off) {
  while (Off > 0 && Buf[Off - 1] != '\n')
    --Off;
  return Off;
}

std::optional<size_t> semicolonAt(StringRef Buf, size_t I) {
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
    return std::nullopt;
  return I;
}

const char *macroRefusal() {
  return "its source range crosses a macro expansion, so it cannot be edited safely; edit the macro "
         "definition instead";
}

const Expr *stripCasts(const Expr *E) {
  for (;;) {
    const Expr *Prev = E;
    E = E->IgnoreParenImpCasts();
    if (const auto *C = dyn_cast<ExplicitCastExpr>(E))
      E = C->getSubExpr();
    if (E == Prev)
      return E;
  }
}

std::pair<std::string, std::string> splitAt(StringRef ID) {
  // `@` may appear in a launch-site file name only before ':'; kernel IDs use it as suffix.
  size_t At = ID.rfind('@');
  if (At == StringRef::npos || ID.find('/', At) != StringRef::npos)
    return {ID.str(), ""};
  return {ID.substr(0, At).str(), ID.substr(At + 1).str()};
}

TypeLoc unqualifiedTypeLoc(const ParmVarDecl &P) {
  TypeLoc TL = P.getTypeSourceInfo()->getTypeLoc();
  while (auto Q = TL.getAs<QualifiedTypeLoc>())
    TL = Q.getUnqualifiedLoc();
  return TL;
}

std::optional<std::string> expressionSlotProblem(StringRef Field, const std::string &Value) {
  if (auto Why = codeSlotProblem(Value, CodeSlot::Expression))
    return "field '" + Field.str() + "' must be one C++ expression on one line: " + *Why;
  return std::nullopt;
}

std::optional<std::string> codeSlotProblemOf(const Edit &Ed, CodeSlot S, StringRef Where) {
  if (auto Why = codeSlotProblem(StringRef(Ed.Code).trim(), S))
    return "'code' must stay " + Where.str() + ": " + *Why;
  return std::nullopt;
}

std::string EditKindPlanner::targetDescription() const { return std::string("a ") + entityKindName(target()); }

std::string parseKey(const CompileJob &Job, Side S) {
  return Job.File + "|" + std::to_string(Job.Entry) + "|" + sideName(S).str();
}

std::string diagKey(const ParseDiagnostic &D) {
  return D.Level + "|" + sys::path::filename(D.File).str() + "|" + D.Message;
}

std::string rootRelative(const std::string &File, const CompileJob &Job, StringRef Root) {
  return relativePath(absolutePath(File, Job.Directory), Root);
}

ParseDiagnostic rootRelative(const ParseDiagnostic &D, const CompileJob &Job, StringRef Root) {
  ParseDiagnostic Rel = D;
  Rel.File = rootRelative(D.File, Job, Root);
  return Rel;
}

std::vector<std::string> checkedCommandLine(const CompileJob &Job, Side S, const FrontendOptions &FOpts) {
  std::vector<std::string> CL = sideCommandLine(Job, S, FOpts);
  for (const std::string &F : checkedWarningFlags())
    CL.push_back(F);
  return CL;
}

std::vector<std::string> checkedArchs(const CompileJob &Job, const FrontendOptions &FOpts) {
  if (!FOpts.GpuArch.empty())
    return {};
  std::vector<std::string> Out;
  for (const std::string &A : Job.GpuArchs)
    if (A != Job.GpuArchs.front() && llvm::find(Out, A) == Out.end())
      Out.push_back(A);
  return Out;
}

std::vector<ArchUnit> archUnits(const std::vector<CompileJob> &Jobs, const FrontendOptions &FOpts) {
  std::vector<ArchUnit> Out;
  for (size_t J = 0; J < Jobs.size(); ++J)
    for (std::string &A : checkedArchs(Jobs[J], FOpts))
      Out.push_back({J, std::move(A)});
  return Out;
}

std::string archKey(const CompileJob &Job, const ArchUnit &U) { return parseKey(Job, Side::Device) + "|" + U.Arch; }

bool readsArchFacts(const Proposal &P) {
  return llvm::any_of(P.Edits, [](const Edit &Ed) {
    return Ed.Kind == EditKind::AddRestrict || Ed.Kind == EditKind::AddConst;
  });
}

ParseResult parseArchUnit(const CompileJob &Job, const ArchUnit &U, const FrontendOptions &FOpts,
                          const std::vector<std::pair<std::string, std::string>> &Mapped,
                          std::unique_ptr<FrontendAction> Action) {
  CompileJob Under = Job; // U.Arch first: the one parsed (the others stay for __CUDA_ARCH_LIST__)
  auto It = llvm::find(Under.GpuArchs, U.Arch);
  if (It != Under.GpuArchs.end())
    std::rotate(Under.GpuArchs.begin(), It, It + 1);
  else
    Under.GpuArchs.insert(Under.GpuArchs.begin(), U.Arch);
  if (!Action)
    Action = std::make_unique<SyntaxOnlyAction>();
  return parseCommandLine(checkedCommandLine(Under, Side::Device, FOpts), Job.Directory, std::move(Action), Mapped);
}

// --- PlanContext ------------------------------------------------------------------

PlanContext::PlanContext(PlanState &St, Side W, const CompileJob &Job, ASTContext &Ctx, SideInventory &Inv)
    : St(St), W(W), Job(Job), Ctx(Ctx), SM(Ctx.getSourceManager()), All(Inv.Entities) {
  for (Entity &E : Inv.Entities) {
    std::string ID = E.ID;
    if (E.Kind == EntityKind::LaunchSite)
      ID = rootRelative(E.Span.File, Job, St.Opts.Root) + ":" + E.ID;
    ByID.emplace(ID, &E);
    FileOf[&E] = absolutePath(E.Span.File, Job.Directory);
  }
  for (Entity &E : Inv.Entities) {
    const Entity *K = E.Kind == EntityKind::Kernel ? &E : owner(E);
    bool InKernel = K && K->Kind == EntityKind::Kernel && StringRef(E.ID).starts_with(K->ID);
    std::string Q = E.Kind == EntityKind::LaunchSite ? E.ID
                    : InKernel ? K->ID + "@" + relativePath(FileOf.at(K), St.Opts.Root) + E.ID.substr(K->ID.size())
                               : E.ID + "@" + relativePath(FileOf.at(&E), St.Opts.Root);
    Qualified[&E] = Q;
    ByQualifiedID.emplace(Q, &E);
  }
}

StringRef PlanContext::root() const { return St.Opts.Root; }

const Entity *PlanContext::find(const std::string &ID) const {
  for (const std::map<std::string, Entity *> *M : {&ByID, &ByQualifiedID})
    if (auto It = M->find(ID); It != M->end())
      return It->second;
  return nullptr;
}

const Entity *PlanContext::owner(const Entity &E) const {
  auto It = ByID.find(E.Owner);
  return It == ByID.end() ? nullptr : It->second;
}

Region PlanContext::regionOf(const Entity &E) const {
  return Region{FileOf.at(&E), E.Span.BeginOffset, E.Span.EndOffset};
}

std::optional<FileRange> PlanContext::rangeOf(SourceRange R) const {
  CharSourceRange CR = Lexer::makeFileCharRange(CharSourceRange::getTokenRange(R), SM, Ctx.getLangOpts());
  if (CR.isInvalid())
    return std::nullopt;
  FileRange F;
  F.File = absolutePath(SM.getFilename(CR.getBegin()), Job.Directory);
  F.Begin = SM.getFileOffset(CR.getBegin());
  F.End = SM.getFileOffset(CR.getEnd());
  return F;
}

std::optional<FileRange> PlanContext::pointOf(SourceLocation L) const {
  if (L.isMacroID()) {
    if (!SM.isMacroArgExpansion(L))
      return std::nullopt;
    L = SM.getSpellingLoc(L);
  }
  if (L.isInvalid())
    return std::nullopt;
  return FileRange{absolutePath(SM.getFilename(L), Job.Directory), SM.getFileOffset(L), SM.getFileOffset(L)};
}

StringRef PlanContext::bufferOf(const std::string &File) const {
  auto FE = SM.getFileManager().getOptionalFileRef(File);
  if (!FE)
    return {};
  FileID FID = SM.translateFile(*FE);
  if (FID.isInvalid())
    return {};
  return SM.getBufferData(FID);
}

std::string PlanContext::textOf(SourceRange R) const {
  auto F = rangeOf(R);
  if (!F)
    return "";
  return bufferOf(F->File).substr(F->Begin, F->End - F->Begin).str();
}

std::optional<LaunchFacts::Alias> PlanContext::aliasFor(const std::string &Kernel, unsigned Param,
                                                        std::string &Site) const {
  std::lock_guard<std::mutex> L(St.M);
  for (const PlanState::UnitPlan &U : St.Units)
    for (const LaunchFacts &F : U.Launches)
      if (!F.Unchecked.empty() && (F.Kernel == Kernel || StringRef(Kernel).starts_with(F.Kernel + "<"))) {
        // (a use of a template is one of each explicit specialization too: `taccum<N>` may be taccum<128>)
        Site = F.SiteID;
        return LaunchFacts::Alias{Param, Param, "", "", F.Unchecked};
      } else if (F.Kernel == Kernel)
        for (const LaunchFacts::Alias &A : F.Aliases)
          if (A.I1 == Param || A.I2 == Param) {
            Site = F.SiteID;
            return A;
          }
  return std::nullopt;
}

namespace {

/// What a function body does to a variable other than by its initializer (classifyChanges).
enum class Changes {
  None,      ///< nothing: it holds its initializer's value
  Allocated, ///< only its address passed to an allocator (cudaMalloc(&p, n)): a fresh allocation
  Other      ///< anything else that may set it (unknown to the alias check)
};

/// Whether \p F allocates memory through a pointer to its first argument: cudaMalloc and its
/// relatives (cudaMallocAsync, cudaMallocManaged, cudaMallocPitch, cudaMallocHost), cudaHostAlloc,
/// cuMemAlloc*.
bool isAllocator(const FunctionDecl &F) {
  StringRef N = F.getName();
  return N.starts_with("cudaMalloc") || N == "cudaHostAlloc" || N.starts_with("cuMemAlloc");
}

/// How many of \p Call's arguments come before its callee's first parameter: 1 for a member operator
/// called as an operator (a lambda's or functor's `f(a, b)`, whose argument 0 is the object), else 0.
unsigned argumentShift(const CallExpr &Call) {
  const auto *Op = dyn_cast<CXXOperatorCallExpr>(&Call);
  return Op && isa_and_nonnull<CXXMethodDecl>(Op->getDirectCallee()) &&
                 !cast<CXXMethodDecl>(Op->getDirectCallee())->isStatic()
             ? 1
             : 0;
}

/// Whether an argument of \p Args for which \p Names holds is passed to a non-const reference parameter
/// of \p F (by position).
template <typename Range, typename Pred> bool passesToReference(Range Args, const FunctionDecl &F, Pred Names) {
  unsigned I = 0;
  for (const Expr *A : Args) {
    if (I >= F.getNumParams())
      break;
    QualType T = F.getParamDecl(I++)->getType();
    if (T->isReferenceType() && !T->getPointeeType().isConstQualified() && Names(A))
      return true;
  }
  return false;
}

/// Whether \p Name is a CUDA runtime function that launches the kernel it is given.
bool isLaunchAPI(StringRef Name) {
  return Name == "cudaLaunchKernel" || Name == "cudaLaunchCooperativeKernel" || Name == "cudaLaunchKernelEx" ||
         Name == "cudaLaunchKernelExC";
}

/// Whether \p F is one (isLaunchAPI).
bool launchesKernel(const FunctionDecl &F) { return F.getIdentifier() && isLaunchAPI(F.getName()); }

/// What \p S (a function body) may do to variable \p V other than by its initializer: an
/// assignment, an increment or decrement, its address taken (but as an allocator's argument), a
/// non-const reference bound to it, its use as a call's non-const reference argument, or a
/// by-reference capture is Other; its address passed to an allocator alone is Allocated. \p Skip (may be
/// null): statements not looked into, the initializers of argument arrays that only a launch reads.
Changes classifyChanges(const Stmt *S, const VarDecl *V, const std::set<const Stmt *> *Skip) {
  if (!S)
    return Changes::None;
  auto Names = [&](const Expr *E) {
    const auto *DRE = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
    return DRE && DRE->getDecl() == V;
  };
  auto AddressOfV = [&](const Expr *E) {
    const auto *UO = dyn_cast<UnaryOperator>(stripCasts(E));
    return UO && UO->getOpcode() == UO_AddrOf && Names(UO->getSubExpr());
  };
  if (const auto *BO = dyn_cast<BinaryOperator>(S); BO && BO->isAssignmentOp() && Names(BO->getLHS()))
    return Changes::Other;
  if (const auto *UO = dyn_cast<UnaryOperator>(S);
      UO && (UO->isIncrementDecrementOp() || UO->getOpcode() == UO_AddrOf) && Names(UO->getSubExpr()))
    return Changes::Other;
  if (const auto *DS = dyn_cast<DeclStmt>(S)) // a reference bound to it: float *&r = dst;
    for (const Decl *D : DS->decls())
      if (const auto *R = dyn_cast<VarDecl>(D); R && R->getType()->isReferenceType() && R->getInit() &&
                                                !R->getType()->getPointeeType().isConstQualified() && Names(R->getInit()))
        return Changes::Other;
  Changes Found = Changes::None;
  const auto *CE = dyn_cast<CallExpr>(S);
  if (CE) {
    const FunctionDecl *F = CE->getDirectCallee();
    if (F && isAllocator(*F) && CE->getNumArgs() && AddressOfV(CE->getArg(0)))
      Found = Changes::Allocated;
    // Passed to a non-const reference parameter (a launch API's forwarding references only read), or to a
    // call whose callee clang does not resolve (a dependent call, a function pointer), which may take one.
    if (!F && llvm::any_of(CE->arguments(), Names))
      return Changes::Other;
    if (F && !launchesKernel(*F) && passesToReference(llvm::drop_begin(CE->arguments(), argumentShift(*CE)), *F, Names))
      return Changes::Other;
  }
  if (const auto *CC = dyn_cast<CXXConstructExpr>(S); CC && passesToReference(CC->arguments(), *CC->getConstructor(), Names))
    return Changes::Other;
  if (const auto *IL = dyn_cast<InitListExpr>(S); IL && IL->getType()->getAsRecordDecl()) { // Ref r{v}: a reference member
    unsigned I = 0;
    for (const FieldDecl *Fd : IL->getType()->getAsRecordDecl()->fields()) {
      if (I >= IL->getNumInits())
        break;
      QualType T = Fd->getType();
      if (T->isReferenceType() && !T->getPointeeType().isConstQualified() && Names(IL->getInit(I++)))
        return Changes::Other;
    }
  }
  if (const auto *L = dyn_cast<LambdaExpr>(S)) // captured by reference
    for (const LambdaCapture &Cap : L->captures())
      if (Cap.capturesVariable() && Cap.getCaptureKind() == LCK_ByRef && Cap.getCapturedVar() == V)
        return Changes::Other;
  for (const Stmt *C : S->children()) {
    if (Found == Changes::Allocated && CE && CE->getNumArgs() && C == CE->getArg(0))
      continue; // the allocator's `&p`
    if (Skip && Skip->count(C))
      continue; // an argument array a launch alone reads (argumentArray)
    Changes Inner = classifyChanges(C, V, Skip);
    if (Inner == Changes::Other)
      return Inner;
    if (Inner == Changes::Allocated)
      Found = Inner;
  }
  return Found;
}

/// Where a pointer expression may point: the variables it may be derived from (p, p + k, &p[k], (T*)p,
/// either arm of `c ? p : q`, a struct member by its declaration), following a local pointer or a
/// reference through its initializer (`float *dst = base + 8;` derives from base), up to \p Depth such
/// steps; a variable only allocated into (cudaMalloc(&p, n)) may also be a fresh allocation of its own.
/// Nothing when it cannot be told: a variable (a parameter or global too) that \p Body sets otherwise, a
/// structured binding, an array element, a call's result; the alias check then assumes the worst. An
/// empty set: no variable (nullptr, a literal address). \p Skip as for classifyChanges.
std::optional<std::set<const ValueDecl *>> basesOf(const Expr *E, const Stmt *Body,
                                                    const std::set<const Stmt *> *Skip = nullptr,
                                                    unsigned Depth = 8) {
  using Bases = std::set<const ValueDecl *>;
  E = stripCasts(E);
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    const ValueDecl *D = DRE->getDecl();
    if (isa<BindingDecl>(D))
      return std::nullopt;
    const auto *V = dyn_cast<VarDecl>(D);
    if (!V)
      return Bases{D};
    if (V->getType()->isReferenceType()) // names what its initializer names
      return V->getInit() && Depth ? basesOf(V->getInit(), Body, Skip, Depth - 1) : std::nullopt;
    Changes Ch = classifyChanges(Body, V, Skip);
    if (Ch == Changes::Other || V->isStaticLocal()) // a static local holds what an earlier call left
      return std::nullopt;
    if (!V->isLocalVarDecl() && V->hasGlobalStorage() && V->getType()->isPointerType() && V->getInit() && Depth) {
      // A global: its initializer's pointer, or whatever another function set it to.
      std::optional<Bases> B = basesOf(V->getInit(), Body, Skip, Depth - 1);
      if (B)
        B->insert(V);
      return B;
    }
    if (!V->isLocalVarDecl() || !V->getType()->isPointerType() || !V->getInit())
      return Bases{V};
    if (!Depth)
      return std::nullopt;
    std::optional<Bases> B = basesOf(V->getInit(), Body, Skip, Depth - 1);
    if (B && Ch == Changes::Allocated) // `float *out = in; if (c) cudaMalloc(&out, n);`: either
      B->insert(V);
    return B;
  }
  if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
    if (BO->isAdditiveOp()) {
      if (BO->getLHS()->getType()->isPointerType())
        return basesOf(BO->getLHS(), Body, Skip, Depth);
      if (BO->getRHS()->getType()->isPointerType())
        return basesOf(BO->getRHS(), Body, Skip, Depth);
    }
    if (BO->getOpcode() == BO_Comma)
      return basesOf(BO->getRHS(), Body, Skip, Depth);
  }
  if (const auto *CO = dyn_cast<AbstractConditionalOperator>(E)) {
    std::optional<Bases> T = basesOf(CO->getTrueExpr(), Body, Skip, Depth), F = basesOf(CO->getFalseExpr(), Body, Skip, Depth);
    if (!T || !F)
      return std::nullopt;
    T->insert(F->begin(), F->end());
    return T;
  }
  if (const auto *UO = dyn_cast<UnaryOperator>(E))
    if (UO->getOpcode() == UO_AddrOf)
      if (const auto *AS = dyn_cast<ArraySubscriptExpr>(stripCasts(UO->getSubExpr())))
        return basesOf(AS->getBase(), Body, Skip, Depth);
  if (const auto *ME = dyn_cast<MemberExpr>(E))
    return Bases{ME->getMemberDecl()};
  if (isa<CXXNullPtrLiteralExpr, IntegerLiteral, GNUNullExpr>(E))
    return Bases{};
  return std::nullopt;
}

/// The function that holds \p S: outside any lambda (a lambda's body lies in the function that holds
/// it), or the outermost lambda's call operator when no function holds that lambda (one at namespace
/// scope); null when none does.
const FunctionDecl *enclosingFunction(const Stmt &S, ASTContext &Ctx) {
  const FunctionDecl *Lambda = nullptr;
  DynTypedNodeList Ps = Ctx.getParents(S);
  while (!Ps.empty()) {
    if (const auto *FD = Ps[0].get<FunctionDecl>()) {
      const auto *M = dyn_cast<CXXMethodDecl>(FD);
      if (!M || !M->getParent()->isLambda())
        return FD;
      Lambda = FD;
    }
    Ps = Ctx.getParents(Ps[0]);
  }
  return Lambda;
}

/// The innermost function that holds \p S, a lambda's call operator included (whose parameters a launch
/// in the lambda may pass), or null.
const FunctionDecl *innermostFunction(const Stmt &S, ASTContext &Ctx) {
  for (DynTypedNodeList Ps = Ctx.getParents(S); !Ps.empty(); Ps = Ctx.getParents(Ps[0]))
    if (const auto *FD = Ps[0].get<FunctionDecl>())
      return FD;
  return nullptr;
}

/// \p F's name with its template arguments when it is a template's instantiation (`run<256>`), qualified.
std::string instanceName(const FunctionDecl &F) {
  std::string S = F.getQualifiedNameAsString();
  llvm::raw_string_ostream OS(S);
  if (const TemplateArgumentList *Args = F.getTemplateSpecializationArgs())
    printTemplateArgumentList(OS, Args->asArray(), F.getASTContext().getPrintingPolicy());
  return S;
}

/// The node at \p Loc in \p Body for which \p Match holds, or null.
const Stmt *nodeAt(const Stmt *Body, SourceLocation Loc, llvm::function_ref<bool(const Stmt &)> Match) {
  if (!Body)
    return nullptr;
  if (Body->getBeginLoc() == Loc && Match(*Body))
    return Body;
  for (const Stmt *Ch : Body->children())
    if (const Stmt *N = nodeAt(Ch, Loc, Match))
      return N;
  return nullptr;
}

/// The counterparts of \p S, a node of a function template's pattern, in that template's instantiations:
/// per instantiation with a body, the node at \p S's place for which \p Match holds, with the
/// instantiation (one that has none there discarded it: `if constexpr`). Nothing when \p S is not in a
/// function template, or in one that is a member of a class template (whose instantiations are not
/// enumerated here).
std::optional<std::vector<std::pair<const Stmt *, const FunctionDecl *>>>
counterparts(const Stmt &S, ASTContext &Ctx, llvm::function_ref<bool(const Stmt &)> Match) {
  const FunctionDecl *Fn = enclosingFunction(S, Ctx);
  const FunctionTemplateDecl *T = Fn ? Fn->getDescribedFunctionTemplate() : nullptr;
  if (!T || Fn->getDeclContext()->isDependentContext() || Fn->getLexicalDeclContext()->isDependentContext())
    return std::nullopt; // a member or a friend of a class template
  std::vector<std::pair<const Stmt *, const FunctionDecl *>> Out;
  for (const FunctionDecl *I : T->specializations())
    if (const Stmt *N = nodeAt(I->getBody(), S.getBeginLoc(), Match))
      Out.emplace_back(N, I);
  return Out;
}

/// The calls of each function (by its canonical declaration) that one translation unit's host code makes
/// where clang resolves the callee, in template instantiations too.
using CallIndex = std::map<const FunctionDecl *, std::vector<const CallExpr *>>;

class CallIndexer : public RecursiveASTVisitor<CallIndexer> {
public:
  bool shouldVisitTemplateInstantiations() const { return true; }
  bool VisitCallExpr(CallExpr *E) {
    if (const FunctionDecl *F = E->getDirectCallee(); F && !isa<CUDAKernelCallExpr>(E))
      Index[F->getCanonicalDecl()].push_back(E);
    return true;
  }
  CallIndex Index;
};

/// Where the alias check reads one launch: the launching function, its body, the statements basesOf skips
/// (argumentArrayInits) and the translation unit's calls, for following the function's parameters to its
/// callers.
struct LaunchScope {
  /// The innermost function holding the launch (a lambda's call operator included), whose parameters are
  /// followed to its callers; Body is the body of the outermost one (enclosingFunction), where changes to
  /// what a lambda captures are seen.
  const FunctionDecl *Fn = nullptr;
  const Stmt *Body = nullptr;
  /// The initializers of the argument arrays of the launches in Body (argumentArray).
  std::set<const Stmt *> Skip;
  const CallIndex *Calls = nullptr;
  /// Where overlapInCallers notes the functions whose callers it cannot see (LaunchFacts::CallersUnseen).
  std::set<std::string> *Unseen = nullptr;
};

/// `file:line` of \p S (where a macro holding it is expanded), relative to the root.
std::string lineOf(const Stmt &S, const PlanContext &C) {
  const SourceManager &SM = C.sourceManager();
  SourceLocation L = SM.getFileLoc(S.getBeginLoc());
  return rootRelative(absolutePath(SM.getFilename(L), C.job().Directory), C.job(), C.root()) + ":" +
         std::to_string(SM.getSpellingLineNumber(L));
}

/// Calls the alias check follows for one pair of launch arguments, at most (overlapInCallers).
constexpr unsigned CallerBudget = 256;

/// Why pointers derived from \p BI and \p BJ in function \p Fn may overlap once the parameters of \p Fn
/// among them are what its visible callers pass (each call on its own, then that caller's callers, up to
/// \p Depth levels, \p Budget calls in all); nothing when no call passes overlapping pointers or \p Fn has
/// no visible caller (a caller in another translation unit is not seen: an externally visible \p Fn
/// without one is noted in \p Unseen, `'run' (a.cu:3)`). A constructor's or a virtual function's callers
/// are not followed: the worst is assumed.
std::optional<std::string> overlapInCallers(const std::set<const ValueDecl *> &BI, const std::set<const ValueDecl *> &BJ,
                                            const FunctionDecl *Fn, const CallIndex &Calls, const PlanContext &C,
                                            unsigned Depth, unsigned &Budget, std::set<std::string> *Unseen) {
  auto IsParam = [&](const ValueDecl *D) { return isa<ParmVarDecl>(D) && D->getDeclContext() == Fn; };
  if (!Fn || !Depth || (llvm::none_of(BI, IsParam) && llvm::none_of(BJ, IsParam)))
    return std::nullopt;
  const auto *M = dyn_cast<CXXMethodDecl>(Fn);
  if (isa<CXXConstructorDecl>(Fn) || (M && M->isVirtual()))
    return "'" + Fn->getQualifiedNameAsString() + "' passes its parameters, and its callers (" +
           (M && M->isVirtual() ? "through a virtual call" : "constructions") + ") are not followed";
  auto It = Calls.find(Fn->getCanonicalDecl());
  if (It == Calls.end() && Unseen && Fn->isExternallyVisible() && !Fn->isMain() && Fn->getBody())
    Unseen->insert("'" + Fn->getQualifiedNameAsString() + "' (" + lineOf(*Fn->getBody(), C) + ")");
  if (It == Calls.end())
    return std::nullopt;
  for (const CallExpr *Call : It->second) {
    if (Budget == 0)
      return "'" + Fn->getQualifiedNameAsString() + "' has more callers than the alias check follows (" +
             std::to_string(CallerBudget) + " calls)";
    --Budget;
    const FunctionDecl *Outer = enclosingFunction(*Call, C.astContext());
    const Stmt *Body = Outer ? Outer->getBody() : nullptr;
    unsigned Shift = argumentShift(*Call);
    auto InCaller = [&](const std::set<const ValueDecl *> &B) -> std::optional<std::set<const ValueDecl *>> {
      std::set<const ValueDecl *> Out;
      for (const ValueDecl *D : B) {
        unsigned I = IsParam(D) ? cast<ParmVarDecl>(D)->getFunctionScopeIndex() + Shift : ~0u;
        if (I == ~0u) {
          Out.insert(D);
          continue;
        }
        auto A = I < Call->getNumArgs() ? basesOf(Call->getArg(I), Body) : std::nullopt;
        if (!A)
          return std::nullopt;
        Out.insert(A->begin(), A->end());
      }
      return Out;
    };
    std::optional<std::set<const ValueDecl *>> CI = InCaller(BI), CJ = InCaller(BJ);
    std::string Where = "the call of '" + Fn->getQualifiedNameAsString() + "' at " + lineOf(*Call, C);
    if (!CI || !CJ)
      return Where + " passes a pointer whose target cannot be told from its function";
    for (const ValueDecl *D : *CI)
      if (CJ->count(D))
        return Where + " passes both from '" + D->getNameAsString() + "'";
    if (auto Why = overlapInCallers(*CI, *CJ, innermostFunction(*Call, C.astContext()), Calls, C, Depth - 1, Budget,
                                    Unseen))
      return Why;
  }
  return std::nullopt;
}

/// Why launch arguments \p AI and \p AJ (pointers) may overlap: one text, a variable both derive from,
/// one whose target cannot be told, or a visible caller of the launching function passing overlapping
/// pointers (overlapInCallers); nothing when they cannot.
std::optional<std::string> overlapOf(const Expr *AI, const Expr *AJ, const LaunchScope &S, const PlanContext &C) {
  std::string TI = C.textOf(AI->getSourceRange()), TJ = C.textOf(AJ->getSourceRange());
  if (!TI.empty() && TI == TJ)
    return "both derived from '" + TI + "'";
  auto BI = basesOf(AI, S.Body, &S.Skip), BJ = basesOf(AJ, S.Body, &S.Skip);
  if (!BI || !BJ)
    return "where '" + (BI ? TJ : TI) + "' points cannot be told from the launching function";
  for (const ValueDecl *D : *BI)
    if (BJ->count(D))
      return "both derived from '" + D->getNameAsString() + "'";
  unsigned Budget = CallerBudget;
  return overlapInCallers(*BI, *BJ, S.Fn, *S.Calls, C, 3, Budget, S.Unseen);
}

/// The kernel \p E names (through casts and `&`), or null.
const FunctionDecl *kernelNamed(const Expr *E) {
  E = stripCasts(E);
  if (const auto *U = dyn_cast<UnaryOperator>(E); U && U->getOpcode() == UO_AddrOf)
    E = stripCasts(U->getSubExpr());
  const auto *DRE = dyn_cast<DeclRefExpr>(E);
  const auto *F = DRE ? dyn_cast<FunctionDecl>(DRE->getDecl()) : nullptr;
  return F && F->hasAttr<CUDAGlobalAttr>() ? F : nullptr;
}

/// What a launch passes its kernel: the kernel, the argument of each parameter in order, or why the
/// arguments cannot be read (Opaque, with the argument array's text in ArrayText).
struct LaunchArgs {
  const FunctionDecl *Kernel = nullptr;
  std::vector<const Expr *> Args;
  std::string Opaque, ArrayText;
};

/// The argument array (`void **`) of launch call \p CE of cudaLaunchKernel, cudaLaunchCooperativeKernel or
/// cudaLaunchKernelExC, and the index of its kernel argument; null when \p CE is none of these.
const Expr *argumentArrayOf(const CallExpr &CE, unsigned &KernelArg) {
  const FunctionDecl *API = CE.getDirectCallee();
  StringRef N = API && API->getIdentifier() ? API->getName() : "";
  // cudaLaunchKernel(func, grid, block, args, ...) and cudaLaunchKernelExC(config, func, args).
  KernelArg = N == "cudaLaunchKernelExC" ? 1 : 0;
  unsigned ArrayArg = KernelArg ? 2 : 3;
  bool HasArray = N == "cudaLaunchKernel" || N == "cudaLaunchCooperativeKernel" || N == "cudaLaunchKernelExC";
  return HasArray && CE.getNumArgs() > ArrayArg ? CE.getArg(ArrayArg) : nullptr;
}

/// The initializer of \p Array, an argument array the alias check can read: an automatic local array of
/// the launching function's \p Body, initialized by a list of addresses of variables (`void *args[] =
/// {&x, &y, &n}`), that \p Body names nowhere but in the one launch; else null and \p Why says why.
const InitListExpr *readableArray(const Expr *Array, const Stmt *Body, const SourceManager &SM, std::string &Why) {
  const auto *DRE = dyn_cast<DeclRefExpr>(stripCasts(Array));
  const auto *V = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  const auto *Init = V && V->hasLocalStorage() && V->getType()->isArrayType()
                         ? dyn_cast_or_null<InitListExpr>(V->getInit())
                         : nullptr;
  if (!Init || !Body || SM.isBeforeInTranslationUnit(V->getLocation(), Body->getBeginLoc()) ||
      SM.isBeforeInTranslationUnit(Body->getEndLoc(), V->getLocation())) {
    Why = "which is not an array of the launching function";
    return nullptr;
  }
  unsigned Uses = 0;
  std::function<void(const Stmt *)> Count = [&](const Stmt *S) {
    if (const auto *R = dyn_cast_or_null<DeclRefExpr>(S); R && R->getDecl() == V)
      ++Uses;
    for (const Stmt *Ch : S ? S->children() : Stmt::const_child_range(nullptr, nullptr))
      Count(Ch);
  };
  Count(Body);
  if (Uses != 1) {
    Why = "which the launching function also uses elsewhere";
    return nullptr;
  }
  for (const Expr *Elem : Init->inits()) {
    const auto *U = dyn_cast<UnaryOperator>(stripCasts(Elem));
    const auto *Var = U && U->getOpcode() == UO_AddrOf ? dyn_cast<DeclRefExpr>(U->getSubExpr()->IgnoreParens()) : nullptr;
    if (!Var || !isa<VarDecl>(Var->getDecl())) {
      Why = "an element of which is not the address of a variable";
      return nullptr;
    }
  }
  return Init;
}

/// \p Array, the `void **` of cudaLaunchKernel and its relatives, read back to the values it points at
/// (readableArray); else why not.
LaunchArgs argumentArray(const Expr *Array, const Stmt *Body, const PlanContext &C) {
  LaunchArgs L;
  L.ArrayText = C.textOf(Array->getSourceRange());
  std::string Why;
  const InitListExpr *Init = readableArray(Array, Body, C.sourceManager(), Why);
  if (!Init) {
    L.Opaque = "its arguments are passed through '" + L.ArrayText + "', " + Why;
    return L;
  }
  for (const Expr *Elem : Init->inits())
    L.Args.push_back(cast<UnaryOperator>(stripCasts(Elem))->getSubExpr());
  return L;
}

/// The initializers of every readable argument array of a launch in \p Body: basesOf does not count their
/// `&x` as taking x's address (ping-pong launches over the same two buffers name each in two arrays).
std::set<const Stmt *> argumentArrayInits(const Stmt *Body, const SourceManager &SM) {
  std::set<const Stmt *> Out;
  std::function<void(const Stmt *)> Walk = [&](const Stmt *S) {
    if (!S)
      return;
    unsigned KernelArg = 0;
    std::string Why;
    if (const auto *CE = dyn_cast<CallExpr>(S))
      if (const Expr *Array = argumentArrayOf(*CE, KernelArg))
        if (const InitListExpr *Init = readableArray(Array, Body, SM, Why))
          Out.insert(Init);
    for (const Stmt *Ch : S->children())
      Walk(Ch);
  };
  Walk(Body);
  return Out;
}

/// The kernel and arguments of launch site \p E: `<<<>>>` with a kernel clang resolves, cudaLaunchKernel,
/// cudaLaunchCooperativeKernel and cudaLaunchKernelExC (an argument array), cudaLaunchKernelEx (the
/// arguments themselves). Kernel null when it is none of these (a launch through a function pointer or
/// inside a template: uncheckedUses finds those).
LaunchArgs launchArgsOf(const Entity &E, const Stmt *Body, const PlanContext &C) {
  LaunchArgs L;
  if (const auto *KCE = dyn_cast_or_null<CUDAKernelCallExpr>(E.S)) {
    L.Kernel = KCE->getDirectCallee();
    L.Args.assign(KCE->arg_begin(), KCE->arg_end());
    return L;
  }
  const auto *CE = dyn_cast_or_null<CallExpr>(E.S);
  if (!CE)
    return L;
  unsigned KernelArg = 0;
  const FunctionDecl *API = CE->getDirectCallee();
  if (const Expr *Array = argumentArrayOf(*CE, KernelArg))
    L = argumentArray(Array, Body, C);
  else if (API && API->getIdentifier() && API->getName() == "cudaLaunchKernelEx" && CE->getNumArgs() >= 2)
    L.Args.assign(CE->arg_begin() + 2, CE->arg_end()), KernelArg = 1; // (config, kernel, args...)
  else
    return L;
  L.Kernel = kernelNamed(CE->getArg(KernelArg));
  return L;
}

/// The pointer parameters of a launch that receive aliased arguments (overlapOf), into \p Out. A launch in
/// a function template's pattern is read in each instantiation instead (counterparts), where its
/// arguments, a parameter pack's included, and its callers resolve; one in a class template's member
/// cannot be, and says so (LaunchFacts::Unchecked).
void collectFacts(const std::string &SiteID, const Entity &E, const PlanContext &C, const CallIndex &Calls,
                  std::vector<LaunchFacts> &Out, const FunctionDecl *Instance = nullptr) {
  if (!E.S || !E.Data["kernel"].is_string())
    return;
  LaunchScope Scope;
  // An instantiation may share a pattern's non-dependent nodes, whose parents are then both: \p Instance
  // says which function holds E.S.
  const FunctionDecl *Outer = Instance ? Instance : enclosingFunction(*E.S, C.astContext());
  if (!Instance && Outer && Outer->isDependentContext()) {
    auto Same = [&](const Stmt &N) { return N.getStmtClass() == E.S->getStmtClass(); };
    auto Instances = counterparts(*E.S, C.astContext(), Same);
    if (!Instances) {
      LaunchFacts F;
      F.Kernel = E.Data["kernel"].get<std::string>();
      F.SiteID = lineOf(*E.S, C);
      F.Unchecked = "it is launched there in a member of a class template, whose instantiations the alias check "
                    "does not read";
      Out.push_back(std::move(F));
      return;
    }
    for (auto [N, In] : *Instances) {
      Entity Counterpart;
      Counterpart.S = N;
      Counterpart.Data["kernel"] = E.Data["kernel"];
      collectFacts(SiteID + " in " + instanceName(*In), Counterpart, C, Calls, Out, In);
    }
    return;
  }
  Scope.Fn = innermostFunction(*E.S, C.astContext());
  if (Instance && (!Scope.Fn || Scope.Fn->isDependentContext()))
    Scope.Fn = Instance;
  Scope.Body = Outer ? Outer->getBody() : nullptr;
  Scope.Calls = &Calls;
  std::set<std::string> Unseen;
  Scope.Unseen = &Unseen;
  LaunchArgs L = launchArgsOf(E, Scope.Body, C);
  Scope.Skip = argumentArrayInits(Scope.Body, C.sourceManager());
  const FunctionDecl *K = L.Kernel;
  if (!K)
    return;
  LaunchFacts F;
  F.SiteID = SiteID;
  F.Kernel = E.Data["kernel"].get<std::string>();
  unsigned N = L.Opaque.empty() ? std::min<unsigned>(L.Args.size(), K->getNumParams()) : K->getNumParams();
  for (unsigned I = 0; I < N; ++I)
    for (unsigned J = I + 1; J < N; ++J) {
      if (!K->getParamDecl(I)->getType()->isPointerType() || !K->getParamDecl(J)->getType()->isPointerType())
        continue;
      if (!L.Opaque.empty()) {
        std::string AI = L.ArrayText + "[" + std::to_string(I) + "]", AJ = L.ArrayText + "[" + std::to_string(J) + "]";
        F.Aliases.push_back({I, J, AI, AJ, L.Opaque});
      } else if (std::optional<std::string> Why = overlapOf(L.Args[I], L.Args[J], Scope, C)) {
        F.Aliases.push_back({I, J, C.textOf(L.Args[I]->getSourceRange()), C.textOf(L.Args[J]->getSourceRange()), *Why});
      }
    }
  F.CallersUnseen.assign(Unseen.begin(), Unseen.end());
  Out.push_back(std::move(F));
}

/// Whether \p Name is a CUDA runtime function that takes a kernel without launching it or handing out a
/// handle that can (attributes, occupancy): a kernel named there is not passed any pointer.
bool queriesKernel(StringRef Name) {
  return Name.starts_with("cudaFuncSet") || Name.starts_with("cudaFuncGetAttributes") ||
         Name.starts_with("cudaOccupancy");
}

std::string kernelIDOf(const FunctionDecl &F);

/// The kernel a name refers to, by the inventory's ID (its pattern's qualified name; an explicit
/// specialization's with its template arguments, as the inventory's kernelID writes it): a resolved
/// reference, or a template's name in a template (an unresolved lookup naming a kernel template). ""
/// when it names no kernel, or only in an unevaluated operand (sizeof, decltype), which passes nothing.
std::string kernelReferenced(const Expr *E, const ASTContext &Ctx) {
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    const auto *F = dyn_cast<FunctionDecl>(DRE->getDecl());
    if (!F || !F->hasAttr<CUDAGlobalAttr>() || DRE->isNonOdrUse() == NOUR_Unevaluated)
      return "";
    return kernelIDOf(*F);
  }
  if (const auto *ULE = dyn_cast<UnresolvedLookupExpr>(E))
    for (const NamedDecl *D : ULE->decls()) {
      const auto *F = D->getAsFunction();
      if (F && F->hasAttr<CUDAGlobalAttr>())
        return F->getQualifiedNameAsString();
    }
  return "";
}

/// The inventory's ID of kernel \p F (kernelReferenced).
std::string kernelIDOf(const FunctionDecl &F) {
  const FunctionDecl *P = F.getTemplateInstantiationPattern();
  if (P || F.getTemplateSpecializationKind() != TSK_ExplicitSpecialization)
    return (P ? P : &F)->getQualifiedNameAsString();
  return instanceName(F);
}

/// The name of the function \p Call calls, resolved or not (a call inside a template whose callee clang
/// leaves as an unresolved lookup); "" when it has none.
std::string calleeName(const CallExpr &Call) {
  if (const FunctionDecl *F = Call.getDirectCallee())
    return F->getIdentifier() ? F->getName().str() : "";
  if (const auto *ULE = dyn_cast<UnresolvedLookupExpr>(Call.getCallee()->IgnoreParenImpCasts()))
    return ULE->getName().getAsString();
  return "";
}

/// Why the alias check cannot read what kernel use \p E (a reference to a kernel) passes, or "" when it
/// can (the kernel of a launch launchArgsOf reads) or nothing is passed (an attribute or occupancy query).
std::string uncheckedWhy(const Expr &E, ASTContext &Ctx) {
  const Expr *Top = &E; // up through casts, parentheses and `&`
  DynTypedNodeList Ps = Ctx.getParents(*Top);
  for (const Expr *P; !Ps.empty() && (P = Ps[0].get<Expr>());) {
    const auto *U = dyn_cast<UnaryOperator>(P);
    if (!isa<CastExpr, ParenExpr>(P) && !(U && U->getOpcode() == UO_AddrOf))
      break;
    Top = P;
    Ps = Ctx.getParents(*Top);
  }
  const auto *Call = Ps.empty() ? nullptr : Ps[0].get<CallExpr>();
  if (const auto *KCE = dyn_cast_or_null<CUDAKernelCallExpr>(Call); KCE && KCE->getCallee() == Top)
    return KCE->getDirectCallee() ? "" : "it is launched there where clang does not resolve the kernel (inside a template)";
  std::string N = Call ? calleeName(*Call) : "";
  bool Launch = isLaunchAPI(N);
  bool Resolved = isa<DeclRefExpr>(E) && Call && Call->getDirectCallee();
  if (queriesKernel(N) || (Launch && Resolved))
    return "";
  if (Launch)
    return "it is launched there through " + N + " inside a template, where clang does not resolve the launch";
  return "it is named there other than as the kernel of a launch the alias check reads (a function pointer, a "
         "launcher of the program's own)";
}

/// Host code's uses of kernels, outside system headers, whose arguments the alias check cannot read
/// (uncheckedWhy), each as a LaunchFacts with Unchecked set and SiteID `file:line`.
class UncheckedUses : public RecursiveASTVisitor<UncheckedUses> {
public:
  UncheckedUses(ASTContext &Ctx, const PlanContext &C, const CallIndex &Calls) : Ctx(Ctx), C(C), Calls(Calls) {}
  bool VisitDeclRefExpr(DeclRefExpr *E) { return note(*E); }
  bool VisitUnresolvedLookupExpr(UnresolvedLookupExpr *E) { return note(*E); }
  std::vector<LaunchFacts> Out;

private:
  ASTContext &Ctx;
  const PlanContext &C;
  const CallIndex &Calls;

  bool note(const Expr &E) {
    std::string Kernel = kernelReferenced(&E, Ctx);
    const SourceManager &SM = Ctx.getSourceManager();
    if (Kernel.empty() || SM.isInSystemHeader(E.getBeginLoc()))
      return true;
    std::string Why = uncheckedWhy(E, Ctx);
    const FunctionDecl *Outer = Why.empty() ? nullptr : enclosingFunction(E, Ctx);
    if (Why.empty() || (Outer && Outer->isDependentContext() && readInstantiations(E)))
      return true;
    LaunchFacts F;
    F.Kernel = Kernel;
    F.SiteID = lineOf(E, C);
    F.Unchecked = Why;
    Out.push_back(std::move(F));
    return true;
  }

  /// \p E, a kernel use inside a function template that the pattern cannot read (a kernel or a launch clang
  /// leaves unresolved), read in each instantiation of that template in this translation unit, where the
  /// launch resolves (counterparts of the call E is the kernel of): their launch facts go to Out. False
  /// (nothing added) when E is not a call's kernel, the template's instantiations cannot be enumerated, or
  /// some instantiation's call there is not a launch the alias check reads.
  bool readInstantiations(const Expr &E) {
    const CallExpr *Pattern = callOf(E);
    if (!Pattern)
      return false;
    auto SameClass = [&](const Stmt &N) { return N.getStmtClass() == Pattern->getStmtClass(); };
    auto Instances = counterparts(*Pattern, Ctx, SameClass);
    if (!Instances)
      return false;
    std::vector<LaunchFacts> Facts;
    for (auto [N, In] : *Instances) {
      const auto *Call = cast<CallExpr>(N);
      std::string Kernel = launchedKernel(*Call);
      if (Kernel.empty())
        return false;
      Entity Site;
      Site.S = Call;
      Site.Data["kernel"] = Kernel;
      collectFacts(lineOf(*Call, C) + " in " + instanceName(*In), Site, C, Calls, Facts, In);
    }
    std::move(Facts.begin(), Facts.end(), std::back_inserter(Out));
    return true;
  }

  /// The call \p E is the callee or an argument of, through casts, parentheses and `&`; or null.
  const CallExpr *callOf(const Expr &E) const {
    DynTypedNodeList Ps = Ctx.getParents(E);
    while (!Ps.empty() && Ps[0].get<Expr>() && !Ps[0].get<CallExpr>())
      Ps = Ctx.getParents(*Ps[0].get<Expr>());
    return Ps.empty() ? nullptr : Ps[0].get<CallExpr>();
  }

  /// The kernel \p Call launches, when it is a launch the alias check reads (a resolved `<<<>>>` or a
  /// launch API, launchArgsOf), by the inventory's ID; else "".
  std::string launchedKernel(const CallExpr &Call) const {
    if (const auto *KCE = dyn_cast<CUDAKernelCallExpr>(&Call))
      return KCE->getDirectCallee() ? kernelReferenced(stripCasts(KCE->getCallee()), Ctx) : "";
    const FunctionDecl *API = Call.getDirectCallee();
    if (!API || !launchesKernel(*API))
      return "";
    unsigned KernelArg = API->getName() == "cudaLaunchKernelEx" || API->getName() == "cudaLaunchKernelExC" ? 1 : 0;
    const FunctionDecl *K = KernelArg < Call.getNumArgs() ? kernelNamed(Call.getArg(KernelArg)) : nullptr;
    return K ? kernelIDOf(*K) : "";
  }
};

/// Where \p D (a kernel, its template, an instantiation) is declared, as both sides' parses of one job name
/// it: the file and offset of its name.
static std::string definitionKey(const Decl &D, const SourceManager &SM) {
  SourceLocation L = SM.getExpansionLoc(D.getLocation());
  return SM.getFilename(L).str() + ":" + std::to_string(SM.getFileOffset(L));
}

/// The host functions with a body outside system headers (an edit may not name one).
void collectHostFunctions(const DeclContext *DC, const SourceManager &SM, std::set<std::string> &Out) {
  for (const Decl *D : DC->decls()) {
    if (const auto *NS = dyn_cast<NamespaceDecl>(D))
      collectHostFunctions(NS, SM, Out);
    else if (const auto *FD = dyn_cast<FunctionDecl>(D))
      if (!FD->hasAttr<CUDAGlobalAttr>() && FD->doesThisDeclarationHaveABody() &&
          !SM.isInSystemHeader(FD->getLocation()))
        Out.insert(FD->getQualifiedNameAsString());
  }
}

bool plansOn(EditKindPlanner::Sides S, Side W) {
  return S == EditKindPlanner::Sides::Both || (S == EditKindPlanner::Sides::Host) == (W == Side::Host);
}

/// Plans every edit on one side of one parse and records what it saw in the PlanState.
class Planner {
public:
  Planner(PlanState &St, Side W, size_t Unit, const CompileJob &Job, ASTContext &Ctx, const MacroTable &Macros,
          const ErrorTable &Errors)
      : St(St), W(W), Unit(Unit), Inv(collectSideInventory(Ctx, W, Macros, &Errors)), C(St, W, Job, Ctx, Inv) {}

  void run() {
    if (W == Side::Host) {
      collectLaunchFacts();
      collectHostKernels();
    }
    else
      waitForHostSides();
    std::vector<Outcome> Out(St.P.Edits.size());
    for (size_t I = 0; I < St.P.Edits.size(); ++I)
      Out[I] = plan(St.P.Edits[I]);
    std::lock_guard<std::mutex> L(St.M);
    for (auto &[ID, E] : C.entities()) {
      EntityKind K = E->Kind == EntityKind::LocalConstant ? EntityKind::Constant : E->Kind;
      if (W == Side::Device || K == EntityKind::LaunchSite || K == EntityKind::Constant) {
        St.Known[K].insert(ID);
        St.KindOf[ID] = K;
        St.QualifiedOf[ID].insert(C.qualifiedID(*E));
      }
      if (K == EntityKind::Kernel && E->hasErrors()) {
        ParseDiagnostic D = E->Errors.empty() ? ParseDiagnostic() : E->Errors.front().Diag;
        D.File = relativePath(absolutePath(D.File, C.job().Directory), St.Opts.Root);
        St.KernelErrors.emplace(ID, E->Errors.empty() ? "" : D.str());
      }
    }
    St.HostFunctions.insert(HostFns.begin(), HostFns.end());
    PlanState::UnitPlan &U = St.Units[Unit];
    U.Outcomes = std::move(Out);
    U.Launches = std::move(Facts);
  }

private:
  PlanState &St;
  Side W;
  size_t Unit;
  SideInventory Inv;
  PlanContext C;
  std::vector<LaunchFacts> Facts;
  std::set<std::string> HostFns;

  /// A device side is planned once every host side is done (add_restrict asks every TU's launches whether
  /// they alias a parameter, PlanContext::aliasFor) and every other architecture's facts are in
  /// (PlanContext::archFacts).
  void waitForHostSides() {
    std::unique_lock<std::mutex> L(St.M);
    St.HostsDone.wait(L, [&] { return St.HostsPending == 0 && St.ArchsPending == 0; });
  }

  /// The kernel definitions of this host side (PlanState::HostKernels), when an add_const edit asks.
  void collectHostKernels() {
    if (llvm::none_of(St.P.Edits, [](const Edit &Ed) { return Ed.Kind == EditKind::AddConst; }))
      return;
    std::set<std::string> Defs;
    for (const Entity &E : C.allEntities())
      if (E.D && E.Kind == EntityKind::Kernel)
        Defs.insert(definitionKey(*E.D, C.sourceManager()));
    std::lock_guard<std::mutex> L(St.M);
    St.HostKernels[parseKey(C.job(), Side::Host)] = std::move(Defs);
  }

  void collectLaunchFacts() {
    collectHostFunctions(C.astContext().getTranslationUnitDecl(), C.sourceManager(), HostFns);
    if (llvm::none_of(St.P.Edits, [](const Edit &Ed) { return Ed.Kind == EditKind::AddRestrict; }))
      return; // only add_restrict asks (PlanContext::aliasFor)
    CallIndexer Calls;
    Calls.TraverseDecl(C.astContext().getTranslationUnitDecl());
    for (auto &[ID, E] : C.entities())
      if (E->Kind == EntityKind::LaunchSite)
        collectFacts(ID, *E, C, Calls.Index, Facts);
    UncheckedUses U(C.astContext(), C, Calls.Index);
    U.TraverseDecl(C.astContext().getTranslationUnitDecl());
    std::move(U.Out.begin(), U.Out.end(), std::back_inserter(Facts));
  }

  /// Why \p E cannot be the entity of \p Ed, if it cannot.
  std::optional<std::string> entityProblem(const Edit &Ed, const Entity &E, const EditKindPlanner &K) const {
    EntityKind Have = E.Kind == EntityKind::LocalConstant ? EntityKind::Constant : E.Kind;
    if (!K.accepts(Have))
      return "'" + Ed.ID + "' is a " + entityKindName(E.Kind) + ", but " + K.name().str() + " needs " +
             K.targetDescription();
    if (!E.Editable)
      return "'" + Ed.ID + "' " + E.NotEditableReason;
    if (E.Kind == EntityKind::Loop || E.Kind == EntityKind::Param || E.Kind == EntityKind::LocalConstant) {
      const Entity *Kernel = C.owner(E);
      if (Kernel && !Kernel->Editable)
        return "its kernel '" + Kernel->ID + "' " + Kernel->NotEditableReason;
    }
    return K.slotProblem(Ed);
  }

  Outcome plan(const Edit &Ed) {
    const EditKindPlanner &K = editKindPlanner(Ed.Kind);
    if (!plansOn(K.sides(), W))
      return K.planOtherSide(Ed, C);
    const Entity *E = C.find(Ed.ID);
    if (!E)
      return {};
    Outcome O = resolvedPlan(Ed, *E, K);
    O.Resolved = C.qualifiedID(*E);
    return O;
  }

  /// The plan of \p Ed on \p E, its entity in this parse.
  Outcome resolvedPlan(const Edit &Ed, const Entity &E, const EditKindPlanner &K) {
    if (auto Why = entityProblem(Ed, E, K))
      return refuse(*Why);
    Outcome O = K.plan(Ed, E, C);
    if (O.St == Outcome::Ok && O.Regions.empty()) {
      const Entity *Reg = &E;
      if (E.Kind == EntityKind::Loop || E.Kind == EntityKind::Param)
        Reg = C.owner(E) ? C.owner(E) : &E;
      O.Regions.push_back(C.regionOf(*Reg));
    }
    return O;
  }
};

class PlanConsumer : public ASTConsumer {
public:
  PlanConsumer(PlanState &St, Side W, size_t Unit, const CompileJob &Job, MacroTable &M, ErrorTable &Errors)
      : St(St), W(W), Unit(Unit), Job(Job), M(M), Errors(Errors) {}
  void HandleTranslationUnit(ASTContext &Ctx) override {
    // An imperfect TU is planned on clang's recovered AST (entities its errors touch are not
    // editable); after a fatal error nothing is trusted.
    if (Ctx.getDiagnostics().hasFatalErrorOccurred())
      return;
    Planner(St, W, Unit, Job, Ctx, M, Errors).run();
    DeclCensus C = takeDeclCensus(Ctx);
    std::lock_guard<std::mutex> L(St.M);
    St.Census[parseKey(Job, W)] = std::move(C);
  }

private:
  PlanState &St;
  Side W;
  size_t Unit;
  const CompileJob &Job;
  MacroTable &M;
  ErrorTable &Errors;
};

class PlanAction : public ASTFrontendAction {
public:
  PlanAction(PlanState &St, Side W, size_t Unit, const CompileJob &Job) : St(St), W(W), Unit(Unit), Job(Job) {}
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &CI, StringRef) override {
    recordMacros(CI.getPreprocessor(), Macros);
    recordErrors(CI.getDiagnostics(), W, Errors);
    return std::make_unique<PlanConsumer>(St, W, Unit, Job, Macros, Errors);
  }

private:
  PlanState &St;
  Side W;
  size_t Unit;
  const CompileJob &Job;
  MacroTable Macros;
  ErrorTable Errors;
};

/// Collects one architecture's facts of a job's kernels and parameters (ArchFact) into St.ArchFacts.
class ArchFactsConsumer : public ASTConsumer {
public:
  ArchFactsConsumer(PlanState &St, const CompileJob &Job, const ArchUnit &U, size_t Index, MacroTable &M,
                    ErrorTable &Errors)
      : St(St), Job(Job), U(U), Index(Index), M(M), Errors(Errors) {}
  void HandleTranslationUnit(ASTContext &Ctx) override {
    if (Ctx.getDiagnostics().hasFatalErrorOccurred())
      return;
    SideInventory Inv = collectSideInventory(Ctx, Side::Device, M, &Errors);
    PlanContext C(St, Side::Device, Job, Ctx, Inv);
    std::map<std::string, std::string> Launched = C.deviceLaunches();
    std::vector<std::pair<std::string, ArchFact>> Facts;
    for (const Entity &E : Inv.Entities)
      if (E.Kind == EntityKind::Kernel || E.Kind == EntityKind::Param) {
        auto L = E.Kind == EntityKind::Kernel ? Launched.find(E.ID) : Launched.end();
        std::optional<std::string> At = L == Launched.end() ? std::nullopt : std::optional(L->second);
        std::string Def = E.Kind == EntityKind::Kernel && E.D ? definitionKey(*E.D, Ctx.getSourceManager()) : "";
        Facts.push_back({archFactKey(E, C), {U.Arch, E.Data, At, Def}});
      }
    std::lock_guard<std::mutex> Lock(St.M);
    auto &Mine = St.ArchFacts[parseKey(Job, Side::Device)];
    for (auto &[ID, F] : Facts)
      Mine[ID].emplace(Index, std::move(F));
  }

private:
  PlanState &St;
  const CompileJob &Job;
  const ArchUnit &U;
  size_t Index;
  MacroTable &M;
  ErrorTable &Errors;
};

class ArchFactsAction : public ASTFrontendAction {
public:
  ArchFactsAction(PlanState &St, const CompileJob &Job, const ArchUnit &U, size_t Index)
      : St(St), Job(Job), U(U), Index(Index) {}
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &CI, StringRef) override {
    recordMacros(CI.getPreprocessor(), Macros);
    recordErrors(CI.getDiagnostics(), Side::Device, Errors);
    return std::make_unique<ArchFactsConsumer>(St, Job, U, Index, Macros, Errors);
  }

private:
  PlanState &St;
  const CompileJob &Job;
  const ArchUnit &U;
  size_t Index;
  MacroTable Macros;
  ErrorTable Errors;
};

/// The parse before the edit of ArchUnit \p U (number \p Index of archUnits); when an edit reads the
/// facts, it collects them and, however it ends, lets the device-side planners go on.
ParseResult planArchParse(PlanState &St, const CompileJob &Job, const ArchUnit &U, size_t Index,
                          const FrontendOptions &FOpts) {
  if (!readsArchFacts(St.P))
    return parseArchUnit(Job, U, FOpts, {});
  ParseResult R = parseArchUnit(Job, U, FOpts, {}, std::make_unique<ArchFactsAction>(St, Job, U, Index));
  std::lock_guard<std::mutex> L(St.M);
  if (--St.ArchsPending == 0)
    St.HostsDone.notify_all();
  return R;
}

/// One plan parse; a host side, however it ends, lets the device-side planners go on.
ParseResult planParse(PlanState &St, const CompileJob &Job, Side S, size_t Unit, const FrontendOptions &FOpts) {
  ParseResult R = parseCommandLine(checkedCommandLine(Job, S, FOpts), Job.Directory,
                                   std::make_unique<PlanAction>(St, S, Unit, Job), {}, St.Opts.Preambles);
  if (S == Side::Host) {
    std::lock_guard<std::mutex> L(St.M);
    if (--St.HostsPending == 0)
      St.HostsDone.notify_all();
  }
  return R;
}

/// St.PerEdit from the units' plans, in job order, host side before device side.
void foldUnitPlans(PlanState &St, size_t NJobs) {
  for (size_t U : unitsInJobOrder(NJobs))
    for (size_t I = 0; I < St.Units[U].Outcomes.size(); ++I)
      St.PerEdit[I].push_back(std::move(St.Units[U].Outcomes[I]));
}

/// What the parse before the edit of \p Job on side \p S leaves in \p St; an error when it is unusable.
Error notePlanParse(PlanState &St, const CompileJob &Job, Side S, const ParseResult &R) {
  if (R.UsedPreamble)
    St.WithPreamble.insert(parseKey(Job, S));
  St.PreambleStateLost |= R.PreambleStateLost;
  if (parseUnusable(R)) {
    std::string Msg = rootRelative(Job.File, Job, St.Opts.Root) + " cannot be parsed (" + sideName(S).str() +
                      " side) before the edit";
    std::vector<std::string> Errors;
    for (const ParseDiagnostic &D : R.Diagnostics)
      if (D.Level != "warning")
        Errors.push_back(rootRelative(D, Job, St.Opts.Root).str());
    if (St.Opts.DropRefused)
      return createStringError(inconvertibleErrorCode(), Msg + (Errors.empty() ? "" : ": " + Errors.front()));
    Msg += "; kloop apply edits only code clang can read:";
    for (const std::string &E : Errors)
      Msg += "\n  " + E;
    return createStringError(inconvertibleErrorCode(), Msg);
  }
  for (const ParseDiagnostic &D : R.Diagnostics)
    St.BeforeDiags[parseKey(Job, S)].insert(diagKey(D));
  return Error::success();
}

/// An architecture's parse before the edit: its diagnostics, or, when it is unusable, a sentence saying so
/// (that architecture then goes unchecked, as it would without this check).
void noteArchParse(PlanState &St, const CompileJob &Job, const ArchUnit &U, const ParseResult &R) {
  if (parseUnusable(R)) {
    auto Error = llvm::find_if(R.Diagnostics, [](const ParseDiagnostic &D) { return D.Level != "warning"; });
    St.ArchUnchecked.push_back(rootRelative(Job.File, Job, St.Opts.Root) + " is not checked under " + U.Arch +
                               ": its device side cannot be parsed there before the edit" +
                               (Error == R.Diagnostics.end() ? "" : " (" + rootRelative(*Error, Job, St.Opts.Root).str() + ")"));
    return;
  }
  St.ArchUnits.push_back(U);
  std::multiset<std::string> &Before = St.BeforeDiags[archKey(Job, U)];
  for (const ParseDiagnostic &D : R.Diagnostics)
    Before.insert(diagKey(D));
}

} // namespace

std::pair<size_t, Side> parseUnit(size_t U, size_t NJobs) {
  return {U % NJobs, U < NJobs ? Side::Host : Side::Device};
}

size_t scheduledUnit(size_t I, size_t NJobs, size_t NArchs) {
  if (I < NJobs)
    return I;
  if (I < NJobs + NArchs)
    return 2 * NJobs + (I - NJobs);
  return I - NArchs;
}

std::vector<size_t> unitsInJobOrder(size_t NJobs) {
  std::vector<size_t> Out;
  for (size_t J = 0; J < NJobs; ++J)
    Out.insert(Out.end(), {J, NJobs + J});
  return Out;
}

const Entity *PlanContext::kernelOfParam(const Entity &P) const {
  const auto *PD = dyn_cast_or_null<ParmVarDecl>(P.D);
  const Decl *Fn = PD ? dyn_cast<Decl>(PD->getDeclContext()) : nullptr;
  for (const Entity &K : All)
    if (Fn && K.Kind == EntityKind::Kernel && K.D == Fn)
      return &K;
  return owner(P);
}

std::optional<std::string> PlanContext::otherDefinition(const Entity &Kernel) const {
  if (W == Side::Host || !Kernel.D)
    return std::nullopt;
  std::string Here = definitionKey(*Kernel.D, SM);
  for (const ArchFact *F : archFacts(Kernel))
    if (!F->Definition.empty() && F->Definition != Here)
      return F->Arch;
  std::lock_guard<std::mutex> L(St.M);
  auto It = St.HostKernels.find(parseKey(Job, Side::Host));
  if (It != St.HostKernels.end() && !It->second.count(Here))
    return std::string("the host side");
  return std::nullopt;
}

/// What names kernel or parameter \p E alike in every architecture's parse: the kernel's mangled names
/// (the inventory's "mangled", one per instantiation) where it has them (an overload that only one architecture defines shifts the inventory IDs of the others),
/// else its ID; a parameter's after its kernel's, with the parameter's part of the ID (`/param:tmp`).
std::string archFactKey(const Entity &E, const PlanContext &C) {
  const Entity *K = E.Kind == EntityKind::Kernel ? &E : C.kernelOfParam(E);
  if (!K)
    return E.ID;
  const nlohmann::json &Mangled = K->Data.contains("mangled") ? K->Data["mangled"] : nlohmann::json();
  bool Named = Mangled.is_array() && !Mangled.empty(); // one name per instantiation
  std::string Key = Named ? "mangled:" + dumpJSON(Mangled) : K->ID;
  return K == &E ? Key : Key + E.ID.substr(E.ID.rfind('/'));
}

/// \p F is declared `__host__ __device__` in the source, not implicitly (a lambda).
static bool writtenHostDevice(const FunctionDecl &F) {
  const auto *D = F.getAttr<CUDADeviceAttr>();
  const auto *H = F.getAttr<CUDAHostAttr>();
  return D && H && !D->isImplicit() && !H->isImplicit();
}

std::map<std::string, std::string> PlanContext::deviceLaunches() const {
  if (DeviceLaunches)
    return *DeviceLaunches;
  struct Finder : RecursiveASTVisitor<Finder> {
    const PlanContext &C;
    std::map<std::string, std::string> At;
    explicit Finder(const PlanContext &C) : C(C) {}
    bool VisitCUDAKernelCallExpr(CUDAKernelCallExpr *E) {
      const FunctionDecl *In = enclosingFunction(*E, C.astContext());
      // A function written `__host__ __device__` launches from device code when device code calls it, with
      // its device callers' pointers, and its device body may differ (`#ifdef __CUDA_ARCH__`): what the
      // host-side alias check reads is not what runs there. A lambda is `__host__ __device__` implicitly;
      // one in host code launches on the host side, where the alias check reads it.
      if (In && (isDeviceOnly(*In) || writtenHostDevice(*In)))
        At.emplace(kernelReferenced(stripCasts(E->getCallee()), C.astContext()), lineOf(*E, C));
      return true;
    }
  } F(*this);
  F.TraverseDecl(Ctx.getTranslationUnitDecl());
  DeviceLaunches = F.At;
  return F.At;
}

std::optional<std::string> PlanContext::deviceLaunchOf(const std::string &Kernel) const {
  std::map<std::string, std::string> At = deviceLaunches();
  auto It = At.find(Kernel);
  return It == At.end() ? std::nullopt : std::optional(It->second);
}

std::vector<const ArchFact *> PlanContext::archFacts(const Entity &E) const {
  std::vector<const ArchFact *> Out;
  std::lock_guard<std::mutex> L(St.M);
  auto J = St.ArchFacts.find(parseKey(Job, Side::Device));
  if (W != Side::Device || J == St.ArchFacts.end())
    return Out;
  if (auto It = J->second.find(archFactKey(E, *this)); It != J->second.end())
    for (const auto &[Index, F] : It->second)
      Out.push_back(&F);
  return Out;
}

std::vector<ArchFact> PlanContext::factsUnderEveryArch(const Entity &E) const {
  std::optional<std::string> Launch = E.Kind == EntityKind::Kernel ? deviceLaunchOf(E.ID) : std::nullopt;
  std::vector<ArchFact> Out{{"", E.Data, Launch, ""}};
  for (const ArchFact *F : archFacts(E))
    Out.push_back(*F);
  return Out;
}

Error planEdits(PlanState &St, const std::vector<CompileJob> &Jobs, const FrontendOptions &FOpts) {
  for (const CompileJob &Job : Jobs)
    if (Job.Error)
      return createStringError(inconvertibleErrorCode(), Job.File + ": " + *Job.Error);
  size_t N = Jobs.size();
  St.Units.assign(2 * N, {});
  St.HostsPending = N;
  std::vector<ArchUnit> Archs = archUnits(Jobs, FOpts);
  St.ArchsPending = readsArchFacts(St.P) ? Archs.size() : 0;
  std::vector<ParseResult> Results(2 * N + Archs.size()); // the architectures' parses last
  parallelFor(Results.size(), FOpts.Jobs, [&](size_t I) {
    size_t U = scheduledUnit(I, N, Archs.size());
    if (U >= 2 * N) {
      Results[U] = planArchParse(St, Jobs[Archs[U - 2 * N].Job], Archs[U - 2 * N], U - 2 * N, FOpts);
      return;
    }
    auto [J, S] = parseUnit(U, N);
    Results[U] = planParse(St, Jobs[J], S, U, FOpts);
  });
  foldUnitPlans(St, N);
  St.FilesRead.assign(N, std::set<std::string>());
  for (size_t U = 0; U < 2 * N; ++U) {
    std::optional<std::set<std::string>> &Read = St.FilesRead[parseUnit(U, N).first];
    if (Read && !Results[U].UsedPreamble)
      Read->insert(Results[U].InputFiles.begin(), Results[U].InputFiles.end());
    else
      Read.reset();
  }
  for (size_t A = 0; A < Archs.size(); ++A)
    noteArchParse(St, Jobs[Archs[A].Job], Archs[A], Results[2 * N + A]);
  for (size_t U : unitsInJobOrder(N)) {
    auto [J, S] = parseUnit(U, N);
    Error E = notePlanParse(St, Jobs[J], S, Results[U]);
    if (E && !St.Opts.DropRefused)
      return E;
    if (E && !St.Unparsed.count(J))
      St.Unparsed[J] = toString(std::move(E));
    consumeError(std::move(E));
  }
  return Error::success();
}

} // namespace edit
} // namespace kloop
