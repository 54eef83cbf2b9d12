//===- NvccArgs.cpp - nvcc command lines to clang CUDA flags --------------===//
#include "kloop/Frontend/NvccArgs.h"
#include "kloop/Frontend/Frontend.h"

#include "clang/Options/Options.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Option/Arg.h"
#include "llvm/Option/ArgList.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/StringSaver.h"

#include <algorithm>
#include <optional>

using namespace llvm;

namespace kloop {

bool isNvccCompiler(StringRef Compiler) {
  StringRef Name = sys::path::filename(Compiler);
  return Name == "nvcc" || Name == "nvcc.exe" || Name.ends_with("-nvcc");
}

namespace {

/// nvcc spells "sm_90a" etc.; "compute_90" means a PTX-only target, which for
/// parsing purposes is the same device side as sm_90.
std::string archToClang(StringRef A) {
  A = A.trim();
  if (A.consume_front("compute_"))
    return ("sm_" + A).str();
  if (A.consume_front("lto_"))
    return ("sm_" + A).str();
  return A.str();
}

/// The architecture whose __CUDA_ARCH__ a `-gencode` spec compiles under: arch='s (compute_75 as sm_75), else
/// each sm_ code of code=.
void parseGencode(StringRef Spec, std::vector<std::string> &Archs) {
  std::string Arch;
  std::vector<std::string> Codes;
  SmallVector<StringRef, 4> Parts;
  // Commas inside [...] separate codes, outside they separate keys.
  std::string Cur;
  int Depth = 0;
  std::vector<std::string> Fields;
  for (char C : Spec) {
    if (C == '[') ++Depth;
    if (C == ']') --Depth;
    if (C == ',' && Depth == 0) { Fields.push_back(Cur); Cur.clear(); continue; }
    Cur += C;
  }
  if (!Cur.empty()) Fields.push_back(Cur);
  for (StringRef F : Fields) {
    F = F.trim();
    if (F.consume_front("arch=") || F.consume_front("--gpu-architecture=")) {
      Arch = archToClang(F);
    } else if (F.consume_front("code=") || F.consume_front("--gpu-code=")) {
      F = F.trim("[]");
      SmallVector<StringRef, 4> Cs;
      F.split(Cs, ',', -1, false);
      for (StringRef Cd : Cs)
        if (Cd.trim().starts_with("sm_"))
          Codes.push_back(archToClang(Cd));
    }
  }
  // __CUDA_ARCH__ is the virtual architecture's (arch=compute_75,code=sm_80 compiles with 750, checked with
  // nvcc 13.0 --dryrun); the codes decide it only when arch= is absent.
  if (!Arch.empty())
    Archs.push_back(Arch);
  else
    Archs.insert(Archs.end(), Codes.begin(), Codes.end());
}

/// Reads one response file's arguments into \p Out.
Error expandResponseFile(StringRef Path, StringRef Directory, std::vector<std::string> &Out) {
  SmallString<256> Full(Path);
  if (!sys::path::is_absolute(Full) && !Directory.empty()) {
    Full = Directory;
    sys::path::append(Full, Path);
  }
  auto Buf = MemoryBuffer::getFile(Full);
  if (!Buf)
    return createStringError(Buf.getError(), "cannot read response file '%s': %s",
                             Full.c_str(), Buf.getError().message().c_str());
  BumpPtrAllocator Alloc;
  StringSaver Saver(Alloc);
  SmallVector<const char *, 32> Toks;
  cl::TokenizeGNUCommandLine((*Buf)->getBuffer(), Saver, Toks);
  for (const char *T : Toks)
    Out.push_back(T);
  return Error::success();
}

} // namespace

namespace {

/// What a row of the flag table does to the clang command line.
enum class Act {
  Drop, Unsupported, Werror, HostCompiler, Arch, Gencode, HostOptions, Language, Std, DefaultStream, Define,
  Undefine, IncludePath, SystemInclude, PreInclude, Rdc, DeviceC, Compile, Optimize, ModeMacro,
  TemplateDepth, TemplateBacktrace, NoExceptions, FastMath, NoWarnings, OptionsFile
};

struct FlagRow {
  NvccFlagInfo Info;
  Act A;
};

FlagRow tr(StringRef L, StringRef S, bool V, Act A, StringRef Note) {
  return {{L, S, V, NvccFlagClass::Translated, Note}, A};
}
FlagRow drop(StringRef L, StringRef S, bool V, StringRef Note, Act A = Act::Drop) {
  return {{L, S, V, NvccFlagClass::Dropped, Note}, A};
}
FlagRow unsupported(StringRef L, StringRef S, bool V, StringRef Note) {
  return {{L, S, V, NvccFlagClass::Unsupported, Note}, Act::Unsupported};
}

/// Every flag of CUDA 13.0's `nvcc --help`, in its order, then flags nvcc accepts without
/// listing them. Sources: `nvcc --help` and the nvcc manual ("NVCC Command Options").
const std::vector<FlagRow> &flagRows() {
  static const std::vector<FlagRow> Rows = {
    drop("--cuda", "-cuda", false, "compilation phase; kloop always parses both sides"),
    drop("--cubin", "-cubin", false, "compilation phase; kloop always parses both sides"),
    drop("--fatbin", "-fatbin", false, "compilation phase; kloop always parses both sides"),
    drop("--ptx", "-ptx", false, "compilation phase; kloop always parses both sides"),
    drop("--optix-ir", "-optix-ir", false, "compilation phase; kloop always parses both sides"),
    drop("--ltoir", "-ltoir", false, "compilation phase; kloop always parses both sides"),
    drop("--preprocess", "-E", false, "compilation phase; kloop always parses both sides"),
    drop("--generate-dependencies", "-M", false, "dependency file output"),
    drop("--generate-nonsystem-dependencies", "-MM", false, "dependency file output"),
    drop("--generate-dependencies-with-compile", "-MD", false, "dependency file output"),
    drop("--generate-nonsystem-dependencies-with-compile", "-MMD", false, "dependency file output"),
    drop("--dependency-output", "-MF", true, "dependency file output (--help shows no value, nvcc takes a file)"),
    drop("--generate-dependency-targets", "-MP", false, "dependency file output"),
    tr("--compile", "-c", false, Act::Compile, "-c"),
    tr("--device-c", "-dc", false, Act::DeviceC, "-fgpu-rdc -c -D__CUDACC_RDC__=1"),
    drop("--device-w", "-dw", false, "compilation phase; kloop always parses both sides"),
    drop("--device-link", "-dlink", false, "compilation phase; kloop always parses both sides"),
    drop("--link", "-link", false, "compilation phase; kloop always parses both sides"),
    drop("--lib", "-lib", false, "compilation phase; kloop always parses both sides"),
    drop("--run", "-run", false, "compilation phase; kloop always parses both sides"),
    drop("--output-file", "-o", true, "output files, temporaries or nvcc's own reporting"),
    tr("--pre-include", "-include", true, Act::PreInclude, "-include FILE (each of a comma-separated list)"),
    drop("--objdir-as-tempdir", "-objtemp", false, "output files, temporaries or nvcc's own reporting"),
    drop("--library", "-l", true, "linking"),
    tr("--define-macro", "-D", true, Act::Define, "-DDEF (each of a comma-separated list, as nvcc splits it)"),
    tr("--undefine-macro", "-U", true, Act::Undefine, "-UNAME (each of a comma-separated list)"),
    tr("--include-path", "-I", true, Act::IncludePath, "-IDIR (each of a comma-separated list)"),
    tr("--system-include", "-isystem", true, Act::SystemInclude, "-isystem DIR (each of a comma-separated list)"),
    drop("--library-path", "-L", true, "linking"),
    drop("--output-directory", "-odir", true, "output files, temporaries or nvcc's own reporting"),
    drop("--compiler-bindir", "-ccbin", true, "host compiler choice or host platform; kloop parses with clang for x86_64 Linux (it asks this compiler for its omp.h under -Xcompiler -fopenmp)", Act::HostCompiler),
    drop("--allow-unsupported-compiler", "-allow-unsupported-compiler", false, "host compiler choice or host platform; kloop parses with clang for x86_64 Linux"),
    drop("--archiver-binary", "-arbin", true, "linking"),
    drop("--cudart", "-cudart", true, "linking"),
    drop("--cudadevrt", "-cudadevrt", true, "linking"),
    drop("--libdevice-directory", "-ldir", true, "linking"),
    unsupported("--target-directory", "-target-dir", true, "selects another target's include directory (targets/<dir>/include); kloop parses with targets/x86_64-linux"),
    drop("--use-local-env", "-use-local-env", false, "host compiler choice or host platform; kloop parses with clang for x86_64 Linux"),
    drop("--force-cl-env-setup", "-force-cl-env-setup", false, "host compiler choice or host platform; kloop parses with clang for x86_64 Linux"),
    drop("--profile", "-pg", false, "code generation, ptxas or build parallelism"),
    drop("--debug", "-g", false, "code generation, ptxas or build parallelism"),
    tr("--device-debug", "-G", false, Act::ModeMacro, "-D__CUDACC_DEBUG__=1, as nvcc defines it; the debug code itself is code generation"),
    drop("--generate-line-info", "-lineinfo", false, "code generation, ptxas or build parallelism"),
    drop("--optimization-info", "-opt-info", true, "code generation, ptxas or build parallelism"),
    tr("--optimize", "-O", true, Act::Optimize, "-OLEVEL (defines __OPTIMIZE__ like nvcc's host compiler)"),
    drop("--Ofast-compile", "-Ofc", true, "code generation, ptxas or build parallelism"),
    drop("--dopt", "-dopt", true, "code generation, ptxas or build parallelism"),
    drop("--dlink-time-opt", "-dlto", false, "code generation, ptxas or build parallelism"),
    drop("--lto", "-lto", false, "code generation, ptxas or build parallelism"),
    drop("--gen-opt-lto", "-gen-opt-lto", false, "code generation, ptxas or build parallelism"),
    tr("--ftemplate-backtrace-limit", "-ftemplate-backtrace-limit", true, Act::TemplateBacktrace, "-ftemplate-backtrace-limit=N"),
    tr("--ftemplate-depth", "-ftemplate-depth", true, Act::TemplateDepth, "-ftemplate-depth=N"),
    tr("--no-exceptions", "-noeh", false, Act::NoExceptions, "-fno-exceptions"),
    drop("--shared", "-shared", false, "linking"),
    tr("--x", "-x", true, Act::Language, "-x cuda for cu, else -x c / -x c++"),
    tr("--std", "-std", true, Act::Std, "-std=VALUE"),
    drop("--no-host-device-initializer-list", "-nohdinitlist", false, "only makes nvcc refuse more device code; kloop's parse stays permissive"),
    drop("--no-host-device-move-forward", "-nohdmoveforward", false, "only makes nvcc refuse more device code; kloop's parse stays permissive"),
    tr("--expt-relaxed-constexpr", "-expt-relaxed-constexpr", false, Act::ModeMacro, "-D__CUDACC_RELAXED_CONSTEXPR__=1, as nvcc defines it; clang accepts the code without a flag (constexpr functions are implicitly __host__ __device__)"),
    tr("--extended-lambda", "-extended-lambda", false, Act::ModeMacro, "-D__CUDACC_EXTENDED_LAMBDA__=1, as nvcc defines it; clang accepts the code without a flag (__device__ lambdas are always allowed)"),
    tr("--expt-extended-lambda", "-expt-extended-lambda", false, Act::ModeMacro, "-D__CUDACC_EXTENDED_LAMBDA__=1, as nvcc defines it; clang accepts the code without a flag (__device__ lambdas are always allowed)"),
    drop("--machine", "-m", true, "host compiler choice or host platform; kloop parses with clang for x86_64 Linux"),
    drop("--m64", "-m64", false, "host compiler choice or host platform; kloop parses with clang for x86_64 Linux"),
    tr("--compiler-options", "-Xcompiler", true, Act::HostOptions, "host flags that matter for parsing and that clang knows (-D, -U, -I, -isystem, -include, -std, -O, -w, -f* but -fopenmp*)"),
    drop("--linker-options", "-Xlinker", true, "linking"),
    drop("--archive-options", "-Xarchive", true, "linking"),
    drop("--ptxas-options", "-Xptxas", true, "code generation, ptxas or build parallelism"),
    drop("--nvlink-options", "-Xnvlink", true, "linking"),
    drop("--static-global-template-stub", "-static-global-template-stub", true, "code generation, ptxas or build parallelism"),
    drop("--device-entity-has-hidden-visibility", "-device-entity-has-hidden-visibility", true, "code generation, ptxas or build parallelism"),
    drop("--forward-unknown-to-host-compiler", "-forward-unknown-to-host-compiler", false, "kloop passes flags nvcc does not know to clang when clang knows them, with or without it"),
    drop("--forward-unknown-to-host-linker", "-forward-unknown-to-host-linker", false, "linking"),
    drop("--forward-unknown-opts", "-forward-unknown-opts", false, "kloop passes flags nvcc does not know to clang when clang knows them, with or without it"),
    unsupported("--dont-use-profile", "-noprof", false, "nvcc then ignores nvcc.profile; kloop always takes its include directories from nvcc.profile"),
    drop("--dryrun", "-dryrun", false, "output files, temporaries or nvcc's own reporting"),
    drop("--verbose", "-v", false, "output files, temporaries or nvcc's own reporting"),
    drop("--threads", "-t", true, "code generation, ptxas or build parallelism"),
    drop("--split-compile", "-split-compile", true, "code generation, ptxas or build parallelism"),
    drop("--split-compile-extended", "-split-compile-extended", true, "code generation, ptxas or build parallelism"),
    drop("--fdevice-syntax-only", "-fdevice-syntax-only", false, "compilation phase; kloop always parses both sides"),
    drop("--fdevice-time-trace", "-fdevice-time-trace", true, "output files, temporaries or nvcc's own reporting"),
    drop("--keep", "-keep", false, "output files, temporaries or nvcc's own reporting"),
    drop("--keep-dir", "-keep-dir", true, "output files, temporaries or nvcc's own reporting"),
    drop("--save-temps", "-save-temps", false, "output files, temporaries or nvcc's own reporting"),
    drop("--clean-targets", "-clean", false, "output files, temporaries or nvcc's own reporting"),
    drop("--time", "-time", true, "output files, temporaries or nvcc's own reporting"),
    drop("--run-args", "-run-args", true, "output files, temporaries or nvcc's own reporting"),
    drop("--input-drive-prefix", "-idp", true, "host compiler choice or host platform; kloop parses with clang for x86_64 Linux"),
    drop("--dependency-drive-prefix", "-ddp", true, "host compiler choice or host platform; kloop parses with clang for x86_64 Linux"),
    drop("--drive-prefix", "-dp", true, "host compiler choice or host platform; kloop parses with clang for x86_64 Linux"),
    drop("--dependency-target-name", "-MT", true, "dependency file output"),
    drop("--no-align-double", "--no-align-double", false, "host compiler choice or host platform; kloop parses with clang for x86_64 Linux"),
    drop("--no-device-link", "-nodlink", false, "linking"),
    tr("--gpu-architecture", "-arch", true, Act::Arch, "the device-side architecture (sm_XX; compute_XX and lto_XX count as sm_XX)"),
    drop("--gpu-code", "-code", true, "code generation, ptxas or build parallelism"),
    tr("--generate-code", "-gencode", true, Act::Gencode, "the device-side architecture from arch=/code="),
    tr("--relocatable-device-code", "-rdc", true, Act::Rdc, "-fgpu-rdc -D__CUDACC_RDC__=1 when true"),
    drop("--entries", "-e", true, "linking"),
    drop("--maxrregcount", "-maxrregcount", true, "code generation, ptxas or build parallelism"),
    tr("--use_fast_math", "-use_fast_math", false, Act::FastMath, "-fgpu-approx-transcendentals (the fast math_functions.hpp variants, __USE_FAST_MATH__ in clang's wrapper)"),
    drop("--ftz", "-ftz", true, "code generation, ptxas or build parallelism"),
    drop("--prec-div", "-prec-div", true, "code generation, ptxas or build parallelism"),
    drop("--prec-sqrt", "-prec-sqrt", true, "code generation, ptxas or build parallelism"),
    drop("--fmad", "-fmad", true, "code generation, ptxas or build parallelism"),
    drop("--extra-device-vectorization", "-extra-device-vectorization", false, "code generation, ptxas or build parallelism"),
    tr("--default-stream", "-default-stream", true, Act::DefaultStream, "-fgpu-default-stream=legacy|per-thread (null is legacy)"),
    tr("--disable-warnings", "-w", false, Act::NoWarnings, "-w"),
    drop("--keep-device-functions", "-keep-device-functions", false, "code generation, ptxas or build parallelism"),
    drop("--source-in-ptx", "-src-in-ptx", false, "code generation, ptxas or build parallelism"),
    drop("--restrict", "-restrict", false, "code generation, ptxas or build parallelism"),
    drop("--Wreorder", "-Wreorder", false, "nvcc diagnostics only"),
    drop("--Wdefault-stream-launch", "-Wdefault-stream-launch", false, "nvcc diagnostics only"),
    drop("--Wmissing-launch-bounds", "-Wmissing-launch-bounds", false, "nvcc diagnostics only"),
    drop("--Wext-lambda-captures-this", "-Wext-lambda-captures-this", false, "nvcc diagnostics only"),
    drop("--Wno-deprecated-declarations", "-Wno-deprecated-declarations", false, "nvcc diagnostics only"),
    drop("--Wno-deprecated-gpu-targets", "-Wno-deprecated-gpu-targets", false, "nvcc diagnostics only"),
    drop("--Werror", "-Werror", true, "nvcc diagnostics only", Act::Werror),
    drop("--resource-usage", "-res-usage", false, "code generation, ptxas or build parallelism"),
    drop("--extensible-whole-program", "-ewp", false, "linking"),
    drop("--no-compress", "-no-compress", false, "code generation, ptxas or build parallelism"),
    drop("--qpp-config", "-qpp-config", false, "host compiler choice or host platform; kloop parses with clang for x86_64 Linux"),
    drop("--compile-as-tools-patch", "-astoolspatch", false, "code generation, ptxas or build parallelism"),
    drop("--list-gpu-code", "-code-ls", false, "output files, temporaries or nvcc's own reporting"),
    drop("--list-gpu-arch", "-arch-ls", false, "output files, temporaries or nvcc's own reporting"),
    drop("--display-error-number", "-err-no", false, "nvcc diagnostics only"),
    drop("--no-display-error-number", "-no-err-no", false, "nvcc diagnostics only"),
    drop("--diag-error", "-diag-error", true, "nvcc diagnostics only"),
    drop("--diag-suppress", "-diag-suppress", true, "nvcc diagnostics only"),
    drop("--diag-warn", "-diag-warn", true, "nvcc diagnostics only"),
    drop("--host-linker-script", "-hls", true, "linking"),
    drop("--augment-host-linker-script", "-aug-hls", false, "linking"),
    drop("--relocatable-link", "-r", false, "linking"),
    drop("--brief-diagnostics", "-brief-diag", true, "nvcc diagnostics only"),
    drop("--jump-table-density", "-jtd", true, "code generation, ptxas or build parallelism"),
    drop("--relocatable-ptx", "-reloc-ptx", false, "code generation, ptxas or build parallelism"),
    drop("--device-stack-protector", "-device-stack-protector", true, "code generation, ptxas or build parallelism"),
    drop("--compress-mode", "-compress-mode", true, "code generation, ptxas or build parallelism"),
    drop("--frandom-seed", "-frandom-seed", true, "code generation, ptxas or build parallelism"),
    drop("--sanitize", "-sanitize", true, "code generation, ptxas or build parallelism"),
    drop("--jobserver", "-jobserver", false, "output files, temporaries or nvcc's own reporting"),
    drop("--help", "-h", false, "output files, temporaries or nvcc's own reporting"),
    drop("--version", "-V", false, "output files, temporaries or nvcc's own reporting"),
    tr("--options-file", "-optf", true, Act::OptionsFile, "the file's arguments, expanded in place"),
    // Accepted by nvcc 13 but not listed by --help (seen in CUDA 12 era databases).
    drop("--Xcudafe", "-Xcudafe", true, "options of nvcc's internal front end (cudafe++)"),
  };
  return Rows;
}

/// Rows by every spelling (long and short).
const StringMap<const FlagRow *> &flagIndex() {
  static const StringMap<const FlagRow *> Index = [] {
    StringMap<const FlagRow *> M;
    for (const FlagRow &R : flagRows()) {
      M[R.Info.Long] = &R;
      if (!R.Info.Short.empty())
        M[R.Info.Short] = &R;
    }
    return M;
  }();
  return Index;
}

const FlagRow *findRow(StringRef Name) {
  auto It = flagIndex().find(Name);
  return It == flagIndex().end() ? nullptr : It->second;
}

/// An argument recognised as an nvcc flag, with its value when written joined.
struct MatchedFlag {
  const FlagRow *Row = nullptr;
  std::optional<std::string> Joined;
};

/// Matches \p A the way nvcc does: a whole spelling ("-m64"), a spelling and '=' value
/// ("--threads=0", "-isystem=DIR", "-Xcompiler=-fPIC"), or the single-letter options that
/// take a joined value ("-DX", "-Idir", "-O3", "-t0", "-lfoo", "-Ldir"; nvcc refuses "-xcu"
/// and "-ofile"). A value given to a flag without one does not match.
std::optional<MatchedFlag> matchNvccFlag(StringRef A) {
  if (!A.starts_with("-") || A.size() < 2)
    return std::nullopt;
  MatchedFlag M;
  if ((M.Row = findRow(A)))
    return M;
  auto [Name, Value] = A.split('=');
  if (A.contains('=') && (M.Row = findRow(Name)))
    M.Joined = Value.str();
  else if (!A.starts_with("--") && StringRef("DUILlOt").contains(A[1]) &&
           (M.Row = findRow(A.take_front(2))))
    M.Joined = A.drop_front(2).str();
  if (!M.Row || (M.Joined && !M.Row->Info.TakesValue))
    return std::nullopt;
  return M;
}

/// How many arguments clang's driver reads for the option at \p Args[I] (at least 1), and
/// whether it knows that option.
std::pair<size_t, bool> clangOptionSpan(ArrayRef<std::string> Args, size_t I) {
  std::vector<const char *> Ptrs;
  for (const std::string &S : Args)
    Ptrs.push_back(S.c_str());
  opt::InputArgList List(Ptrs.data(), Ptrs.data() + Ptrs.size());
  unsigned Index = I;
  std::unique_ptr<opt::Arg> Parsed = clang::getDriverOptTable().ParseOneArg(
      List, Index, opt::Visibility(clang::options::ClangOption));
  size_t Span = std::max<size_t>(1, std::min<size_t>(Index, Args.size()) - I);
  bool Known = !Parsed || !Parsed->getOption().matches(clang::options::OPT_UNKNOWN);
  return {Span, Known};
}

/// Host compiler flags that change what clang's parse sees (macros, include paths, language
/// mode, -f language options). -fopenmp is not among them: clang would then need an omp.h it
/// does not ship, where nvcc's host compiler (gcc) brings its own.
bool isParseRelevantHostFlag(StringRef F) {
  if (F.starts_with("-fopenmp"))
    return false;
  for (StringRef P : {"-D", "-U", "-I", "-isystem", "-include", "-std=", "-O", "-f"})
    if (F.starts_with(P))
      return true;
  return F == "-w";
}

/// gcc's -fopenmp (which defines _OPENMP; -fopenmp-simd does not).
bool isHostOpenMP(StringRef F) { return F == "-fopenmp"; }

std::vector<std::string> splitList(StringRef V) {
  SmallVector<StringRef, 4> Parts;
  V.split(Parts, ',', -1, false);
  std::vector<std::string> Out;
  for (StringRef P : Parts)
    Out.push_back(P.trim().str());
  return Out;
}

/// The items of a -Xcompiler value: split at commas, but not at one inside quotes (`'-DX="a,b"'`) or
/// escaped (`-DX=1\,2`, which gives `1,2`), as nvcc 13.0 splits them.
std::vector<std::string> hostCommaItems(StringRef V) {
  std::vector<std::string> Out(1);
  char Quote = 0;
  for (size_t I = 0; I < V.size(); ++I) {
    char C = V[I];
    bool Escaped = C == '\\' && I + 1 < V.size();
    if (Escaped && !Quote && V[I + 1] == ',') {
      Out.back() += V[++I];
    } else if (Escaped && Quote == '"') {
      Out.back() += V.substr(I++, 2).str();
    } else if (!Quote && C == ',') {
      Out.emplace_back();
    } else {
      Quote = !Quote && (C == '\'' || C == '"') ? C : (Quote == C ? 0 : Quote);
      Out.back() += C;
    }
  }
  return Out;
}

/// The host compiler's arguments in a -Xcompiler value: its comma-separated items (hostCommaItems),
/// each split as a shell splits words (blanks, quotes, backslashes), since nvcc hands the host compiler
/// one command line: CMake writes `-Xcompiler "-Wall -Wextra"`.
std::vector<std::string> hostItems(StringRef V) {
  std::vector<std::string> Out;
  for (const std::string &Item : hostCommaItems(V)) {
    BumpPtrAllocator Alloc;
    StringSaver Saver(Alloc);
    SmallVector<const char *, 4> Words;
    cl::TokenizeGNUCommandLine(Item, Saver, Words);
    Out.insert(Out.end(), Words.begin(), Words.end());
  }
  return Out;
}

/// nvcc's -Werror kinds; "-Werror KIND" consumes the kind, a clang-style "-Werror" does not.
bool isNvccWerrorKind(StringRef V) {
  for (StringRef K : {"all-warnings", "cross-execution-space-call", "reorder",
                      "default-stream-launch", "missing-launch-bounds",
                      "ext-lambda-captures-this", "deprecated-declarations"})
    if (V.starts_with(K))
      return true;
  return false;
}

/// Expands response files (nvcc: @file, --options-file/-optf FILE), one level per pass, up
/// to a small depth so that a cycle ends.
Expected<std::vector<std::string>> expandResponseFiles(ArrayRef<std::string> InArgs,
                                                       StringRef Directory) {
  std::vector<std::string> Args(InArgs.begin(), InArgs.end());
  for (int Pass = 0; Pass < 8; ++Pass) {
    bool Any = false;
    std::vector<std::string> Next;
    for (size_t I = 0; I < Args.size(); ++I) {
      StringRef A = Args[I];
      std::string File;
      if (A.starts_with("@") && A.size() > 1) {
        File = A.drop_front().str();
      } else if (A == "--options-file" || A == "-optf") {
        if (I + 1 >= Args.size())
          return createStringError(inconvertibleErrorCode(), "nvcc flag '%s' needs a file name",
                                   A.str().c_str());
        File = Args[++I];
      } else if (A.starts_with("--options-file=") || A.starts_with("-optf=")) {
        File = A.split('=').second.str();
      } else {
        Next.push_back(Args[I]);
        continue;
      }
      Any = true;
      for (const std::string &F : splitList(File))
        if (Error E = expandResponseFile(F, Directory, Next))
          return E;
    }
    Args = std::move(Next);
    if (!Any)
      break;
  }
  return Args;
}

/// Translates one nvcc command, argument by argument.
class Translator {
public:
  explicit Translator(std::vector<std::string> Args) : Args(std::move(Args)) {}

