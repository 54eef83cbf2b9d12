//===- CommandProposerTest.cpp - Proposals from an executable -------------===//
#include "kloop/Propose/CommandProposer.h"
#include "kloop/Support/Process.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include "gtest/gtest.h"

#include <chrono>
#include <fstream>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace kloop;
using namespace llvm;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

std::unique_ptr<CommandProposer> make(std::vector<std::string> Argv,
                                      int TimeoutMs = 5000) {
  CommandConfig C;
  C.Argv = std::move(Argv);
  C.Timeout = std::chrono::milliseconds(TimeoutMs);
  Expected<std::unique_ptr<CommandProposer>> P = CommandProposer::create(C);
  EXPECT_TRUE(bool(P)) << toString(P.takeError());
  return P ? std::move(*P) : nullptr;
}

std::string failure(Expected<ProposalReply> R) {
  if (R) {
    ADD_FAILURE() << "expected an error, got " << R->RawText;
    return "";
  }
  return toString(R.takeError());
}

const json Context = {{"kernel_name", "reduce"}, {"history", json::array()}};

/// Whether the process \p Pid is gone or a zombie within \p Ms milliseconds.
bool goneWithin(int Pid, int Ms) {
  for (int I = 0; I <= Ms / 10; ++I) {
    std::ifstream Stat("/proc/" + std::to_string(Pid) + "/stat");
    std::string P, Comm, State;
    if (!(Stat >> P >> Comm >> State) || State == "Z")
      return true;
    usleep(10000);
  }
  return false;
}

/// The pid written to \p File, waiting up to 5 s for it to appear; 0 if none.
int readPid(StringRef File) {
  for (int I = 0; I < 500; ++I) {
    std::ifstream In(File.str());
    int Pid = 0;
    if (In >> Pid && Pid > 0)
      return Pid;
    usleep(10000);
  }
  return 0;
}


TEST(CommandProposer, ReadsTheContextAndReturnsTheProposalWithProvenance) {
  // The command derives its answer from its stdin, proving it got the context.
  auto P = make({"python3", "-c",
                 "import sys, json\n"
                 "c = json.load(sys.stdin)\n"
                 "print(json.dumps({'rationale': 'r', 'edits': [{'kind': 'set_unroll',"
                 " 'target': c['kernel_name'] + '/loop#1', 'factor': 2}],"
                 " 'provenance': {'model': 'agent-x', 'tokens_in': 5, 'tokens_out': 6,"
                 " 'cost_usd': 0.5, 'temperature': 0.7, 'seed': 9}}))\n"});
  ASSERT_TRUE(P);
  EXPECT_EQ(P->kind(), "command");
  Expected<ProposalReply> R = P->propose(Context);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->Proposal["edits"][0]["target"], "reduce/loop#1");
  EXPECT_EQ(R->Prov.ProposerKind, "command");
  EXPECT_EQ(R->Prov.Model, "agent-x");
  EXPECT_EQ(R->Prov.TokensIn, std::optional<int64_t>(5));
  EXPECT_EQ(R->Prov.TokensOut, std::optional<int64_t>(6));
  EXPECT_EQ(R->Prov.CostUSD, std::optional<double>(0.5));
  EXPECT_EQ(R->Prov.Temperature, std::optional<double>(0.7));
  EXPECT_EQ(R->Prov.Seed, std::optional<int64_t>(9));
  EXPECT_EQ(R->Prov.Attempts, 1);
  EXPECT_EQ(R->Prov.PromptVersion, "");
  EXPECT_NE(R->RawText.find("agent-x"), std::string::npos);
}

