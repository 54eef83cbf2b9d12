//===- CudaInstallation.cpp - Locating the CUDA SDK -----------------------===//
#include "kloop/Frontend/CudaInstallation.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

using namespace llvm;

namespace kloop {

static std::string expand(StringRef S, StringRef Root) {
  std::string Out = S.str();
  auto Replace = [&](StringRef From, StringRef To) {
    size_t Pos;
    while ((Pos = Out.find(From.str())) != std::string::npos)
      Out.replace(Pos, From.size(), To.str());
  };
  Replace("$(TOP)", Root);
  Replace("$(_HERE_)", (Root + "/bin").str());
  Replace("$(_TARGET_DIR_)", "targets/x86_64-linux");
  Replace("$(_SPACE_)", " ");
  SmallString<256> Norm(Out);
  sys::path::remove_dots(Norm, /*remove_dot_dot=*/true);
  return std::string(Norm);
}

void readNvccProfile(StringRef Profile, StringRef Root, CudaInstallation &Out) {
  SmallVector<StringRef, 16> Lines;
  Profile.split(Lines, '\n');
  for (StringRef Line : Lines) {
    auto [Key, Value] = Line.split('=');
    Key = Key.trim().rtrim("+");
    Key = Key.trim();
    bool System = Key == "SYSTEM_INCLUDES";
    if (Key != "INCLUDES" && !System)
      continue;
    SmallVector<StringRef, 8> Toks;
    Value.split(Toks, ' ', -1, false);
    bool NextIsSystem = false;
    for (StringRef T : Toks) {
      T = T.trim().trim('"');
      if (T.empty() || T == "$(_SPACE_)")
        continue;
      if (T == "-isystem") {
        NextIsSystem = true;
        continue;
      }
      std::string Dir;
      if (NextIsSystem) {
        Dir = expand(T, Root);
      } else if (T.consume_front("-I")) {
        Dir = expand(T, Root);
      } else {
        continue;
      }
      bool AsSystem = System || NextIsSystem;
      NextIsSystem = false;
      if (!sys::fs::is_directory(Dir))
        continue;
      (AsSystem ? Out.SystemIncludes : Out.Includes).push_back(Dir);
    }
  }
}

static bool looksLikeCuda(StringRef Root) {
  SmallString<256> P(Root);
  sys::path::append(P, "include", "cuda_runtime.h");
  return sys::fs::exists(P);
}

std::optional<CudaInstallation> findCudaInstallation(StringRef Explicit) {
  std::vector<std::string> Candidates;
  if (!Explicit.empty())
    Candidates.push_back(Explicit.str());
  else {
    for (const char *Var : {"CUDA_HOME", "CUDA_PATH"})
      if (auto V = sys::Process::GetEnv(Var))
        Candidates.push_back(*V);
    Candidates.push_back("/usr/local/cuda");
  }
  for (const std::string &C : Candidates) {
    if (!looksLikeCuda(C))
      continue;
    CudaInstallation I;
    SmallString<256> Real;
    I.Path = sys::fs::real_path(C, Real) ? C : std::string(Real);
    SmallString<256> Profile(I.Path);
    sys::path::append(Profile, "bin", "nvcc.profile");
    if (auto Buf = MemoryBuffer::getFile(Profile))
      readNvccProfile((*Buf)->getBuffer(), I.Path, I);
    else {
      // No profile: fall back to the one directory CUDA 13 is known to need.
      SmallString<256> Cccl(I.Path);
      sys::path::append(Cccl, "include", "cccl");
      if (sys::fs::is_directory(Cccl))
        I.SystemIncludes.push_back(std::string(Cccl));
    }
    return I;
  }
  return std::nullopt;
}

} // namespace kloop
