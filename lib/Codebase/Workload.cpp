//===- Workload.cpp - The workload a .kloop.yaml would give, for one kernel -===//
#include "kloop/Codebase/Codebase.h"
#include "kloop/Measure/Config.h"
#include "kloop/Support/Error.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <map>

using json = nlohmann::json;
using llvm::Expected;
using llvm::StringRef;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

namespace kloop {
namespace codebase {

namespace {

/// \p Word rebased when it starts with \p Dir + "/" (or is \p Dir).
bool rebaseWord(std::string &Word, StringRef Dir, StringRef Replacement) {
  if (Dir.empty())
    return false;
  StringRef W(Word);
  if (W == Dir || W.starts_with((Dir + "/").str())) {
    Word = (Replacement + W.substr(Dir.size())).str();
    return true;
  }
  return false;
}

/// A YAML double-quoted scalar (JSON's string syntax is a subset of it).
std::string yamlString(StringRef S) { return json(S.str()).dump(); }

/// The workload's dtype of a pointer parameter's pointee type.
StringRef dtypeOf(StringRef Type) {
  static const std::pair<const char *, const char *> Known[] = {
      {"double", "f64"}, {"float", "f32"}, {"__half", "f16"}, {"half", "f16"},
      {"unsigned char", "u8"}, {"uint8_t", "u8"}, {"unsigned int", "i32"}, {"uint32_t", "i32"},
      {"int32_t", "i32"}, {"int", "i32"}};
  StringRef T = Type.trim();
  T.consume_front("const ");
  T.consume_front("volatile ");
  T = T.take_until([](char C) { return C == '*'; }).trim();
  if (T.ends_with("__restrict__"))
    T = T.drop_back(strlen("__restrict__")).trim();
  for (auto [Name, D] : Known)
    if (T == Name)
      return D;
  return "bytes";
}

std::map<std::string, std::string> readCMakeCache(StringRef File) {
  std::map<std::string, std::string> Vars;
  auto B = llvm::MemoryBuffer::getFile(File);
  if (!B)
    return Vars;
  llvm::SmallVector<StringRef> Lines;
  (*B)->getBuffer().split(Lines, '\n');
  for (StringRef L : Lines) {
    if (L.starts_with("#") || L.starts_with("//"))
      continue;
    auto [Key, Value] = L.split('=');
    Vars[Key.split(':').first.str()] = Value.rtrim("\r").str();
  }
  return Vars;
}

} // namespace

std::string rebaseBuildDir(StringRef Command, StringRef BuildDir, StringRef BuildDirAbs, StringRef Replacement) {
  std::string Dir = BuildDir.rtrim('/').str(), Abs = BuildDirAbs.rtrim('/').str();
  if (StringRef(Dir).starts_with("./"))
    Dir = Dir.substr(2);
  std::string Out, Word;
  char Quote = 0;
  auto Flush = [&] {
    if (!rebaseWord(Word, Abs, Replacement) && !rebaseWord(Word, Dir, Replacement))
      rebaseWord(Word, "./" + Dir, Replacement);
    Out += Word;
    Word.clear();
  };
  for (char C : Command) {
    if (Quote) {
      if (C == Quote) {
        Flush();
        Quote = 0;
        Out += C;
      } else {
        Word += C;
      }
    } else if (C == '\'' || C == '"') {
      Flush();
      Quote = C;
      Out += C;
    } else if (C == ' ' || C == '\t' || C == '=' || C == ';' || C == '&' || C == '|' || C == '(' || C == ')') {
      Flush();
      Out += C;
    } else {
      Word += C;
    }
  }
  Flush();
  return Out;
}

std::string escapeBraces(StringRef Command) {
  std::string Out;
  for (char C : Command) {
    Out += C;
    if (C == '{' || C == '}')
      Out += C;
  }
  return Out;
}

Expected<std::string> cmakeBuildCommand(StringRef BuildDir, StringRef Root) {
  llvm::SmallString<256> Cache(BuildDir);
  path::append(Cache, "CMakeCache.txt");
  if (!fs::exists(Cache))
    return makeError("-p " + BuildDir +
                     ": no CMakeCache.txt there, so kloop does not know how to build a candidate's copy of the "
                     "project; give --build \"<command>\" (it runs in the copy, {build_dir} names the build "
                     "directory)");
  std::map<std::string, std::string> V = readCMakeCache(Cache);
  std::string Home = V["CMAKE_HOME_DIRECTORY"];
  llvm::SmallString<256> Rel(Home);
  if (Home.empty() || !path::replace_path_prefix(Rel, Root, ""))
    return makeError(Cache + ": CMAKE_HOME_DIRECTORY '" + Home + "' is not inside the project root '" + Root +
                     "' (run kloop optimize -p from the project's top directory)");
  std::string Src = "{source_dir}" + (Rel.empty() ? std::string() : escapeBraces(measure::shellQuote(Rel)));
  std::string Cmd = "cmake -S " + Src + " -B {build_dir}";
  if (!V["CMAKE_GENERATOR"].empty())
    Cmd += " -G " + escapeBraces(measure::shellQuote(V["CMAKE_GENERATOR"]));
  for (const char *Var : {"CMAKE_BUILD_TYPE", "CMAKE_CUDA_COMPILER", "CMAKE_CUDA_ARCHITECTURES", "CMAKE_CUDA_FLAGS",
                          "CMAKE_CXX_COMPILER"})
    if (!V[Var].empty())
      Cmd += " " + escapeBraces(measure::shellQuote(std::string("-D") + Var + "=" + V[Var]));
  return Cmd + " && cmake --build {build_dir} --parallel";
}

Expected<std::vector<std::string>> projectFiles(StringRef Root, const std::vector<std::string> &Exclude, size_t Limit) {
  std::vector<std::string> Files;
  std::error_code EC;
  for (fs::recursive_directory_iterator I(Root, EC), E; I != E; I.increment(EC)) {
    if (EC)
      return makeError("cannot list " + I->path() + ": " + EC.message());
    StringRef P = I->path();
    bool IsDir = I->type() == fs::file_type::directory_file;
    if (IsDir && (path::filename(P).starts_with(".") || fs::exists(P + "/CMakeCache.txt") ||
                  std::find(Exclude.begin(), Exclude.end(), P.str()) != Exclude.end())) {
      I.no_push();
      continue;
    }
    if (I->type() != fs::file_type::regular_file || path::filename(P).starts_with("."))
      continue;
    if (Files.size() == Limit)
      return makeError(llvm::formatv("the project root '{0}' holds more than {1} files; kloop copies the project "
                                     "for every candidate, so run it from a smaller directory",
                                     Root, Limit)
                           .str());
    llvm::SmallString<256> Rel(P);
    path::replace_path_prefix(Rel, (Root + "/").str(), "");
    Files.push_back(std::string(Rel));
  }
  if (EC)
    return makeError("cannot list " + Root + ": " + EC.message());
  std::sort(Files.begin(), Files.end());
  return Files;
}

std::string synthesizeWorkload(const ChosenKernel &K, const WorkloadInputs &In) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  OS << "# Synthesized by kloop optimize -p (codebase mode, docs/codebase.md) for kernel " << K.Id << ",\n"
     << llvm::formatv("# {0:f1}% of the program's GPU time. Its source directory is the project root\n", K.SharePct)
     << "#   " << In.Root << "\n"
     << "# (copy this file there as .kloop.yaml to run kloop optimize --config on it by hand).\n"
     << "version: 1\n"
     << "name: " << yamlString(K.Id) << "\n"
     << "sources: [" << yamlString(K.File) << "]\n"
     << "protected:\n";
  for (const std::string &F : In.ProjectFiles)
    if (F != K.File)
      OS << "  - " << yamlString(F) << "\n";
  OS << "build:\n  command: " << yamlString(In.BuildCommand) << "\n  timeout_s: " << In.BuildTimeoutS << "\n"
     << "run:\n  command: " << yamlString(In.RunCommand) << "\n  timeout_s: " << In.RunTimeoutS << "\n"
     << "targets: [" << yamlString(K.QualifiedName) << "]\n"
     << "seeds: 1\n"
     << "shapes:\n  - {name: default}\n"
     << "outputs:\n";
  for (const OutputParam &O : K.Outputs) {
    StringRef D = dtypeOf(O.Type);
    bool Float = D == "f32" || D == "f64" || D == "f16";
    OS << "  - {kernel: " << yamlString(K.QualifiedName) << ", arg: " << O.Index << ", dtype: " << D
       << ", tolerance: " << (Float ? "{kind: rel, value: 1.0e-5}" : "{kind: exact}")
       << ", access: readwrite}  # " << O.Type << "\n";
  }
  OS << "search:\n  timing: auto\n";
  return S;
}

} // namespace codebase
} // namespace kloop
