//===- Command.cpp - Subcommand registry and kloop's main -----------------===//
#include "kloop/Driver/Command.h"
#include "kloop/Frontend/Frontend.h"
#include "kloop/Support/FileTransaction.h"
#include "kloop/Support/Text.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Timer.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace llvm;

namespace kloop {

std::vector<RegisteredCommand> &registeredCommands() {
  static std::vector<RegisteredCommand> Commands;
  return Commands;
}

CommandRegistration::CommandRegistration(cl::SubCommand &Sub, CommandFn Fn) {
  registeredCommands().push_back({&Sub, Fn});
}

std::vector<std::string> jobFiles(const std::vector<CompileJob> &Jobs) {
  std::vector<std::string> Files;
  for (const CompileJob &J : Jobs)
    Files.push_back(J.File);
  return Files;
}

bool recoverInterruptedWrites(StringRef Tool, ArrayRef<std::string> Paths) {
  Expected<std::vector<std::string>> Notes = kloop::recoverInterruptedWrites(Paths);
  if (!Notes) {
    errs() << "kloop " << Tool << ": error: " << toString(Notes.takeError()) << "\n";
    return false;
  }
  for (const std::string &N : *Notes)
    errs() << "kloop " << Tool << ": note: " << N << "\n";
  return true;
}

std::string checkOutputFile(StringRef Path) {
  if (sys::fs::is_directory(Path))
    return ("-o '" + Path + "' is a directory; expected a file name").str();
  SmallString<256> Parent(Path);
  sys::fs::make_absolute(Parent);
  sys::path::remove_filename(Parent);
  if (!sys::fs::is_directory(Parent) || sys::fs::access(Parent, sys::fs::AccessMode::Write))
    return ("-o '" + Path + "': directory '" + Parent + "' does not exist or is not writable").str();
  return "";
}

static void printVersion(raw_ostream &OS) { OS << "kloop 0.1.0 (LLVM/Clang 22)\n"; }

/// \p RC, or, when a parse crashed during the command (and was recovered, kloop/Frontend/Frontend.h), the
/// process ends here with \p RC after flushing its output, without LLVM's shutdown: a crashed parse
/// abandons its thread's stack with objects still registered in LLVM's global lists (clang's `#pragma
/// clang __debug crash` leaves its Timer in the default TimerGroup), and llvm_shutdown would walk them.
/// Otherwise the records of the timers clang ran are dropped, which LLVM would print as a
/// "Miscellaneous Ungrouped Timers" table at shutdown: the `__debug crash` pragma, made inert in
/// kloop's parses (parseCommandLine), still times itself.
static int endCommand(int RC) {
  if (!anyParseCrashed()) {
    TimerGroup::printAll(nulls());
    return RC;
  }
  outs().flush();
  errs().flush();
  std::fflush(nullptr);
  std::_Exit(RC);
}

int kloopMain(int Argc, const char **Argv) {
  InitLLVM X(Argc, Argv);
  CommandContext Ctx;
  Ctx.Argv0 = Argv[0];
  int Cut = Argc;
  for (int I = 1; I < Argc; ++I)
    if (std::strcmp(Argv[I], "--") == 0) {
      Cut = I;
      Ctx.HasDoubleDash = true;
      for (int J = I + 1; J < Argc; ++J)
        Ctx.ExtraArgs.push_back(Argv[J]);
      break;
    }
  cl::SetVersionPrinter(printVersion);
  // LLVM's own options (hundreds: --polly-*, --amdgpu-*, ...) are linked in and
  // registered at top level; `kloop --help` lists kloop's subcommands, not them
  // (`--help-hidden` still does).
  for (auto &KV : cl::getRegisteredOptions(cl::SubCommand::getTopLevel()))
    if (KV.first != "help" && KV.first != "help-list" && KV.first != "version")
      KV.second->setHiddenFlag(cl::Hidden);
  // LLVM's errors end in "Try: '<argv[0]> --help'": with a known subcommand,
  // point at that subcommand's options instead.
  std::string Sub;
  if (Cut > 1)
    for (const RegisteredCommand &C : registeredCommands())
      if (C.Sub->getName() == Argv[1])
        Sub = Argv[1];
  std::string ErrText;
  raw_string_ostream ErrOS(ErrText);
  bool Parsed = cl::ParseCommandLineOptions(
      Cut, Argv,
      "kloop: closes the CUDA kernel tuning loop inside the compiler toolchain.\n"
      "Run `kloop SUBCOMMAND --help` for a subcommand's options; arguments after `--` go to the compiler.\n",
      &ErrOS);
  ErrOS.flush();
  if (!Sub.empty()) {
    std::string From = std::string("Try: '") + Argv[0] + " --help'", To = "Try: 'kloop " + Sub + " --help'";
    for (size_t P = ErrText.find(From); P != std::string::npos; P = ErrText.find(From, P + To.size()))
      ErrText.replace(P, From.size(), To);
  }
  errs() << ErrText;
  if (!Parsed)
    return 2;
  for (const RegisteredCommand &C : registeredCommands())
    if (*C.Sub)
      return endCommand(C.Fn(Ctx));
  errs() << "kloop: error: no subcommand given; run `kloop --help` for the list\n";
  return 2;
}

} // namespace kloop
