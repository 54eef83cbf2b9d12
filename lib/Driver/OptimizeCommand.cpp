//===- OptimizeCommand.cpp - `kloop optimize`: the closed loop ------------===//
///
/// kloop optimize --config .kloop.yaml --journal run.db [--proposer builtin|llm|command]
///   [--command "..."] [--max-candidates N] [--max-rounds N] [--plateau K]
///   [--time-budget S] [--token-budget N] [--speed-of-light PCT] [--resume]
///   [-o OUTDIR] [--seed N] [--no-ptxas] [--timing-rounds N] [--screen-seeds N] [--verify-jobs N]
///   [--no-timing-first] [--no-canary] [--agreement] [-- COMPILER ARGS]
///
/// docs/optimize.md describes the state machine, the journal steps and the
/// results (OUTDIR/accepted.patch, OUTDIR/report.md).
///
//===----------------------------------------------------------------------===//
#include "kloop/Capture/Replay.h"
#include "RuleOutputs.h"
#include "kloop/Driver/Command.h"
#include "CodebaseMode.h"
#include "kloop/Support/JSON.h"
#include "kloop/Edit/Rules.h"
#include "kloop/Measure/Config.h"
#include "kloop/Measure/Runner.h"
#include "kloop/Optimize/Optimize.h"
#include "kloop/Optimize/ReplayTiming.h"
#include "kloop/Optimize/Stages.h"
#include "kloop/Propose/BuiltinProposer.h"
#include "kloop/Propose/CommandProposer.h"
#include "kloop/Propose/Context.h"
#include "kloop/Propose/LLMProposer.h"
#include "kloop/Propose/Prompt.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

using namespace llvm;
using json = nlohmann::json;
using namespace kloop;

