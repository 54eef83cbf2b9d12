//===- TestGate.cpp - The project's own tests on every accepted change ------===//
#include "kloop/Codebase/Codebase.h"
#include "kloop/Measure/Config.h"
#include "kloop/Measure/Runner.h"

#include "llvm/Support/MemoryBuffer.h"

using json = nlohmann::json;
using llvm::Expected;
using llvm::StringRef;

namespace kloop {
namespace codebase {

namespace {

/// The last \p Max bytes of file \p Path ("" when it cannot be read).
std::string fileTail(StringRef Path, size_t Max) {
  auto B = llvm::MemoryBuffer::getFile(Path);
  if (!B)
    return "";
  StringRef T = (*B)->getBuffer();
  return T.substr(T.size() > Max ? T.size() - Max : 0).str();
}

class TestGatedStages : public optimize::Stages {
public:
  TestGatedStages(std::unique_ptr<optimize::Stages> Inner, TestGate G) : In(std::move(Inner)), G(std::move(G)) {}

  Expected<inv::Inventory> extract() override { return In->extract(); }
  Expected<std::string> copySources(StringRef From, StringRef Dir) override { return In->copySources(From, Dir); }
  Expected<optimize::ApplyOutcome> apply(StringRef ProposalFile, StringRef SourceDir, StringRef From) override {
    return In->apply(ProposalFile, SourceDir, From);
  }
  Expected<optimize::BuildOutcome> build(StringRef SourceDir, StringRef BuildDir) override {
    return In->build(SourceDir, BuildDir);
  }
  bool haveGpu(std::string &Why) override { return In->haveGpu(Why); }
  Expected<optimize::CompareOutcome> canary(StringRef BaseDir, StringRef WorkDir) override {
    return In->canary(BaseDir, WorkDir);
  }
  Expected<optimize::CaptureOutcome> capture(StringRef BaseDir, StringRef CaptureDir, StringRef Shape) override {
    return In->capture(BaseDir, CaptureDir, Shape);
  }
  Expected<std::string> diff(StringRef BaseDir, StringRef CandDir) override { return In->diff(BaseDir, CandDir); }
  bool concurrentPrepare() const override { return In->concurrentPrepare(); }
  std::optional<optimize::BuildOutcome> buildCubin(StringRef SourceDir, StringRef WorkDir) override {
    return In->buildCubin(SourceDir, WorkDir);
  }

  Expected<optimize::CompareOutcome> compare(StringRef BaseDir, StringRef CandDir, StringRef WorkDir,
                                             bool Final) override {
    Expected<optimize::CompareOutcome> C = In->compare(BaseDir, CandDir, WorkDir, Final);
    if (!C || !C->Accepted)
      return C;
    if (llvm::Error E = gate(*C, CandDir, WorkDir))
      return std::move(E);
    return C;
  }

  Expected<optimize::ReplayCompareOutcome> replayCompare(StringRef BaseDir, StringRef CandDir, StringRef CaptureDir,
                                                         StringRef WorkDir, StringRef Shape,
                                                         const capture::ReplayConfigs &Configs) override {
    Expected<optimize::ReplayCompareOutcome> R =
        In->replayCompare(BaseDir, CandDir, CaptureDir, WorkDir, Shape, Configs);
    if (!R || !R->Compare || !R->Compare->Accepted)
      return R;
    if (llvm::Error E = gate(*R->Compare, CandDir, WorkDir))
      return std::move(E);
    return R;
  }

private:
  /// Builds \p CandDir again, runs the test command on that build, and refuses \p C when either fails.
  llvm::Error gate(optimize::CompareOutcome &C, StringRef CandDir, StringRef WorkDir) {
    std::string BuildDir = (WorkDir + "/test-build").str(), LogDir = (WorkDir + "/test-logs").str();
    json T = {{"command", G.Command}, {"passed", false}};
    Expected<optimize::BuildOutcome> B = In->build(CandDir, BuildDir);
    if (!B)
      return B.takeError();
    std::string Why;
    if (!B->Succeeded) {
      T.update({{"status", "build failed"}, {"exit_code", nullptr}, {"output_tail", B->Log}, {"log", BuildDir}});
      Why = "the project's test could not run: building the candidate for it failed";
    } else {
      measure::RunRequest R;
      R.Command = rebaseBuildDir(G.Command, G.BuildDir, G.BuildDirAbs, measure::shellQuote(BuildDir));
      R.Cwd = CandDir.str();
      R.TimeoutS = G.TimeoutS;
      R.OutDir = LogDir;
      R.Label = "project-test";
      Expected<measure::RunResult> Res = measure::runIsolated(R);
      if (!Res)
        return Res.takeError();
      std::string Tail = fileTail(Res->StdoutPath, 2048) + Res->StderrTail;
      T.update({{"status", toString(Res->Status).str()}, {"exit_code", Res->ExitCode}, {"passed", Res->ok()},
                {"output_tail", Tail}, {"log", Res->StdoutPath}, {"signal", Res->Signal}});
      if (!Res->ok())
        Why = "the project's test command failed (" + Res->describe() + "): " + G.Command +
              (Tail.empty() ? std::string() : "; output ends: " + StringRef(Tail).trim().str());
    }
    if (C.Detail.is_null())
      C.Detail = json::object();
    if (C.Detail.is_object())
      C.Detail["project_test"] = T;
    if (!Why.empty()) {
      C.Accepted = false;
      C.Outcome = "refused";
      C.Explanation = "refused: " + Why + " (kloop's own checks had accepted it: " + C.Explanation + ")";
    }
    return llvm::Error::success();
  }

  std::unique_ptr<optimize::Stages> In;
  TestGate G;
};

} // namespace

std::unique_ptr<optimize::Stages> makeTestGatedStages(std::unique_ptr<optimize::Stages> Inner, TestGate G) {
  return std::make_unique<TestGatedStages>(std::move(Inner), std::move(G));
}

} // namespace codebase
} // namespace kloop