// A batch request: the command sees "batch": N and answers {"proposals": [...]}; the request's tokens
// and cost go with the first reply, the others count none; more than N, or an empty array, is refused.
TEST(CommandProposer, ABatchRequestGivesEachProposalWithTheRequestCountedOnce) {
  auto P = make({"python3", "-c",
                 "import sys, json\n"
                 "c = json.load(sys.stdin)\n"
                 "n = c['batch'] + int(c.get('extra', 0))\n"
                 "print(json.dumps({'proposals': [{'rationale': str(i), 'edits': []} for i in range(n)],"
                 " 'provenance': {'model': 'agent-x', 'tokens_in': 5, 'tokens_out': 6, 'cost_usd': 0.5}}))\n"});
  ASSERT_TRUE(P);
  Expected<std::vector<ProposalReply>> R = P->proposeBatch(Context, 3);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  ASSERT_EQ(R->size(), 3u);
  for (unsigned I = 0; I < 3; ++I) {
    EXPECT_EQ((*R)[I].Proposal["rationale"], std::to_string(I));
    EXPECT_EQ((*R)[I].Prov.Model, "agent-x"); // the request's
  }
  EXPECT_EQ((*R)[0].Prov.TokensIn, std::optional<int64_t>(5));
  EXPECT_EQ((*R)[0].Prov.CostUSD, std::optional<double>(0.5));
  EXPECT_EQ((*R)[0].Prov.Attempts, 1);
  EXPECT_NE((*R)[0].RawText.find("\"proposals\""), std::string::npos);
  EXPECT_EQ((*R)[2].Prov.TokensIn, std::optional<int64_t>(0));
  EXPECT_EQ((*R)[2].Prov.TokensOut, std::optional<int64_t>(0));
  EXPECT_EQ((*R)[2].Prov.CostUSD, std::optional<double>(0));
  EXPECT_EQ((*R)[2].Prov.Attempts, 0);
  EXPECT_EQ((*R)[2].RawText.find("\"proposals\""), std::string::npos);

  json More = Context;
  More["extra"] = 1;
  Expected<std::vector<ProposalReply>> Over = P->proposeBatch(More, 3);
  ASSERT_FALSE(bool(Over));
  bool Batch = false;
  std::string Msg;
  handleAllErrors(Over.takeError(), [&](const ReplyNotJSONError &E) {
    Batch = E.Batch;
    Msg = E.Reason;
  });
  EXPECT_TRUE(Batch);
  EXPECT_EQ(Msg, "'proposals' holds 4 proposals; at most 3 were asked for");
  More["extra"] = -3;
  Expected<std::vector<ProposalReply>> Empty = P->proposeBatch(More, 3);
  ASSERT_FALSE(bool(Empty));
  EXPECT_NE(toString(Empty.takeError()).find("reply is not a proposal batch ('proposals' must be a non-empty array"),
            std::string::npos);
}

// A batch request for one (a run's budgets nearly spent) is still a batch request: "batch": 1, and the
// batch envelope is accepted.
TEST(CommandProposer, ABatchOfOneIsStillABatchRequest) {
  auto P = make({"python3", "-c",
                 "import sys, json\n"
                 "c = json.load(sys.stdin)\n"
                 "print(json.dumps({'proposals': [{'rationale': str(c['batch']), 'edits': []}]}))\n"});
  ASSERT_TRUE(P);
  Expected<std::vector<ProposalReply>> R = P->proposeBatch(Context, 1);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  ASSERT_EQ(R->size(), 1u);
  EXPECT_EQ((*R)[0].Proposal["rationale"], "1");
}

// An entry's own provenance is that proposal's (its tokens count); negative counts are not taken; a
// batch that also has edits of its own is refused as ambiguous.
TEST(CommandProposer, EntryProvenanceCountsAndAmbiguousBatchesAreRefused) {
  auto P = make({"python3", "-c",
                 "import sys, json\n"
                 "c = json.load(sys.stdin)\n"
                 "r = {'proposals': [{'rationale': 'a', 'edits': [], 'provenance': {'model': 'e0', 'tokens_in': 5}},\n"
                 "                   {'rationale': 'b', 'edits': [], 'provenance': {'tokens_in': 7, 'cost_usd': -3}}],\n"
                 "     'provenance': {'model': 'top', 'tokens_in': 100, 'cost_usd': 0.25}}\n"
                 "if c.get('ambiguous'): r['edits'] = []\n"
                 "print(json.dumps(r))\n"});
  ASSERT_TRUE(P);
  Expected<std::vector<ProposalReply>> R = P->proposeBatch(Context, 2);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  ASSERT_EQ(R->size(), 2u);
  EXPECT_EQ((*R)[0].Prov.Model, "e0");
  EXPECT_EQ((*R)[0].Prov.TokensIn, std::optional<int64_t>(5));
  EXPECT_EQ((*R)[0].Prov.CostUSD, std::optional<double>(0.25));
  EXPECT_EQ((*R)[1].Prov.Model, "top");
  EXPECT_EQ((*R)[1].Prov.TokensIn, std::optional<int64_t>(7));
  EXPECT_EQ((*R)[1].Prov.CostUSD, std::optional<double>(0)); // -3 is not a cost
  json Ambiguous = Context;
  Ambiguous["ambiguous"] = true;
  Expected<std::vector<ProposalReply>> A = P->proposeBatch(Ambiguous, 2);
  ASSERT_FALSE(bool(A));
  EXPECT_NE(toString(A.takeError()).find("a reply with 'proposals' is a batch, and must not also have 'edits'"),
            std::string::npos);
}

TEST(CommandProposer, AcceptsAFencedReplyAndACommandThatIgnoresStdin) {
  // 4 MiB of context to a command that never reads it: no SIGPIPE, no hang.
  json Big = {{"kernel_source", std::string(4u << 20, 'x')}};
  auto P = make({"/bin/sh", "-c",
                 "printf '```json\\n{\"edits\": [], \"rationale\": \"none\"}\\n```\\n'"});
  ASSERT_TRUE(P);
  Expected<ProposalReply> R = P->propose(Big);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->Proposal["rationale"], "none");
  EXPECT_FALSE(R->Prov.TokensIn.has_value());
}