  Expected<TranslatedCommand> run() {
    for (I = 0; I < Args.size(); ++I) {
      StringRef A = Args[I];
      if (std::optional<MatchedFlag> M = matchNvccFlag(A)) {
        if (Error E = apply(*M))
          return E;
      } else if (!A.starts_with("-") || A == "-") {
        R.Args.push_back(Args[I]);
      } else if (isHostOpenMP(A)) {
        R.HostOpenMP = true;
        R.Dropped.push_back(Args[I]);
      } else {
        keepIfClangKnows();
      }
    }
    return std::move(R);
  }

private:
  std::vector<std::string> Args;
  size_t I = 0;
  TranslatedCommand R;

  Expected<std::string> value(const MatchedFlag &M) {
    if (M.Joined)
      return *M.Joined;
    if (I + 1 >= Args.size())
      return createStringError(inconvertibleErrorCode(), "nvcc flag '%s' needs a value",
                               Args[I].c_str());
    return Args[++I];
  }

  /// An argument that is no nvcc flag: passed on with its values when clang knows it.
  void keepIfClangKnows() {
    auto [Span, Known] = clangOptionSpan(Args, I);
    auto &To = Known ? R.Args : R.Unknown;
    To.insert(To.end(), Args.begin() + I, Args.begin() + I + Span);
    I += Span - 1;
  }

