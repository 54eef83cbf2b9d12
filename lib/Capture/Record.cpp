//===- Record.cpp - kloop capture: run a program once and capture it ------===//
#include "kloop/Capture/Record.h"
#include "kloop/Capture/Capture.h"
#include "kloop/Measure/Config.h"
#include "kloop/Measure/Runner.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <unistd.h>

using namespace llvm;

namespace kloop {
namespace capture {

namespace {

Error fail(const Twine &Msg) { return createStringError(inconvertibleErrorCode(), Msg); }

/// Removes a temporary capture directory when the capture does not succeed.
struct TempDirGuard {
  std::string Path;
  bool Keep = false;
  ~TempDirGuard() {
    if (!Keep && !Path.empty())
      sys::fs::remove_directories(Path);
  }
};

/// The output directory must be new and its parent writable: checked before the program runs.
Error checkOutDir(StringRef OutDir) {
  if (sys::fs::exists(OutDir))
    return fail("-o " + OutDir + ": already exists; kloop capture writes a new directory (remove it or pick "
                "another name)");
  SmallString<256> Parent(sys::path::parent_path(OutDir));
  if (Parent.empty())
    Parent = ".";
  if (!sys::fs::is_directory(Parent) || ::access(Parent.c_str(), W_OK | X_OK) != 0)
    return fail("-o " + OutDir + ": directory " + Parent + " does not exist or is not writable");
  return Error::success();
}

std::string commandLine(const std::vector<std::string> &Argv) {
  std::string S;
  for (const std::string &A : Argv)
    S += (S.empty() ? "" : " ") + measure::shellQuote(A);
  return S;
}

std::string describeFailure(const measure::RunResult &R) {
  std::string S;
  switch (R.Status) {
  case measure::RunStatus::MissingProfile:
    S = "the command wrote no profile: it never initialised CUDA, or libkloop-cupti.so was not loaded "
        "(CUDA_INJECTION64_PATH)";
    break;
  case measure::RunStatus::CorruptProfile:
    S = "the profile libkloop-cupti.so wrote is corrupt: " + R.Detail;
    break;
  case measure::RunStatus::ExitedNonZero:
    S = "the command exited with code " + std::to_string(R.ExitCode);
    break;
  default:
    S = "the command " + R.describe();
  }
  if (!R.StderrTail.empty())
    S += "; the end of its stderr:\n" + R.StderrTail;
  return S;
}

Expected<measure::RunResult> runOnce(const RecordOptions &O, StringRef Dir, StringRef Label, bool Inject) {
  measure::RunRequest R;
  R.Command = commandLine(O.Command);
  R.Cwd = O.Cwd;
  R.Env = O.Env;
  R.TimeoutS = O.TimeoutS;
  R.OutDir = Dir.str();
  R.Label = Label.str();
  if (Inject) {
    measure::InjectionSettings I;
    I.LibraryPath = O.CuptiLib;
    I.Extra["KLOOP_CUPTI_CAPTURE_DIR"] = Dir.str();
    std::string Kernels;
    for (const std::string &K : O.Kernels)
      Kernels += (Kernels.empty() ? "" : ",") + K;
    I.Extra["KLOOP_CUPTI_CAPTURE_KERNELS"] = Kernels;
    I.Extra["KLOOP_CUPTI_CAPTURE_LAUNCHES"] = std::to_string(O.LaunchesPerConfig);
    R.Inject = std::move(I);
  }
  Expected<measure::RunResult> Res = measure::runIsolated(R);
  if (!Res)
    return Res.takeError();
  if (!Res->ok())
    return fail(describeFailure(*Res));
  return Res;
}

/// "nothing captured" with the reasons, or success when \p M holds a launch.
Error checkSomethingCaptured(const Manifest &M, const std::vector<std::string> &Kernels) {
  if (!M.Launches.empty())
    return Error::success();
  std::string Msg = "nothing captured";
  if (!M.Refusals.empty()) {
    Msg += ": " + std::to_string(M.Refusals.size()) + " launch(es) refused:";
    for (const auto &[Reason, N] : refusalReasons(M))
      Msg += "\n  " + std::to_string(N) + " x " + Reason;
  } else if (!Kernels.empty()) {
    std::string K;
    for (const std::string &S : Kernels)
      K += (K.empty() ? "" : ", ") + S;
    Msg += ": no launch of a target kernel (--kernel " + K + ") was seen";
  } else {
    Msg += ": the program launched no kernel";
  }
  for (const std::string &E : M.Errors)
    Msg += "\n  error: " + E;
  return fail(Msg);
}

bool sameFile(StringRef A, StringRef B) {
  auto BA = MemoryBuffer::getFile(A), BB = MemoryBuffer::getFile(B);
  return BA && BB && (*BA)->getBuffer() == (*BB)->getBuffer();
}

uint64_t directoryBytes(StringRef Dir) {
  uint64_t N = 0;
  std::error_code EC;
  for (sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC; It.increment(EC)) {
    uint64_t Size = 0;
    if (!sys::fs::file_size(It->path(), Size))
      N += Size;
  }
  return N;
}

} // namespace

Expected<RecordResult> recordCapture(const RecordOptions &O) {
  if (O.Command.empty())
    return fail("no command to run: give it after --");
  if (O.LaunchesPerConfig == 0)
    return fail("--launches must be at least 1");
  if (Error E = checkOutDir(O.OutDir))
    return E;

  TempDirGuard Tmp;
  Tmp.Path = O.OutDir + ".kloop-tmp." + std::to_string(::getpid());
  if (std::error_code EC = sys::fs::create_directory(Tmp.Path, /*IgnoreExisting=*/false))
    return fail("cannot create " + Tmp.Path + ": " + EC.message());

  RecordResult Out;
  Expected<measure::RunResult> Run = runOnce(O, Tmp.Path, "run", /*Inject=*/true);
  if (!Run)
    return Run.takeError();
  Out.CapturedWallS = Run->WallSeconds;
  if (Run->Prof)
    for (const verify::LaunchRecord &L : Run->Prof->Launches) {
      KernelGpuTime &G = Out.GpuTime[L.Kernel];
      ++G.Launches;
      G.TotalNs += L.DurationNs;
    }

  if (!sys::fs::exists(Tmp.Path + "/" + ManifestFileName))
    return fail("libkloop-cupti.so wrote no " + std::string(ManifestFileName) + " in " + Tmp.Path +
                " (a library older than capture support, or the capture directory was not writable)");
  Expected<Manifest> M = readCapture(Tmp.Path, BlobCheck::Contents);
  if (!M)
    return M.takeError();
  if (Error E = checkSomethingCaptured(*M, O.Kernels))
    return E;

  if (O.MeasureCost) {
    Expected<measure::RunResult> Plain = runOnce(O, Tmp.Path, "uncaptured", /*Inject=*/false);
    if (!Plain)
      return fail("the run without capture failed: " + toString(Plain.takeError()));
    Out.UncapturedWallS = Plain->WallSeconds;
    Out.SameStdout = sameFile(Run->StdoutPath, Plain->StdoutPath);
    sys::fs::remove(Plain->StdoutPath);
    sys::fs::remove(Plain->StderrPath);
  }

  Out.BlobBytes = directoryBytes(Tmp.Path + "/" + BlobDirName);
  if (std::error_code EC = sys::fs::rename(Tmp.Path, O.OutDir))
    return fail("cannot rename " + Tmp.Path + " to " + O.OutDir + ": " + EC.message());
  Tmp.Keep = true;
  Out.Dir = O.OutDir;
  Out.M = std::move(*M);
  return Out;
}

} // namespace capture
} // namespace kloop
