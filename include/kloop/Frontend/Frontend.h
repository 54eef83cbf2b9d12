//===- kloop/Frontend/Frontend.h - Parsing CUDA translation units ---------===//
///
/// \file
/// Turns the user's inputs (a compilation database, or files and directories
/// followed by `-- <compiler args>`, as with clang-tidy) into compile jobs, and
/// parses each job's translation unit with clang 22 as CUDA on the device side
/// (kernel bodies, `--cuda-device-only`, one GPU architecture, sm_90 unless the
/// command or the user names another) and on the host side (launch sites,
/// `--cuda-host-only`). Jobs run in parallel.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_FRONTEND_FRONTEND_H
#define KLOOP_FRONTEND_FRONTEND_H

#include "kloop/Frontend/CudaInstallation.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace clang {
class Diagnostic;
class FrontendAction;
class FunctionDecl;
namespace tooling {
class JSONCompilationDatabase;
}
} // namespace clang

namespace kloop {

class PreambleCache;

/// Which compilation of a CUDA translation unit is parsed.
enum class Side { Device, Host };

/// "device" or "host".
llvm::StringRef sideName(Side S);

/// How inputs are found and parsed.
struct FrontendOptions {
  /// Directory holding compile_commands.json (`-p`). Empty: none given.
  std::string BuildPath;
  /// Files and directories named on the command line. A directory stands for
  /// every *.cu file below it. With BuildPath set and Inputs empty, every CUDA
  /// entry of the database is used.
  std::vector<std::string> Inputs;
  /// Directory against which relative inputs, a relative BuildPath and the
  /// relative paths in ExtraArgs are resolved, and the working directory of
  /// the jobs built from ExtraArgs (CompileJob::Directory). Empty: the
  /// process's current directory. kloop optimize sets it to the workload's
  /// (or the candidate's) source directory instead of changing the process's.
  std::string WorkingDir;
  /// Arguments after `--` (used when BuildPath is empty).
  std::vector<std::string> ExtraArgs;
  /// True when `--` was given (even with no arguments after it).
  bool HasExtraArgs = false;
  /// `--cuda-path`; empty means $CUDA_HOME, $CUDA_PATH, /usr/local/cuda.
  std::string CudaPath;
  /// GPU architecture for the device side. Empty: the first one the compile
  /// command names, else "sm_90".
  std::string GpuArch;
  /// Parallel jobs; 0 means one per hardware thread.
  unsigned Jobs = 0;
  /// `--strict-flags`: a compile flag that neither nvcc's flag table nor clang knows, or an
  /// nvcc flag kloop does not support, makes its translation unit fail (CompileJob::Error)
  /// instead of being ignored with a warning (CompileJob::Warnings).
  bool StrictFlags = false;
};

/// The GPU architecture of a command that names none: nvcc 13.0's default (`nvcc --dryrun -c x.cu` runs
/// cicc and ptxas for compute_75/sm_75), the lowest CUDA 13 supports; clang's own default, sm_52, is one
/// CUDA 13 refuses. Code under `#elif defined(__CUDA_ARCH__)` below an `#if __CUDA_ARCH__ >= 800` is
/// what such a build compiles.
inline constexpr const char *DefaultGpuArch = "sm_75";

/// One translation unit to parse, or one input that could not become one.
struct CompileJob {
  /// Absolute path of the main source file (or of the offending input).
  std::string File;
  /// Working directory of the compile command.
  std::string Directory;
  /// clang driver arguments without argv[0], nvcc flags already translated,
  /// the source file included.
  std::vector<std::string> Args;
  /// GPU architectures the original command named (clang spelling), the first the one every parse reads
  /// unless FrontendOptions::GpuArch names another; DefaultGpuArch when the command names none.
  std::vector<std::string> GpuArchs;
  /// Set when this input cannot be parsed at all (missing file, a bad nvcc command, unknown
  /// flags under --strict-flags, a directory without CUDA sources): the reason, naming the input.
  std::optional<std::string> Error;
  /// Flags of the compile command that were ignored because neither nvcc's flag table nor
  /// clang knows them, or because kloop does not support them, and other facts about the
  /// command the user should know (a file listed twice in the database): one sentence each
  /// (the caller prints them with the file name).
  std::vector<std::string> Warnings;
  /// When the compilation database lists this file with several commands that parse
  /// differently, each is a job of its own: the 1-based position of this one's command in the
  /// database. 0 otherwise.
  unsigned Entry = 0;
};

/// Builds the job list. nvcc commands of a compilation database and the arguments after `--`
/// are translated with the nvcc flag table (kloop/Frontend/NvccArgs.h), so both modes accept
/// the same flags; clang commands of a database are used as they are, less the flags clang
/// does not know. A file the database lists several times yields one job per distinct
/// translated command (CompileJob::Entry), and one job, with a warning naming the entries,
/// for commands that translate alike; never a silent merge. Per-input problems are reported
/// in CompileJob::Error so
/// that the other translation units are still parsed; an llvm::Error is returned
/// only when nothing can be done at all (e.g. `-p DIR` without a readable
/// compile_commands.json, or no inputs).
llvm::Expected<std::vector<CompileJob>> planCompileJobs(const FrontendOptions &Opts);

/// The compilation database in the JSON file \p Path (clang's JSON format, commands auto-detected).
/// Before clang reads it, kloop checks that it is a JSON array of objects, each with a string
/// "directory" and "file" and a string "command" or an "arguments" array of strings; errors name
/// \p Path and what is wrong: the JSON parser's line and column, or the first bad entry (0-based).
llvm::Expected<std::unique_ptr<clang::tooling::JSONCompilationDatabase>> loadCompilationDatabase(llvm::StringRef Path);

/// Compile jobs ready to be parsed: planCompileJobs's, after an interrupted
/// `kloop apply --in-place` next to their files was finished or rolled back.
struct PlannedJobs {
  std::vector<CompileJob> Jobs;
  /// One line per action recoverInterruptedWrites took (kloop/Support/FileTransaction.h), for the
  /// caller to print.
  std::vector<std::string> RecoveryNotes;
};

/// planCompileJobs, then recoverInterruptedWrites on the jobs' files, so that
/// nothing reads a half-written file. Errors: those of both (a manifest that
/// cannot be recovered names it).
llvm::Expected<PlannedJobs> planJobsAndRecover(const FrontendOptions &Opts);

/// The full clang command line (argv[0] included) that parses \p Job on side
/// \p S with -fsyntax-only, the CUDA installation's include directories,
/// `-Wno-unknown-cuda-version` (clang 22 knows CUDA up to 12.9; CUDA 13 parses),
/// `-ferror-limit=0` (no fatal stop after 20 errors: a translation unit with
/// errors still yields the kernels they do not touch) and `-include` of kloop's
/// nvcc compatibility header (nvccCompatHeaderPath()).
std::vector<std::string> sideCommandLine(const CompileJob &Job, Side S,
                                         const FrontendOptions &Opts);

/// A diagnostic from a parse, with a presumed (line-directive aware) location.
struct ParseDiagnostic {
  std::string File;
  unsigned Line = 0, Column = 0;
  /// "error", "fatal", "warning".
  std::string Level;
  std::string Message;
  /// "file:line:col: level: message".
  std::string str() const;
};

/// Outcome of parsing one side of one translation unit.
struct ParseResult {
  /// True when clang reported no error.
  bool Ok = false;
  /// Errors and warnings, in the order clang reported them.
  std::vector<ParseDiagnostic> Diagnostics;
  /// Absolute paths of every file on disk the parse read or found while
  /// searching (main file, headers, `__has_include` hits), sorted; in-memory
  /// (mapped) files are left out. What the extract cache re-hashes.
  std::vector<std::string> InputFiles;
  /// Set when the parse crashed (a signal or an assertion in clang or in the
  /// action, caught by llvm::CrashRecoveryContext; the process lives on): what
  /// crashed, naming the main file, e.g. "clang crashed while parsing /w/k.cu
  /// (device side)". Diagnostics then also holds a fatal error saying so, so
  /// that parseUnusable() is true.
  std::optional<std::string> Crash;
  /// True when the parse loaded a precompiled preamble (parseCommandLine's
  /// \p Preambles). InputFiles then lacks the files the preamble read.
  bool UsedPreamble = false;
  /// True when the preamble it loaded did not carry over what the parse
  /// needed of it (PreambleCache::run's StateLost): its results may differ
  /// from a parse without one.
  bool PreambleStateLost = false;
};

/// A parse that crashed (ParseResult::Crash) while a stage worked: not a
/// refusal of an edit and not an error of the user's code, but a failure of
/// the tool on one input. message(): "<Stage>: <what crashed>", e.g. "apply:
/// clang crashed while parsing /w/k.cu (host side)".
class ParseCrashError : public llvm::ErrorInfo<ParseCrashError> {
public:
  static char ID;
  ParseCrashError(std::string Stage, std::string What) : Stage(std::move(Stage)), What(std::move(What)) {}
  /// "extract", "apply".
  std::string Stage;
  /// ParseResult::Crash of the first parse that crashed.
  std::string What;
  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }
};