  void hostOptions(StringRef V) {
    std::vector<std::string> Items = hostItems(V);
    for (size_t J = 0; J < Items.size(); ++J) {
      R.HostOpenMP |= isHostOpenMP(Items[J]);
      auto [Span, Known] = clangOptionSpan(Items, J);
      auto &To = Known && isParseRelevantHostFlag(Items[J]) ? R.Args : R.Dropped;
      To.insert(To.end(), Items.begin() + J, Items.begin() + J + Span);
      J += Span - 1;
    }
  }

  void eachOf(StringRef V, StringRef Prefix, bool Separate) {
    for (const std::string &Item : splitList(V)) {
      if (Separate) {
        R.Args.push_back(Prefix.str());
        R.Args.push_back(Item);
      } else {
        R.Args.push_back((Prefix + Item).str());
      }
    }
  }

  /// One -arch value: `-arch=sm_90a` (or sm_100f) also compiles compute_90's PTX, a device pass without
  /// the architecture- or family-specific macros (`nvcc --dryrun`, nvcc 13.0), so both are read.
  void addArch(StringRef P) {
    std::string A = archToClang(P);
    R.GpuArchs.push_back(A);
    if (P.trim().starts_with("sm_") && (A.back() == 'a' || A.back() == 'f'))
      R.GpuArchs.push_back(A.substr(0, A.size() - 1));
  }

