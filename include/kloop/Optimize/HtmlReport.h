//===- kloop/Optimize/HtmlReport.h - report.html from the journal ---------===//
///
/// \file
/// `kloop report --html` (issue 16, item 5; docs/report.md): one
/// self-contained page per optimize run, rendered from the journal alone,
/// with Chart.js inlined (no network when the page is opened).
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_OPTIMIZE_HTMLREPORT_H
#define KLOOP_OPTIMIZE_HTMLREPORT_H

#include "kloop/Journal/Journal.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace kloop {
namespace optimize {

/// Where the report's assets are installed, relative to kloop's installation
/// prefix (kloop::installPrefix; cmake/Install.cmake, which runs
/// cmake/NpmCi.cmake at build time and puts the build tree's copy at the same
/// place under build/).
inline constexpr const char *ReportAssetsSubdir = "share/kloop/report";

/// The charting library's file in that directory: Chart.js's minified UMD
/// build from npm (web/package-lock.json pins the version).
inline constexpr const char *ChartLibraryFile = "chart.umd.min.js";

/// The text of the charting library, to inline into the page: from the
/// directory KLOOP_REPORT_ASSETS_DIR if set, else <installation prefix of the
/// executable \p Argv0>/ReportAssetsSubdir. Errors name the file looked for
/// and, when the build could not install it (npm missing or `npm ci` failed),
/// the build's reason (the directory's MISSING.txt); also an error when the
/// text is empty or holds "</script" (it could not be inlined in a script
/// element).
llvm::Expected<std::string> loadChartLibrary(llvm::StringRef Argv0);

/// \p Text with &, <, >, " and ' replaced by character references, so that it
/// is text in HTML content and in quoted attribute values.
std::string htmlEscape(llvm::StringRef Text);

/// The page of run \p Run of \p J (0: the latest), with \p ChartLibrary (the
/// text loadChartLibrary returned) inlined: the run's summary, per kernel and
/// shape the final check's timing distributions (the journal's samples,
/// docs/journal.md), speed-up with its 95% CI and p99; a roofline chart of the
/// baseline and the accepted version (the evidence's .kloop.yaml bytes and
/// flops, the final step's device ceilings); the limiters of a profile step
/// when the journal has one; the candidates over time with outcome and reason;
/// and the diff with its evidence. Every text from the journal is
/// HTML-escaped, and the chart data is JSON with '<' written as \u003c.
/// Errors: the journal's (no run, unreadable rows).
llvm::Expected<std::string> renderHtmlReport(Journal &J, int64_t Run, llvm::StringRef ChartLibrary);

} // namespace optimize
} // namespace kloop

#endif