/// True once any parse of this process crashed (ParseResult::Crash). The
/// process lives on, but a crashed parse abandons its thread's stack with
/// whatever it had registered in LLVM's global state (clang's `#pragma clang
/// __debug crash` leaves a Timer in LLVM's default TimerGroup), so the tool
/// should end without LLVM's shutdown (kloopMain does).
bool anyParseCrashed();

/// Notes the crashes of every parse (parseCommandLine) that the constructing
/// thread runs while the scope lives, for callers that reach the parses only
/// through a library function that folds the ParseResult into its own result
/// (applyProposal turns an unusable parse into an error or a refusal). Scopes
/// nest; a crash is noted in the innermost one. The parses of a parallelFor the
/// thread calls are noted too, in index order; parses of threads it starts in
/// other ways are not seen: read their ParseResult::Crash.
class ParseCrashScope {
public:
  ParseCrashScope();
  ~ParseCrashScope();
  ParseCrashScope(const ParseCrashScope &) = delete;
  ParseCrashScope &operator=(const ParseCrashScope &) = delete;
  /// ParseResult::Crash of each crashed parse, in order.
  const std::vector<std::string> &crashes() const { return Crashes; }
  /// A ParseCrashError for the first crash, tagged with \p Stage; success when none crashed.
  llvm::Error takeError(llvm::StringRef Stage) const;

private:
  friend struct ParseCrashNotifier;
  std::vector<std::string> Crashes;
  ParseCrashScope *Outer;
};

