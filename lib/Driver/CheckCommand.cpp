//===- CheckCommand.cpp - `kloop check` ------------------------------------===//
//
// kloop check (--diff | --from-ref REF) [-p BUILD_DIR] [FILES...] [-- COMPILER ARGS]
// The builtin rules on the kernels a diff touches, as clang-style diagnostics with fix-its
// (docs/check.md); the pre-commit hook of .pre-commit-hooks.yaml.
//
//===----------------------------------------------------------------------===//
#include "kloop/Check/Check.h"
#include "kloop/Check/Gate.h"
#include "kloop/Driver/Command.h"
#include "kloop/Inventory/ExtractCache.h"
#include "kloop/Journal/Journal.h"
#include "kloop/Measure/Config.h"
#include "kloop/Measure/Measure.h"
#include "kloop/Measure/Runner.h"
#include "kloop/Support/AtomicFile.h"
#include "kloop/Support/Path.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/GlobPattern.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include <map>

using namespace llvm;
using kloop::check::Finding;

namespace {
cl::SubCommand CheckSub("check", "Builtin rules on the kernels a diff touches, as clang-style diagnostics "
                                 "with fix-its (a pre-commit pass)");
cl::list<std::string> Files(cl::Positional, cl::desc("<file>... (only their changes count)"), cl::sub(CheckSub));
cl::opt<bool> DiffStdin("diff", cl::desc("Read a unified diff from standard input"), cl::sub(CheckSub));
cl::opt<std::string> FromRef("from-ref", cl::desc("Check the changes of the working tree against this git ref"),
                             cl::value_desc("ref"), cl::sub(CheckSub));
cl::opt<unsigned> Strip("strip", cl::desc("Leading path components to strip from --diff's file names "
                                          "(patch -p; default 1, git's a/ and b/)"),
                        cl::init(1), cl::sub(CheckSub));
cl::opt<std::string> BuildPath("p", cl::desc("Build directory holding compile_commands.json"),
                               cl::value_desc("dir"), cl::sub(CheckSub));
cl::opt<std::string> ExportFixes("export-fixes",
                                 cl::desc("Write the findings and their fix-its as YAML for clang-apply-replacements"),
                                 cl::value_desc("file"), cl::sub(CheckSub));
cl::opt<bool> Fix("fix", cl::desc("Apply the fix-its in place (all files or none)"), cl::sub(CheckSub));
cl::opt<std::string> WarningsAsErrors(
    "warnings-as-errors",
    cl::desc("Findings of these rules are errors and make the exit status 1: comma-separated globs "
             "over 'kloop-<rule>' ('*': all)"),
    cl::value_desc("globs"), cl::sub(CheckSub));
cl::opt<std::string> JournalPath("journal",
                                 cl::desc("A kloop optimize journal: with a GPU, gate the touched kernels' "
                                          "performance on its baselines"),
                                 cl::value_desc("file"), cl::sub(CheckSub));
cl::opt<unsigned> Jobs("j", cl::desc("Translation units parsed in parallel (0: one per hardware thread)"),
                       cl::init(0), cl::Prefix, cl::sub(CheckSub));
cl::opt<std::string> CudaPath("cuda-path", cl::desc("CUDA installation (default: $CUDA_HOME, /usr/local/cuda)"),
                              cl::sub(CheckSub));
cl::opt<std::string> CacheDir("cache-dir", cl::desc("The extract cache (default: kloop extract's)"),
                              cl::value_desc("dir"), cl::sub(CheckSub));
cl::opt<bool> NoCache("no-cache", cl::desc("Parse every translation unit; read and write no cache"),
                      cl::sub(CheckSub));

int fail(const Twine &Why) {
  errs() << "kloop check: error: " << kloop::terminalSafe(Why.str()) << "\n";
  return 1;
}

/// The diff's text: standard input or `git diff REF`.
Expected<std::string> readDiff(StringRef Cwd) {
  if (!FromRef.empty())
    return kloop::check::gitDiff(FromRef, Cwd);
  ErrorOr<std::unique_ptr<MemoryBuffer>> B = MemoryBuffer::getSTDIN();
  if (!B)
    return createStringError(B.getError(), "cannot read the diff from standard input: " + B.getError().message());
  return (*B)->getBuffer().str();
}

/// The globs of --warnings-as-errors; an invalid one is an error naming it.
Expected<std::vector<GlobPattern>> errorGlobs() {
  std::vector<GlobPattern> Out;
  SmallVector<StringRef, 4> Parts;
  StringRef(WarningsAsErrors).split(Parts, ',', -1, false);
  for (StringRef P : Parts) {
    Expected<GlobPattern> G = GlobPattern::create(P.trim());
    if (!G)
      return createStringError(inconvertibleErrorCode(),
                               "--warnings-as-errors: bad glob '" + P + "': " + toString(G.takeError()));
    Out.push_back(std::move(*G));
  }
  return Out;
}

/// Each named file must be a translation unit of the inputs or a file one of them reads.
Error requireKnownFiles(const std::vector<std::string> &Abs, const kloop::Extraction &E) {
  for (const std::string &F : Abs) {
    bool Known = llvm::any_of(E.Results, [&](const kloop::TUResult &R) {
      return R.Job.File == F || llvm::is_contained(R.Device.InputFiles, F) || llvm::is_contained(R.Host.InputFiles, F);
    });
    if (!Known)
      return createStringError(inconvertibleErrorCode(),
                               F + ": not in the compilation database" +
                                   (BuildPath.empty() ? "" : " (" + BuildPath + "/compile_commands.json)") +
                                   " and not included by any of its translation units");
  }
  return Error::success();
}

/// Warns about each translation unit that does not parse (a fatal error, a failed command) and
/// reads a changed file: the kernels it would have listed were not checked.
void warnLostUnits(const kloop::Extraction &E, const std::vector<kloop::check::FileChanges> &Changes,
                   StringRef Cwd) {
  for (const kloop::TUResult &R : E.Results) {
    bool Reads = llvm::any_of(Changes, [&](const kloop::check::FileChanges &C) {
      return R.Job.File == C.File || llvm::is_contained(R.Device.InputFiles, C.File);
    });
    if (R.lost() && Reads)
      errs() << kloop::terminalSafe("kloop check: warning: " + kloop::relativePath(R.Job.File, Cwd) +
                                    ": does not parse, so the kernels it defines were not checked\n");
  }
}

/// The source line \p Line of \p File ("" when it cannot be read).
std::string sourceLine(const std::string &File, unsigned Line, std::map<std::string, std::string> &Texts) {
  auto It = Texts.find(File);
  if (It == Texts.end()) {
    ErrorOr<std::unique_ptr<MemoryBuffer>> B = MemoryBuffer::getFile(File);
    It = Texts.emplace(File, B ? (*B)->getBuffer().str() : std::string()).first;
  }
  SmallVector<StringRef, 0> Lines;
  StringRef(It->second).split(Lines, '\n');
  return Line >= 1 && Line <= Lines.size() ? Lines[Line - 1].rtrim("\r").str() : "";
}

/// One finding as clang prints a diagnostic: the location line, the source line with a caret
/// and the first fix-it's text under it, and a note when it has no fix-it.
void printFinding(const Finding &F, bool AsError, StringRef Cwd, std::map<std::string, std::string> &Texts) {
  std::string Loc = kloop::relativePath(F.File, Cwd) + ":" + std::to_string(F.Line) + ":" + std::to_string(F.Column);
  std::string Out = Loc + (AsError ? ": error: " : ": warning: ") + F.Message + " [kloop-" + F.Rule + "]\n";
  std::string Src = sourceLine(F.File, F.Line, Texts);
  if (!Src.empty() && F.Column >= 1) {
    std::string Num = std::to_string(F.Line), Pad(F.Column - 1, ' ');
    std::string Gutter = std::string(5 > Num.size() ? 5 - Num.size() : 0, ' ');
    Out += Gutter + Num + " | " + Src + "\n" + std::string(Gutter.size() + Num.size(), ' ') + " | " + Pad + "^\n";
    if (!F.Fixes.empty())
      Out += std::string(Gutter.size() + Num.size(), ' ') + " | " + Pad +
             StringRef(F.Fixes.front().Text).split('\n').first.str() + "\n";
  }
  if (F.Fixes.empty() && !F.NoFixReason.empty())
    Out += Loc + ": note: no fix-it: " + F.NoFixReason + "\n";
  outs() << kloop::terminalSafe(Out);
}

bool matchesAny(const std::vector<GlobPattern> &Globs, StringRef Name) {
  return llvm::any_of(Globs, [&](const GlobPattern &G) { return G.match(Name); });
}

/// The touched kernels that are targets of \p C (a target's name is a substring of the kernel's).
std::vector<const kloop::inv::Kernel *> gatedKernels(const kloop::measure::WorkloadConfig &C,
                                                     const std::vector<const kloop::inv::Kernel *> &Touched) {
  std::vector<const kloop::inv::Kernel *> Out;
  for (const kloop::inv::Kernel *K : Touched)
    if (llvm::any_of(C.Targets, [&](const std::string &T) { return StringRef(K->QualifiedName).contains(T); }))
      Out.push_back(K);
  return Out;
}

/// The working tree's timings of the workload's target kernels on the reference's shapes.
Expected<std::vector<kloop::check::KernelTimings>> measureWorkingTree(const kloop::CommandContext &Ctx,
                                                                       const kloop::measure::WorkloadConfig &C,
                                                                       const kloop::check::GateReference &Ref) {
  SmallString<128> Dir;
  if (std::error_code EC = sys::fs::createUniqueDirectory("kloop-check-gate", Dir))
    return createStringError(EC, "cannot create a work directory for the performance gate: " + EC.message());
  Expected<std::string> Lib =
      kloop::measure::findCuptiLibrary(Ctx.Argv0.c_str(), reinterpret_cast<void *>(&gatedKernels));
  if (!Lib)
    return Lib.takeError();
  kloop::measure::MeasureOptions O;
  O.BuildDir = (Dir + "/build").str();
  O.WorkDir = (Dir + "/work").str();
  O.CuptiLib = *Lib;
  O.Runs = 3;
  for (const kloop::check::KernelTimings &T : Ref.Timings)
    if (!llvm::is_contained(O.Shapes, T.Shape))
      O.Shapes.push_back(T.Shape);
  Expected<kloop::measure::MeasureReport> Rep = kloop::measure::measureWorkload(C, O);
  if (!Rep)
    return Rep.takeError();
  std::vector<kloop::check::KernelTimings> Out;
  for (const kloop::measure::KernelShapeStats &K : Rep->Kernels)
    Out.push_back({kloop::measure::targetKey(C, K.Kernel), K.Shape, K.KeptNs, K.KeptGroups});
  return Out;
}

/// The performance gate (docs/check.md): with a journal and a GPU, each touched target kernel is timed on
/// the journal's shapes and one slower than the journal's reference by more than the CI allows is an
/// error at the kernel's location. Without a GPU the gate is skipped with a note. False after an error.
bool performanceGate(const kloop::CommandContext &Ctx, const std::vector<const kloop::inv::Kernel *> &Touched,
                     StringRef Cwd) {
  if (JournalPath.empty())
    return true;
  Expected<std::unique_ptr<kloop::Journal>> J = kloop::Journal::open(JournalPath, kloop::Journal::OpenMode::ReadOnly);
  if (!J)
    return fail(toString(J.takeError())) == 0;
  Expected<std::string> Gpu = kloop::measure::probeGpu();
  if (!Gpu) {
    errs() << "kloop check: note: performance gate skipped: no GPU (" << toString(Gpu.takeError())
           << "); only the rules' static findings were checked\n";
    return true;
  }
  if (Touched.empty()) {
    errs() << "kloop check: note: performance gate: the diff touches no kernel; nothing timed\n";
    return true;
  }
  Expected<kloop::check::GateReference> Ref = kloop::check::gateReference(**J);
  if (!Ref)
    return fail("performance gate: " + toString(Ref.takeError())) == 0;
  Expected<kloop::measure::WorkloadConfig> C = kloop::measure::loadConfig(Ref->ConfigPath);
  if (!C)
    return fail("performance gate: the journal's workload: " + toString(C.takeError())) == 0;
  std::vector<const kloop::inv::Kernel *> Gated = gatedKernels(*C, Touched);
  if (Gated.empty()) {
    errs() << "kloop check: note: performance gate: no touched kernel is a target of " << Ref->ConfigPath
           << "; nothing timed\n";
    return true;
  }
  Expected<std::vector<kloop::check::KernelTimings>> Cur = measureWorkingTree(Ctx, *C, *Ref);
  if (!Cur)
    return fail("performance gate: timing the working tree: " + toString(Cur.takeError())) == 0;
  Expected<std::vector<kloop::check::GateResult>> Res = kloop::check::gateTimings(Ref->Timings, *Cur, Ref->MinGain);
  if (!Res)
    return fail("performance gate: " + toString(Res.takeError())) == 0;
  unsigned Slower = 0;
  for (const kloop::check::GateResult &G : *Res) {
    std::string Text = kloop::check::describeGateResult(G, Ref->Version);
    if (!G.Slower) {
      errs() << kloop::terminalSafe("kloop check: note: performance gate: " + Text + "\n");
      continue;
    }
    ++Slower;
    const kloop::inv::Kernel *K = Gated.front();
    for (const kloop::inv::Kernel *X : Gated)
      if (StringRef(X->QualifiedName).contains(G.Kernel))
        K = X;
    outs() << kloop::terminalSafe(kloop::relativePath(K->Loc.File, Cwd) + ":" + std::to_string(K->Loc.Begin.Line) +
                                  ":" + std::to_string(K->Loc.Begin.Column) + ": error: " + Text + " [kloop-perf]\n");
  }
  errs() << "kloop check: performance gate: " << Res->size() << " kernel/shape pair(s) timed against run "
         << Ref->Run << " of " << JournalPath << ", " << Slower << " slower\n";
  return Slower == 0;
}

/// Writes --export-fixes and applies --fix; false after printing an error.
bool writeOutputs(const kloop::check::CheckResult &R, const std::vector<GlobPattern> &Globs) {
  if (!ExportFixes.empty()) {
    auto IsError = [&](const Finding &F) { return matchesAny(Globs, "kloop-" + F.Rule); };
    std::string Main = R.Findings.empty() ? "" : R.Findings.front().File;
    if (Error E = kloop::writeFileAtomically(ExportFixes, kloop::check::exportFixesYaml(R.Findings, Main, IsError)))
      return fail(toString(std::move(E))) == 0;
  }
  if (Fix && !R.Changes.empty()) {
    if (Error E = kloop::writeChangesInPlace(R.Changes))
      return fail(toString(std::move(E))) == 0;
    errs() << "kloop check: note: applied the fix-its to " << R.Changes.size() << " file(s)\n";
  }
  return true;
}

/// The inputs of extractInventory: the whole database with -p (a changed header reaches every
/// translation unit that includes it; unchanged ones come from the cache), else FILES -- ARGS.
kloop::FrontendOptions frontendOptions(const kloop::CommandContext &Ctx, const std::vector<std::string> &Abs) {
  kloop::FrontendOptions Opts;
  Opts.BuildPath = BuildPath;
  if (BuildPath.empty())
    Opts.Inputs = Abs;
  Opts.ExtraArgs = Ctx.ExtraArgs;
  Opts.HasExtraArgs = Ctx.HasDoubleDash;
  Opts.CudaPath = CudaPath;
  Opts.Jobs = Jobs;
  return Opts;
}

int runCheck(const kloop::CommandContext &Ctx) {
  if (DiffStdin == !FromRef.empty()) {
    errs() << "kloop check: error: give one of --diff (a unified diff on standard input) or --from-ref REF\n";
    return 2;
  }
  if (BuildPath.empty() && Files.empty()) {
    errs() << "kloop check: error: nothing to check against: give -p BUILD_DIR or FILES -- COMPILER ARGS\n";
    return 2;
  }
  Expected<std::vector<GlobPattern>> Globs = errorGlobs();
  if (!Globs)
    return fail(toString(Globs.takeError()));
  if (!ExportFixes.empty())
    if (std::string Why = kloop::checkOutputFile(ExportFixes); !Why.empty())
      return fail(Why);
  std::string Cwd = kloop::absolutePath(".", "");
  Expected<std::string> Text = readDiff(Cwd);
  if (!Text)
    return fail(toString(Text.takeError()));
  std::string DiffName = FromRef.empty() ? "<stdin>" : "git diff " + FromRef;
  Expected<std::vector<kloop::check::FileChanges>> Changes =
      kloop::check::parseUnifiedDiff(*Text, DiffName, FromRef.empty() ? unsigned(Strip) : 1u, Cwd);
  if (!Changes)
    return fail(toString(Changes.takeError()));
  std::vector<std::string> Abs;
  for (const std::string &F : Files)
    Abs.push_back(kloop::absolutePath(F, Cwd));
  *Changes = kloop::check::restrictTo(std::move(*Changes), Abs);
  if (Changes->empty() && Abs.empty()) {
    errs() << "kloop check: the diff changes no file; nothing to check\n";
    return performanceGate(Ctx, {}, Cwd) ? 0 : 1;
  }
  kloop::FrontendOptions Opts = frontendOptions(Ctx, Abs);
  std::unique_ptr<kloop::ExtractCache> Cache = kloop::openExtractCache(CacheDir, NoCache);
  kloop::ExtractOptions EO;
  EO.Root = Cwd;
  EO.Cache = Cache.get();
  Expected<kloop::Extraction> E = kloop::extractInventory(Opts, EO);
  if (!E)
    return fail(toString(E.takeError()));
  if (Error Err = requireKnownFiles(Abs, *E))
    return fail(toString(std::move(Err)));
  warnLostUnits(*E, *Changes, Cwd);
  std::vector<std::string> Touched = kloop::check::touchedKernels(E->Inventory, *Changes);
  for (const std::string &ID : Touched)
    if (const kloop::inv::Kernel *K = E->Inventory.kernel(ID); K && !K->Edit.Editable)
      errs() << kloop::terminalSafe("kloop check: note: kernel '" + ID + "' is touched but not checked: " +
                                    K->Edit.NotEditableReason.value_or("not editable") + "\n");
  Expected<kloop::check::CheckResult> R = kloop::check::checkKernels(*E, Touched, Opts, Cwd);
  if (!R)
    return fail(toString(R.takeError()));
  std::map<std::string, std::string> Texts;
  unsigned Errors = 0;
  for (const Finding &F : R->Findings) {
    bool AsError = matchesAny(*Globs, "kloop-" + F.Rule);
    Errors += AsError;
    printFinding(F, AsError, Cwd, Texts);
  }
  errs() << "kloop check: " << Touched.size() << " kernel(s) touched by the diff, " << R->Findings.size()
         << " finding(s)" << (Errors ? " (" + std::to_string(Errors) + " as errors)" : "") << "; "
         << (Cache ? Cache->hits() : 0) << " of " << E->Results.size() << " translation unit(s) from the cache\n";
  std::vector<const kloop::inv::Kernel *> TouchedKernels;
  for (const std::string &ID : Touched)
    if (const kloop::inv::Kernel *K = E->Inventory.kernel(ID))
      TouchedKernels.push_back(K);
  bool GateOk = performanceGate(Ctx, TouchedKernels, Cwd);
  if (!writeOutputs(*R, *Globs) || !GateOk)
    return 1;
  return Errors ? 1 : 0;
}

kloop::CommandRegistration Reg(CheckSub, runCheck);
} // namespace