  void addArchs(StringRef V) {
    // nvcc 13.0's lists, as `nvcc -arch=all --dryrun` (and all-major) shows them in __CUDA_ARCH__.
    static const char *const All[] = {"sm_75", "sm_80", "sm_86",  "sm_87",  "sm_88",  "sm_89",
                                      "sm_90", "sm_100", "sm_103", "sm_110", "sm_120", "sm_121"};
    static const char *const AllMajor[] = {"sm_75", "sm_80", "sm_90", "sm_100", "sm_110", "sm_120"};
    for (const std::string &P : splitList(V)) {
      if (P == "all" || P == "all-major")
        for (const char *A : P == "all" ? ArrayRef<const char *>(All) : ArrayRef<const char *>(AllMajor))
          R.GpuArchs.push_back(A);
      else if (P == "native")
        R.GpuArchs.insert(R.GpuArchs.end(), nativeGpuArchs().begin(), nativeGpuArchs().end());
      else
        addArch(P);
    }
  }

  /// The -D of the macro nvcc 13.0 defines for a mode flag (`nvcc -E -Xcompiler -dM` with and without it).
  static std::string modeMacro(StringRef Long) {
    StringRef Name = Long == "--device-debug"           ? "__CUDACC_DEBUG__"
                     : Long == "--expt-relaxed-constexpr" ? "__CUDACC_RELAXED_CONSTEXPR__"
                                                          : "__CUDACC_EXTENDED_LAMBDA__";
    return ("-D" + Name + "=1").str();
  }