/// Parses \p Job on side \p S, running \p Action (e.g. an ASTFrontendAction that
/// collects the inventory). Safe to call from several threads at once.
ParseResult parseSide(const CompileJob &Job, Side S, const FrontendOptions &Opts,
                      std::unique_ptr<clang::FrontendAction> Action);

/// Parses \p CommandLine (argv[0] included) in directory \p Directory with
/// \p Action. The building block of parseSide, also used by kloop apply to
/// re-parse edited code held in memory: \p MappedFiles maps absolute paths to
/// replacement contents. Every parse also sees kloop's nvcc compatibility layer
/// (docs/nvcc-compat.md): the compatibility header as an in-memory file at
/// nvccCompatHeaderPath(), kernel launches written `<< <...>> >` read as `<<<...>>>`
/// (a same-length rewrite of what clang reads, so offsets stay valid), clang's
/// "initialization is not supported for __shared__ variables" error reported as a
/// warning for a declaration without an initializer (nvcc: warning 20054-D), and the
/// -D/-U flags of ordinary macro names (`-DN=64`) applied right after clang's CUDA
/// wrapper instead of before it, whose extra headers (cuda.h, curand) use such names;
/// their location still reads `<command line>`. With \p Preambles, the implicit
/// includes are loaded from a precompiled preamble when one can be reused
/// (kloop/Frontend/Preamble.h; ParseResult::UsedPreamble), and the parse is
/// otherwise the same.
ParseResult parseCommandLine(const std::vector<std::string> &CommandLine,
                             llvm::StringRef Directory,
                             std::unique_ptr<clang::FrontendAction> Action,
                             const std::vector<std::pair<std::string, std::string>> &MappedFiles = {},
                             PreambleCache *Preambles = nullptr);

/// Absolute path under which parses see kloop's nvcc compatibility header (an in-memory
/// file whose text is compiled into kloop, lib/Frontend/nvcc_compat.cuh); no such file
/// exists on disk.
llvm::StringRef nvccCompatHeaderPath();