TEST(CommandProposer, NonZeroExitNamesTheCommandAndShowsStderr) {
  auto P = make({"/bin/sh", "-c", "cat >/dev/null; echo 'agent: model quota exhausted' >&2; exit 3"});
  ASSERT_TRUE(P);
  std::string Msg = failure(P->propose(Context));
  EXPECT_NE(Msg.find("command '/bin/sh -c cat >/dev/null;"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("exited with status 3"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("stderr: \"agent: model quota exhausted\""), std::string::npos) << Msg;
}

TEST(CommandProposer, StderrTailIsBounded) {
  auto P = make({"/bin/sh", "-c",
                 "i=0; while [ $i -lt 400 ]; do echo \"line $i of noise\" >&2; "
                 "i=$((i+1)); done; echo LAST >&2; exit 1"});
  ASSERT_TRUE(P);
  std::string Msg = failure(P->propose(Context));
  EXPECT_NE(Msg.find("LAST"), std::string::npos);
  EXPECT_EQ(Msg.find("line 0 of noise"), std::string::npos);
  EXPECT_LT(Msg.size(), 2400u);
}

TEST(CommandProposer, TimeoutKillsTheWholeProcessGroup) {
  SmallString<128> PidFile;
  ASSERT_FALSE(sys::fs::createTemporaryFile("kloop-cmd", "pid", PidFile));
  auto P = make({"/bin/sh", "-c", "sleep 30 & echo $! > " + std::string(PidFile) + "; wait"},
                300);
  ASSERT_TRUE(P);
  auto T0 = Clock::now();
  std::string Msg = failure(P->propose(Context));
  double Secs = std::chrono::duration<double>(Clock::now() - T0).count();
  EXPECT_NE(Msg.find("timed out after 300 ms and was killed"), std::string::npos) << Msg;
  EXPECT_LT(Secs, 3.0);
  std::ifstream In(PidFile.c_str());
  int Grandchild = 0;
  In >> Grandchild;
  ASSERT_GT(Grandchild, 0);
  // The background sleep was in the group: it is gone (or a zombie awaiting init).
  bool Alive = false;
  for (int I = 0; I < 100; ++I) {
    std::ifstream Stat("/proc/" + std::to_string(Grandchild) + "/stat");
    std::string Pid, Comm, State;
    Alive = bool(Stat >> Pid >> Comm >> State) && State != "Z";
    if (!Alive)
      break;
    usleep(10000);
  }
  EXPECT_FALSE(Alive) << "the sleep " << Grandchild << " survived the timeout";
  sys::fs::remove(PidFile);
}

TEST(CommandProposer, NonJSONOutputIsATypedError) {
  auto P = make({"/bin/sh", "-c", "cat >/dev/null; echo 'I think you should unroll the loop.'"});
  ASSERT_TRUE(P);
  Expected<ProposalReply> R = P->propose(Context);
  ASSERT_FALSE(bool(R));
  bool Typed = false;
  handleAllErrors(R.takeError(), [&](const ReplyNotJSONError &E) {
    Typed = true;
    EXPECT_EQ(E.RawText, "I think you should unroll the loop.\n");
    EXPECT_EQ(E.Prov.ProposerKind, "command");
    std::string Msg = E.message();
    EXPECT_NE(Msg.find("command '/bin/sh -c"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("\"I think you should unroll the loop.\\n\""), std::string::npos)
        << Msg;
  });
  EXPECT_TRUE(Typed);
}

TEST(CommandProposer, MissingExecutableSignalAndFloodAreErrors) {
  auto Missing = make({"/nonexistent/kloop-agent", "--flag"});
  ASSERT_TRUE(Missing);
  std::string M = failure(Missing->propose(Context));
  EXPECT_NE(M.find("command '/nonexistent/kloop-agent --flag': cannot run"), std::string::npos)
      << M;
  EXPECT_NE(M.find("No such file or directory"), std::string::npos) << M;

  auto Killed = make({"/bin/sh", "-c", "kill -KILL $$"});
  ASSERT_TRUE(Killed);
  std::string K = failure(Killed->propose(Context));
  EXPECT_NE(K.find("killed by signal 9"), std::string::npos) << K;

  CommandConfig C;
  C.Argv = {"yes"};
  C.MaxOutputBytes = 1000;
  C.Timeout = std::chrono::milliseconds(5000);
  auto Flood = CommandProposer::create(C);
  ASSERT_TRUE(bool(Flood));
  std::string F = failure((*Flood)->propose(Context));
  EXPECT_NE(F.find("wrote more than 1000 bytes to stdout"), std::string::npos) << F;
}

TEST(CommandProposer, CreateRejectsAnEmptyCommand) {
  Expected<std::unique_ptr<CommandProposer>> P = CommandProposer::create(CommandConfig());
  ASSERT_FALSE(bool(P));
  EXPECT_NE(toString(P.takeError()).find("no command given"), std::string::npos);
  CommandConfig C;
  C.Argv = {"true"};
  C.Timeout = std::chrono::milliseconds(0);
  P = CommandProposer::create(C);
  ASSERT_FALSE(bool(P));
  EXPECT_NE(toString(P.takeError()).find("timeout must be positive"), std::string::npos);
}

TEST(RunCommand, ReportsExitStatusAndOutputs) {
  CommandConfig C;
  C.Argv = {"/bin/sh", "-c", "cat; echo err >&2; exit 4"};
  C.Timeout = std::chrono::milliseconds(5000);
  Expected<CommandResult> R = runCommand(C, "hello");
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->ExitCode, 4);
  EXPECT_EQ(R->Signal, 0);
  EXPECT_FALSE(R->TimedOut);
  EXPECT_EQ(R->Stdout, "hello");
  EXPECT_EQ(R->Stderr, "err\n");
}


// Issue 12, item 7: a helper left running with the command's stdout neither stalls the round
// (it used to, until the timeout) nor survives it.
TEST(RunCommand, ALingeringChildHoldingStdoutDoesNotStallAndIsKilled) {
  SmallString<128> PidFile;
  ASSERT_FALSE(sys::fs::createTemporaryFile("kloop-linger", "pid", PidFile));
  CommandConfig C;
  C.Argv = {"/bin/sh", "-c", "sleep 30 & echo $! > " + std::string(PidFile) + "; echo '{\"edits\": []}'"};
  C.Timeout = std::chrono::milliseconds(20000);
  auto T0 = Clock::now();
  Expected<CommandResult> R = runCommand(C, "");
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - T0).count(), 10.0);
  EXPECT_FALSE(R->TimedOut);
  EXPECT_EQ(R->ExitCode, 0);
  EXPECT_EQ(R->Stdout, "{\"edits\": []}\n");
  int Sleep = readPid(PidFile);
  ASSERT_GT(Sleep, 0);
  EXPECT_TRUE(goneWithin(Sleep, 2000)) << "the sleep " << Sleep << " survived the command";
  sys::fs::remove(PidFile);
}

