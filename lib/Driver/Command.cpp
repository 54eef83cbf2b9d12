//===- Command.cpp - Subcommand registry and kloop's main -----------------===//
#include "kloop/Driver/Command.h"
#include "kloop/Frontend/Frontend.h"
#include "kloop/Support/FileTransaction.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdio>
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

/// Whether \p CP is a bidirectional control character (Unicode UAX #9: ALM, LRM, RLM,
/// the embeddings and overrides, the isolates).
static bool isBidiControl(uint32_t CP) {
  return CP == 0x061C || CP == 0x200E || CP == 0x200F || (CP >= 0x202A && CP <= 0x202E) ||
         (CP >= 0x2066 && CP <= 0x2069);
}

/// \p V formatted by the printf format \p Fmt (one unsigned conversion).
static std::string escaped(const char *Fmt, unsigned V) {
  char Buf[16];
  std::snprintf(Buf, sizeof(Buf), Fmt, V);
  return Buf;
}

std::string terminalSafe(StringRef Text) {
  std::string Out;
  Out.reserve(Text.size());
  for (size_t I = 0; I < Text.size();) {
    unsigned char C = static_cast<unsigned char>(Text[I]);
    if (C < 0x80) {
      if ((C < 0x20 && C != '\n' && C != '\t') || C == 0x7f)
        Out += escaped("\\x%02x", C);
      else
        Out += static_cast<char>(C);
      ++I;
      continue;
    }
    const UTF8 *Begin = reinterpret_cast<const UTF8 *>(Text.data() + I);
    unsigned Len = getNumBytesForUTF8(*Begin);
    UTF32 CP = 0;
    const UTF8 *Src = Begin;
    UTF32 *Dst = &CP;
    if (I + Len > Text.size() ||
        ConvertUTF8toUTF32(&Src, Begin + Len, &Dst, &CP + 1, strictConversion) != conversionOK) {
      Out += escaped("\\x%02x", C);
      ++I;
      continue;
    }
    if ((CP >= 0x80 && CP <= 0x9f) || isBidiControl(CP))
      Out += escaped("\\u{%04x}", CP);
    else
      Out.append(Text.data() + I, Len);
    I += Len;
  }
  return Out;
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
      return C.Fn(Ctx);
  errs() << "kloop: error: no subcommand given; run `kloop --help` for the list\n";
  return 2;
}

} // namespace kloop
