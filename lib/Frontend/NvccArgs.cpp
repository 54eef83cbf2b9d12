//===- NvccArgs.cpp - nvcc command lines to clang CUDA flags --------------===//
#include "kloop/Frontend/NvccArgs.h"

#include "clang/Options/Options.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Option/ArgList.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/StringSaver.h"

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

/// Splits "arch=compute_90,code=[sm_90,compute_90]" into the sm_ codes.
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
  if (!Codes.empty())
    Archs.insert(Archs.end(), Codes.begin(), Codes.end());
  else if (!Arch.empty())
    Archs.push_back(Arch);
}

/// Flags nvcc accepts that take a separate or '='-joined value and only affect
/// code generation, ptxas, the host compiler's location or linking: dropped.
bool isDroppedWithValue(StringRef F) {
  return StringSwitch<bool>(F)
      .Cases({"-ccbin", "--compiler-bindir"}, true)
      .Cases({"-Xptxas", "--ptxas-options"}, true)
      .Cases({"-Xnvlink", "--nvlink-options"}, true)
      .Cases({"-Xlinker", "--linker-options"}, true)
      .Cases({"-Xcudafe", "-Xarchive", "--archive-options"}, true)
      .Cases({"-maxrregcount", "--maxrregcount"}, true)
      .Cases({"-t", "--threads"}, true)
      .Cases({"--diag-suppress", "-diag-suppress", "--diag-warn", "--diag-error"}, true)
      .Cases({"-code", "--gpu-code"}, true)
      .Cases({"-rdc", "--relocatable-device-code"}, true) // value handled by caller
      .Cases({"-ftz", "-prec-div", "-prec-sqrt", "-fmad"}, true)
      .Cases({"--ftz", "--prec-div", "--prec-sqrt", "--fmad"}, true)
      .Cases({"-cudart", "--cudart"}, true)
      .Cases({"-odir", "--output-directory", "-MF", "--dependency-output"}, true)
      .Cases({"-ptxas-options", "--resource-usage-options"}, true)
      .Default(false);
}

/// Flags without a value that only affect code generation or nvcc itself.
bool isDroppedAlone(StringRef F) {
  return StringSwitch<bool>(F)
      .Cases({"-lineinfo", "--generate-line-info", "-G", "--device-debug"}, true)
      .Cases({"--expt-relaxed-constexpr", "-expt-relaxed-constexpr"}, true)
      .Cases({"--expt-extended-lambda", "-expt-extended-lambda", "--extended-lambda", "-extended-lambda"}, true)
      .Cases({"--use_fast_math", "-use_fast_math", "--keep", "-keep", "-res-usage", "--resource-usage"}, true)
      .Cases({"-Wno-deprecated-gpu-targets", "--Wno-deprecated-gpu-targets", "-Wno-deprecated-declarations-nvcc"}, true)
      .Cases({"--forward-unknown-to-host-compiler", "-forward-unknown-to-host-compiler"}, true)
      .Cases({"--display-error-number", "--no-display-error-number"}, true)
      .Cases({"-dlink", "--device-link", "-dw", "--device-w"}, true)
      .Cases({"--restrict", "-restrict"}, true)
      .Default(false);
}

/// nvcc options spelled with one dash and a long name that clang would
/// misread; their value follows as the next argument or after '='.
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

