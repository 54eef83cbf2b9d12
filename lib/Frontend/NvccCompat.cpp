//===- NvccCompat.cpp - kloop's nvcc compatibility layer ------------------===//
#include "NvccCompat.h"
#include "kloop/Frontend/Frontend.h"

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/DiagnosticAST.h"
#include "clang/Basic/DiagnosticSema.h"
#include "clang/Basic/LangOptions.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Frontend/MultiplexConsumer.h"
#include "clang/Basic/CharInfo.h"
#include "clang/Lex/Lexer.h"
#include "clang/Lex/PPCallbacks.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Sema/Sema.h"
#include "clang/Sema/SemaConsumer.h"
#include "clang/Options/Options.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Option/Arg.h"
#include "llvm/Option/ArgList.h"
#include "llvm/Support/MemoryBuffer.h"

#include <set>

using namespace llvm;
using namespace clang;

namespace kloop {

StringRef nvccCompatHeaderPath() { return "/kloop-builtin/nvcc_compat.cuh"; }

StringRef nvccCompatHeaderText() {
  static const char Text[] =
#include "NvccCompatHeader.inc"
      ;
  return StringRef(Text, sizeof(Text) - 1);
}

namespace {

/// A token of the raw lexer, by offset.
struct RawToken {
  tok::TokenKind Kind;
  size_t Begin, End;
  StringRef Text;
};

std::vector<RawToken> lexRaw(StringRef Source) {
  LangOptions LO;
  LO.CPlusPlus = LO.CPlusPlus11 = LO.CPlusPlus14 = LO.CPlusPlus17 = 1;
  LO.CUDA = 1;
  Lexer L(SourceLocation(), LO, Source.begin(), Source.begin(), Source.end());
  std::vector<RawToken> Out;
  Token T;
  while (true) {
    L.LexFromRawLexer(T);
    if (T.is(tok::eof))
      break;
    size_t Begin = T.getLocation().getRawEncoding();
    Out.push_back({T.getKind(), Begin, Begin + T.getLength(), Source.substr(Begin, T.getLength())});
  }
  return Out;
}

bool onlyChars(StringRef S, StringRef Allowed) {
  return !S.empty() && S.find_first_not_of(Allowed) == StringRef::npos;
}

/// Tokens \p A and \p B (adjacent) are one chevron that nvcc reads with blanks in it.
bool spacedPair(StringRef Src, const RawToken &A, tok::TokenKind AK, const RawToken &B,
                tok::TokenKind BK, StringRef Blanks) {
  return A.Kind == AK && B.Kind == BK && onlyChars(Src.slice(A.End, B.Begin), Blanks);
}

/// Index of the token that closes the launch configuration opened at \p Open (the `>>` of a
/// spaced `>> >`, or a `>>>`), when a `(` follows it; 0 when there is none.
size_t findClose(StringRef Src, const std::vector<RawToken> &T, size_t Open) {
  int Depth = 0;
  for (size_t J = Open; J + 1 < T.size(); ++J) {
    switch (T[J].Kind) {
    case tok::l_paren: case tok::l_square: case tok::l_brace: ++Depth; continue;
    case tok::r_paren: case tok::r_square: case tok::r_brace:
      if (--Depth < 0)
        return 0;
      continue;
    case tok::semi: return 0;
    default: break;
    }
    if (Depth)
      continue;
    if (T[J].Kind == tok::greatergreatergreater)
      return T[J + 1].Kind == tok::l_paren ? J : 0;
    if (J + 2 < T.size() && spacedPair(Src, T[J], tok::greatergreater, T[J + 1], tok::greater,
                                       " \t\r\n\v\f"))
      return T[J + 2].Kind == tok::l_paren ? J : 0;
  }
  return 0;
}

/// Moves the single-character token \p Third right after \p Pair, and the blanks after it.
void joinChevron(std::string &Out, const RawToken &Pair, const RawToken &Third) {
  std::string Blanks = Out.substr(Pair.End, Third.Begin - Pair.End);
  Out[Pair.End] = Out[Third.Begin];
  Out.replace(Pair.End + 1, Blanks.size(), Blanks);
}

} // namespace

/// True when \p Source has `<<` then blanks then `<`, or `>>` then whitespace then `>`: the
/// only texts worth lexing.
static bool mayHaveSpacedChevron(StringRef Source) {
  for (auto [Pair, Blanks] : {std::pair<StringRef, StringRef>{"<<", " \t"}, {">>", " \t\r\n\v\f"}})
    for (size_t Pos = Source.find(Pair); Pos != StringRef::npos; Pos = Source.find(Pair, Pos + 2)) {
      size_t After = Source.find_first_not_of(Blanks, Pos + 2);
      if (After != Pos + 2 && After != StringRef::npos && Source[After] == Pair[0])
        return true;
    }
  return false;
}

/// Length of the launch opener at \p T[I]: 1 for `<<<`, 2 for a spaced `<< <` (not after
/// `operator`), 0 for anything else.
static size_t launchOpener(StringRef Src, const std::vector<RawToken> &T, size_t I) {
  if (T[I].Kind == tok::lesslessless)
    return 1;
  if (I + 1 < T.size() && spacedPair(Src, T[I], tok::lessless, T[I + 1], tok::less, " \t") &&
      !(I > 0 && T[I - 1].Kind == tok::raw_identifier && T[I - 1].Text == "operator"))
    return 2;
  return 0;
}

std::optional<std::string> normalizeLaunchChevrons(StringRef Source) {
  if (!mayHaveSpacedChevron(Source))
    return std::nullopt;
  std::vector<RawToken> T = lexRaw(Source);
  std::string Out = Source.str();
  bool Changed = false;
  for (size_t I = 0; I < T.size(); ++I) {
    size_t Open = launchOpener(Source, T, I);
    size_t Close = Open ? findClose(Source, T, I + Open) : 0;
    if (!Close)
      continue;
    if (Open == 2)
      joinChevron(Out, T[I], T[I + 1]);
    if (T[Close].Kind == tok::greatergreater)
      joinChevron(Out, T[Close], T[Close + 1]);
    Changed |= Open == 2 || T[Close].Kind == tok::greatergreater;
    I = Close;
  }
  if (!Changed)
    return std::nullopt;
  return Out;
}

/// The length of the object-like `#define NAME ` prefix of \p Line (up to its body), or 0 when the
/// line is not such a directive.
static size_t objectMacroBodyStart(StringRef Line) {
  StringRef Rest = Line.ltrim(" \t");
  if (!Rest.consume_front("#"))
    return 0;
  Rest = Rest.ltrim(" \t");
  if (!Rest.consume_front("define") || Rest.empty() || (Rest[0] != ' ' && Rest[0] != '\t'))
    return 0;
  Rest = Rest.ltrim(" \t");
  size_t Name = 0;
  while (Name < Rest.size() && (isalnum(static_cast<unsigned char>(Rest[Name])) || Rest[Name] == '_'))
    ++Name;
  if (!Name || Name == Rest.size() || (Rest[Name] != ' ' && Rest[Name] != '\t'))
    return 0; // no name, no body, or a function-like macro's parameter list
  return Line.size() - Rest.drop_front(Name).ltrim(" \t").size();
}

std::optional<std::string> normalizePragmaMacros(StringRef Source) {
  static constexpr StringRef Pragma = "#pragma unroll", Stand = "__kloop_unroll";
  static_assert(Pragma.size() == Stand.size(), "the rewrite keeps every offset");
  if (!Source.contains(Pragma))
    return std::nullopt;
  std::string Out = Source.str();
  bool Changed = false;
  for (size_t Pos = 0; Pos < Source.size();) {
    size_t End = Source.find('\n', Pos);
    StringRef Line = Source.slice(Pos, End == StringRef::npos ? Source.size() : End);
    size_t Body = objectMacroBodyStart(Line);
    if (Body && Line.drop_front(Body).rtrim(" \t\r") == Pragma) {
      Out.replace(Pos + Body, Pragma.size(), Stand.str());
      Changed = true;
    }
    if (End == StringRef::npos)
      break;
    Pos = End + 1;
  }
  return Changed ? std::optional<std::string>(std::move(Out)) : std::nullopt;
}

namespace {

/// A file whose contents were read already (possibly rewritten).
class BufferFile : public vfs::File {
public:
  BufferFile(vfs::Status S, std::unique_ptr<MemoryBuffer> B) : S(std::move(S)), B(std::move(B)) {}
  ErrorOr<vfs::Status> status() override { return S; }
  /// Hands the contents over (clang's FileManager reads an opened file once).
  ErrorOr<std::unique_ptr<MemoryBuffer>> getBuffer(const Twine &, int64_t, bool, bool) override {
    if (!B)
      return std::make_error_code(std::errc::io_error);
    return std::move(B);
  }
  std::error_code close() override { return {}; }

private:
  vfs::Status S;
  std::unique_ptr<MemoryBuffer> B;
};

/// Serves every file through normalizeLaunchChevrons() and normalizePragmaMacros().
class LaunchChevronFS : public vfs::ProxyFileSystem {
public:
  using ProxyFileSystem::ProxyFileSystem;
  ErrorOr<std::unique_ptr<vfs::File>> openFileForRead(const Twine &Path) override {
    auto F = ProxyFileSystem::openFileForRead(Path);
    if (!F)
      return F;
    ErrorOr<vfs::Status> S = (*F)->status();
    if (!S)
      return F;
    auto Buf = (*F)->getBuffer(Path, S->getSize(), /*RequiresNullTerminator=*/true,
                               /*IsVolatile=*/false);
    if (!Buf)
      return Buf.getError();
    std::optional<std::string> Fixed = normalizeLaunchChevrons((*Buf)->getBuffer());
    if (std::optional<std::string> Pragmas = normalizePragmaMacros(Fixed ? StringRef(*Fixed) : (*Buf)->getBuffer()))
      Fixed = std::move(Pragmas);
    if (!Fixed)
      return std::make_unique<BufferFile>(*S, std::move(*Buf));
    return std::make_unique<BufferFile>(
        *S, MemoryBuffer::getMemBufferCopy(*Fixed, (*Buf)->getBufferIdentifier()));
  }
};

} // namespace

IntrusiveRefCntPtr<vfs::FileSystem> withNvccCompat(IntrusiveRefCntPtr<vfs::FileSystem> Base,
                                                   StringRef CommandLineMacros) {
  IntrusiveRefCntPtr<vfs::OverlayFileSystem> Overlay(new vfs::OverlayFileSystem(Base));
  IntrusiveRefCntPtr<vfs::InMemoryFileSystem> Mem(new vfs::InMemoryFileSystem);
  Mem->addFile(nvccCompatHeaderPath(), 0,
               MemoryBuffer::getMemBuffer(nvccCompatHeaderText(), nvccCompatHeaderPath()));
  if (!CommandLineMacros.empty())
    Mem->addFile(commandLineMacrosPath(), 0,
                 MemoryBuffer::getMemBufferCopy(CommandLineMacros, commandLineMacrosPath()));
  Overlay->pushOverlay(Mem);
  return IntrusiveRefCntPtr<vfs::FileSystem>(new LaunchChevronFS(Overlay));
}

StringRef commandLineMacrosPath() { return "/kloop-builtin/command-line-macros.h"; }

bool macroConfiguresHeaders(StringRef Name) {
  if (Name.starts_with("_") || Name == "NDEBUG" || Name == "NOMINMAX" || Name == "QUALIFIERS")
    return true;
  return llvm::any_of(ArrayRef<StringRef>{"CUDA_", "CUDART_", "CURAND_", "NV_", "PSTL_"},
                      [&](StringRef P) { return Name.starts_with(P); });
}

namespace {

/// One -D or -U flag of a command line: where it is and the directive it stands for.
struct MacroFlag {
  size_t Index = 0, Count = 1; // argv entries it takes (2 for `-D NAME`)
  std::string Directive;       // "#define N 64", "#undef X"
  std::string Name;
};

/// The -D/-U flags of \p CommandLine (argv[0] included), read with clang's driver option table
/// so that the values of other options are never mistaken for them.
std::vector<MacroFlag> macroFlags(const std::vector<std::string> &CommandLine) {
  std::vector<const char *> Ptrs;
  for (size_t I = 1; I < CommandLine.size(); ++I)
    Ptrs.push_back(CommandLine[I].c_str());
  unsigned MissingIndex = 0, MissingCount = 0;
  opt::InputArgList List = clang::getDriverOptTable().ParseArgs(
      Ptrs, MissingIndex, MissingCount, opt::Visibility(clang::options::ClangOption));
  std::vector<MacroFlag> Out;
  for (const opt::Arg *A : List.filtered(clang::options::OPT_D, clang::options::OPT_U)) {
    MacroFlag F;
    F.Index = A->getIndex() + 1;
    F.Count = StringRef(CommandLine[F.Index]) == A->getSpelling() ? 2 : 1;
    StringRef Value = A->getValue();
    F.Name = Value.take_until([](char C) { return C == '=' || C == '('; }).str();
    if (A->getOption().matches(clang::options::OPT_U)) {
      F.Directive = "#undef " + Value.str();
    } else {
      // As clang's driver (and GCC) read -D: NAME=BODY, NAME alone is 1, the body ends at a newline.
      auto [Head, Body] = Value.split('=');
      F.Directive = "#define " + Head.str() + " " +
                    (Value.contains('=') ? Body.take_until([](char C) { return C == '\n' || C == '\r'; }).str()
                                         : std::string("1"));
    }
    Out.push_back(std::move(F));
  }
  return Out;
}

} // namespace

DeferredMacros deferCommandLineMacros(const std::vector<std::string> &CommandLine) {
  DeferredMacros D;
  std::vector<bool> Drop(CommandLine.size(), false);
  for (const MacroFlag &F : macroFlags(CommandLine)) {
    if (macroConfiguresHeaders(F.Name))
      continue;
    if (D.Header.empty())
      D.Header = "#line 1 \"<command line>\"\n";
    D.Header += F.Directive + "\n";
    for (size_t I = F.Index; I < F.Index + F.Count && I < Drop.size(); ++I)
      Drop[I] = true;
  }
  if (D.Header.empty()) {
    D.CommandLine = CommandLine;
    return D;
  }
  size_t At = 1; // after argv[0], or after `-include <compatibility header>`
  for (size_t I = 1; I + 1 < CommandLine.size(); ++I)
    if (CommandLine[I] == "-include" && CommandLine[I + 1] == nvccCompatHeaderPath())
      At = I + 2;
  for (size_t I = 0; I < CommandLine.size(); ++I) {
    if (I == At) {
      D.CommandLine.push_back("-include");
      D.CommandLine.push_back(commandLineMacrosPath().str());
    }
    if (!Drop[I])
      D.CommandLine.push_back(CommandLine[I]);
  }
  if (At >= CommandLine.size()) {
    D.CommandLine.push_back("-include");
    D.CommandLine.push_back(commandLineMacrosPath().str());
  }
  return D;
}

namespace {
/// The Sema of the parse running on this thread (set by SemaWatch's consumer while it lives).
thread_local const Sema *ParsingSema = nullptr;

/// Hands the parse's Sema to ParsingSema.
class SemaWatcher : public SemaConsumer {
public:
  ~SemaWatcher() override { ForgetSema(); }
  void InitializeSema(Sema &S) override { ParsingSema = &S; }
  void ForgetSema() override { ParsingSema = nullptr; }
};

/// Warns at each preprocessor condition of the project's code (not a system header) that tests a macro
/// one compiler defines and the other does not, so the branch kloop parses may not be the one nvcc builds
/// and a kernel under it would be missing from the inventory without a word:
/// - `__NVCC__`: nvcc defines it in both passes (`nvcc --dryrun` shows -D__NVCC__), kloop's clang parse
///   does not. kloop does not define it: CCCL would then take nvcc's built-ins.
/// - `__clang__` and `__CUDA__`: clang defines them, nvcc does not (its device pass never, its host pass
///   only with a clang host compiler, -ccbin clang++, and `__CUDA__` not even then). kloop cannot undefine
///   them: clang's own headers and CCCL pick clang's built-ins by them.
/// The message names the macro (%0) and which compiler defines it (%1).
constexpr char CompilerMacroWarning[] = "this condition tests %0, which %1: kloop reads the branch clang takes, which "
                                        "may not be the one nvcc builds (kernels there are not listed)";
/// The text CompilerMacroWarning's %1 takes for \p Name.
StringRef whoDefines(StringRef Name) {
  return Name == "__NVCC__"   ? "nvcc defines and kloop's clang parse does not"
         : Name == "__clang__" ? "kloop's clang parse defines and nvcc does not (but for its host pass with a clang "
                                 "host compiler)"
                               : "kloop's clang parse defines and nvcc does not";
}

class NvccMacroTests : public PPCallbacks {
public:
  explicit NvccMacroTests(Preprocessor &PP)
      : PP(PP), ID(PP.getDiagnostics().getCustomDiagID(DiagnosticsEngine::Warning, CompilerMacroWarning)) {}
  void If(SourceLocation Loc, SourceRange Cond, ConditionValueKind) override { check(Loc, Cond); }
  void Elif(SourceLocation Loc, SourceRange Cond, ConditionValueKind V, SourceLocation) override {
    if (V != CVK_NotEvaluated) // a branch before it was taken
      check(Loc, Cond);
  }
  void Ifdef(SourceLocation Loc, const Token &Name, const MacroDefinition &) override { check(Loc, Name); }
  void Ifndef(SourceLocation Loc, const Token &Name, const MacroDefinition &) override { check(Loc, Name); }
  void Elifdef(SourceLocation Loc, const Token &Name, const MacroDefinition &) override { check(Loc, Name); }
  void Elifndef(SourceLocation Loc, const Token &Name, const MacroDefinition &) override { check(Loc, Name); }
  /// A macro of a condition whose body tests it (`#define IS_NVCC defined(__NVCC__)`, `#if IS_NVCC`).
  void MacroExpands(const Token &, const MacroDefinition &MD, SourceRange Range, const MacroArgs *) override {
    const MacroInfo *MI = MD.getMacroInfo();
    if (!PP.isParsingIfOrElifDirective() || !MI)
      return;
    for (const Token &T : MI->tokens())
      if (T.getIdentifierInfo() && isCompilerMacro(T.getIdentifierInfo()->getName()))
        return warn(Range.getBegin(), T.getIdentifierInfo()->getName());
  }

private:
  Preprocessor &PP;
  unsigned ID;
  std::set<std::pair<FileID, unsigned>> Warned; ///< lines warned at

