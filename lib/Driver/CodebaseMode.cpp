//===- CodebaseMode.cpp - `kloop optimize -p BUILD --run ... --test ...` ----===//
///
/// Codebase mode (docs/codebase.md; issue 16, item 3): profile the program,
/// pick the hottest editable kernels, tune each as the workload a .kloop.yaml
/// would give with the project's tests gating every accepted change, and write
/// the accepted changes as a patch series (and --export-fixes, --fix).
///
//===----------------------------------------------------------------------===//
#include "CodebaseMode.h"
#include "kloop/Codebase/Codebase.h"
#include "kloop/Inventory/Extract.h"
#include "kloop/Inventory/ExtractCache.h"
#include "kloop/Measure/Measure.h"
#include "kloop/Measure/ProgramProfile.h"
#include "kloop/Measure/Runner.h"
#include "kloop/Support/AtomicFile.h"
#include "kloop/Support/Error.h"
#include "kloop/Support/JSON.h"
#include "kloop/Support/Text.h"

#include "clang/Tooling/JSONCompilationDatabase.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace llvm;
using json = nlohmann::json;

namespace kloop {
namespace {

/// Where the run's inputs and outputs are, all absolute.
struct Paths {
  std::string Root, BuildDir, RunDir;
};

int usageError(const Twine &Msg) {
  errs() << "kloop optimize: error: " << Msg << "\n";
  return 2;
}

int failed(const Twine &Msg) {
  errs() << "kloop optimize: error: " << terminalSafe(Msg.str()) << "\n";
  return 1;
}

std::string absolute(StringRef P) {
  SmallString<256> A(P);
  sys::fs::make_absolute(A);
  sys::path::remove_dots(A, true);
  return std::string(A);
}

/// The command-line errors of codebase mode (exit 2), "" when none.
std::string usageProblem(const CodebaseArgs &A) {
  if (A.ConfigGiven || A.JournalGiven)
    return "-p (codebase mode) takes no --config or --journal: each kernel's workload and journal are written "
           "to the run directory (-o)";
  if (A.Run.empty())
    return "-p (codebase mode) needs --run \"<program>\": the command whose GPU time is profiled and tuned";
  if (!(A.Cover > 0 && A.Cover <= 1))
    return "--cover must be a share of GPU time in (0, 1], not " + std::to_string(A.Cover);
  if (A.TestTimeoutS == 0)
    return "--test-timeout must be at least 1 second";
  if (!A.ExportFixes.empty())
    if (std::string Why = checkOutputFile(A.ExportFixes); !Why.empty())
      return Why;
  return "";
}

/// The compiler arguments of \p File's entry in the compilation database of \p BuildDir, for extract and
/// apply on a copy of it: without the compiler, the file itself, -c and the output and dependency files;
/// relative -I/-isystem/-include paths made absolute against the entry's directory.
std::vector<std::string> compilerArgs(const clang::tooling::CompilationDatabase &DB, StringRef File) {
  std::vector<clang::tooling::CompileCommand> Cmds = DB.getCompileCommands(File);
  if (Cmds.empty())
    return {};
  const clang::tooling::CompileCommand &C = Cmds.front();
  std::vector<std::string> Out;
  const std::vector<std::string> &L = C.CommandLine;
  for (size_t I = 1; I < L.size(); ++I) {
    StringRef A = L[I];
    if (A == "-c" || A == "-MD" || A == "-MMD")
      continue;
    if (A == "-o" || A == "-MF" || A == "-MT" || A == "-MQ") {
      ++I;
      continue;
    }
    if (A == C.Filename || absolute((C.Directory + "/" + A).str()) == absolute(File))
      continue;
    for (StringRef Flag : {"-I", "-isystem", "-include"}) {
      if (A == Flag && I + 1 < L.size()) {
        Out.push_back(A.str());
        A = L[++I];
        if (!sys::path::is_absolute(A))
          Out.push_back(absolute((C.Directory + "/" + A).str()));
        else
          Out.push_back(A.str());
        A = "";
        break;
      }
      if (Flag == "-I" && A.starts_with("-I") && !sys::path::is_absolute(A.drop_front(2))) {
        Out.push_back("-I" + absolute((C.Directory + "/" + A.drop_front(2)).str()));
        A = "";
        break;
      }
    }
    if (!A.empty())
      Out.push_back(A.str());
  }
  return Out;
}

/// The profile of --run, its kernels named by the inventory of the compilation database.
Expected<measure::ProgramProfile> profileProgram(const CommandContext &Ctx, const CodebaseArgs &A, const Paths &P,
                                                 const inv::Inventory &Inv) {
  Expected<std::string> Lib = measure::findCuptiLibrary(Ctx.Argv0.c_str(), reinterpret_cast<void *>(&absolute));
  if (!Lib)
    return Lib.takeError();
  Expected<std::string> Gpu = measure::probeGpu();
  if (!Gpu)
    return makeError("skipped: " + toString(Gpu.takeError()));
  measure::ProgramRunRequest R;
  R.Command = A.Run;
  R.Cwd = P.Root;
  R.TimeoutS = A.TestTimeoutS;
  R.WorkDir = P.RunDir + "/profile-run";
  R.CuptiLib = *Lib;
  outs() << "kloop optimize: profiling --run " << terminalSafe(A.Run) << " on " << *Gpu << "\n";
  Expected<measure::ProgramRun> Run = measure::runProgramUnderCupti(R);
  if (!Run)
    return Run.takeError();
  const measure::RunResult &Res = Run->Result;
  if (!Res.ok() || !Run->Profile)
    return makeError("--run '" + A.Run + "': the program " +
                     (Res.ok() ? std::string("exited 0 but wrote no readable profile (it launched no CUDA work)")
                               : Res.describe()) +
                     "; logs: " + Res.StdoutPath + ", " + Res.StderrPath +
                     (Res.StderrTail.empty() ? "" : "; stderr ends: " + StringRef(Res.StderrTail).trim().str()));
  measure::ProgramProfileInputs In;
  In.Inventory = measure::inventoryKernels(Inv);
  return measure::summarizeProgram(*Run->Profile, In);
}

/// The selection of an earlier run in the run directory, or a new one: the inventory, the profile, the
/// kernels chosen (written to selection.json and profile.json).
Expected<codebase::Selection> selection(const CommandContext &Ctx, const CodebaseArgs &A, const Paths &P,
                                        const inv::Inventory &Inv) {
  std::string File = P.RunDir + "/selection.json";
  if (sys::fs::exists(File)) {
    auto B = MemoryBuffer::getFile(File);
    if (!B)
      return makeError("cannot read " + File + ": " + B.getError().message());
    json J = json::parse((*B)->getBuffer(), nullptr, false);
    outs() << "kloop optimize: resuming the run in " << P.RunDir << " (its selection.json; remove the directory "
           << "to profile again)\n";
    return codebase::selectionFromJSON(J, File);
  }
  Expected<measure::ProgramProfile> Prof = profileProgram(Ctx, A, P, Inv);
  if (!Prof)
    return Prof.takeError();
  outs() << measure::formatProgramTable(*Prof);
  std::vector<std::string> TUs;
  for (const inv::TranslationUnit &TU : Inv.TranslationUnits)
    TUs.push_back(TU.File);
  codebase::Selection S = codebase::selectKernels(*Prof, Inv, TUs, {A.Cover, A.Kernels});
  json PJ = measure::toJSON(*Prof);
  PJ["command"] = A.Run;
  if (Error E = writeFileAtomically(P.RunDir + "/profile.json", dumpJSON(PJ, 2) + "\n"))
    return E;
  if (Error E = writeFileAtomically(File, dumpJSON(codebase::toJSON(S), 2) + "\n"))
    return E;
  return S;
}

void printSelection(const codebase::Selection &S, const CodebaseArgs &A) {
  outs() << "kloop optimize: tuning " << S.Chosen.size() << " kernel(s) covering "
         << format("%.1f", S.CoveredPct) << "% of GPU time ("
         << (A.Kernels ? "--kernels " + std::to_string(A.Kernels) : "--cover " + formatv("{0}", A.Cover).str())
         << ")\n";
  for (size_t I = 0; I < S.Chosen.size(); ++I)
    outs() << "  " << I + 1 << ". " << S.Chosen[I].Id << "  " << format("%.1f%%", S.Chosen[I].SharePct) << "  "
           << S.Chosen[I].File << "\n";
  for (const codebase::SkippedKernel &K : S.Skipped)
    outs() << "kloop optimize: skipped " << terminalSafe(K.Id.empty() ? K.Name : K.Id) << " ("
           << format("%.1f%%", K.SharePct) << "): " << terminalSafe(K.Reason) << "\n";
}

/// One chosen kernel's directory in the run directory, its workload and journal.
struct KernelPlace {
  std::string Dir, Yaml, Journal, OutDir;
};

KernelPlace placeOf(const Paths &P, unsigned Index, StringRef Id) {
  std::string Name = codebase::patchFileName(Index, Id);
  Name.resize(Name.size() - strlen(".patch"));
  KernelPlace K;
  K.Dir = P.RunDir + "/kernels/" + Name;
  K.Yaml = K.Dir + "/kloop.yaml";
  K.Journal = K.Dir + "/journal.db";
  K.OutDir = K.Dir + "/out";
  return K;
}

/// The kernel's workload: its kloop.yaml from an earlier run, or a new one written there.
Expected<measure::WorkloadConfig> workloadOf(const codebase::ChosenKernel &K, const KernelPlace &Place,
                                            const codebase::WorkloadInputs &In) {
  std::string Text;
  if (auto B = MemoryBuffer::getFile(Place.Yaml)) {
    Text = (*B)->getBuffer().str();
  } else {
    Text = codebase::synthesizeWorkload(K, In);
    if (std::error_code EC = sys::fs::create_directories(Place.Dir))
      return makeError("cannot create " + Place.Dir + ": " + EC.message());
    if (Error E = writeFileAtomically(Place.Yaml, Text))
      return E;
  }
  // The source directory is the project root, where the file does not live (it would be a file in the
  // user's tree): parsed as if it were there, named by its real path.
  Expected<measure::WorkloadConfig> C = measure::parseConfig(Text, In.Root + "/.kloop.yaml");
  if (!C)
    return makeError(Place.Yaml + ": " + toString(C.takeError()));
  C->Path = Place.Yaml;
  return C;
}

/// What the run accepted for one kernel.
struct Accepted {
  const codebase::ChosenKernel *Kernel;
  std::string Patch, Journal;
  std::vector<FileChange> Changes;
  unsigned Candidates = 0;
};

/// Progress lines on a terminal: which kernel, then runOptimize's round and best so far, then time left.
optimize::ProgressFn progressFor(unsigned Index, unsigned Total, StringRef Id, std::optional<double> BudgetS) {
  bool TTY = sys::Process::StandardOutIsDisplayed();
  auto Start = std::chrono::steady_clock::now();
  std::string Prefix = ("kernel " + Twine(Index) + "/" + Twine(Total) + " " + Id + ": ").str();
  return [=](const optimize::ProgressEvent &E) {
    if (E.Kind == optimize::ProgressKind::VerificationSkipped) {
      outs() << "kloop optimize: " << Prefix << terminalSafe(E.Text) << "\n";
      return;
    }
    if (!TTY)
      return;
    std::string Left;
    if (BudgetS) {
      double Used = std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
      Left = formatv("; time left {0:f0} s", std::max(0.0, *BudgetS - Used)).str();
    }
    outs() << "[kloop] " << Prefix << terminalSafe(E.Text) << Left << "\n";
  };
}

/// Tunes chosen kernel \p I of \p S; the accepted change, if any, is added to \p Out.
Error tuneKernel(const CommandContext &Ctx, const CodebaseArgs &A, const Paths &P, const codebase::Selection &S,
                 unsigned I, const codebase::WorkloadInputs &In, const clang::tooling::CompilationDatabase &DB,
                 const TuneFn &Tune, std::optional<double> BudgetS, std::vector<Accepted> &Out) {
  const codebase::ChosenKernel &K = S.Chosen[I];
  KernelPlace Place = placeOf(P, I + 1, K.Id);
  Expected<measure::WorkloadConfig> C = workloadOf(K, Place, In);
  if (!C)
    return C.takeError();
  bool Resume = sys::fs::exists(Place.Journal);
  outs() << "kloop optimize: kernel " << I + 1 << "/" << S.Chosen.size() << " " << K.Id << ": "
         << (Resume ? "resuming" : "tuning") << " the workload " << Place.Yaml << "\n";
  TuneRequest T;
  T.Config = &*C;
  T.Journal = Place.Journal;
  T.OutDir = Place.OutDir;
  T.Resume = Resume;
  T.CompilerArgs = compilerArgs(DB, P.Root + "/" + K.File);
  T.TimeBudgetS = BudgetS;
  T.Progress = progressFor(I + 1, S.Chosen.size(), K.Id, BudgetS);
  if (!A.Test.empty())
    T.Wrap = [&](std::unique_ptr<optimize::Stages> Inner) {
      return codebase::makeTestGatedStages(std::move(Inner), {A.Test, A.BuildPath, P.BuildDir, A.TestTimeoutS});
    };
  Expected<TuneResult> R = Tune(Ctx, T);
  if (!R)
    return makeError("kernel " + K.Id + " (" + Place.Yaml + "): " + toString(R.takeError()));
  outs() << "kloop optimize: kernel " << K.Id << ": " << R->Result.Candidates << " candidate(s); "
         << (R->Result.Best ? "accepted cand-" + std::to_string(*R->Result.Best) : std::string("nothing accepted"))
         << " (stopped: " << terminalSafe(R->Result.StopReason) << ")\n";
  if (!R->Result.Best || R->Patch.empty())
    return Error::success();
  std::string Final = Place.OutDir + "/candidates/cand-" + std::to_string(*R->Result.Best);
  Expected<std::vector<FileChange>> Changes =
      codebase::kernelChanges(P.Root, Place.OutDir + "/candidates/baseline", Final, C->Sources);
  if (!Changes)
    return Changes.takeError();
  Out.push_back({&K, R->Patch, Place.Journal, std::move(*Changes), R->Result.Candidates});
  return Error::success();
}

/// The series in RunDir/patches (earlier patches there removed first), --export-fixes and --fix.
int writeSeries(const CodebaseArgs &A, const Paths &P, const std::vector<Accepted> &All) {
  std::string Dir = P.RunDir + "/patches";
  sys::fs::remove_directories(Dir);
  if (All.empty()) {
    outs() << "kloop optimize: no kernel got faster; no patch written\n";
    return 0;
  }
  if (std::error_code EC = sys::fs::create_directories(Dir))
    return failed("cannot create " + Dir + ": " + EC.message());
  std::vector<check::Finding> Findings;
  std::vector<FileChange> Changes;
  for (unsigned I = 0; I < All.size(); ++I) {
    const Accepted &X = All[I];
    std::string Extra = formatv("Kernel {0} ({1}), {2:f1}% of the program's GPU time; {3} candidate(s) tried; "
                                "journal {4}.{5}\n",
                                X.Kernel->Id, X.Kernel->File, X.Kernel->SharePct, X.Candidates, X.Journal,
                                A.Test.empty() ? std::string(" No --test was given.")
                                               : " The project's test command passed on it: " + A.Test)
                            .str();
    std::string File = Dir + "/" + codebase::patchFileName(I + 1, X.Kernel->Id);
    if (Error E = writeFileAtomically(File, codebase::numberPatch(X.Patch, I + 1, All.size(), X.Kernel->Id, Extra)))
      return failed(toString(std::move(E)));
    outs() << "kloop optimize: wrote " << File << "\n";
    Findings.push_back(codebase::kernelFinding(
        X.Kernel->Id, "kernel '" + X.Kernel->Id + "': kloop optimize accepted a faster version (" + File + ")",
        X.Changes));
    Changes.insert(Changes.end(), X.Changes.begin(), X.Changes.end());
  }
  if (!A.ExportFixes.empty()) {
    std::string Main = Findings.front().File;
    if (Error E = writeFileAtomically(A.ExportFixes, check::exportFixesYaml(Findings, Main, [](const auto &) {
                                        return false;
                                      })))
      return failed(toString(std::move(E)));
    outs() << "kloop optimize: wrote " << A.ExportFixes << "\n";
  }
  if (A.Fix) {
    if (Error E = codebase::applyAll(Changes))
      return failed(toString(std::move(E)));
    outs() << "kloop optimize: applied " << All.size() << " patch(es) to " << Changes.size() << " file(s)\n";
  }
  return 0;
}

/// The inventory of the compilation database, paths relative to the project root.
Expected<inv::Inventory> inventoryOf(const Paths &P) {
  std::unique_ptr<ExtractCache> Cache;
  if (std::string Dir = defaultExtractCacheDir(); !Dir.empty())
    Cache = std::make_unique<ExtractCache>(Dir, executableId());
  FrontendOptions F;
  F.BuildPath = P.BuildDir;
  ExtractOptions EO;
  EO.Root = P.Root;
  EO.Cache = Cache.get();
  Expected<Extraction> E = extractInventory(F, EO);
  if (!E)
    return E.takeError();
  return std::move(E->Inventory);
}

} // namespace

int runCodebaseMode(const CommandContext &Ctx, const CodebaseArgs &A, const TuneFn &Tune) {
  if (std::string Why = usageProblem(A); !Why.empty())
    return usageError(Why);
  Paths P;
  SmallString<256> Cwd;
  sys::fs::current_path(Cwd);
  P.Root = std::string(Cwd);
  P.BuildDir = absolute(A.BuildPath);
  P.RunDir = absolute(A.OutDir.empty() ? std::string("kloop-codebase") : A.OutDir);
  Expected<std::unique_ptr<clang::tooling::JSONCompilationDatabase>> DB =
      loadCompilationDatabase(P.BuildDir + "/compile_commands.json");
  if (!DB)
    return failed("-p " + A.BuildPath + ": no usable compilation database: " + toString(DB.takeError()));
  if (sys::fs::exists(P.RunDir) && !sys::fs::is_directory(P.RunDir))
    return failed("-o " + P.RunDir + ": it exists and is not a directory");
  std::string Build = A.Build;
  if (Build.empty()) {
    Expected<std::string> B = codebase::cmakeBuildCommand(P.BuildDir, P.Root);
    if (!B)
      return failed(toString(B.takeError()));
    Build = *B;
  }
  if (std::error_code EC = sys::fs::create_directories(P.RunDir))
    return failed("cannot create " + P.RunDir + ": " + EC.message());
  Expected<inv::Inventory> Inv = inventoryOf(P);
  if (!Inv)
    return failed("-p " + A.BuildPath + ": " + toString(Inv.takeError()));
  Expected<codebase::Selection> S = selection(Ctx, A, P, *Inv);
  if (!S)
    return failed(toString(S.takeError()));
  printSelection(*S, A);
  if (A.Test.empty())
    outs() << "kloop optimize: note: no --test: accepted changes are checked by kloop's output checks only\n";
  codebase::WorkloadInputs In;
  In.Root = P.Root;
  In.BuildCommand = Build;
  In.RunCommand = codebase::rebaseBuildDir(codebase::escapeBraces(A.Run), A.BuildPath, P.BuildDir, "{build_dir}");
  In.RunTimeoutS = A.TestTimeoutS;
  Expected<std::vector<std::string>> Files = codebase::projectFiles(P.Root, {P.BuildDir, P.RunDir});
  if (!Files)
    return failed(toString(Files.takeError()));
  In.ProjectFiles = std::move(*Files);
  std::vector<Accepted> All;
  auto Start = std::chrono::steady_clock::now();
  for (unsigned I = 0; I < S->Chosen.size(); ++I) {
    std::optional<double> BudgetS;
    if (A.TimeBudgetS) { // what is left, shared by the kernels left
      double Used = std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
      BudgetS = std::max(1.0, (*A.TimeBudgetS - Used) / double(S->Chosen.size() - I));
    }
    if (Error E = tuneKernel(Ctx, A, P, *S, I, In, **DB, Tune, BudgetS, All))
      return failed(toString(std::move(E)));
  }
  return writeSeries(A, P, All);
}

} // namespace kloop
