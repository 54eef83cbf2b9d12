//===- ReportCommand.cpp - `kloop report`: results from a journal ---------===//
///
/// kloop report --journal run.db [--run N] [-o OUTDIR] [--html]
///
/// Regenerates OUTDIR/report.md (and OUTDIR/accepted.patch when the run
/// accepted a change) from the journal alone; see docs/optimize.md. With
/// --html also OUTDIR/report.html, one self-contained page (docs/report.md).
///
//===----------------------------------------------------------------------===//
#include "kloop/Driver/Command.h"
#include "kloop/Journal/Journal.h"
#include "kloop/Optimize/HtmlReport.h"
#include "kloop/Optimize/Optimize.h"
#include "kloop/Support/AtomicFile.h"

#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace {

cl::SubCommand ReportSub("report", "Write report.md and accepted.patch of a journaled optimize run");
cl::opt<std::string> JournalPath("journal", cl::desc("Journal file of a kloop optimize run"),
                                 cl::value_desc("file"), cl::Required, cl::sub(ReportSub));
cl::opt<int64_t> RunId("run", cl::desc("Run (default: the latest)"), cl::init(0), cl::sub(ReportSub));
cl::opt<std::string> OutDir("o", cl::desc("Output directory (default: .)"), cl::init("."),
                            cl::value_desc("dir"), cl::sub(ReportSub));
cl::opt<bool> Html("html", cl::desc("Also write report.html, one self-contained page with charts (docs/report.md)"),
                   cl::sub(ReportSub));

int fail(const Twine &Message) {
  errs() << "kloop report: error: " << Message << "\n";
  return 1;
}

int runReport(const kloop::CommandContext &Ctx) {
  // The charting library first: a missing one writes nothing.
  std::string Chart;
  if (Html) {
    Expected<std::string> L = kloop::optimize::loadChartLibrary(Ctx.Argv0);
    if (!L)
      return fail(toString(L.takeError()));
    Chart = std::move(*L);
  }
  Expected<std::unique_ptr<kloop::Journal>> J =
      kloop::Journal::open(JournalPath, kloop::Journal::OpenMode::ReadOnly);
  if (!J)
    return fail(toString(J.takeError()));
  Expected<std::string> Page = Html ? kloop::optimize::renderHtmlReport(**J, RunId, Chart) : std::string();
  if (!Page)
    return fail(toString(Page.takeError()));
  Expected<std::vector<std::string>> W = kloop::optimize::writeResults(**J, RunId, OutDir);
  if (!W)
    return fail(toString(W.takeError()));
  if (Html) {
    std::string Path = OutDir + "/report.html";
    if (Error E = kloop::writeFileAtomically(Path, *Page))
      return fail(toString(std::move(E)));
    W->push_back(Path);
  }
  for (const std::string &F : *W)
    outs() << "kloop report: wrote " << F << "\n";
  return 0;
}

kloop::CommandRegistration Registration(ReportSub, runReport);

} // namespace