  static bool isCompilerMacro(StringRef Name) {
    return Name == "__NVCC__" || Name == "__clang__" || Name == "__CUDA__";
  }
  void check(SourceLocation Loc, const Token &Name) {
    if (Name.getIdentifierInfo() && isCompilerMacro(Name.getIdentifierInfo()->getName()))
      warn(Loc, Name.getIdentifierInfo()->getName());
  }
  /// The condition's identifiers, read by the raw lexer (so a comment that mentions the name does not count).
  void check(SourceLocation Loc, SourceRange Cond) {
    const SourceManager &SM = PP.getSourceManager();
    CharSourceRange R = CharSourceRange::getTokenRange(Cond);
    StringRef Text = Lexer::getSourceText(R, SM, PP.getLangOpts());
    if (!Text.contains("__NVCC__") && !Text.contains("__clang__") && !Text.contains("__CUDA__"))
      return;
    std::string Copy = Text.str();
    Lexer L(SM.getExpansionLoc(Cond.getBegin()), PP.getLangOpts(), Copy.data(), Copy.data(), Copy.data() + Copy.size());
    for (Token T; !T.is(tok::eof);) {
      bool AtEnd = L.LexFromRawLexer(T);
      if (T.is(tok::raw_identifier) && isCompilerMacro(T.getRawIdentifier()))
        return warn(Loc, T.getRawIdentifier());
      if (AtEnd)
        return;
    }
  }
  void warn(SourceLocation Loc, StringRef Name) {
    const SourceManager &SM = PP.getSourceManager();
    SourceLocation At = SM.getExpansionLoc(Loc);
    if (SM.isInSystemHeader(At) || !Warned.insert({SM.getFileID(At), SM.getExpansionLineNumber(At)}).second)
      return;
    PP.getDiagnostics().Report(At, ID) << Name << whoDefines(Name);
  }
};

/// The wrapped action, with a SemaWatcher beside its AST consumer and NvccMacroTests on its preprocessor.
class SemaWatch : public WrapperFrontendAction {
public:
  using WrapperFrontendAction::WrapperFrontendAction;

protected:
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &CI, StringRef InFile) override {
    std::unique_ptr<ASTConsumer> Inner = WrapperFrontendAction::CreateASTConsumer(CI, InFile);
    if (!Inner)
      return nullptr;
    CI.getPreprocessor().addPPCallbacks(std::make_unique<NvccMacroTests>(CI.getPreprocessor()));
    std::vector<std::unique_ptr<ASTConsumer>> Both;
    Both.push_back(std::move(Inner));
    Both.push_back(std::make_unique<SemaWatcher>());
    return std::make_unique<MultiplexConsumer>(std::move(Both));
  }
};

/// True when \p L lies in \p R (expansion locations, in translation-unit order).
bool contains(const SourceManager &SM, SourceRange R, SourceLocation L) {
  SourceLocation B = SM.getExpansionLoc(R.getBegin()), E = SM.getExpansionLoc(R.getEnd());
  return R.isValid() && !SM.isBeforeInTranslationUnit(L, B) && !SM.isBeforeInTranslationUnit(E, L);
}

/// The function definition (a template's pattern included) of \p DC or of the namespaces and classes
/// in it whose text holds \p L; nullptr when none does.
const FunctionDecl *definitionAt(const DeclContext &DC, SourceLocation L, const SourceManager &SM) {
  for (const Decl *D : DC.decls()) {
    if (!contains(SM, D->getSourceRange(), L))
      continue;
    if (const auto *T = dyn_cast<TemplateDecl>(D))
      D = T->getTemplatedDecl();
    if (const auto *F = dyn_cast_or_null<FunctionDecl>(D))
      return F->doesThisDeclarationHaveABody() ? F : nullptr;
    if (const auto *Inner = dyn_cast_or_null<DeclContext>(D); Inner && isa<NamespaceDecl, RecordDecl, LinkageSpecDecl>(D))
      return definitionAt(*Inner, L, SM);
  }
  return nullptr;
}

/// True for a `__host__ __device__` function asked for from the body of a device-only function (its
/// point of instantiation \p At; a later use from host code is not seen).
bool askedByDeviceCode(const Sema &S, const FunctionDecl &F, SourceLocation At) {
  if (!F.hasAttr<CUDAHostAttr>() || !F.hasAttr<CUDADeviceAttr>())
    return false;
  At = S.getSourceManager().getExpansionLoc(At);
  const FunctionDecl *From =
      At.isValid() ? definitionAt(*S.getASTContext().getTranslationUnitDecl(), At, S.getSourceManager()) : nullptr;
  return From && isDeviceOnly(*From);
}

/// The outermost function whose body clang is instantiating in \p S that nvcc's host pass would not
/// instantiate: a device-only one (a kernel template that a host template launches included), or a
/// `__host__ __device__` one that device code asked for. nullptr when there is none.
const FunctionDecl *deviceInstantiation(const Sema &S) {
  for (const Sema::CodeSynthesisContext &C : S.CodeSynthesisContexts) {
    const auto *F = dyn_cast_or_null<FunctionDecl>(C.Entity);
    if (C.Kind == Sema::CodeSynthesisContext::TemplateInstantiation && F &&
        (isDeviceOnly(*F) || askedByDeviceCode(S, *F, C.PointOfInstantiation)))
      return F;
  }
  return nullptr;
}

/// For an error of a host-side parse raised while clang instantiates the body of a function nvcc's host
/// pass never instantiates (deviceInstantiation), the note kloop appends.
std::optional<std::string> hostInstantiationOfDeviceCode(const Diagnostic &Info) {
  const Sema *S = ParsingSema;
  if (!S || &S->getDiagnostics() != Info.getDiags() || !S->getLangOpts().CUDA || S->getLangOpts().CUDAIsDevice)
    return std::nullopt;
  if (const FunctionDecl *F = deviceInstantiation(*S))
    return " (nvcc's host pass does not instantiate '" + F->getQualifiedNameAsString() +
           "', which only device code uses; its device pass does)";
  return std::nullopt;
}
} // namespace