Expected<TranslatedCommand> translateNvccArgs(ArrayRef<std::string> InArgs, StringRef Directory) {
  // Expand response files first (nvcc: @file, --options-file/-optf FILE), one level
  // deep per pass, up to a small depth to refuse cycles.
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
      } else if (A.starts_with("--options-file=")) {
        File = A.substr(strlen("--options-file=")).str();
      } else {
        Next.push_back(Args[I]);
        continue;
      }
      Any = true;
      if (Error E = expandResponseFile(File, Directory, Next))
        return E;
    }
    Args = std::move(Next);
    if (!Any)
      break;
  }

  TranslatedCommand R;
  auto needValue = [&](size_t &I, StringRef Flag) -> Expected<std::string> {
    if (I + 1 >= Args.size())
      return createStringError(inconvertibleErrorCode(), "nvcc flag '%s' needs a value",
                               Flag.str().c_str());
    return Args[++I];
  };
  auto addArchs = [&](StringRef V) {
    SmallVector<StringRef, 4> Parts;
    V.split(Parts, ',', -1, false);
    for (StringRef P : Parts) {
      P = P.trim();
      if (P == "native" || P == "all" || P == "all-major")
        continue; // resolved by the caller's default architecture
      R.GpuArchs.push_back(archToClang(P));
    }
  };

  for (size_t I = 0; I < Args.size(); ++I) {
    StringRef A = Args[I];
    // Split "--flag=value" and "-flag=value" for nvcc's long options.
    StringRef Flag = A, Joined;
    bool HasJoined = false;
    if (A.starts_with("-") && !A.starts_with("-D") && !A.starts_with("-I") &&
        !A.starts_with("-W") && !A.starts_with("-f") && !A.starts_with("-U") &&
        !A.starts_with("-std=") && A.contains('=')) {
      std::tie(Flag, Joined) = A.split('=');
      HasJoined = true;
    }
    auto value = [&]() -> Expected<std::string> {
      if (HasJoined)
        return Joined.str();
      return needValue(I, Flag);
    };

    if (Flag == "-arch" || Flag == "--gpu-architecture") {
      auto V = value();
      if (!V) return V.takeError();
      addArchs(*V);
      continue;
    }
    if (Flag == "-gencode" || Flag == "--generate-code") {
      auto V = value();
      if (!V) return V.takeError();
      parseGencode(*V, R.GpuArchs);
      continue;
    }
    if (Flag == "-Xcompiler" || Flag == "--compiler-options") {
      auto V = value();
      if (!V) return V.takeError();
      SmallVector<StringRef, 4> Parts;
      StringRef(*V).split(Parts, ',', -1, false);
      for (StringRef P : Parts)
        R.Args.push_back(P.trim().str());
      continue;
    }
    if (Flag == "-x" || Flag == "--x") {
      auto V = value();
      if (!V) return V.takeError();
      R.Args.push_back("-x");
      R.Args.push_back(*V == "cu" ? "cuda" : *V);
      continue;
    }
    if (Flag == "-rdc" || Flag == "--relocatable-device-code") {
      auto V = value();
      if (!V) return V.takeError();
      if (*V == "true")
        R.Args.push_back("-fgpu-rdc");
      else
        R.Dropped.push_back(A.str());
      continue;
    }
    if (A == "-dc" || A == "--device-c") {
      R.Args.push_back("-fgpu-rdc");
      R.Args.push_back("-c");
      continue;
    }
    if (Flag == "--std" || Flag == "-std") {
      auto V = value();
      if (!V) return V.takeError();
      R.Args.push_back("-std=" + *V);
      continue;
    }
    if (Flag == "--default-stream" || Flag == "-default-stream") {
      auto V = value();
      if (!V) return V.takeError();
      R.Args.push_back("-fgpu-default-stream=" + std::string(*V == "per-thread" ? "per-thread" : "legacy"));
      continue;
    }
    if (Flag == "--include-path") {
      auto V = value();
      if (!V) return V.takeError();
      R.Args.push_back("-I" + *V);
      continue;
    }
    if (Flag == "--define-macro") {
      auto V = value();
      if (!V) return V.takeError();
      R.Args.push_back("-D" + *V);
      continue;
    }
    if (Flag == "--output-file") {
      auto V = value();
      if (!V) return V.takeError();
      R.Args.push_back("-o");
      R.Args.push_back(*V);
      continue;
    }
    if (Flag == "--compile") { R.Args.push_back("-c"); continue; }
    if (A == "-Werror" || A == "--Werror" || A.starts_with("-Werror=all-warnings") ||
        A.starts_with("--Werror=")) {
      // nvcc's -Werror takes a list of kinds (all-warnings, reorder, ...); clang's
      // would turn every warning into a parse failure. Neither matters for parsing.
      static const char *Kinds[] = {"all-warnings", "cross-execution-space-call", "reorder",
                                    "default-stream-launch", "missing-launch-bounds",
                                    "ext-lambda-captures-this", "deprecated-declarations"};
      if (I + 1 < Args.size())
        for (const char *K : Kinds)
          if (StringRef(Args[I + 1]).starts_with(K)) {
            ++I;
            break;
          }
      R.Dropped.push_back(A.str());
      continue;
    }
    if (isDroppedWithValue(Flag)) {
      if (!HasJoined) {
        auto V = value();
        if (!V) return V.takeError();
      }
      R.Dropped.push_back(A.str());
      continue;
    }
    if (isDroppedAlone(A)) {
      R.Dropped.push_back(A.str());
      continue;
    }
    R.Args.push_back(A.str());
  }
  return R;
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

} // namespace kloop
