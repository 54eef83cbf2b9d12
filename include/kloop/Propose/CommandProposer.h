//===- kloop/Propose/CommandProposer.h - Proposals from any executable ----===//
///
/// \file
/// Runs an executable (a coding agent, a script, a search tool), writes the
/// prompt context JSON to its stdin, closes stdin, and reads one proposal
/// (a JSON object, optionally in one ```json fence) from its stdout.
///
/// The process runs in its own process group (kloop::spawnProcessGroup,
/// kloop/Support/Process.h), which dies with kloop. On timeout, and as soon as
/// the command has exited (a helper it left running may still hold its stdout),
/// the whole group is sent SIGKILL, so helpers it spawned neither stall the
/// round nor survive it (issue 12, item 7), and then reaped
/// (kloop::reapProcessGroup: no zombie is left, issue 17, item 1). A command may report what
/// it used in a top-level "provenance" object of its reply (keys: model, seed,
/// temperature, tokens_in, tokens_out, cost_usd); those fill Provenance, and
/// the object stays in the reply.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_PROPOSE_COMMANDPROPOSER_H
#define KLOOP_PROPOSE_COMMANDPROPOSER_H

#include "kloop/Propose/Proposer.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace kloop {

/// How to run the command.
struct CommandConfig {
  /// argv; Argv[0] is looked up in PATH when it has no '/'.
  std::vector<std::string> Argv;
  /// Wall-clock limit; the process group is killed when it passes
  /// (`kloop optimize --command-timeout`, seconds; default 600 s).
  std::chrono::milliseconds Timeout{600000};
  /// Working directory of the command; "" = kloop's.
  std::string WorkingDir;
  /// Stdout beyond this many bytes is an error (the command is killed).
  size_t MaxOutputBytes = 16u << 20;
};

/// Result of running a process to completion (exposed for tests and for other
/// components that run helper commands).
struct CommandResult {
  int ExitCode = -1;      ///< exit status; -1 if killed by a signal
  int Signal = 0;         ///< terminating signal, 0 if it exited
  bool TimedOut = false;  ///< killed because the timeout passed
  bool OutputTooLarge = false; ///< killed because stdout exceeded the limit
  std::string Stdout, Stderr;
  int64_t WallMs = 0;
};

/// Runs \p C.Argv with \p Input on stdin, capturing stdout and stderr (stderr
/// keeps at most its last 64 KiB). Errors only when the process cannot be
/// started (naming the command and errno's message); exit status, signals and
/// timeouts are reported in the result. A command that ignores its stdin does
/// not disturb kloop (no SIGPIPE).
llvm::Expected<CommandResult> runCommand(const CommandConfig &C, llvm::StringRef Input);

/// The proposer. Reads no particular context keys: the whole context is the input.
class CommandProposer : public Proposer {
public:
  /// Error if \p C.Argv is empty or the timeout is not positive.
  static llvm::Expected<std::unique_ptr<CommandProposer>> create(CommandConfig C);

  /// Errors name the command and the reason: it could not start (a plain
  /// error), timed out, was killed by a signal, exited non-zero or wrote more
  /// than MaxOutputBytes (ProposerFailedError, with the last 2000 bytes of
  /// stderr), or wrote no JSON object (ReplyNotJSONError).
  llvm::Expected<ProposalReply> propose(const nlohmann::json &Context) override;
  /// The command gets the context with "batch": N (also when N is 1) and may
  /// reply with {"proposals": [...]} (1 to N proposal objects, splitBatch) or
  /// with one proposal; an entry's own "provenance" object is that proposal's
  /// (readSelfReported over the request's). Errors as propose(), and a
  /// malformed batch (ReplyNotJSONError with Batch set).
  llvm::Expected<std::vector<ProposalReply>> proposeBatch(const nlohmann::json &Context, unsigned N) override;
  /// "command".
  llvm::StringRef kind() const override { return "command"; }

private:
  explicit CommandProposer(CommandConfig C) : Config(std::move(C)) {}
  CommandConfig Config;
};

} // namespace kloop

#endif
