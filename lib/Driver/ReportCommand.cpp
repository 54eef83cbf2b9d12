//===- ReportCommand.cpp - `kloop report`: results from a journal ---------===//
///
/// kloop report --journal run.db [--run N] [-o OUTDIR]
///
/// Regenerates OUTDIR/report.md (and OUTDIR/accepted.patch when the run
/// accepted a change) from the journal alone; see docs/optimize.md.
///
//===----------------------------------------------------------------------===//
#include "kloop/Driver/Command.h"
#include "kloop/Journal/Journal.h"
#include "kloop/Optimize/Optimize.h"

#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace {

cl::SubCommand ReportSub("report", "Write report.md and accepted.patch of a journaled optimize run");
cl::opt<std::string> JournalPath("journal", cl::desc("Journal file of a kloop optimize run"),
                                 cl::value_desc("file"), cl::Required, cl::sub(ReportSub));
cl::opt<int64_t> RunId("run", cl::desc("Run (default: the latest)"), cl::init(0), cl::sub(ReportSub));
cl::opt<std::string> OutDir("o", cl::desc("Output directory (default: .)"), cl::init("."),
                            cl::value_desc("dir"), cl::sub(ReportSub));

int runReport(const kloop::CommandContext &) {
  Expected<std::unique_ptr<kloop::Journal>> J =
      kloop::Journal::open(JournalPath, kloop::Journal::OpenMode::ReadOnly);
  if (!J) {
    errs() << "kloop report: error: " << toString(J.takeError()) << "\n";
    return 1;
  }
  Expected<std::vector<std::string>> W = kloop::optimize::writeResults(**J, RunId, OutDir);
  if (!W) {
    errs() << "kloop report: error: " << toString(W.takeError()) << "\n";
    return 1;
  }
  for (const std::string &F : *W)
    outs() << "kloop report: wrote " << F << "\n";
  return 0;
}

kloop::CommandRegistration Registration(ReportSub, runReport);

} // namespace