namespace {

cl::SubCommand OptSub("optimize", "Search, verify and measure kernel rewrites; keep only sound wins");
cl::opt<std::string> ConfigPath("config", cl::desc("Workload description (.kloop.yaml); without -p, required"),
                                cl::value_desc("file"), cl::sub(OptSub));
cl::opt<std::string> JournalPath("journal",
                                 cl::desc("Journal file (created; with --resume, reopened); without -p, required"),
                                 cl::value_desc("file"), cl::sub(OptSub));
// Codebase mode (docs/codebase.md): -p instead of --config.
cl::opt<std::string> BuildPathOpt("p",
                                  cl::desc("Codebase mode: the build directory holding compile_commands.json; tunes "
                                           "the hottest editable kernels of --run (docs/codebase.md)"),
                                  cl::value_desc("dir"), cl::sub(OptSub));
cl::opt<std::string> RunOpt("run", cl::desc("Codebase mode: the program to profile and tune (a shell command)"),
                            cl::value_desc("command"), cl::sub(OptSub));
cl::opt<std::string> TestOpt("test",
                             cl::desc("Codebase mode: the project's own test command; a change it fails is refused"),
                             cl::value_desc("command"), cl::sub(OptSub));
cl::opt<std::string> BuildOpt("build",
                              cl::desc("Codebase mode: how to build a candidate's copy of the project (run in the "
                                       "copy; {build_dir} names its build directory). Default: cmake, configured "
                                       "as the CMake cache in -p says"),
                              cl::value_desc("command"), cl::sub(OptSub));
cl::opt<double> CoverOpt("cover",
                         cl::desc("Codebase mode: tune the hottest editable kernels until they cover this share "
                                  "of GPU time (default 0.8)"),
                         cl::init(0.8), cl::sub(OptSub));
cl::opt<unsigned> KernelsOpt("kernels", cl::desc("Codebase mode: tune this many kernels instead of --cover"),
                             cl::init(0), cl::sub(OptSub));
cl::opt<bool> FixOpt("fix", cl::desc("Codebase mode: apply the patch series to the source tree, all or nothing"),
                     cl::sub(OptSub));
cl::opt<std::string> ExportFixesOpt("export-fixes",
                                    cl::desc("Codebase mode: write the accepted changes as clang-apply-replacements "
                                             "YAML to this file"),
                                    cl::value_desc("file"), cl::sub(OptSub));
cl::opt<unsigned> TestTimeoutOpt("test-timeout",
                                 cl::desc("Codebase mode: seconds --test and --run may take (default 1800)"),
                                 cl::init(1800), cl::sub(OptSub));
cl::opt<std::string> ProposerOpt("proposer", cl::desc("builtin (default), llm or command"),
                                 cl::init("builtin"), cl::sub(OptSub));
cl::opt<std::string> CommandOpt("command", cl::desc("Proposer command line (with --proposer command)"),
                                cl::sub(OptSub));
cl::opt<double> CommandTimeoutOpt("command-timeout",
                                  cl::desc("Wall seconds one run of the proposer command may take; past it its "
                                           "process group is killed and the round's proposal fails (default 600)"),
                                  cl::init(600), cl::value_desc("seconds"), cl::sub(OptSub));
cl::opt<unsigned> MaxCandidates("max-candidates", cl::desc("Budget: candidates (default 20)"),
                                cl::init(20), cl::sub(OptSub));
cl::opt<unsigned> MaxRounds("max-rounds", cl::desc("Budget: rounds (default 50)"), cl::init(50),
                            cl::sub(OptSub));
cl::opt<unsigned> PlateauOpt("plateau", cl::desc("Stop after K rounds without an accepted win (default 5; 0: never)"),
                             cl::init(5), cl::sub(OptSub));
cl::opt<double> TimeBudget("time-budget", cl::desc("Budget: wall seconds (default 0: no limit)"), cl::init(0),
                           cl::sub(OptSub));
cl::opt<int64_t> TokenBudget("token-budget", cl::desc("Budget: tokens in + out (default 0: no limit)"), cl::init(0),
                             cl::sub(OptSub));
cl::opt<double> SpeedOfLight("speed-of-light",
                             cl::desc("Stop when every shape of the incumbent is within PCT percent of its "
                                      "roofline ceiling (default 10; 0: off)"),
                             cl::init(10), cl::sub(OptSub));
cl::opt<bool> ResumeOpt("resume",
                        cl::desc("Continue the journal's last run with the same .kloop.yaml (the options are "
                                 "this command's); a finished run only gets its results regenerated"),
                        cl::sub(OptSub));
cl::opt<std::string> OutDirOpt("o", cl::desc("Output directory (default: kloop-out next to the journal)"),
                               cl::value_desc("dir"), cl::sub(OptSub));
cl::opt<uint64_t> SeedOpt("seed", cl::desc("Seed of the builtin search (default 0)"), cl::init(0),
                          cl::sub(OptSub));
cl::opt<bool> NoProfileGuide("no-profile-guide",
                             cl::desc("Builtin search: ignore the hardware counters (walk every dimension in kind "
                                      "order instead of those the profile's limiters call for)"),
                             cl::sub(OptSub));
cl::opt<bool> NoPtxas("no-ptxas", cl::desc("Do not read a ptxas report from the builds (no -Xptxas -v added through NVCC_APPEND_FLAGS)"),
                      cl::sub(OptSub));
cl::opt<std::string> ApplyCmdOpt("apply-command",
                                 cl::desc("Test seam: a program that applies proposals instead of kloop (it prints "
                                          "the outcome as JSON, docs/optimize.md)"),
                                 cl::Hidden, cl::sub(OptSub));
cl::opt<unsigned> ScreenSeedsOpt("screen-seeds",
                                 cl::desc("Search steps verify and time this many search seeds per shape; the "
                                          "final check uses all, held-out ones included (default 1; 0 = all)"),
                                 cl::init(1), cl::sub(OptSub));
cl::opt<bool> NoTimingFirst("no-timing-first",
                            cl::desc("Search steps verify every candidate, even one its timing already rejects "
                                     "(default: time first, and skip verification when the timing rejects)"),
                            cl::sub(OptSub));
cl::opt<bool> NoCanary("no-canary",
                       cl::desc("Do not measure the baseline against itself before the final check (the drift "
                                "canary that marks the verdicts unreliable when the A/A drifts)"),
                       cl::sub(OptSub));
cl::opt<bool> AgreementOpt("agreement",
                           cl::desc("Time every replayed search step by workload runs too and journal both speed-ups "
                                    "per kernel and shape, with their difference (issue 14's agreement within 2%; "
                                    "docs/optimize.md); the step's verdict stays replay's"),
                           cl::sub(OptSub));
cl::opt<std::string> ProgressOpt("progress",
                                cl::desc("Progress lines: auto (default: on standard output when it is a terminal), "
                                         "always (on standard output when it is a terminal, else on standard "
                                         "error, so that a log gets them), never"),
                                cl::init("auto"), cl::sub(OptSub));
cl::opt<unsigned> VerifyJobsOpt("verify-jobs",
                                cl::desc("Verification runs (capture, determinism) made side by side on the GPU; "
                                         "never beside a timing run (default 4)"),
                                cl::init(4), cl::sub(OptSub));
cl::opt<int> PrepareJobsOpt("prepare-jobs",
                            cl::desc("Candidates prepared ahead (applied and built) on this many threads while "
                                     "the current one is timed: the builtin proposer's, or the untried proposals "
                                     "of a batch (default: half the CPUs, 1 to 8; 0 = one candidate at a time)"),
                            cl::init(-1), cl::sub(OptSub));
cl::opt<unsigned> BatchOpt("batch",
                           cl::desc("Proposals asked for per request to an llm or command proposer; the next "
                                    "rounds take the rest until the incumbent changes (default 1)"),
                           cl::init(1), cl::sub(OptSub));
cl::opt<unsigned> RoundsOpt("timing-rounds", cl::desc("Timing rounds per shape and seed (default 3)"),
                            cl::init(3), cl::sub(OptSub));

std::string selfPath(const CommandContext &Ctx) {
  std::string P = sys::fs::getMainExecutable(Ctx.Argv0.c_str(), (void *)&selfPath);
  return P.empty() ? Ctx.Argv0 : P;
}

/// Takes an exclusive flock(2) on the journal file \p Path for the rest of the process (the
/// descriptor stays open until exit), so that two kloop optimize processes never drive one
/// journal (issue 12, item 9: a second --resume on a live journal). flock, not fcntl: SQLite's own
/// POSIX locks on the file are independent of it. Returns the message when another process holds
/// it or the file cannot be opened.
static std::optional<std::string> holdJournal(StringRef Path) {
  int FD = ::open(Path.str().c_str(), O_RDONLY | O_CLOEXEC);
  if (FD < 0)
    return ("cannot open the journal '" + Path + "' to lock it: " + std::strerror(errno)).str();
  if (::flock(FD, LOCK_EX | LOCK_NB) == 0)
    return std::nullopt;
  int Err = errno;
  ::close(FD);
  if (Err == EWOULDBLOCK)
    return ("another kloop optimize holds the journal '" + Path +
            "' (it is still running); wait for it to finish or stop it, then --resume")
        .str();
  return ("cannot lock the journal '" + Path + "': " + std::strerror(Err)).str();
}

/// A usage error (exit 2): a command line that is refused before anything is read or written.
Error usage(const Twine &Msg) { return createStringError(std::make_error_code(std::errc::invalid_argument), Msg); }

/// A failure (exit 1).
Error failure(const Twine &Msg) { return createStringError(inconvertibleErrorCode(), Msg); }

/// Prints \p E as `kloop optimize: error: ...`; the exit code: 2 for a usage error, else 1.
int fail(Error E) {
  int Code = 1;
  std::string Msg;
  handleAllErrors(std::move(E), [&](const ErrorInfoBase &X) {
    Code = X.convertToErrorCode() == std::errc::invalid_argument ? 2 : 1;
    Msg = X.message();
  });
  errs() << "kloop optimize: error: " << terminalSafe(Msg) << "\n";
  return Code;
}

/// The options' values, checked before anything is read or written.
Error checkOptions() {
  if (!(TimeBudget >= 0) || std::isinf(TimeBudget))
    return usage("--time-budget must be a number of seconds >= 0 (0: no limit), not " +
                 formatv("{0}", TimeBudget.getValue()).str());
  if (TokenBudget < 0)
    return usage("--token-budget must be >= 0 (0: no limit), not " + std::to_string(TokenBudget));
  if (RoundsOpt < 1)
    return usage("--timing-rounds must be at least 1 (each search step and the final check time the candidate "
                 "against the incumbent in that many ABAB rounds)");
  if (VerifyJobsOpt < 1)
    return usage("--verify-jobs must be at least 1 (1: one verification run at a time)");
  if (PrepareJobsOpt < -1 || PrepareJobsOpt > 64)
    return usage("--prepare-jobs must be 0 to 64 (0: one candidate at a time), not " + std::to_string(PrepareJobsOpt));
  if (BatchOpt < 1 || BatchOpt > 64)
    return usage("--batch must be 1 to 64 (1: one proposal per request), not " + std::to_string(BatchOpt));
  if (ProgressOpt != "auto" && ProgressOpt != "always" && ProgressOpt != "never")
    return usage("--progress must be auto, always or never, not '" + ProgressOpt + "'");
  if (!(SpeedOfLight >= 0 && SpeedOfLight <= 100))
    return usage("--speed-of-light must be a percentage in [0, 100] (0: off), not " +
                 formatv("{0}", SpeedOfLight.getValue()).str());
  return Error::success();
}

/// The journal path, before anything is read or created: SQLite's own words for these cases ("unable to
/// open database file", "cannot switch to WAL mode") do not say what is wrong.
Error checkJournalPath() {
  if (JournalPath.empty())
    return usage("--journal must name a file (the SQLite journal of the run)");
  if (sys::fs::is_directory(JournalPath))
    return usage("--journal '" + JournalPath + "' is a directory; expected a file name");
  SmallString<256> Parent(JournalPath.getValue());
  sys::fs::make_absolute(Parent);
  sys::path::remove_filename(Parent);
  if (!sys::fs::is_directory(Parent))
    return usage("--journal '" + JournalPath + "': directory '" + Parent + "' does not exist");
  return Error::success();
}

/// -o, or kloop-out next to the journal, absolute. It is created only once the proposer and the journal
/// are set up, so that a refused command line leaves nothing behind; a file in its place is refused now.
Expected<std::string> outputDir() {
  SmallString<256> OutDir(OutDirOpt.empty() ? (sys::path::parent_path(JournalPath).str().empty()
                                                   ? std::string("kloop-out")
                                                   : (sys::path::parent_path(JournalPath) + "/kloop-out").str())
                                            : OutDirOpt.getValue());
  sys::fs::make_absolute(OutDir);
  // Without "." or ".." components, so that every path made under it names each file one way.
  sys::path::remove_dots(OutDir, /*remove_dot_dot=*/true);
  if (sys::fs::exists(OutDir) && !sys::fs::is_directory(OutDir))
    return failure("cannot use " + OutDir + " as the output directory: it exists and is not a directory");
  return std::string(OutDir);
}

/// The proposer --proposer names, and whether its proposals are relative to the baseline (builtin).
struct ChosenProposer {
  std::unique_ptr<Proposer> P;
  bool Absolute = false;
};

/// --proposer command: the command line through /bin/sh, with --command-timeout.
Expected<std::unique_ptr<Proposer>> commandProposer() {
  if (CommandOpt.empty())
    return usage("--proposer command needs --command \"...\"");
  CommandConfig CC;
  CC.Argv = {"/bin/sh", "-c", CommandOpt};
  if (!(CommandTimeoutOpt > 0) || CommandTimeoutOpt > 7 * 24 * 3600.0)
    return usage("--command-timeout must be a number of seconds > 0 and at most a week, not " +
                 formatv("{0}", CommandTimeoutOpt.getValue()).str());
  CC.Timeout = std::chrono::milliseconds(std::llround(CommandTimeoutOpt * 1000));
  Expected<std::unique_ptr<CommandProposer>> CP = CommandProposer::create(CC);
  if (!CP)
    return failure(toString(CP.takeError()));
  return std::unique_ptr<Proposer>(std::move(*CP));
}

/// --proposer llm: the model from the environment, the prompt template and schema from prompts/, shown
/// the workload's sources (kloop/Propose/Context.h).
Expected<std::unique_ptr<Proposer>> llmProposer(const CommandContext &Ctx, const measure::WorkloadConfig &C) {
  Expected<LLMConfig> LC = applyLLMEnvironment(LLMConfig{});
  if (!LC)
    return failure(toString(LC.takeError()));
  Expected<std::string> Dir = findPromptsDir(Ctx.Argv0);
  if (!Dir)
    return failure(toString(Dir.takeError()));
  Expected<PromptTemplate> T = PromptTemplate::load(*Dir + "/optimize-kernel.v2.md");
  if (!T)
    return failure(toString(T.takeError()));
  Expected<json> Schema = loadProposalSchema(*Dir + "/proposal.schema.json");
  if (!Schema)
    return failure(toString(Schema.takeError()));
  Expected<std::unique_ptr<LLMProposer>> LP = LLMProposer::create(*LC, *T, *Schema);
  if (!LP)
    return failure(toString(LP.takeError()));
  std::vector<SourceText> Files;
  for (const std::string &S : C.Sources)
    if (auto B = MemoryBuffer::getFile(C.Dir + "/" + S))
      Files.push_back({S, (*B)->getBuffer().str()});
  return std::unique_ptr<Proposer>(std::make_unique<LLMContextAdapter>(std::move(*LP), std::move(Files)));
}

Expected<ChosenProposer> makeProposer(const CommandContext &Ctx, const measure::WorkloadConfig &C) {
  ChosenProposer Out;
  if (ProposerOpt == "builtin") {
    builtin::SearchOptions SO;
    SO.Seed = SeedOpt;
    SO.ProfileGuided = !NoProfileGuide;
    // docs/rules/: tried before the parameters; fast-math reads the workload's output tolerances
    SO.StructuralRules = [Outputs = ruleOutputs(C)](const inv::Inventory &I) {
      return structuralRuleCandidates(I, &Outputs);
    };
    Out.P = std::make_unique<builtin::BuiltinProposer>(SO);
    Out.Absolute = true;
    if (BatchOpt > 1)
      errs() << "kloop optimize: note: --batch has no effect with the builtin proposer (its next candidates "
                "are prepared ahead without it, --prepare-jobs)\n";
    return Out;
  }
  Expected<std::unique_ptr<Proposer>> P = ProposerOpt == "command" ? commandProposer()
                                          : ProposerOpt == "llm"   ? llmProposer(Ctx, C)
                                                                   : usage("--proposer must be builtin, llm or "
                                                                           "command, not '" + ProposerOpt + "'");
  if (!P)
    return P.takeError();
  Out.P = std::move(*P);
  return Out;
}

/// The journal (created, or with --resume reopened), held against a second kloop, and the output
/// directory created; a journal created just now is removed again when the directory cannot be.
Expected<std::unique_ptr<Journal>> openJournal(StringRef JournalPath, bool Resume, StringRef OutDir) {
  Expected<std::unique_ptr<Journal>> J =
      Journal::open(JournalPath, Resume ? Journal::OpenMode::OpenExisting : Journal::OpenMode::Create);
  if (!J)
    return failure(toString(J.takeError()) +
                   (Resume ? "" : " (use --resume to continue a run, or choose another --journal)"));
  if (std::optional<std::string> Held = holdJournal(JournalPath))
    return failure(*Held);
  if (std::error_code EC = sys::fs::create_directories(OutDir)) {
    if (!Resume) { // the journal was created just now and holds nothing yet
      J->reset();
      for (const char *Suffix : {"", "-wal", "-shm", "-journal"})
        sys::fs::remove(JournalPath + Suffix);
    }
    return failure("cannot create " + OutDir + ": " + EC.message());
  }
  return std::move(*J);
}

optimize::ProcessStagesOptions stagesOptions(const CommandContext &Ctx, StringRef OutDir,
                                             const std::vector<std::string> &CompilerArgs) {
  optimize::ProcessStagesOptions SO;
  // The test seam's apply command runs in each candidate's directory: a relative path is taken from here.
  std::string ApplyCmd = ApplyCmdOpt;
  if (!ApplyCmd.empty() && StringRef(ApplyCmd).contains('/') && !sys::path::is_absolute(ApplyCmd)) {
    SmallString<256> A(ApplyCmd);
    sys::fs::make_absolute(A);
    ApplyCmd = std::string(A);
  }
  if (!ApplyCmd.empty())
    SO.ApplyCommand = {ApplyCmd};
  SO.CompilerArgs = CompilerArgs;
  SO.Ptxas = !NoPtxas;
  SO.Rounds = RoundsOpt;
  SO.VerifyJobs = VerifyJobsOpt;
  SO.ScreenSeeds = ScreenSeedsOpt;
  SO.TimingFirst = !NoTimingFirst;
  SO.BaselineBuildCache = (OutDir + "/baseline-builds").str();
  if (Expected<std::string> Lib = measure::findCuptiLibrary(Ctx.Argv0.c_str(), (void *)&selfPath))
    SO.CuptiLib = *Lib;
  else
    consumeError(Lib.takeError());
  if (Expected<std::string> W = capture::findReplayWorker(Ctx.Argv0.c_str(), (void *)&selfPath))
    SO.ReplayWorker = *W;
  else
    SO.ReplayWorkerProblem = toString(W.takeError());
  return SO;
}

optimize::OptimizeOptions optimizeOptions(const measure::WorkloadConfig &C, StringRef OutDir, bool Absolute,
                                          bool Resume) {
  optimize::OptimizeOptions O;
  O.OutDir = OutDir.str();
  O.BaselineDir = C.Dir;
  O.Resume = Resume;
  O.AbsoluteProposals = Absolute;
  O.MaxCandidates = MaxCandidates;
  O.MaxRounds = MaxRounds;
  O.Plateau = PlateauOpt;
  if (TimeBudget > 0)
    O.TimeBudgetS = TimeBudget;
  if (TokenBudget > 0)
    O.TokenBudget = TokenBudget;
  if (SpeedOfLight > 0)
    O.SpeedOfLightPct = SpeedOfLight;
  if (auto B = MemoryBuffer::getFile(C.Path))
    O.ConfigHash = optimize::configHash((*B)->getBuffer());
  SmallString<256> ConfigAbs(C.Path);
  sys::fs::make_absolute(ConfigAbs);
  sys::path::remove_dots(ConfigAbs, true);
  O.ConfigPath = std::string(ConfigAbs);
  O.Canary = !NoCanary;
  // Default: half the CPUs (nvcc and clang each keep one busy), 1 to 8.
  O.PrepareJobs = PrepareJobsOpt >= 0 ? unsigned(PrepareJobsOpt)
                                      : std::clamp(llvm::hardware_concurrency().compute_thread_count() / 2, 1u, 8u);
  O.Batch = BatchOpt;
  O.Agreement = AgreementOpt;
  O.Targets = C.Targets;
  O.Timing = C.Search.Timing;
  for (const measure::ShapeSpec &Sh : C.Shapes)
    if (!Sh.HeldOut)
      O.SearchShapes.push_back(Sh.Name);
  // Every proposer sees what the workload lets it tune (targets, sources, protected files).
  O.ExtraContext["workload"] = toJSON(WorkloadScope{C.Targets, C.Dir, C.Sources, C.Protected});
  return O;
}

/// What the run ended with, and the files written.
void printResult(const optimize::OptimizeResult &R, const std::vector<std::string> &Written, bool SaidNoGpu) {
  if (R.GpuSkipped && !SaidNoGpu)
    outs() << "kloop optimize: verification and measurement skipped: no GPU\n";
  outs() << "kloop optimize: stopped: " << terminalSafe(R.StopReason) << "\n";
  if (!R.Unreliable.empty())
    outs() << "kloop optimize: WARNING: " << R.Unreliable << "\n";
  outs() << "kloop optimize: " << R.Candidates << " candidate(s); "
         << (R.Best ? "accepted cand-" + std::to_string(*R.Best) : std::string("nothing accepted")) << "\n";
  for (const std::string &F : Written)
    outs() << "kloop optimize: wrote " << F << "\n";
}

/// Where --progress sends the progress lines: standard output when it is a terminal (auto, always),
/// standard error when it is not (always), nowhere (never, or auto without a terminal).
raw_ostream *progressStream() {
  if (ProgressOpt == "never")
    return nullptr;
  if (sys::Process::StandardOutIsDisplayed())
    return &outs();
  return ProgressOpt == "always" ? &errs() : nullptr;
}

/// Tunes one workload (the single-workload mode, and each kernel of codebase mode): the proposer, the
/// journal, the stages (wrapped by T.Wrap), runOptimize, and the results written to T.OutDir.
Expected<TuneResult> tuneWorkload(const CommandContext &Ctx, const TuneRequest &T) {
  const measure::WorkloadConfig &C = *T.Config;
  if (AgreementOpt && C.Search.Timing == measure::SearchTiming::Workload)
    return failure("--agreement compares replayed search steps with workload runs, and " + C.Path +
                   " has search.timing: workload (no step replays)");
  if (std::string Why = optimize::runCommandTimingProblem(C); !Why.empty())
    return failure(Why);
  if (!recoverInterruptedWrites("optimize", {C.Dir}))
    return failure("cannot recover an interrupted kloop apply --in-place in " + C.Dir);
  Expected<ChosenProposer> P = makeProposer(Ctx, C);
  if (!P)
    return P.takeError();
  Expected<std::unique_ptr<Journal>> J = openJournal(T.Journal, T.Resume, T.OutDir);
  if (!J)
    return J.takeError();
  std::unique_ptr<optimize::Stages> S = optimize::makeProcessStages(C, stagesOptions(Ctx, T.OutDir, T.CompilerArgs));
  if (T.Wrap)
    S = T.Wrap(std::move(S));
  TuneResult Out;
  optimize::ProgressFn Progress = [&](const optimize::ProgressEvent &E) {
    if (E.Kind == optimize::ProgressKind::VerificationSkipped)
      Out.SaidNoGpu = true;
    if (T.Progress)
      T.Progress(E);
  };
  optimize::OptimizeOptions O = optimizeOptions(C, T.OutDir, P->Absolute, T.Resume);
  if (T.TimeBudgetS)
    O.TimeBudgetS = T.TimeBudgetS;
  Expected<optimize::OptimizeResult> R = optimize::runOptimize(**J, *S, *P->P, O, Progress);
  if (!R)
    return R.takeError();
  Expected<std::vector<std::string>> W = optimize::writeResults(**J, R->Run, T.OutDir);
  if (!W)
    return W.takeError();
  Expected<std::string> Patch = optimize::renderPatch(**J, R->Run);
  if (!Patch)
    return Patch.takeError();
  Out.Result = std::move(*R);
  Out.Written = std::move(*W);
  Out.Patch = std::move(*Patch);
  return Out;
}

/// The codebase mode's options, checked by runCodebaseMode.
CodebaseArgs codebaseArgs() {
  CodebaseArgs A;
  A.BuildPath = BuildPathOpt;
  A.Run = RunOpt;
  A.Test = TestOpt;
  A.Build = BuildOpt;
  A.Cover = CoverOpt;
  A.Kernels = KernelsOpt;
  A.Fix = FixOpt;
  A.ExportFixes = ExportFixesOpt;
  A.OutDir = OutDirOpt;
  A.ConfigGiven = !ConfigPath.empty();
  A.JournalGiven = !JournalPath.empty();
  A.TestTimeoutS = TestTimeoutOpt;
  if (TimeBudget > 0)
    A.TimeBudgetS = TimeBudget;
  return A;
}

int runOptimize(const CommandContext &Ctx) {
  if (!BuildPathOpt.empty()) {
    if (Error E = checkOptions())
      return fail(std::move(E));
    return runCodebaseMode(Ctx, codebaseArgs(), tuneWorkload);
  }
  if (ConfigPath.getNumOccurrences() == 0 || JournalPath.getNumOccurrences() == 0) // --journal "" is checked below
    return fail(usage("--config and --journal are required (or -p BUILD_DIR --run \"...\" for codebase mode)"));
  if (Error E = checkOptions())
    return fail(std::move(E));
  if (Error E = checkJournalPath())
    return fail(std::move(E));
  Expected<measure::WorkloadConfig> C = measure::loadConfig(ConfigPath);
  if (!C) { // already "file:line:col: error: ...", as kloop measure and compare print it
    errs() << toString(C.takeError()) << "\n";
    return 1;
  }
  Expected<std::string> OutDir = outputDir();
  if (!OutDir)
    return fail(OutDir.takeError());
  raw_ostream *ProgressOut = progressStream();
  TuneRequest T;
  T.Config = &*C;
  T.Journal = JournalPath;
  T.OutDir = *OutDir;
  T.Resume = ResumeOpt;
  T.CompilerArgs = Ctx.ExtraArgs;
  T.Progress = [&](const optimize::ProgressEvent &E) {
    if (E.Kind == optimize::ProgressKind::VerificationSkipped)
      outs() << "kloop optimize: " << terminalSafe(E.Text) << "\n"; // said plainly, TTY or not
    else if (ProgressOut)
      *ProgressOut << "[kloop] " << terminalSafe(E.Text) << "\n";
  };
  Expected<TuneResult> R = tuneWorkload(Ctx, T);
  if (!R)
    return fail(R.takeError());
  printResult(R->Result, R->Written, R->SaidNoGpu);
  return 0;
}

kloop::CommandRegistration Registration(OptSub, runOptimize);

} // namespace
