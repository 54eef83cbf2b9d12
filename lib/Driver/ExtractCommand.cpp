//===- ExtractCommand.cpp - `kloop extract` --------------------------------===//
//
// kloop extract [FILES|DIRS...] [-- COMPILER ARGS] | -p BUILD_DIR [FILES...]
// Prints the inventory (docs/inventory.md) as JSON on stdout or into -o FILE.
//
//===----------------------------------------------------------------------===//
#include "RuleOutputs.h"
#include "kloop/Driver/Command.h"
#include "kloop/Edit/Rules.h"
#include "kloop/Inventory/ExtractCache.h"
#include "kloop/Support/JSON.h"
#include "kloop/Support/AtomicFile.h"
#include "kloop/Inventory/Extract.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

using namespace llvm;

namespace {
cl::SubCommand ExtractSub("extract", "List kernels, launch sites and tunable regions as JSON");
cl::list<std::string> Inputs(cl::Positional, cl::desc("<file or directory>..."), cl::sub(ExtractSub));
cl::opt<std::string> BuildPath("p", cl::desc("Build directory holding compile_commands.json"),
                               cl::value_desc("dir"), cl::sub(ExtractSub));
cl::opt<std::string> Output("o", cl::desc("Write the JSON here instead of stdout (atomically)"),
                            cl::value_desc("file"), cl::sub(ExtractSub));
cl::opt<unsigned> Jobs("j", cl::desc("Translation units parsed in parallel (0: one per hardware thread)"),
                       cl::init(0), cl::Prefix, cl::sub(ExtractSub));
cl::opt<std::string> CudaPath("cuda-path", cl::desc("CUDA installation (default: $CUDA_HOME, /usr/local/cuda)"),
                              cl::sub(ExtractSub));
cl::opt<std::string> GpuArch("cuda-gpu-arch",
                             cl::desc("GPU architecture of the device-side parse (default: the command's, else sm_75, nvcc's)"),
                             cl::sub(ExtractSub));
cl::opt<std::string> Root("root", cl::desc("Paths in the output are relative to this directory (default: cwd)"),
                          cl::sub(ExtractSub));
cl::opt<bool> Compact("compact", cl::desc("Print JSON on one line"), cl::sub(ExtractSub));
cl::opt<std::string> CacheDir("cache-dir",
                              cl::desc("Reuse unchanged translation units' parses from this directory "
                                       "(default: $XDG_CACHE_HOME/kloop/extract, else ~/.cache/kloop/extract)"),
                              cl::value_desc("dir"), cl::sub(ExtractSub));
cl::opt<bool> NoCache("no-cache", cl::desc("Parse every translation unit; read and write no cache"),
                      cl::sub(ExtractSub));
cl::opt<bool> CacheStats("cache-stats",
                         cl::desc("Say on stderr how many translation units came from the cache"),
                         cl::sub(ExtractSub));

cl::opt<bool> ExplainRules("explain-rules",
                           cl::desc("Say for each built-in rule why it fires or not on each candidate site "
                                    "(on stdout, instead of the JSON; -o still writes the JSON)"),
                           cl::sub(ExtractSub));

cl::opt<std::string> ConfigPath("config",
                                cl::desc("With --explain-rules: the workload description (.kloop.yaml) whose output "
                                         "tolerances rules such as fast-math read"),
                                cl::value_desc("file"), cl::sub(ExtractSub));

/// One line per rule and candidate site: "<rule> <site>: fires: ..." or "... does not fire: ...";
/// \p Outputs: the workload's outputs (--config), or null.
std::string explainRules(const kloop::inv::Inventory &Inventory, const std::vector<kloop::OutputTolerance> *Outputs) {
  std::string Out;
  for (const kloop::Rule &R : kloop::builtinRules()) {
    std::vector<kloop::RuleSite> Sites = kloop::explainRule(R, Inventory, Outputs);
    if (Sites.empty())
      Out += std::string(R.Name) + ": no candidate site\n";
    for (const kloop::RuleSite &S : Sites)
      Out += std::string(R.Name) + " " + S.Site + (S.Edits.empty() ? ": does not fire: " : ": fires: ") + S.Why +
             "\n";
  }
  return Out;
}

cl::opt<bool> StrictFlags("strict-flags",
                          cl::desc("A compile flag that neither nvcc nor clang knows, or an nvcc flag "
                                   "kloop does not support, fails its translation unit (default: a "
                                   "warning, and the flag is ignored)"),
                          cl::sub(ExtractSub));

/// Prints the errors of every translation unit with status "error" (lost whole, an error) or "partial"
/// (its errors are warnings: it still yields what they do not touch; docs/inventory.md, "Errors").
void printUnitErrors(const kloop::inv::Inventory &Inv) {
  for (const kloop::inv::TranslationUnit &TU : Inv.TranslationUnits) {
    bool Lost = TU.Status == "error";
    if (!Lost && TU.Status != "partial")
      continue;
    errs() << "kloop extract: " << (Lost ? "error: " : "warning: ") << TU.File << ": ";
    const char *Head = Lost ? "failed to parse" : "parsed with errors; what they touch has status \"error\"";
    bool OneLine = Lost && TU.Errors.size() == 1; // "error: f.cu: f.cu:1:2: error: ..."
    if (!OneLine)
      errs() << Head << "\n";
    for (const std::string &Err : TU.Errors)
      errs() << (OneLine ? "" : "  ") << Err << "\n";
  }
}

/// Prints the parse warnings of \p E that kloop itself raises (a condition that tests __NVCC__), once per
/// place: the host and device sides, and units sharing a header, raise each alike.
void printParseWarnings(const kloop::Extraction &E) {
  std::set<std::string> Seen;
  for (const kloop::TUResult &R : E.Results)
    for (const kloop::ParseResult *P : {&R.Host, &R.Device})
      for (const kloop::ParseDiagnostic &D : P->Diagnostics)
        if (kloop::isNvccMacroWarning(D) && Seen.insert(D.str()).second)
          errs() << "kloop extract: " << D.str() << "\n";
}

/// Writes the inventory of \p E to stdout or -o, then the summary of partial and failed units; false
/// when -o fails.
bool writeInventory(const kloop::Extraction &E, const std::vector<kloop::OutputTolerance> *Outputs) {
  const nlohmann::json Doc = kloop::inv::toJSON(E.Inventory); // the file boundary (docs/inventory.md)
  std::string Text = kloop::dumpJSON(Doc, Compact ? -1 : 2) + "\n";
  if (ExplainRules)
    outs() << kloop::terminalSafe(explainRules(E.Inventory, Outputs));
  if (Output.empty()) {
    if (!ExplainRules)
      outs() << Text;
  } else if (Error W = kloop::writeFileAtomically(Output, Text)) {
    errs() << "kloop extract: error: " << toString(std::move(W)) << "\n";
    return false;
  }
  if (E.Partial)
    errs() << "kloop extract: " << E.Partial << " of " << E.Inventory.TranslationUnits.size()
           << " translation unit(s) parsed with errors; their kernels and launch sites outside the errors "
              "have status \"ok\"\n";
  if (E.Lost)
    errs() << "kloop extract: " << E.Lost << " of " << E.Inventory.TranslationUnits.size()
           << " translation unit(s) failed; the others are reported\n";
  return true;
}

int runExtract(const kloop::CommandContext &Ctx) {
  std::optional<std::vector<kloop::OutputTolerance>> Outputs;
  if (!ConfigPath.empty()) {
    if (!ExplainRules) {
      errs() << "kloop extract: error: --config is read by --explain-rules; use them together\n";
      return 2;
    }
    Expected<kloop::measure::WorkloadConfig> C = kloop::measure::loadConfig(ConfigPath);
    if (!C) {
      errs() << "kloop extract: error: " << toString(C.takeError()) << "\n";
      return 1;
    }
    Outputs = kloop::ruleOutputs(*C);
  }
  kloop::FrontendOptions Opts;
  Opts.BuildPath = BuildPath;
  Opts.Inputs.assign(Inputs.begin(), Inputs.end());
  Opts.ExtraArgs = Ctx.ExtraArgs;
  Opts.HasExtraArgs = Ctx.HasDoubleDash;
  Opts.CudaPath = CudaPath;
  Opts.GpuArch = GpuArch;
  Opts.Jobs = Jobs;
  Opts.StrictFlags = StrictFlags;
  std::unique_ptr<kloop::ExtractCache> Cache = kloop::openExtractCache(CacheDir, NoCache);
  kloop::ExtractOptions EO;
  EO.Root = Root;
  EO.Cache = Cache.get();
  Expected<kloop::Extraction> E = kloop::extractInventory(Opts, EO);
  if (!E) {
    errs() << "kloop extract: error: " << toString(E.takeError()) << "\n";
    return 1;
  }
  for (const kloop::CompileJob &J : E->Jobs)
    for (const std::string &W : J.Warnings)
      errs() << "kloop extract: warning: " << J.File << ": " << W << "\n";
  for (const std::string &N : E->RecoveryNotes)
    errs() << "kloop extract: note: " << N << "\n";
  if (Cache && !Cache->firstStoreError().empty())
    errs() << "kloop extract: warning: the cache could not be written (later runs parse again): "
           << Cache->firstStoreError() << "\n";
  if (CacheStats)
    errs() << "kloop extract: cache: " << (Cache ? Cache->hits() : 0) << " of " << E->Results.size()
           << " translation unit(s) reused, " << (Cache ? Cache->stores() : 0) << " stored"
           << (Cache ? " (" + Cache->dir() + ")" : std::string(" (cache off)")) << "\n";
  printParseWarnings(*E);
  printUnitErrors(E->Inventory);
  return writeInventory(*E, Outputs ? &*Outputs : nullptr) && !E->Lost ? 0 : 1;
}

kloop::CommandRegistration Reg(ExtractSub, runExtract);
} // namespace
