//===- kloop/Driver/Command.h - Subcommand registry for the kloop tool ---===//
///
/// \file
/// Each `kloop <subcommand>` lives in one file under lib/Driver/ that declares an
/// llvm::cl::SubCommand, its options (with `llvm::cl::sub(TheSubCommand)`), and a
/// static CommandRegistration. tools/kloop/kloop.cpp parses the command line and
/// runs the registered function whose subcommand was selected.
///
/// Only this layer prints to the terminal and chooses exit codes; the component
/// libraries return llvm::Expected / llvm::Error (DESIGN.md "Conventions").
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_DRIVER_COMMAND_H
#define KLOOP_DRIVER_COMMAND_H

#include "kloop/Support/Text.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include <string>
#include <vector>

namespace kloop {

/// What the dispatcher hands a subcommand besides its llvm::cl options.
struct CommandContext {
  /// Arguments after a literal `--` on the command line (compiler arguments, as
  /// with clang-tidy). Empty when there was no `--`.
  std::vector<std::string> ExtraArgs;
  /// True when `--` appeared, even with nothing after it.
  bool HasDoubleDash = false;
  /// argv[0] as the user typed it; used to locate sibling files (libkloop-cupti.so).
  std::string Argv0;
};

/// A subcommand's entry point. Returns the process exit code:
/// 0 success, 1 a reported failure (bad input, refused edit, failed build, ...),
/// 2 usage error.
using CommandFn = int (*)(const CommandContext &);

/// Registers \p Fn to run when \p Sub is selected. Construct one as a static
/// object in the subcommand's source file.
struct CommandRegistration {
  CommandRegistration(llvm::cl::SubCommand &Sub, CommandFn Fn);
};

/// One registry entry.
struct RegisteredCommand {
  llvm::cl::SubCommand *Sub;
  CommandFn Fn;
};

/// All registered subcommands, in registration order.
std::vector<RegisteredCommand> &registeredCommands();

/// Checks an output file named on the command line (`-o FILE`) before any work
/// is done, so that a long run cannot end in "cannot write". Returns "" when
/// its directory exists and is writable and FILE is not a directory, else the
/// reason, naming the path: "-o 'x/y.json': directory '/abs/x' does not exist
/// or is not writable", "-o 'd' is a directory; expected a file name".
std::string checkOutputFile(llvm::StringRef Path);

/// Finishes or rolls back an interrupted `apply --in-place` recorded by an
/// intent manifest in the directories of \p Paths or above them, and removes
/// kloop's stray temporary files next to \p Paths
/// (kloop::recoverInterruptedWrites). Prints what it did as
/// "kloop <Tool>: note: ..." lines on stderr; returns false after printing
/// "kloop <Tool>: error: ..." when a manifest cannot be recovered.
bool recoverInterruptedWrites(llvm::StringRef Tool, llvm::ArrayRef<std::string> Paths);

struct CompileJob;
/// The source files of \p Jobs (CompileJob::File), e.g. for recoverInterruptedWrites.
std::vector<std::string> jobFiles(const std::vector<CompileJob> &Jobs);

// terminalSafe (text from models, proposers and journals, escaped for a terminal) is in
// kloop/Support/Text.h, included here for the commands.

/// Entry point of the `kloop` executable (the ClangTidyMain pattern): splits
/// argv at `--`, parses options and runs the selected subcommand.
int kloopMain(int Argc, const char **Argv);

} // namespace kloop

#endif
