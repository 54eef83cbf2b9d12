//===- Preamble.cpp - Parses that share their headers ---------------------===//
#include "kloop/Frontend/Preamble.h"
#include "NvccCompat.h"
#include "kloop/Frontend/Frontend.h"

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/DiagnosticLex.h"
#include "clang/Basic/FileManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Frontend/PrecompiledPreamble.h"
#include "clang/Lex/PPCallbacks.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Sema/Sema.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/VirtualFileSystem.h"

using namespace clang;
using namespace llvm;

namespace kloop {

struct PreambleCache::Stored {
  PrecompiledPreamble P;
  /// Where its build left `__COUNTER__`: a parse that loads the preamble starts from 0 otherwise, and
  /// CCCL's and cooperative groups' headers advance it.
  unsigned Counter;
};

struct PreambleCache::Entry {
  std::shared_ptr<const Stored> P;
  /// Its preamble may hold the main file's leading system includes (preambleBounds); cleared when a
  /// build with them failed, so that the next holds only the implicit includes.
  bool MainFileText = true;
  /// A parse is building it; others run without one meanwhile.
  bool Building = false;
  /// Its build failed or reported a diagnostic: not tried again.
  bool Failed = false;
};

PreambleCache::PreambleCache(uint64_t MaxBytes) : MaxBytes(MaxBytes) {}
PreambleCache::~PreambleCache() = default;

uint64_t PreambleCache::heldBytes() const {
  uint64_t N = 0;
  for (const auto &[Key, E] : Entries)
    if (E->P)
      N += E->P->P.getSize();
  return N;
}

PreambleCache::Counts PreambleCache::counts() const {
  std::lock_guard<std::mutex> L(M);
  Counts Out = C;
  Out.Bytes = heldBytes();
  return Out;
}

std::shared_ptr<PreambleCache::Entry> PreambleCache::entry(const std::string &Key, bool Make) {
  auto It = Entries.find(Key);
  if (It != Entries.end())
    return It->second;
  if (!Make)
    return nullptr;
  return Entries[Key] = std::make_shared<Entry>();
}

void PreambleCache::drop(const std::string &Key) {
  std::lock_guard<std::mutex> L(M);
  if (std::shared_ptr<Entry> E = entry(Key, /*Make=*/false)) {
    E->P = nullptr;
    E->Failed = true;
  }
}

void PreambleCache::keepOnly(llvm::StringRef Directory) {
  std::lock_guard<std::mutex> L(M);
  for (auto It = Entries.begin(); It != Entries.end();) // a parse that holds a preamble keeps it alive
    It = !It->second->Building && StringRef(It->first).split('\0').first != Directory ? Entries.erase(It)
                                                                                     : std::next(It);
}

namespace {

/// A preamble that holds none of the main file.
PreambleBounds noMainFileText() { return PreambleBounds(0, /*PreambleEndsAtStartOfLine=*/true); }

/// True for a line that is only `#include <name>`, with blanks and a trailing `//` comment.
bool isAngledInclude(StringRef Line) {
  Line = Line.trim();
  if (!Line.consume_front("#"))
    return false;
  Line = Line.ltrim();
  if (!Line.consume_front("include"))
    return false;
  Line = Line.ltrim();
  if (!Line.consume_front("<"))
    return false;
  size_t Close = Line.find('>');
  if (Close == StringRef::npos || Close == 0)
    return false;
  StringRef Rest = Line.drop_front(Close + 1).trim();
  return Rest.empty() || Rest.starts_with("//");
}

/// The main file's text that may go into its preamble: the leading lines that are blank, `//` comments or
/// `#include <name>`, up to the end of the last such include. Anything else ends it: a `#define` (the
/// inventory records the main file's macros as the parse defines them), a quoted include, a block comment,
/// a line with a backslash or a carriage return that does not end it.
/// Whether each include named there is a system header is checked when the preamble is built.
PreambleBounds leadingAngledIncludes(StringRef Main) {
  size_t End = 0, At = 0;
  while (At < Main.size()) {
    size_t NL = Main.find('\n', At);
    size_t Next = NL == StringRef::npos ? Main.size() : NL + 1;
    StringRef Line = Main.slice(At, Next).rtrim("\r\n");
    StringRef T = Line.trim();
    // A backslash (or the trigraph for one) may continue the line, and a lone carriage return ends one
    // for clang: such lines are not read here, so they end the text.
    if (Line.contains('\\') || Line.contains('\r') || Line.contains("??/"))
      break;
    if (isAngledInclude(Line)) {
      if (NL == StringRef::npos)
        break; // an include on the last line without a newline: left out
      End = Next;
    } else if (!T.empty() && !T.starts_with("//")) {
      break;
    }
    At = Next;
  }
  return PreambleBounds(End, /*PreambleEndsAtStartOfLine=*/true);
}

/// The bounds a preamble of \p CI gets for main file \p Main: its leading system includes, or none when
/// kloop's deferred `-D` macros must be defined before them (they are processed after the preamble).
PreambleBounds preambleBounds(const CompilerInvocation &CI, const MemoryBuffer &Main, bool MainFileText) {
  if (!MainFileText || llvm::is_contained(CI.getPreprocessorOpts().Includes, commandLineMacrosPath().str()))
    return noMainFileText();
  return leadingAngledIncludes(Main.getBuffer());
}

/// What a preamble's build did that a parse loading it would not see the same way: whether it entered a
/// user file (a header found outside the system include directories, such as a `-I` directory that
/// shadows a system header), whose macros the inventory would miss; where it left `__COUNTER__`.
class PreambleBuildCheck : public PreambleCallbacks {
public:
  bool EnteredUserFile = false;
  unsigned Counter = 0;
  void BeforeExecute(CompilerInstance &CI) override { SM = &CI.getSourceManager(); }
  void AfterExecute(CompilerInstance &CI) override { Counter = CI.getPreprocessor().getCounterValue(); }
  std::unique_ptr<PPCallbacks> createPPCallbacks() override { return std::make_unique<Watch>(*this); }

private:
  SourceManager *SM = nullptr;
  struct Watch : PPCallbacks {
    explicit Watch(PreambleBuildCheck &C) : C(C) {}
    void FileChanged(SourceLocation Loc, FileChangeReason Reason, SrcMgr::CharacteristicKind Kind,
                     FileID) override {
      if (Reason != EnterFile || Kind != SrcMgr::C_User || !C.SM)
        return;
      FileID F = C.SM->getFileID(Loc);
      OptionalFileEntryRef E = C.SM->getFileEntryRefForID(F);
      if (F != C.SM->getMainFileID() && E && E->getName() != nvccCompatHeaderPath())
        C.EnteredUserFile = true;
    }
    PreambleBuildCheck &C;
  };
};

/// Counts the warnings and errors a preamble build reports (system headers' are not reported).
class CountingDiags : public DiagnosticConsumer {
public:
  unsigned N = 0;
  void HandleDiagnostic(DiagnosticsEngine::Level Level, const Diagnostic &Info) override {
    DiagnosticConsumer::HandleDiagnostic(Level, Info);
    if (Level >= DiagnosticsEngine::Warning)
      ++N;
  }
};

/// The main file of \p CI as the parse reads it through \p Files (mapped files and kloop's launch
/// chevron rewrite included); null when it cannot be read (the parse then reports why).
std::unique_ptr<MemoryBuffer> mainFileBuffer(const CompilerInvocation &CI, FileManager &Files) {
  const clang::FrontendOptions &FO = CI.getFrontendOpts();
  if (FO.Inputs.size() != 1 || !FO.Inputs[0].isFile())
    return nullptr;
  ErrorOr<std::unique_ptr<MemoryBuffer>> B = Files.getVirtualFileSystem().getBufferForFile(FO.Inputs[0].getFile());
  return B ? std::move(*B) : nullptr;
}

/// The preamble of \p CI: its implicit includes up to kloop's deferred `-D` macros, which stay out so
/// that the parse's preprocessor callbacks see them, then \p Bounds of the main file. Null when clang
/// cannot build it, reports a warning or an error while doing so, or enters a user file.
std::shared_ptr<const PreambleCache::Stored> buildPreamble(const CompilerInvocation &CI, const MemoryBuffer &Main,
                                                         PreambleBounds Bounds, FileManager &Files,
                                                         std::shared_ptr<PCHContainerOperations> PCHOps) {
  CompilerInvocation PCI(CI);
  std::vector<std::string> &Includes = PCI.getPreprocessorOpts().Includes;
  auto Macros = llvm::find(Includes, commandLineMacrosPath().str());
  Includes.erase(Macros, Includes.end());
  CountingDiags Counter;
  IntrusiveRefCntPtr<DiagnosticsEngine> DE = CompilerInstance::createDiagnostics(
      Files.getVirtualFileSystem(), PCI.getDiagnosticOpts(), &Counter, /*ShouldOwnClient=*/false);
  PreambleBuildCheck Callbacks;
  ErrorOr<PrecompiledPreamble> P =
      PrecompiledPreamble::Build(PCI, &Main, Bounds, DE, Files.getVirtualFileSystemPtr(), std::move(PCHOps),
                                 /*StoreInMemory=*/true, /*StoragePath=*/"", Callbacks);
  if (!P || Counter.N || Callbacks.EnteredUserFile)
    return nullptr;
  return std::make_shared<const PreambleCache::Stored>(PreambleCache::Stored{std::move(*P), Callbacks.Counter});
}

} // namespace

std::shared_ptr<const PreambleCache::Stored> PreambleCache::acquire(const std::string &Key, bool OnDisk,
                                                                  const CompilerInvocation &Invocation,
                                                                  const MemoryBuffer &Main, FileManager &Files,
                                                                  std::shared_ptr<PCHContainerOperations> PCHOps) {
  std::shared_ptr<Entry> E;
  std::shared_ptr<const Stored> Have;
  bool MainFileText;
  {
    std::lock_guard<std::mutex> L(M);
    // A parse of mapped files cannot build one: it makes no entry.
    E = entry(Key, OnDisk);
    if (!E) {
      ++C.Unused;
      return nullptr;
    }
    Have = E->P;
    MainFileText = E->MainFileText;
  }
  PreambleBounds Bounds = preambleBounds(Invocation, Main, MainFileText);
  // clang's check stats every file the preamble read: outside the lock.
  if (Have && Have->P.CanReuse(Invocation, Main.getMemBufferRef(), Bounds, Files.getVirtualFileSystem())) {
    std::lock_guard<std::mutex> L(M);
    ++C.Reused;
    return Have;
  }
  {
    std::lock_guard<std::mutex> L(M);
    if (!OnDisk || E->Building || E->Failed) {
      ++C.Unused;
      return nullptr;
    }
    E->Building = true;
  }
  // Built outside the lock: a crash in clang abandons this thread's frames (Frontend.h), and a
  // mutex held there would stop every other parse.
  std::shared_ptr<const Stored> Built = buildPreamble(Invocation, Main, Bounds, Files, PCHOps);
  if (!Built && Bounds.Size > 0) {
    MainFileText = false;
    Built = buildPreamble(Invocation, Main, noMainFileText(), Files, std::move(PCHOps));
  }
  std::lock_guard<std::mutex> L(M);
  E->Building = false;
  E->MainFileText = MainFileText;
  // Over the budget, the preamble is not kept, nor built again for this key.
  if (!Built || heldBytes() + Built->P.getSize() > MaxBytes) {
    E->Failed = true;
    ++C.Unused;
    return nullptr;
  }
  E->P = Built;
  ++C.Builds;
  ++C.Reused;
  return Built;
}

namespace {
/// Forwards a parse's diagnostics and notes a `#pragma pop_macro` that found nothing pushed: a push in
/// the preamble's headers, which a loaded preamble does not carry over.
class PopWatch : public ForwardingDiagnosticConsumer {
public:
  explicit PopWatch(DiagnosticConsumer &Target) : ForwardingDiagnosticConsumer(Target) {}
  bool Lost = false;
  void HandleDiagnostic(DiagnosticsEngine::Level Level, const Diagnostic &Info) override {
    if (Info.getID() == diag::warn_pragma_pop_macro_no_push)
      Lost = true;
    ForwardingDiagnosticConsumer::HandleDiagnostic(Level, Info);
  }
};

/// Runs the parse's action with `__COUNTER__` set, once the preamble is loaded, to where the preamble's
/// build left it.
class CounterRestore : public WrapperFrontendAction {
public:
  CounterRestore(std::unique_ptr<FrontendAction> Inner, unsigned Counter)
      : WrapperFrontendAction(std::move(Inner)), Counter(Counter) {}
  bool BeginSourceFileAction(CompilerInstance &CI) override {
    CI.getPreprocessor().setCounterValue(Counter);
    return WrapperFrontendAction::BeginSourceFileAction(CI);
  }

private:
  unsigned Counter;
};
} // namespace

bool PreambleCache::run(const std::string &Key, bool OnDisk, std::shared_ptr<CompilerInvocation> Invocation,
                        FileManager *Files, std::shared_ptr<PCHContainerOperations> PCHOps,
                        DiagnosticConsumer *Diags, std::unique_ptr<FrontendAction> Action, bool &UsedPreamble,
                        bool &StateLost) {
  IntrusiveRefCntPtr<vfs::FileSystem> VFS = Files->getVirtualFileSystemPtr();
  IntrusiveRefCntPtr<FileManager> FM(Files);
  // Both stay alive until the parse ends: clang reads the preamble and the main file from them.
  std::unique_ptr<MemoryBuffer> Main = mainFileBuffer(*Invocation, *Files);
  std::shared_ptr<const Stored> P = Main ? acquire(Key, OnDisk, *Invocation, *Main, *Files, PCHOps) : nullptr;
  UsedPreamble = P != nullptr;
  if (P) {
    P->P.AddImplicitPreamble(*Invocation, VFS, Main.get());
    Invocation->getPreprocessorOpts().RetainRemappedFileBuffers = true; // Main stays ours
    FM = new FileManager(Files->getFileSystemOpts(), VFS);
    Action = std::make_unique<CounterRestore>(std::move(Action), P->Counter);
  }
  PopWatch Watch(*Diags);
  CompilerInstance Compiler(std::move(Invocation), std::move(PCHOps));
  Compiler.setVirtualFileSystem(VFS);
  Compiler.setFileManager(FM);
  Compiler.createDiagnostics(&Watch, /*ShouldOwnClient=*/false);
  if (!Compiler.hasDiagnostics())
    return false;
  Compiler.createSourceManager();
  bool Ok = Compiler.ExecuteAction(*Action);
  FM->clearStatCache();
  StateLost = P && Watch.Lost;
  if (StateLost)
    drop(Key);
  return Ok;
}

} // namespace kloop
