//===- VerifyBuild.cpp - `kloop apply --verify-build` ---------------------===//
#include "VerifyBuild.h"

#include "kloop/Frontend/Frontend.h"
#include "kloop/Support/AtomicFile.h"
#include "kloop/Support/Path.h"
#include "kloop/Support/Ptxas.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <map>
#include <set>

using namespace llvm;

namespace kloop {
namespace {

/// \p P through its symbolic links; \p P itself when it does not exist.
std::string realFile(StringRef P) {
  SmallString<256> Out;
  return sys::fs::real_path(P, Out) ? P.str() : std::string(Out);
}

/// \p Job's nvcc-compatible flags (nvccCompatibleArgs) with the paths of -I, -isystem and -include made
/// absolute against its directory, since nvcc runs here, not there; \p Dirs gets the include directories
/// in order.
std::vector<std::string> absoluteFlags(const CompileJob &Job, std::vector<std::string> &Dirs) {
  std::vector<std::string> In = nvccCompatibleArgs(Job.Args), Out;
  for (size_t I = 0; I < In.size(); ++I) {
    StringRef A = In[I];
    StringRef Flag = A == "-I" || A == "-isystem" || A == "-include" ? A
                     : A.starts_with("-isystem")                    ? StringRef("-isystem")
                     : A.starts_with("-I")                          ? StringRef("-I")
                                                                    : StringRef();
    if (Flag.empty() || (A == Flag && I + 1 == In.size())) {
      Out.push_back(A.str());
      continue;
    }
    std::string Path = absolutePath(A == Flag ? StringRef(In[++I]) : A.drop_front(Flag.size()), Job.Directory);
    if (Flag != "-include")
      Dirs.push_back(Path);
    Out.insert(Out.end(), {Flag.str(), Path});
  }
  return Out;
}

/// Where \p File lies in the temporary tree \p Tree: below `root/` by its path under \p Root, else below
/// `abs/` by its absolute path, so that relative includes between files keep working.
std::string shadowOf(StringRef Tree, StringRef Root, StringRef File) {
  SmallString<256> Out(Tree);
  std::string Rel = relativePath(File, Root);
  if (Rel != File)
    sys::path::append(Out, "root", Rel);
  else
    sys::path::append(Out, "abs", File);
  return std::string(Out);
}

/// The files of make-style dependency file \p Path (nvcc -MD -MF), through their symbolic links.
std::set<std::string> readDeps(StringRef Path) {
  std::set<std::string> Out;
  auto Buf = MemoryBuffer::getFile(Path);
  if (!Buf)
    return Out;
  SmallVector<StringRef> Tokens;
  SplitString((*Buf)->getBuffer(), Tokens, " \t\r\n\\");
  bool Target = true; // `/dev/null : a.cu \`: what precedes the colon is the target
  for (StringRef T : Tokens) {
    if (Target) {
      Target = !T.ends_with(":");
      continue;
    }
    Out.insert(realFile(absolutePath(T, "")));
  }
  return Out;
}

/// The output of one nvcc run, and the files it read (-MD).
struct NvccRun {
  int Status = 0;
  std::string Output;
  std::set<std::string> Read;
};

/// Runs \p Nvcc `-arch=` \p Arch `-c -Xptxas -v -o /dev/null -MD -MF <tmp>` \p Flags \p Source.
Expected<NvccRun> runNvcc(const std::string &Nvcc, const std::string &Arch, const std::vector<std::string> &Flags,
                          const std::string &Source) {
  SmallString<256> Log, Deps;
  if (std::error_code EC = sys::fs::createTemporaryFile("kloop-ptxas", "txt", Log))
    return createStringError(EC, "cannot create a temporary file");
  FileRemover RmLog(Log);
  if (std::error_code EC = sys::fs::createTemporaryFile("kloop-deps", "d", Deps))
    return createStringError(EC, "cannot create a temporary file");
  FileRemover RmDeps(Deps);
  std::vector<std::string> Args = {Nvcc, "-arch=" + Arch, "-c", "-Xptxas", "-v", "-o", "/dev/null", "-MD", "-MF",
                                   std::string(Deps)};
  Args.insert(Args.end(), Flags.begin(), Flags.end());
  Args.push_back(Source);
  std::vector<StringRef> Refs(Args.begin(), Args.end());
  std::optional<StringRef> Redir[] = {std::nullopt, StringRef(Log), StringRef(Log)};
  std::string ErrMsg;
  NvccRun R;
  R.Status = sys::ExecuteAndWait(Nvcc, Refs, std::nullopt, Redir, /*SecondsToWait=*/300, 0, &ErrMsg);
  auto Buf = MemoryBuffer::getFile(Log);
  R.Output = (Buf ? (*Buf)->getBuffer().str() : "") + ErrMsg;
  R.Read = readDeps(Deps);
  return R;
}

/// Writes \p Text at \p Path, creating its directories.
Error writeShadow(StringRef Path, StringRef Text) {
  if (std::error_code EC = sys::fs::create_directories(sys::path::parent_path(Path)))
    return createStringError(EC, "cannot create the directory of " + Path + ": " + EC.message());
  return writeFileAtomically(Path, Text);
}

/// Compiles \p Job's edited code in \p Tree: its main file and \p Edited (the changed files, each
/// FileChange's After, its own when it changed) copied there by shadowOf, each original include
/// directory's copy first on the include path, the edited files' own directories last (for what they
/// include beside them).
Expected<NvccRun> compileEdited(const CompileJob &Job, const std::vector<const FileChange *> &Edited,
                                const std::string &MainText, StringRef Tree, StringRef Root, const std::string &Nvcc,
                                const std::string &Arch) {
  std::string Main = shadowOf(Tree, Root, Job.File);
  if (Error E = writeShadow(Main, MainText))
    return E;
  std::vector<std::string> Dirs, Flags;
  std::vector<std::string> Own = absoluteFlags(Job, Dirs);
  for (const std::string &D : Dirs)
    Flags.insert(Flags.end(), {"-I", shadowOf(Tree, Root, D)});
  Flags.insert(Flags.end(), {"-I", sys::path::parent_path(Job.File).str()});
  Flags.insert(Flags.end(), Own.begin(), Own.end());
  for (const FileChange *C : Edited) {
    if (Error E = writeShadow(shadowOf(Tree, Root, C->File), C->After))
      return E;
    Flags.insert(Flags.end(), {"-I", sys::path::parent_path(C->File).str()});
  }
  return runNvcc(Nvcc, Arch, Flags, Main);
}

} // namespace

Expected<BuildCheck> verifyBuild(const ProposalApplication &A, const std::string &Nvcc, const std::string &Arch,
                                 const std::string &Root) {
  BuildCheck Out;
  std::map<std::string, const FileChange *> Changed; // by real path
  for (const FileChange &C : A.Result.Changes)
    Changed.emplace(realFile(C.File), &C);
  std::set<std::string> Compiled;
  SmallString<256> Tree;
  if (std::error_code EC = sys::fs::createUniqueDirectory("kloop-verify-build", Tree))
    return createStringError(EC, "cannot create a temporary directory");
  llvm::scope_exit Cleanup([&] { sys::fs::remove_directories(Tree); });
  for (const CompileJob &Job : A.Jobs) {
    std::string UnitArch = !Arch.empty() ? Arch : Job.GpuArchs.empty() ? DefaultGpuArch : Job.GpuArchs.front();
    std::vector<std::string> Dirs;
    Expected<NvccRun> Before = runNvcc(Nvcc, UnitArch, absoluteFlags(Job, Dirs), Job.File);
    if (!Before)
      return Before.takeError();
    if (Before->Status != 0)
      return createStringError(inconvertibleErrorCode(), "nvcc failed (" + std::to_string(Before->Status) + ") on " +
                                                             Job.File + " before the edit:\n" + Before->Output);
    std::vector<const FileChange *> Edited;
    nlohmann::json Files = nlohmann::json::array();
    for (const auto &[Real, C] : Changed)
      if (Before->Read.count(Real) || Real == realFile(Job.File)) {
        Edited.push_back(C);
        Files.push_back(C->RelPath);
        Compiled.insert(Real);
      }
    if (Edited.empty())
      continue;
    auto Main = Changed.find(realFile(Job.File));
    std::string MainText = Main != Changed.end() ? Main->second->After : "";
    if (Main == Changed.end())
      if (auto Buf = MemoryBuffer::getFile(Job.File))
        MainText = (*Buf)->getBuffer().str();
    std::string Sub = (Tree + "/" + std::to_string(&Job - A.Jobs.data())).str();
    Expected<NvccRun> After = compileEdited(Job, Edited, MainText, Sub, Root, Nvcc, UnitArch);
    if (!After)
      return After.takeError();
    if (After->Status != 0) {
      Out.EditedFails = "nvcc failed (" + std::to_string(After->Status) + ") on " + Job.File + ": " + After->Output;
      return Out;
    }
    Out.Report[relativePath(Job.File, Root)] = {
        {"before", toJSON(parsePtxasVerbose(Before->Output))},
        {"after", toJSON(parsePtxasVerbose(After->Output))},
        {"edited_files", Files}};
  }
  for (const auto &[Real, C] : Changed)
    if (!Compiled.count(Real))
      Out.NotCompiled.push_back(C->RelPath);
  return Out;
}

} // namespace kloop