  Error apply(const MatchedFlag &M) {
    std::string Written = Args[I];
    std::string V;
    if (M.Row->Info.TakesValue && M.Row->A != Act::Werror) {
      Expected<std::string> Got = value(M);
      if (!Got)
        return Got.takeError();
      V = std::move(*Got);
    }
    switch (M.Row->A) {
    case Act::Drop:
      R.Dropped.push_back(Written);
      break;
    case Act::Unsupported:
      R.Unsupported.push_back(Written);
      break;
    case Act::HostCompiler:
      R.HostCompilerBindir = V;
      R.Dropped.push_back(Written);
      break;
    case Act::Werror:
      if (!M.Joined && I + 1 < Args.size() && isNvccWerrorKind(Args[I + 1]))
        ++I;
      R.Dropped.push_back(Written);
      break;
    case Act::Arch: addArchs(V); break;
    case Act::Gencode: parseGencode(V, R.GpuArchs); break;
    case Act::HostOptions: hostOptions(V); break;
    case Act::Language:
      R.Args.push_back("-x");
      R.Args.push_back(V == "cu" ? "cuda" : V);
      break;
    case Act::Std: R.Args.push_back("-std=" + V); break;
    case Act::DefaultStream:
      R.Args.push_back("-fgpu-default-stream=" +
                       std::string(V == "per-thread" ? "per-thread" : "legacy"));
      break;
    case Act::Define: eachOf(V, "-D", false); break;
    case Act::Undefine: eachOf(V, "-U", false); break;
    case Act::IncludePath: eachOf(V, "-I", false); break;
    case Act::SystemInclude: eachOf(V, "-isystem", true); break;
    case Act::PreInclude: eachOf(V, "-include", true); break;
    case Act::Rdc:
      if (V == "true")
        R.Args.insert(R.Args.end(), {"-fgpu-rdc", "-D__CUDACC_RDC__=1"});
      else
        R.Dropped.push_back(Written);
      break;
    case Act::DeviceC: R.Args.insert(R.Args.end(), {"-fgpu-rdc", "-D__CUDACC_RDC__=1", "-c"}); break;
    case Act::ModeMacro: R.Args.push_back(modeMacro(M.Row->Info.Long)); break;
    case Act::Compile: R.Args.push_back("-c"); break;
    case Act::Optimize: R.Args.push_back("-O" + V); break;
    case Act::TemplateDepth: R.Args.push_back("-ftemplate-depth=" + V); break;
    case Act::TemplateBacktrace: R.Args.push_back("-ftemplate-backtrace-limit=" + V); break;
    case Act::NoExceptions: R.Args.push_back("-fno-exceptions"); break;
    case Act::FastMath: R.Args.push_back("-fgpu-approx-transcendentals"); break;
    case Act::NoWarnings: R.Args.push_back("-w"); break;
    case Act::OptionsFile: break; // expanded before translation
    }
    return Error::success();
  }
};

} // namespace

ArrayRef<NvccFlagInfo> nvccFlagTable() {
  static const std::vector<NvccFlagInfo> Infos = [] {
    std::vector<NvccFlagInfo> V;
    for (const FlagRow &R : flagRows())
      V.push_back(R.Info);
    return V;
  }();
  return Infos;
}

const NvccFlagInfo *findNvccFlag(StringRef Name) {
  const FlagRow *R = findRow(Name);
  return R ? &R->Info : nullptr;
}

Expected<TranslatedCommand> translateNvccArgs(ArrayRef<std::string> InArgs, StringRef Directory) {
  Expected<std::vector<std::string>> Args = expandResponseFiles(InArgs, Directory);
  if (!Args)
    return Args.takeError();
  return Translator(std::move(*Args)).run();
}

std::vector<std::string> findUnknownClangFlags(ArrayRef<std::string> ClangArgs) {
  std::vector<const char *> Ptrs;
  for (const std::string &S : ClangArgs)
    Ptrs.push_back(S.c_str());
  unsigned MissingIndex = 0, MissingCount = 0;
  const opt::OptTable &Table = clang::getDriverOptTable();
  opt::InputArgList List = Table.ParseArgs(Ptrs, MissingIndex, MissingCount,
                                           llvm::opt::Visibility(clang::options::ClangOption));
  std::vector<std::string> Unknown;
  for (const opt::Arg *A : List.filtered(clang::options::OPT_UNKNOWN))
    Unknown.push_back(A->getAsString(List));
  return Unknown;
}

/// The `X.Y` compute capabilities nvidia-smi lists, one per GPU; none when it cannot be run or fails.
static std::vector<std::string> queriedComputeCaps() {
  std::optional<std::string> Smi = sys::Process::GetEnv("KLOOP_NVIDIA_SMI");
  if (!Smi || !StringRef(*Smi).contains('/')) {
    ErrorOr<std::string> P = sys::findProgramByName(Smi ? *Smi : "nvidia-smi");
    Smi = P ? std::optional(*P) : std::nullopt;
  }
  SmallString<128> Out;
  if (!Smi || sys::fs::createTemporaryFile("kloop-native-arch", "txt", Out))
    return {};
  std::optional<StringRef> Redirects[] = {StringRef(""), StringRef(Out), StringRef("")};
  int RC = sys::ExecuteAndWait(*Smi, {*Smi, "--query-gpu=compute_cap", "--format=csv,noheader"}, std::nullopt,
                               Redirects, /*SecondsToWait=*/20);
  auto Text = MemoryBuffer::getFile(Out);
  sys::fs::remove(Out);
  if (RC != 0 || !Text)
    return {};
  SmallVector<StringRef> Lines;
  (*Text)->getBuffer().split(Lines, '\n', -1, false);
  std::vector<std::string> Caps;
  for (StringRef L : Lines)
    Caps.push_back(L.trim().str());
  return Caps;
}

const std::vector<std::string> &nativeGpuArchs() {
  static const std::vector<std::string> Archs = [] {
    std::vector<std::string> Out;
    for (StringRef Cap : queriedComputeCaps()) {
      auto [Major, Minor] = Cap.split('.');
      unsigned Ma, Mi;
      if (Major.getAsInteger(10, Ma) || Minor.getAsInteger(10, Mi) || Mi > 9)
        continue;
      std::string A = "sm_" + std::to_string(Ma) + std::to_string(Mi);
      if (llvm::find(Out, A) == Out.end())
        Out.push_back(A);
    }
    return Out.empty() ? std::vector<std::string>{DefaultGpuArch} : Out;
  }();
  return Archs;
}

} // namespace kloop
