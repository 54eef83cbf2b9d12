//===- Command.cpp - Subcommand registry and kloop's main -----------------===//
#include "kloop/Driver/Command.h"

#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"
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

static void printVersion(raw_ostream &OS) { OS << "kloop 0.1.0 (LLVM/Clang 22)\n"; }

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
  // LLVM names argv[0] in its errors ("Try: '<argv[0]> --help'"): with a known
  // subcommand, name it too, so the hint points at that subcommand's options.
  std::vector<const char *> Args(Argv, Argv + Cut);
  std::string Prog;
  if (Cut > 1)
    for (const RegisteredCommand &C : registeredCommands())
      if (C.Sub->getName() == Argv[1]) {
        Prog = std::string("kloop ") + Argv[1];
        Args[0] = Prog.c_str();
      }
  if (!cl::ParseCommandLineOptions(
          Cut, Args.data(),
          "kloop: closes the CUDA kernel tuning loop inside the compiler toolchain.\n\n"
          "  kloop extract FILES... [-- ARGS] | -p BUILD_DIR   kernel inventory as JSON\n",
          &errs()))
    return 2;
  for (const RegisteredCommand &C : registeredCommands())
    if (*C.Sub)
      return C.Fn(Ctx);
  errs() << "kloop: error: no subcommand given; run `kloop --help` for the list\n";
  return 2;
}

} // namespace kloop