// A command that closes its outputs and goes on keeps its exit status (it is waited for).
TEST(RunCommand, ACommandThatClosesItsOutputsIsWaitedFor) {
  CommandConfig C;
  C.Argv = {"/bin/sh", "-c", "echo early; exec >&- 2>&-; sleep 0.3; exit 5"};
  C.Timeout = std::chrono::milliseconds(10000);
  Expected<CommandResult> R = runCommand(C, "");
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->ExitCode, 5);
  EXPECT_EQ(R->Stdout, "early\n");
}

// Issue 12, item 7: when the process that spawned a group dies, even by SIGKILL, the whole group
// dies with it (kloop/Support/Process.h). A forked copy of this test plays kloop.
TEST(SpawnProcessGroup, TheGroupDiesWithItsSpawner) {
  SmallString<128> PidFile;
  ASSERT_FALSE(sys::fs::createTemporaryFile("kloop-orphan", "pid", PidFile));
  pid_t Kloop = fork();
  ASSERT_GE(Kloop, 0);
  if (Kloop == 0) {
    SpawnSpec S;
    S.Argv = {"/bin/sh", "-c", "sleep 30 & echo $! > " + std::string(PidFile) + "; wait"};
    if (!spawnProcessGroup(S))
      _exit(1);
    for (;;)
      pause(); // until killed
  }
  int Sleep = readPid(PidFile);
  kill(Kloop, SIGKILL);
  waitpid(Kloop, nullptr, 0);
  ASSERT_GT(Sleep, 0);
  EXPECT_TRUE(goneWithin(Sleep, 5000)) << "the sleep " << Sleep << " outlived its spawner";
  sys::fs::remove(PidFile);
}

TEST(SpawnProcessGroup, AMissingProgramOrDirectoryIsAnErrorNamingIt) {
  SpawnSpec S;
  S.Argv = {"/nonexistent/tool", "-x"};
  Expected<pid_t> P = spawnProcessGroup(S);
  ASSERT_FALSE(bool(P));
  EXPECT_EQ(toString(P.takeError()), "command '/nonexistent/tool -x': cannot run (No such file or directory)");
  S.Argv = {"true"};
  S.WorkingDir = "/nonexistent-dir";
  P = spawnProcessGroup(S);
  ASSERT_FALSE(bool(P));
  EXPECT_EQ(toString(P.takeError()), "command 'true': cannot run in '/nonexistent-dir' (No such file or directory)");
}

} // namespace