/// For an error clang reports in code nvcc accepts, the note kloop appends to it when it reports it
/// as a warning instead; std::nullopt for a real error. Three such errors:
/// - clang's "initialization is not supported for __shared__ variables" on a declaration with no
///   initializer written (`__shared__ cuda::barrier<...> b;`, whose type has a non-empty
///   constructor or destructor). nvcc accepts it with warning 20054-D ("dynamic initialization is
///   not supported for a function-scope static __shared__ variable") and runs no constructor; an
///   initializer that is written stays an error, as in nvcc.
/// - "invalid % escape in inline assembly string" (`asm("mov.u32 %0, %laneid;" : "=r"(r))`): nvcc
///   hands the text to ptxas as it is, where %laneid is a PTX special register. clang's Sema keeps
///   the asm statement, operands included, in the AST.
/// - any error of a host-side parse (`--cuda-host-only`) raised while clang instantiates the body of
///   a function that only device code uses: a `__global__` or `__device__` (not `__host__`) function
///   template or such a member of a class template specialization, or a `__host__ __device__` one
///   whose point of instantiation lies in a device-only body. nvcc's host pass never instantiates those
///   bodies (checked with nvcc 13.0), so code that uses what exists only under `__CUDA_ARCH__`
///   builds. Read from the parse's Sema (the outermost function of its instantiation stack), which
///   parseCommandLine makes visible to this function on the parsing thread; a diagnostic of another
///   engine is not judged.
std::optional<std::string> nvccAcceptedError(const clang::Diagnostic &Info);

/// True for the warning every parse raises at a preprocessor condition outside the system headers that
/// tests `__NVCC__` (which nvcc defines and kloop's parse does not), `__clang__` or `__CUDA__` (which
/// kloop's parse defines and nvcc does not; docs/nvcc-compat.md): the branch kloop reads there may not be
/// the one nvcc builds. `kloop extract` prints these, once per place.
bool isNvccMacroWarning(const ParseDiagnostic &D);

/// True for a function nvcc compiles for the device only: a kernel, or `__device__` without `__host__`
/// (a lambda in device code is `__host__ __device__` implicitly, so not one).
bool isDeviceOnly(const clang::FunctionDecl &F);

/// The text of kloop's nvcc compatibility header.
llvm::StringRef nvccCompatHeaderText();

/// \p Source with every CUDA launch whose chevrons nvcc accepts with blanks in them
/// (`k<< <grid, block>> >(args)`: blanks between `<<` and `<`, whitespace between `>>` and
/// `>`) rewritten to `<<<` and `>>>`, keeping every offset and line: the blanks move after
/// the chevron. `operator<< <T>` and text in comments and string literals are left alone.
/// Returns std::nullopt when there is nothing to rewrite.
std::optional<std::string> normalizeLaunchChevrons(llvm::StringRef Source);

/// \p Source with the body of every one-line object-like macro that is exactly `#pragma unroll`
/// (`#define PRAGMA_UNROLL #pragma unroll`, moderngpu's meta.hxx) rewritten to `__kloop_unroll`, the
/// same 14 characters, which kloop's compatibility header defines as `_Pragma("unroll")`. nvcc's
/// device front end reads the expanded `#pragma unroll` as the directive; clang sees a `#` token in
/// an expression ("expected expression"). Every offset and line is kept. Other pragma texts in
/// macros (`#pragma unroll 4`) have no same-length form and are left alone. Returns std::nullopt
/// when there is nothing to rewrite.
std::optional<std::string> normalizePragmaMacros(llvm::StringRef Source);

/// Runs \p Fn(I) for I in [0, N) on \p Jobs threads (0: one per hardware thread);
/// the tasks start in index order. The crashed parses of the tasks are noted in the
/// calling thread's ParseCrashScope, in index order.
void parallelFor(size_t N, unsigned Jobs, const std::function<void(size_t)> &Fn);

/// Path of the clang++ driver that kloop parses with (LLVM 22's bin directory,
/// as found at configure time); its location also gives clang's resource
/// directory (builtin headers, CUDA wrapper headers).
std::string clangDriverPath();

} // namespace kloop

#endif
