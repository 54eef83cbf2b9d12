//===- ExtractCommand.cpp - `kloop extract` --------------------------------===//
//
// kloop extract [FILES|DIRS...] [-- COMPILER ARGS] | -p BUILD_DIR [FILES...]
// Prints the inventory (docs/inventory.md) as JSON on stdout or into -o FILE.
//
//===----------------------------------------------------------------------===//
#include "kloop/Driver/Command.h"
#include "kloop/Inventory/Inventory.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

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
                             cl::desc("GPU architecture of the device-side parse (default: the command's, else sm_90)"),
                             cl::sub(ExtractSub));
cl::opt<std::string> Root("root", cl::desc("Paths in the output are relative to this directory (default: cwd)"),
                          cl::sub(ExtractSub));
cl::opt<bool> Compact("compact", cl::desc("Print JSON on one line"), cl::sub(ExtractSub));
cl::opt<bool> StrictFlags("strict-flags",
                          cl::desc("A compile flag that neither nvcc nor clang knows, or an nvcc flag "
                                   "kloop does not support, fails its translation unit (default: a "
                                   "warning, and the flag is ignored)"),
                          cl::sub(ExtractSub));

int runExtract(const kloop::CommandContext &Ctx) {
  kloop::FrontendOptions Opts;
  Opts.BuildPath = BuildPath;
  Opts.Inputs.assign(Inputs.begin(), Inputs.end());
  Opts.ExtraArgs = Ctx.ExtraArgs;
  Opts.HasExtraArgs = Ctx.HasDoubleDash;
  Opts.CudaPath = CudaPath;
  Opts.GpuArch = GpuArch;
  Opts.Jobs = Jobs;
  Opts.StrictFlags = StrictFlags;
  auto Planned = kloop::planCompileJobs(Opts);
  if (!Planned) {
    errs() << "kloop extract: error: " << toString(Planned.takeError()) << "\n";
    return 1;
  }
  for (const kloop::CompileJob &J : *Planned)
    for (const std::string &W : J.Warnings)
      errs() << "kloop extract: warning: " << J.File << ": " << W << "\n";
  std::vector<kloop::TUResult> Results = kloop::runInventory(*Planned, Opts);
  SmallString<256> RootDir(Root);
  if (RootDir.empty())
    sys::fs::current_path(RootDir);
  else
    sys::fs::make_absolute(RootDir);
  sys::path::remove_dots(RootDir, true);
  nlohmann::json Doc = kloop::mergeInventory(Results, RootDir);

  int Failed = 0;
  for (const nlohmann::json &TU : Doc["translation_units"])
    if (TU["status"] != "ok") {
      ++Failed;
      errs() << "kloop extract: error: " << TU["file"].get<std::string>() << ": ";
      const nlohmann::json &Errs = TU["errors"];
      if (Errs.empty())
        errs() << "failed to parse\n";
      else {
        errs() << (Errs.size() == 1 ? "" : "failed to parse\n");
        for (const auto &E : Errs)
          errs() << (Errs.size() == 1 ? "" : "  ") << E.get<std::string>() << "\n";
      }
    }
  std::string Text = Doc.dump(Compact ? -1 : 2) + "\n";
  if (Output.empty()) {
    outs() << Text;
  } else if (Error E = writeToOutput(Output, [&](raw_ostream &OS) {
               OS << Text;
               return Error::success();
             })) {
    errs() << "kloop extract: error: cannot write " << Output << ": " << toString(std::move(E)) << "\n";
    return 1;
  }
  if (Failed)
    errs() << "kloop extract: " << Failed << " of " << Doc["translation_units"].size()
           << " translation unit(s) failed; the others are reported\n";
  return Failed ? 1 : 0;
}

kloop::CommandRegistration Reg(ExtractSub, runExtract);
} // namespace