bool isDeviceOnly(const FunctionDecl &F) {
  return F.hasAttr<CUDAGlobalAttr>() || (F.hasAttr<CUDADeviceAttr>() && !F.hasAttr<CUDAHostAttr>());
}

std::unique_ptr<FrontendAction> withSemaWatch(std::unique_ptr<FrontendAction> Action) {
  return std::make_unique<SemaWatch>(std::move(Action));
}

bool isNvccMacroWarning(const ParseDiagnostic &D) {
  StringRef M = D.Message;
  return D.Level == "warning" && M.starts_with("this condition tests __") &&
         M.ends_with("which may not be the one nvcc builds (kernels there are not listed)");
}

std::optional<std::string> nvccAcceptedError(const Diagnostic &Info) {
  if (std::optional<std::string> Note = hostInstantiationOfDeviceCode(Info))
    return Note;
  if (Info.getID() == diag::err_asm_invalid_escape)
    return std::string(" (nvcc hands the asm text to ptxas as it is: %laneid, %tid.x and the like are PTX "
                       "special registers)");
  if (Info.getID() != diag::err_shared_var_init)
    return std::nullopt;
  // clang diagnoses the initializer's range; an implicit default construction has the
  // declared name's location as its whole range, a written one does not.
  for (const CharSourceRange &R : Info.getRanges())
    if (R.getBegin() != Info.getLocation() || R.getEnd() != Info.getLocation())
      return std::nullopt;
  return std::string(" (nvcc: warning 20054-D, the variable is not initialized)");
}

} // namespace kloop
