//===- Frontend.cpp - Parsing CUDA translation units ----------------------===//
#include "kloop/Frontend/Frontend.h"
#include "kloop/Frontend/Diagnostics.h"
#include "kloop/Frontend/NvccArgs.h"
#include "kloop/Frontend/Preamble.h"
#include "kloop/Support/FileTransaction.h"
#include "kloop/Support/Path.h"
#include "HostCompiler.h"
#include "NvccCompat.h"

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/Stack.h"
#include "clang/Basic/FileManager.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Options/OptionUtils.h"
#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/JSONCompilationDatabase.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/VirtualFileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <csignal>
#include <set>

#ifndef KLOOP_LLVM_BINDIR
#define KLOOP_LLVM_BINDIR "/usr/lib/llvm-22/bin"
#endif

using namespace llvm;
using namespace clang;

namespace kloop {

StringRef sideName(Side S) { return S == Side::Device ? "device" : "host"; }

std::string clangDriverPath() { return std::string(KLOOP_LLVM_BINDIR) + "/clang++"; }

std::string ParseDiagnostic::str() const {
  std::string S;
  raw_string_ostream OS(S);
  if (!File.empty())
    OS << File << ":" << Line << ":" << Column << ": ";
  OS << Level << ": " << Message;
  return S;
}

static bool isCudaSource(StringRef File) {
  return sys::path::extension(File) == ".cu";
}

static bool commandIsCuda(const tooling::CompileCommand &C) {
  if (isCudaSource(C.Filename))
    return true;
  if (!C.CommandLine.empty() && isNvccCompiler(C.CommandLine[0]))
    return true;
  for (size_t I = 0; I + 1 < C.CommandLine.size(); ++I)
    if (C.CommandLine[I] == "-x" && (C.CommandLine[I + 1] == "cu" || C.CommandLine[I + 1] == "cuda"))
      return true;
  return false;
}

/// Why \p File cannot be read as a source (reading a FIFO blocks forever, a device never ends).
static std::optional<std::string> notRegularFile(StringRef File) {
  sys::fs::file_status St;
  if (sys::fs::status(File, St) || St.type() == sys::fs::file_type::regular_file)
    return std::nullopt;
  StringRef Kind = St.type() == sys::fs::file_type::fifo_file     ? "a FIFO"
                   : St.type() == sys::fs::file_type::socket_file ? "a socket"
                   : St.type() == sys::fs::file_type::block_file || St.type() == sys::fs::file_type::character_file
                       ? "a device"
                       : "an unknown kind of file";
  return ("not a regular file (" + Kind + "); kloop reads only regular source files").str();
}

/// GPU architectures named with clang's own flags.
static void collectClangGpuArchs(CompileJob &J) {
  for (const std::string &A : J.Args) {
    StringRef S(A);
    if (S.consume_front("--cuda-gpu-arch=") || S.consume_front("--offload-arch="))
      for (StringRef Each : llvm::split(S, ',')) // clang takes a comma-separated list too
        if (!Each.empty())
          J.GpuArchs.push_back(Each.str());
  }
}

/// Quotes and joins \p Flags: 'a', 'b'.
static std::string quotedList(const std::vector<std::string> &Flags) {
  std::string S;
  for (size_t I = 0; I < Flags.size(); ++I)
    S += (I ? ", '" : "'") + Flags[I] + "'";
  return S;
}

/// Turns the flags no one knows and the unsupported nvcc flags of \p T into warnings of
/// \p J, or into its error under --strict-flags.
static void reportIgnoredFlags(const TranslatedCommand &T, bool Strict, CompileJob &J) {
  std::vector<std::string> Msgs;
  if (!T.Unknown.empty())
    Msgs.push_back("unknown compiler flag" + std::string(T.Unknown.size() > 1 ? "s " : " ") +
                   quotedList(T.Unknown) +
                   " in its compile command (neither an nvcc flag nor a clang flag)");
  for (const std::string &F : T.Unsupported) {
    const NvccFlagInfo *Info = findNvccFlag(StringRef(F).split('=').first);
    Msgs.push_back("nvcc flag '" + F + "' is not supported by kloop's parse" +
                   (Info ? " (" + Info->Note.str() + ")" : std::string()));
  }
  if (Msgs.empty())
    return;
  if (Strict) {
    std::string E;
    for (const std::string &M : Msgs)
      E += (E.empty() ? "" : "; ") + M;
    J.Error = E + " (--strict-flags)";
    return;
  }
  for (const std::string &M : Msgs)
    J.Warnings.push_back(M + "; ignored");
}

/// What nvcc's host passes see under -fopenmp: the host compiler's omp.h (its directory searched
/// after every other, so that clang's own builtin headers still win) and its _OPENMP, in both
/// passes as in nvcc. clang 22 here ships no omp.h.
static void addHostOpenMP(StringRef Bindir, CompileJob &J) {
  std::string Compiler = hostCompilerFor(Bindir);
  Expected<HostOpenMP> OpenMP = queryHostOpenMP(Compiler);
  if (!OpenMP) {
    J.Warnings.push_back("-fopenmp is a host compiler flag, but kloop could not ask the host compiler '" +
                         Compiler + "' (" + (Bindir.empty() ? "nvcc's default; -ccbin names another" : "-ccbin") +
                         ") for its omp.h and _OPENMP: " + toString(OpenMP.takeError()) +
                         "; parsed without them");
    return;
  }
  J.Args.insert(J.Args.begin(), {"-idirafter", OpenMP->IncludeDir, "-D_OPENMP=" + OpenMP->Version});
}

/// Turns one compile command into a job. nvcc commands and \p NvccStyle commands (the
/// arguments after `--`) go through the nvcc flag table; other commands are clang's.
static CompileJob makeJob(tooling::CompileCommand C, StringRef DatabaseDir, bool NvccStyle,
                          bool StrictFlags) {
  // A relative "directory" is relative to the database's own folder (what
  // CMake never writes but hand-written and checked-in databases often do).
  if (!DatabaseDir.empty() && !sys::path::is_absolute(C.Directory))
    C.Directory = absolutePath(C.Directory, DatabaseDir);
  CompileJob J;
  J.Directory = C.Directory;
  J.File = absolutePath(C.Filename, C.Directory);
  if (!sys::fs::exists(J.File)) {
    J.Error = "no such file";
    return J;
  }
  if (std::optional<std::string> Why = notRegularFile(J.File)) {
    J.Error = *Why;
    return J;
  }
  std::vector<std::string> Rest(C.CommandLine.begin() + (C.CommandLine.empty() ? 0 : 1),
                                C.CommandLine.end());
  TranslatedCommand T;
  if (NvccStyle || (!C.CommandLine.empty() && isNvccCompiler(C.CommandLine[0]))) {
    auto Translated = translateNvccArgs(Rest, C.Directory);
    if (!Translated) {
      J.Error = "bad nvcc command: " + toString(Translated.takeError());
      return J;
    }
    T = std::move(*Translated);
  } else {
    T.Unknown = findUnknownClangFlags(Rest);
    for (std::string &A : Rest)
      if (!llvm::is_contained(T.Unknown, A))
        T.Args.push_back(std::move(A));
  }
  J.Args = std::move(T.Args);
  if (T.HostOpenMP)
    addHostOpenMP(T.HostCompilerBindir, J);
  J.GpuArchs = std::move(T.GpuArchs);
  collectClangGpuArchs(J);
  if (J.GpuArchs.empty())
    J.GpuArchs.push_back(DefaultGpuArch);
  reportIgnoredFlags(T, StrictFlags, J);
  return J;
}

/// The entries of a compilation database for one source file, with their 1-based positions.
using Entries = std::vector<std::pair<tooling::CompileCommand, unsigned>>;

/// "entries 1 and 3", "entries 1, 2 and 5".
static std::string entryList(const std::vector<unsigned> &Positions) {
  std::string S;
  for (size_t I = 0; I < Positions.size(); ++I)
    S += (I == 0 ? "" : I + 1 == Positions.size() ? " and " : ", ") + std::to_string(Positions[I]);
  return "entries " + S;
}

/// The jobs of one file's database entries: one per distinct translated command (the same
/// directory and arguments), each with its Entry when there are several; commands that
/// translate alike are one job, with a warning naming them all.
static std::vector<CompileJob> jobsOfEntries(const Entries &Cmds, StringRef DbDir, bool Strict) {
  std::vector<CompileJob> Jobs;
  std::vector<std::vector<unsigned>> Alike; // per job: the positions of the commands it stands for
  std::vector<bool> MoreArchs;              // per job: a later command added GPU architectures
  for (const auto &[C, Position] : Cmds) {
    CompileJob J = makeJob(C, DbDir, /*NvccStyle=*/false, Strict);
    auto Same = llvm::find_if(Jobs, [&](const CompileJob &O) {
      return O.Directory == J.Directory && O.Args == J.Args && O.Error == J.Error;
    });
    if (Same == Jobs.end()) {
      Jobs.push_back(std::move(J));
      Alike.push_back({Position});
      MoreArchs.push_back(false);
      continue;
    }
    size_t I = Same - Jobs.begin();
    Alike[I].push_back(Position);
    for (std::string &A : J.GpuArchs) // one parse, under every architecture of the commands
      if (!llvm::is_contained(Same->GpuArchs, A)) {
        Same->GpuArchs.push_back(std::move(A));
        MoreArchs[I] = true;
      }
  }
  for (size_t I = 0; I < Jobs.size(); ++I) {
    if (Alike[I].size() > 1)
      Jobs[I].Warnings.push_back(
          "listed " + std::to_string(Alike[I].size()) + " times in the compilation database (" + entryList(Alike[I]) +
          ") with commands that parse alike (they differ only in flags that do not change parsing" +
          (MoreArchs[I] ? " and in GPU architectures" : "") + "); parsed once, as entry " +
          std::to_string(Alike[I][0]) +
          (MoreArchs[I] ? ", under every architecture they build (" + llvm::join(Jobs[I].GpuArchs, ", ") + ")" : ""));
    if (Jobs.size() > 1)
      Jobs[I].Entry = Alike[I][0];
  }
  if (Jobs.size() > 1) {
    std::vector<unsigned> Firsts;
    for (const std::vector<unsigned> &A : Alike)
      Firsts.push_back(A[0]);
    Jobs[0].Warnings.push_back(
        "listed " + std::to_string(Jobs.size()) + " times in the compilation database with different commands (" +
        entryList(Firsts) + "); each is parsed as a translation unit of its own (translation_units[].entry): a "
        "kernel they both define is one inventory entry with the instantiations of both, and kloop apply checks "
        "an edit under every command");
  }
  return Jobs;
}

/// Every CUDA entry of \p All (the whole database, in its order) grouped by the absolute path
/// of its file, the groups in the order of their first entries.
static std::vector<std::pair<std::string, Entries>>
cudaEntriesByFile(const std::vector<tooling::CompileCommand> &All, StringRef DbDir) {
  std::vector<std::pair<std::string, Entries>> Groups;
  for (size_t I = 0; I < All.size(); ++I) {
    if (!commandIsCuda(All[I]))
      continue;
    std::string File = absolutePath(All[I].Filename, absolutePath(All[I].Directory, DbDir));
    auto G = llvm::find_if(Groups, [&](const auto &X) { return X.first == File; });
    if (G == Groups.end())
      G = Groups.insert(Groups.end(), {File, {}});
    G->second.push_back({All[I], unsigned(I + 1)});
  }
  return Groups;
}

/// The entries of \p All (a whole database, in its order) for the source file \p File: those in
/// \p Found (the database's own lookup, which also follows symbolic links) and those whose file,
/// resolved against their directory and \p DbDir, is \p File.
static Entries entriesFor(StringRef File, const std::vector<tooling::CompileCommand> &All,
                          const std::vector<tooling::CompileCommand> &Found, StringRef DbDir) {
  Entries Mine;
  for (size_t I = 0; I < All.size(); ++I) {
    const tooling::CompileCommand &C = All[I];
    bool Listed = llvm::any_of(Found, [&](const tooling::CompileCommand &X) {
      return X.Filename == C.Filename && X.Directory == C.Directory && X.CommandLine == C.CommandLine;
    });
    if (Listed || absolutePath(C.Filename, absolutePath(C.Directory, DbDir)) == File)
      Mine.push_back({C, unsigned(I + 1)});
  }
  return Mine;
}

static void collectCudaFiles(StringRef Dir, std::vector<std::string> &Out) {
  std::error_code EC;
  for (sys::fs::recursive_directory_iterator It(Dir, EC), End; It != End && !EC; It.increment(EC)) {
    StringRef P = It->path();
    StringRef Name = sys::path::filename(P);
    if (It->type() == sys::fs::file_type::directory_file && Name.starts_with(".")) {
      It.no_push();
      continue;
    }
    if (isCudaSource(P))
      Out.push_back(P.str());
  }
  llvm::sort(Out);
}

/// The offset of a quote in \p Command that is never closed, as a POSIX shell reads quotes and backslashes
/// (clang splits a database's "command" that way on this platform, and an argument whose quote is never
/// closed silently runs to the end of the text: `nvcc -c "a.cu -o a.o` compiles a file named
/// `a.cu -o a.o`); nothing when every quote is closed.
static std::optional<size_t> unclosedQuote(StringRef Command) {
  char Quote = 0;
  size_t Open = 0;
  for (size_t I = 0; I < Command.size(); ++I) {
    char C = Command[I];
    if (Quote == '\'') { // nothing escapes inside single quotes
      Quote = C == '\'' ? 0 : Quote;
      continue;
    }
    if (C == '\\') {
      ++I;
      continue;
    }
    if (Quote == '"')
      Quote = C == '"' ? 0 : Quote;
    else if (C == '\'' || C == '"')
      Quote = C, Open = I;
  }
  if (!Quote)
    return std::nullopt;
  return Open;
}

/// What is wrong with the compiler command of database entry \p E, "" when nothing: an "arguments"
/// array that is not all strings or is empty, a "command" that is not a string, is blank or leaves a
/// quote open.
static std::string commandProblem(const json::Object &E) {
  if (const json::Array *Args = E.getArray("arguments")) {
    if (llvm::any_of(*Args, [](const json::Value &A) { return !A.getAsString(); }))
      return "\"arguments\" is not an array of strings";
    if (Args->empty() || Args->front().getAsString()->trim().empty())
      return std::string(Args->empty() ? "\"arguments\" is empty" : "\"arguments\" starts with an empty string") +
             " (it starts with the compiler, as in [\"nvcc\", \"-c\", \"a.cu\"])";
    return "";
  }
  std::optional<StringRef> Command = E.getString("command");
  if (!Command && E.get("arguments") && !E.get("command"))
    return "\"arguments\" is not an array of strings";
  if (!Command)
    return E.get("command") ? "\"command\" is not a string" : "neither \"command\" nor \"arguments\"";
  if (Command->trim().empty())
    return "\"command\" is empty";
  if (std::optional<size_t> Open = unclosedQuote(*Command))
    return "\"command\" opens a " + std::string(1, (*Command)[*Open]) + " quote at column " +
           std::to_string(*Open + 1) + " that is never closed";
  return "";
}

/// "" when \p Text is a compilation database clang can read as the JSON format specifies it (an array of
/// objects, each with a string "directory" and "file" and a string "command" or an "arguments" array of
/// strings) and whose commands split as written (commandProblem); else what is wrong: the JSON parser's
/// message with line and column, or the first entry (1-based, with its "file" when it has one) whose
/// fields are not so. clang's own reader says only "Expected string as value." or a YAML error without
/// the file's name, and reads an empty or unbalanced command without a word.
static std::string compilationDatabaseProblem(StringRef Text) {
  Expected<json::Value> V = json::parse(Text);
  if (!V)
    return "not valid JSON: " + toString(V.takeError());
  const json::Array *Entries = V->getAsArray();
  if (!Entries)
    return "not a JSON array of entries";
  for (size_t I = 0; I < Entries->size(); ++I) {
    std::string At = "entry " + std::to_string(I + 1); // 1-based, as the duplicate-entry warnings count
    const json::Object *E = (*Entries)[I].getAsObject();
    if (!E)
      return At + ": not a JSON object";
    if (std::optional<StringRef> File = E->getString("file"))
      At += " (" + File->str() + ")";
    for (const char *Key : {"directory", "file"})
      if (!E->getString(Key))
        return At + ": \"" + Key + "\" is " + (E->get(Key) ? "not a string" : "missing");
    if (std::string Why = commandProblem(*E); !Why.empty())
      return At + ": " + Why;
  }
  return "";
}

Expected<std::unique_ptr<tooling::JSONCompilationDatabase>> loadCompilationDatabase(StringRef Path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> Text = MemoryBuffer::getFile(Path);
  if (!Text)
    return createStringError(inconvertibleErrorCode(), "%s: cannot read compilation database: %s",
                             Path.str().c_str(), Text.getError().message().c_str());
  if (std::string Why = compilationDatabaseProblem((*Text)->getBuffer()); !Why.empty())
    return createStringError(inconvertibleErrorCode(), "%s: not a compilation database: %s", Path.str().c_str(),
                             Why.c_str());
  std::string Err;
  std::unique_ptr<tooling::JSONCompilationDatabase> DB =
      tooling::JSONCompilationDatabase::loadFromFile(Path, Err, tooling::JSONCommandLineSyntax::AutoDetect);
  if (!DB)
    return createStringError(inconvertibleErrorCode(), "%s: cannot read compilation database: %s",
                             Path.str().c_str(), Err.c_str());
  return DB;
}

Expected<std::vector<CompileJob>> planCompileJobs(const FrontendOptions &Opts) {
  std::vector<CompileJob> Jobs;
  std::unique_ptr<tooling::CompilationDatabase> DB;
  std::string DbDir; // folder of compile_commands.json, when -p was given
  std::string Cwd = Opts.WorkingDir;
  if (Cwd.empty()) {
    SmallString<256> C;
    sys::fs::current_path(C);
    Cwd = std::string(C);
  }
  if (!Opts.BuildPath.empty()) {
    SmallString<256> Json(Opts.BuildPath);
    if (!sys::fs::is_directory(Opts.BuildPath) && sys::path::filename(Opts.BuildPath) == "compile_commands.json")
      Json = Opts.BuildPath;
    else
      sys::path::append(Json, "compile_commands.json");
    if (!sys::fs::exists(Json))
      return createStringError(inconvertibleErrorCode(), "%s: no compile_commands.json there",
                               Opts.BuildPath.c_str());
    DbDir = sys::path::parent_path(absolutePath(Json, Cwd)).str();
    Expected<std::unique_ptr<tooling::JSONCompilationDatabase>> Loaded = loadCompilationDatabase(Json);
    if (!Loaded)
      return Loaded.takeError();
    DB = std::move(*Loaded);
    if (Opts.Inputs.empty()) {
      for (const auto &[File, Cmds] : cudaEntriesByFile(DB->getAllCompileCommands(), DbDir))
        for (CompileJob &J : jobsOfEntries(Cmds, DbDir, Opts.StrictFlags))
          Jobs.push_back(std::move(J));
      if (Jobs.empty())
        return createStringError(inconvertibleErrorCode(),
                                 "%s: the compilation database has no CUDA translation units",
                                 Json.c_str());
      return Jobs;
    }
  }
  if (Opts.Inputs.empty())
    return createStringError(inconvertibleErrorCode(),
                             "no input: give CUDA files or directories, or -p BUILD_DIR");

  // Expand directories.
  std::vector<std::string> Files;
  for (const std::string &In : Opts.Inputs) {
    std::string Abs = absolutePath(In, Cwd);
    if (sys::fs::is_directory(Abs)) {
      std::vector<std::string> Found;
      collectCudaFiles(Abs, Found);
      if (Found.empty()) {
        CompileJob J;
        J.File = Abs;
        J.Error = "no CUDA translation units (*.cu files) in this directory";
        Jobs.push_back(J);
      }
      Files.insert(Files.end(), Found.begin(), Found.end());
      continue;
    }
    if (!sys::fs::exists(Abs)) {
      CompileJob J;
      J.File = Abs;
      J.Error = "no such file";
      Jobs.push_back(J);
      continue;
    }
    Files.push_back(Abs);
  }

  std::unique_ptr<tooling::CompilationDatabase> Fixed;
  if (!DB && Opts.HasExtraArgs)
    Fixed = std::make_unique<tooling::FixedCompilationDatabase>(Cwd, Opts.ExtraArgs);
  for (const std::string &F : Files) {
    tooling::CompilationDatabase *Use = DB ? DB.get() : Fixed.get();
    std::unique_ptr<tooling::CompilationDatabase> Detected;
    if (!Use) {
      std::string Err;
      Detected = tooling::CompilationDatabase::autoDetectFromSource(F, Err);
      if (!Detected)
        Detected = std::make_unique<tooling::FixedCompilationDatabase>(Cwd, std::vector<std::string>{});
      Use = Detected.get();
    }
    std::vector<tooling::CompileCommand> Cmds = Use->getCompileCommands(F);
    if (!Fixed) {
      // A database (-p, or one found above the file): every entry it has for this file, with its
      // position. A checked-in database with relative entries ("directory": ".") is indexed by
      // relative paths, which the lookup above misses: entries are also matched by their file
      // resolved against the database's folder.
      std::string ListDir = DB ? DbDir : std::string();
      Entries Mine = entriesFor(F, Use->getAllCompileCommands(), Cmds, ListDir);
      if (!Mine.empty()) {
        for (CompileJob &J : jobsOfEntries(Mine, ListDir, Opts.StrictFlags))
          Jobs.push_back(std::move(J));
        continue;
      }
    }
    if (Cmds.empty()) {
      CompileJob J;
      J.File = F;
      J.Error = "no entry for this file in the compilation database";
      Jobs.push_back(J);
      continue;
    }
    Jobs.push_back(makeJob(Cmds.front(), std::string(), /*NvccStyle=*/Fixed != nullptr, Opts.StrictFlags));
  }
  return Jobs;
}

/// `--cuda-gpu-arch=` for nvcc's architecture \p Arch, and on the device side the macros nvcc 13.0 defines
/// for an architecture-specific (sm_90a) or family-specific (sm_100f) target and clang 22 does not
/// (`nvcc --dryrun`): __CUDA_ARCH_SPECIFIC__ (a only) and __CUDA_ARCH_FAMILY_SPECIFIC__ (both), each equal to
/// __CUDA_ARCH__. clang knows the a targets and none of the f ones, which it reads as the plain
/// architecture ("unsupported CUDA gpu architecture: sm_100f" otherwise).
static void addGpuArch(StringRef Arch, Side S, std::vector<std::string> &Extra) {
  StringRef Number = Arch;
  char Suffix = Number.consume_front("sm_") && !Number.empty() ? Number.back() : 0;
  bool Specific = Suffix == 'a', Family = Suffix == 'f';
  if (Specific || Family)
    Number = Number.drop_back();
  if ((!Specific && !Family) || Number.empty() || !llvm::all_of(Number, llvm::isDigit)) {
    Extra.push_back(("--cuda-gpu-arch=" + Arch).str());
    return;
  }
  Extra.push_back(("--cuda-gpu-arch=sm_" + Number + (Specific ? "a" : "")).str());
  if (S != Side::Device)
    return;
  std::string Value = (Number + "0").str();
  Extra.push_back("-D__CUDA_ARCH_FAMILY_SPECIFIC__=" + Value);
  if (Specific)
    Extra.push_back("-D__CUDA_ARCH_SPECIFIC__=" + Value);
}

/// `__CUDA_ARCH_LIST__` as nvcc 13.0 defines it in every pass of a command (`nvcc --dryrun`): each
/// architecture the command builds as `__CUDA_ARCH__` would give it (sm_90a is 900), ascending, without
/// repeats ("750,800,900" for -gencode lines of sm_80, sm_90 and sm_75); empty for fewer than two, where
/// clang's own definition, of the one architecture it parses, is already nvcc's.
static std::string archList(const std::vector<std::string> &Archs) {
  std::set<unsigned> Values;
  for (StringRef A : Archs) {
    StringRef Number = A;
    if (!Number.consume_front("sm_"))
      continue;
    Number = Number.rtrim("af");
    unsigned V;
    if (!Number.getAsInteger(10, V))
      Values.insert(V * 10);
  }
  if (Values.size() < 2)
    return "";
  std::string Out;
  for (unsigned V : Values)
    Out += (Out.empty() ? "" : ",") + std::to_string(V);
  return Out;
}

std::vector<std::string> sideCommandLine(const CompileJob &Job, Side S, const FrontendOptions &Opts) {
  std::vector<std::string> Args;
  Args.push_back(clangDriverPath());
  bool HasX = false, NoCudaInc = false, HasCudaPath = false;
  for (size_t I = 0; I < Job.Args.size(); ++I) {
    StringRef A = Job.Args[I];
    if (A.starts_with("--cuda-gpu-arch=") || A.starts_with("--offload-arch=") ||
        A == "--cuda-device-only" || A == "--cuda-host-only" || A == "--offload-device-only" ||
        A == "--offload-host-only")
      continue;
    if (A == "--cuda-gpu-arch" || A == "--offload-arch") {
      ++I;
      continue;
    }
    if (A == "-x")
      HasX = true;
    if (A == "-nocudainc")
      NoCudaInc = true;
    if (A.starts_with("--cuda-path"))
      HasCudaPath = true;
    Args.push_back(A.str());
  }
  std::vector<std::string> Extra;
  if (!HasX && !isCudaSource(Job.File)) {
    Extra.push_back("-x");
    Extra.push_back("cuda");
  }
  if (!NoCudaInc) {
    if (auto Cuda = findCudaInstallation(Opts.CudaPath)) {
      if (!HasCudaPath)
        Extra.push_back("--cuda-path=" + Cuda->Path);
      for (const std::string &D : Cuda->SystemIncludes) {
        Extra.push_back("-isystem");
        Extra.push_back(D);
      }
    }
  }
  std::string Arch = Opts.GpuArch;
  if (Arch.empty())
    Arch = Job.GpuArchs.empty() ? DefaultGpuArch : Job.GpuArchs.front();
  addGpuArch(Arch, S, Extra);
  if (std::string List = Opts.GpuArch.empty() ? archList(Job.GpuArchs) : "";
      !List.empty()) {
    Extra.push_back("-U__CUDA_ARCH_LIST__");
    Extra.push_back("-D__CUDA_ARCH_LIST__=" + List);
  }
  Extra.push_back(S == Side::Device ? "--cuda-device-only" : "--cuda-host-only");
  Extra.push_back("-Wno-unknown-cuda-version");
  // nvcc accepts GNU's `typeof` under any -std (its front end hands __typeof__ to the host compiler);
  // clang knows it only in gnu++ modes (docs/nvcc-compat.md).
  Extra.push_back("-fgnu-keywords");
  Extra.push_back("-Qunused-arguments");
  Extra.push_back("-fno-caret-diagnostics"); // also stops clang printing "N warnings generated"
  // No error limit: after 20 errors clang would stop with a fatal error and lose every later
  // kernel of the translation unit (the inventory reads what error recovery keeps).
  Extra.push_back("-ferror-limit=0");
  Extra.push_back("-resource-dir=" + clang::GetResourcesPath(clangDriverPath()));
  Extra.push_back("-include");
  Extra.push_back(nvccCompatHeaderPath().str());
  // Extra flags go right after argv[0] so that an explicit -x in the command
  // still applies to the file that follows it.
  Args.insert(Args.begin() + 1, Extra.begin(), Extra.end());

  tooling::ArgumentsAdjuster Adjust = tooling::combineAdjusters(
      tooling::getClangStripOutputAdjuster(),
      tooling::combineAdjusters(tooling::getClangStripDependencyFileAdjuster(),
                                tooling::getClangSyntaxOnlyAdjuster()));
  return Adjust(Args, Job.File);
}

namespace {
/// Collects errors and warnings with their presumed locations.
class CollectingDiagConsumer : public DiagnosticConsumer {
public:
  std::vector<ParseDiagnostic> Diags;
  /// Errors reported as warnings because nvcc accepts the code (nvccAcceptedError).
  unsigned NvccWarnings = 0;
  /// Errors reported as errors.
  unsigned RealErrors = 0;
  /// The engine of the file being parsed (from its preprocessor).
  DiagnosticsEngine *Engine = nullptr;
  void BeginSourceFile(const LangOptions &LO, const Preprocessor *PP) override {
    DiagnosticConsumer::BeginSourceFile(LO, PP);
    if (PP)
      Engine = &PP->getDiagnostics();
  }
  void HandleDiagnostic(DiagnosticsEngine::Level Level, const Diagnostic &Info) override {
    DiagnosticConsumer::HandleDiagnostic(Level, Info);
    if (Level < DiagnosticsEngine::Warning)
      return;
    std::optional<std::string> NvccNote;
    if (Level == DiagnosticsEngine::Error)
      NvccNote = nvccAcceptedError(Info);
    if (NvccNote) {
      Level = DiagnosticsEngine::Warning;
      ++NvccWarnings;
      // clang has counted it as an error, which would make consumers treat the AST as
      // broken; while no real error has occurred, clear the counts (a soft reset keeps the
      // diagnostic mappings).
      if (RealErrors == 0 && Engine)
        Engine->Reset(/*soft=*/true);
    } else if (Level >= DiagnosticsEngine::Error) {
      ++RealErrors;
    }
    ParseDiagnostic D = toParseDiagnostic(Level, Info);
    if (NvccNote)
      D.Message += *NvccNote;
    Diags.push_back(std::move(D));
  }
};
} // namespace

ParseDiagnostic toParseDiagnostic(DiagnosticsEngine::Level Level, const Diagnostic &Info) {
  ParseDiagnostic D;
  D.Level = Level == DiagnosticsEngine::Fatal   ? "fatal"
            : Level == DiagnosticsEngine::Error ? "error"
                                                : "warning";
  SmallString<256> Msg;
  Info.FormatDiagnostic(Msg);
  D.Message = std::string(Msg);
  if (Info.getLocation().isValid() && Info.hasSourceManager()) {
    PresumedLoc P = Info.getSourceManager().getPresumedLoc(Info.getLocation());
    if (P.isValid()) {
      D.File = P.getFilename();
      D.Line = P.getLine();
      D.Column = P.getColumn();
    }
  }
  return D;
}

/// The files \p Files knows that exist on disk and are not mapped in memory,
/// as sorted absolute paths.
static std::vector<std::string>
filesOnDisk(FileManager &Files, StringRef Directory,
            const std::vector<std::pair<std::string, std::string>> &MappedFiles) {
  SmallVector<OptionalFileEntryRef, 64> Entries;
  Files.GetUniqueIDMapping(Entries);
  std::set<std::string> Out;
  for (OptionalFileEntryRef F : Entries) {
    if (!F)
      continue;
    std::string Abs = absolutePath(F->getName(), Directory);
    bool Mapped = llvm::any_of(MappedFiles, [&](const auto &M) { return M.first == Abs; });
    if (!Mapped && sys::fs::is_regular_file(Abs))
      Out.insert(Abs);
  }
  return {Out.begin(), Out.end()};
}

/// Stack of each parse thread: clang and kloop's AST visitors recurse once per nesting level, and an
/// expression nested 2000 deep or a 20,000-term sum overflows the 8 MiB of a default thread.
static constexpr unsigned ParseStackBytes = 512u << 20;

/// Lets the crash-recovery SIGSEGV handler run on an alternate signal stack: a stack overflow leaves
/// no room on the thread's own stack to deliver the signal, and the process would be killed.
static void enableCrashRecoveryOnOverflow() {
  CrashRecoveryContext::Enable();
  struct sigaction SA;
  if (::sigaction(SIGSEGV, nullptr, &SA) == 0 && !(SA.sa_flags & SA_ONSTACK)) {
    SA.sa_flags |= SA_ONSTACK;
    ::sigaction(SIGSEGV, &SA, nullptr);
  }
}

/// Runs \p Fn on a thread with ParseStackBytes of stack under clang's stack-exhaustion handling
/// (clang::noteBottomOfStack) and a CrashRecoveryContext; false when it crashed (a crash, an
/// assertion, a stack overflow beyond ParseStackBytes).
static bool runParseSafely(llvm::function_ref<void()> Fn) {
  static bool Enabled = (enableCrashRecoveryOnOverflow(), true);
  (void)Enabled;
  CrashRecoveryContext CRC;
  return CRC.RunSafelyOnThread(
      [&] {
        // Freed when Fn returns; a crash abandons this frame (and these 64 KiB) with the thread.
        std::vector<char> AltStack(64 << 10);
        stack_t SS = {AltStack.data(), 0, AltStack.size()};
        ::sigaltstack(&SS, nullptr);
        clang::noteBottomOfStack(/*ForceSet=*/true);
        Fn();
        SS.ss_flags = SS_DISABLE;
        ::sigaltstack(&SS, nullptr);
      },
      ParseStackBytes);
}

char ParseCrashError::ID = 0;

void ParseCrashError::log(raw_ostream &OS) const { OS << Stage << ": " << What; }

/// The innermost ParseCrashScope of this thread.
static thread_local ParseCrashScope *CurrentCrashScope = nullptr;

ParseCrashScope::ParseCrashScope() : Outer(CurrentCrashScope) { CurrentCrashScope = this; }
ParseCrashScope::~ParseCrashScope() { CurrentCrashScope = Outer; }

Error ParseCrashScope::takeError(StringRef Stage) const {
  if (Crashes.empty())
    return Error::success();
  return make_error<ParseCrashError>(Stage.str(), Crashes.front());
}

static std::atomic<bool> AnyParseCrashed{false};

bool anyParseCrashed() { return AnyParseCrashed.load(); }

/// Hands a crash to the current thread's innermost scope.
struct ParseCrashNotifier {
  static void note(const std::string &What) {
    AnyParseCrashed = true;
    if (CurrentCrashScope)
      CurrentCrashScope->Crashes.push_back(What);
  }
  /// Crashes another thread's scope saw, noted in this thread's.
  static void forward(const std::vector<std::string> &Seen) {
    if (CurrentCrashScope)
      llvm::append_range(CurrentCrashScope->Crashes, Seen);
  }
};

/// The main source file of a clang command line: its last argument that is not an option and not the
/// value of an option written apart (`-include F`, `-isystem D`, `-x cuda`).
static std::string crashedFile(const std::vector<std::string> &CommandLine) {
  static const char *const Valued[] = {"-include", "-isystem", "-I", "-o", "-x", "-Xclang", "-D", "-U",
                                       "-MF", "-idirafter", "-iquote", "-imacros", "-MT", "-MQ", "-iprefix"};
  std::string File = "the translation unit";
  for (size_t I = 1; I < CommandLine.size(); ++I)
    if (!StringRef(CommandLine[I]).starts_with("-") && !llvm::is_contained(Valued, CommandLine[I - 1]))
      File = CommandLine[I];
  return File;
}

/// "device side", "host side" or "both sides" from a clang command line.
static std::string crashedSide(const std::vector<std::string> &CommandLine) {
  if (llvm::is_contained(CommandLine, "--cuda-device-only"))
    return "device side";
  if (llvm::is_contained(CommandLine, "--cuda-host-only"))
    return "host side";
  return "both sides";
}

namespace {
/// A parse through a PreambleCache: the tooling::ToolAction that hands it clang's invocation.
class PreambleParse : public tooling::ToolAction {
public:
  PreambleParse(PreambleCache &Cache, std::string Key, bool OnDisk, std::unique_ptr<FrontendAction> Action)
      : Cache(Cache), Key(std::move(Key)), OnDisk(OnDisk), Action(std::move(Action)) {}
  bool runInvocation(std::shared_ptr<CompilerInvocation> Invocation, FileManager *Files,
                     std::shared_ptr<PCHContainerOperations> PCHOps, DiagnosticConsumer *Diags) override {
    return Cache.run(Key, OnDisk, std::move(Invocation), Files, std::move(PCHOps), Diags, std::move(Action), Used,
                     Lost);
  }
  bool Used = false, Lost = false;

private:
  PreambleCache &Cache;
  std::string Key;
  bool OnDisk;
  std::unique_ptr<FrontendAction> Action;
};

/// The parse a preamble stands for: its command line and working directory.
std::string preambleKey(const std::vector<std::string> &CommandLine, StringRef Directory) {
  std::string K = Directory.str();
  for (const std::string &A : CommandLine)
    K += '\0' + A;
  return K;
}
} // namespace

/// clang's `#pragma clang __debug crash` (and its other crashing `__debug` pragmas) made inert, as
/// clangd does: source kloop reads, a proposal's code included, must not crash it on purpose. A
/// recovered crash also leaves a Timer of the dead stack in LLVM's global TimerGroup, and a second
/// such crash on another thread deadlocks on that group's lock. The crash tests of kloop's own
/// recovery set KLOOP_TEST_PRAGMA_CRASH=1 to keep the pragma.
static void disablePragmaDebugCrash(std::vector<std::string> &CommandLine) {
  if (CommandLine.empty() || sys::Process::GetEnv("KLOOP_TEST_PRAGMA_CRASH"))
    return;
  CommandLine.insert(CommandLine.begin() + 1, {"-Xclang", "-disable-pragma-debug-crash"});
}

ParseResult parseCommandLine(const std::vector<std::string> &CommandLine, StringRef Directory,
                             std::unique_ptr<FrontendAction> Action,
                             const std::vector<std::pair<std::string, std::string>> &MappedFiles,
                             PreambleCache *Preambles) {
  ParseResult R;
  IntrusiveRefCntPtr<vfs::FileSystem> Physical = vfs::createPhysicalFileSystem();
  IntrusiveRefCntPtr<vfs::OverlayFileSystem> Overlay(new vfs::OverlayFileSystem(Physical));
  if (!MappedFiles.empty()) {
    IntrusiveRefCntPtr<vfs::InMemoryFileSystem> Mem(new vfs::InMemoryFileSystem);
    for (const auto &[Path, Content] : MappedFiles)
      Mem->addFile(Path, 0, MemoryBuffer::getMemBufferCopy(Content, Path));
    Overlay->pushOverlay(Mem);
  }
  DeferredMacros Macros = deferCommandLineMacros(CommandLine);
  disablePragmaDebugCrash(Macros.CommandLine);
  IntrusiveRefCntPtr<vfs::FileSystem> FS = withNvccCompat(Overlay, Macros.Header);
  if (!Directory.empty())
    FS->setCurrentWorkingDirectory(Directory);
  IntrusiveRefCntPtr<FileManager> Files(new FileManager(FileSystemOptions(), FS));
  CollectingDiagConsumer Diags;
  DiagnosticOptions DiagOpts;
  Action = withSemaWatch(std::move(Action));
  std::unique_ptr<PreambleParse> Cached;
  if (Preambles)
    Cached = std::make_unique<PreambleParse>(*Preambles, preambleKey(Macros.CommandLine, Directory),
                                             MappedFiles.empty(), std::move(Action));
  auto Invocation = Cached ? std::make_unique<tooling::ToolInvocation>(Macros.CommandLine, Cached.get(), Files.get(),
                                                                        std::make_shared<PCHContainerOperations>())
                           : std::make_unique<tooling::ToolInvocation>(Macros.CommandLine, std::move(Action), Files.get());
  Invocation->setDiagnosticConsumer(&Diags);
  Invocation->setDiagnosticOptions(&DiagOpts);
  bool Ok = false;
  bool Ran = runParseSafely([&] { Ok = Invocation->run(); });
  R.UsedPreamble = Cached && Cached->Used;
  R.PreambleStateLost = Cached && Cached->Lost;
  if (!Ran) {
    ParseDiagnostic D;
    D.Level = "fatal";
    D.Message = "kloop crashed while parsing this translation unit (a construct nested too deep for the "
                "parser?); its other results are discarded";
    Diags.Diags.push_back(D);
    R.Crash = "clang crashed while parsing " + crashedFile(Macros.CommandLine) + " (" +
              crashedSide(Macros.CommandLine) + ")";
    ParseCrashNotifier::note(*R.Crash);
  }
  R.Diagnostics = std::move(Diags.Diags);
  R.InputFiles = filesOnDisk(*Files, Directory, MappedFiles);
  // clang counts a downgraded error as an error all the same; the collected levels decide.
  R.Ok = (Ok || Diags.NvccWarnings > 0) && llvm::none_of(R.Diagnostics, [](const ParseDiagnostic &D) {
           return D.Level == "error" || D.Level == "fatal";
         });
  if (!Ok && R.Diagnostics.empty()) {
    ParseDiagnostic D;
    D.Level = "error";
    D.Message = "clang could not run on this command line";
    R.Diagnostics.push_back(D);
  }
  return R;
}

Expected<PlannedJobs> planJobsAndRecover(const FrontendOptions &Opts) {
  PlannedJobs P;
  Expected<std::vector<CompileJob>> Jobs = planCompileJobs(Opts);
  if (!Jobs)
    return Jobs.takeError();
  P.Jobs = std::move(*Jobs);
  std::vector<std::string> Files;
  for (const CompileJob &J : P.Jobs)
    Files.push_back(J.File);
  Expected<std::vector<std::string>> Notes = recoverInterruptedWrites(Files);
  if (!Notes)
    return Notes.takeError();
  P.RecoveryNotes = std::move(*Notes);
  return P;
}

ParseResult parseSide(const CompileJob &Job, Side S, const FrontendOptions &Opts,
                      std::unique_ptr<FrontendAction> Action) {
  return parseCommandLine(sideCommandLine(Job, S, Opts), Job.Directory, std::move(Action));
}

void parallelFor(size_t N, unsigned Jobs, const std::function<void(size_t)> &Fn) {
  if (N == 0)
    return;
  unsigned Threads = Jobs ? Jobs : llvm::hardware_concurrency().compute_thread_count();
  if (Threads <= 1 || N == 1) {
    for (size_t I = 0; I < N; ++I)
      Fn(I);
    return;
  }
  // Each task's crashes are noted in the caller's scope, in index order, as a serial loop would.
  std::vector<std::vector<std::string>> Crashes(N);
  DefaultThreadPool Pool(llvm::hardware_concurrency(std::min<size_t>(Threads, N)));
  for (size_t I = 0; I < N; ++I)
    Pool.async([&Fn, &Crashes, I] {
      ParseCrashScope Task;
      Fn(I);
      Crashes[I] = Task.crashes();
    });
  Pool.wait();
  for (const std::vector<std::string> &C : Crashes)
    ParseCrashNotifier::forward(C);
}

} // namespace kloop
