//===- JournalTest.cpp - Tests of the SQLite journal ----------------------===//
#include "kloop/Journal/Journal.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"
#include <sqlite3.h>

#include <csignal>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace kloop;
using namespace llvm;
using json = nlohmann::json;

namespace {

class JournalTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(sys::fs::createUniqueDirectory("kloop-journal-test", Dir));
  }
  void TearDown() override { sys::fs::remove_directories(Dir); }
  std::string file(StringRef Name) {
    SmallString<256> P(Dir);
    sys::path::append(P, Name);
    return std::string(P);
  }
  static std::unique_ptr<Journal> mustOpen(StringRef Path, Journal::OpenMode M) {
    Expected<std::unique_ptr<Journal>> J = Journal::open(Path, M);
    if (!J) {
      ADD_FAILURE() << toString(J.takeError());
      return nullptr;
    }
    return std::move(*J);
  }
  /// Runs raw SQL on \p Path outside the Journal API (to tamper with a file).
  static void rawExec(StringRef Path, const std::string &Sql) {
    sqlite3 *Db = nullptr;
    ASSERT_EQ(sqlite3_open(Path.str().c_str(), &Db), SQLITE_OK);
    char *Msg = nullptr;
    int RC = sqlite3_exec(Db, Sql.c_str(), nullptr, nullptr, &Msg);
    EXPECT_EQ(RC, SQLITE_OK) << (Msg ? Msg : "");
    sqlite3_free(Msg);
    sqlite3_close(Db);
  }
  SmallString<128> Dir;
};

#define ASSERT_OK(E)                                                           \
  do {                                                                         \
    if (Error Err_ = (E))                                                      \
      FAIL() << toString(std::move(Err_));                                     \
  } while (0)

template <typename T> T mustGet(Expected<T> V) {
  if (!V) {
    ADD_FAILURE() << toString(V.takeError());
    return T();
  }
  return std::move(*V);
}

TEST(JournalNames, StatesAndStatusesRoundTrip) {
  for (StepState S : {StepState::Extract, StepState::Propose, StepState::Apply,
                      StepState::Build, StepState::Verify, StepState::Measure,
                      StepState::Decide, StepState::Done})
    EXPECT_EQ(parseStepState(stepStateName(S)), S);
  EXPECT_EQ(stepStateName(StepState::Measure), "measure");
  EXPECT_FALSE(parseStepState("deploy").has_value());
  EXPECT_EQ(parseStepStatus("failed"), StepStatus::Failed);
  EXPECT_FALSE(parseStepStatus("done").has_value());
}

TEST_F(JournalTest, RoundTripOfEveryRecord) {
  std::string Path = file("run.kloop.db");
  int64_t Run, P1, P2;
  {
    auto J = mustOpen(Path, Journal::OpenMode::Create);
    ASSERT_TRUE(J);
    Run = mustGet(J->createRun("cfg-abc", "0.1.0"));
    ASSERT_OK(J->beginRound(Run, 1));
    ASSERT_OK(J->beginRound(Run, 1)); // idempotent on resume

    NewProposal N;
    N.ProposerKind = "llm-openai";
    N.Model = "gpt-test";
    N.PromptVersion = "0123456789ab";
    N.Seed = 42;
    N.Temperature = 0.2;
    N.TokensIn = 1200;
    N.TokensOut = 300;
    N.CostUSD = 0.004;
    N.WallMs = 850;
    N.Attempts = 2;
    N.RawReply = "```json\n{\"edits\":[]}\n```";
    N.Parsed = json{{"edits", json::array({{{"kind", "set_unroll"},
                                             {"target", "reduce<256>/loop#1"},
                                             {"factor", 4}}})},
                    {"rationale", "unroll the inner loop"}};
    P1 = mustGet(J->recordProposal(Run, 1, N));
    ASSERT_GT(mustGet(J->recordEdit(P1, 0, "reduce<256>/loop#1", "set_unroll",
                                    N.Parsed["edits"][0], true)),
              0);
    BuildRecord B;
    B.Run = Run;
    B.Round = 1;
    B.Proposal = P1;
    B.Succeeded = true;
    B.Log = "ptxas info : Used 32 registers";
    B.Ptxas = {{"registers", 32}, {"spill_stores", 0}};
    B.WallMs = 1500;
    ASSERT_GT(mustGet(J->recordBuild(B)), 0);
    std::vector<SampleRecord> Samples;
    for (int I = 0; I < 6; ++I) {
      SampleRecord S;
      S.Run = Run;
      S.Round = 1;
      S.Proposal = I % 2 ? std::optional<int64_t>(P1) : std::nullopt;
      S.Shape = "n=1048576";
      S.Seed = 7;
      S.Kernel = "reduce";
      S.DurationNs = 10000 + I;
      S.Throttled = I == 5;
      S.ForeignLoad = I == 3 || I == 5;
      Samples.push_back(S);
    }
    ASSERT_OK(J->recordSamples(Samples));
    ASSERT_GT(mustGet(J->recordVerdict(P1, "accepted", json{{"ratio", 0.82}},
                                       "median 0.82x, CI [0.80, 0.84]")),
              0);

    NewProposal Bad;
    Bad.ProposerKind = "command";
    Bad.Model = "./agent.sh";
    Bad.RawReply = "I think you should unroll";
    Bad.ParseError = "reply is not JSON";
    P2 = mustGet(J->recordProposal(Run, 1, Bad));
    ASSERT_GT(mustGet(J->recordRefusal(P2, std::nullopt, "reply is not JSON")), 0);
    ASSERT_OK(J->setRunState(Run, "stopped", std::string("plateau: 3 rounds"), true));
  }

  auto J = mustOpen(Path, Journal::OpenMode::ReadOnly);
  ASSERT_TRUE(J);
  RunRecord R = mustGet(J->getRun(Run));
  EXPECT_EQ(R.ConfigHash, "cfg-abc");
  EXPECT_EQ(R.KloopVersion, "0.1.0");
  EXPECT_EQ(R.State, "stopped");
  EXPECT_EQ(R.StopReason, std::optional<std::string>("plateau: 3 rounds"));
  EXPECT_TRUE(R.FinishedNs.has_value());
  EXPECT_EQ(mustGet(J->listRuns()).size(), 1u);
  std::vector<RoundRecord> Rounds = mustGet(J->listRounds(Run));
  ASSERT_EQ(Rounds.size(), 2u);
  EXPECT_EQ(Rounds[0].Number, 0);
  EXPECT_EQ(Rounds[1].Number, 1);

  std::vector<ProposalSummary> Ps = mustGet(J->listProposals(Run));
  ASSERT_EQ(Ps.size(), 2u);
  const ProposalRecord &A = Ps[0].Proposal;
  EXPECT_EQ(A.Id, P1);
  EXPECT_EQ(A.ProposerKind, "llm-openai");
  EXPECT_EQ(A.Model, "gpt-test");
  EXPECT_EQ(A.PromptVersion, "0123456789ab");
  EXPECT_EQ(A.Seed, std::optional<int64_t>(42));
  EXPECT_EQ(A.Temperature, std::optional<double>(0.2));
  EXPECT_EQ(A.TokensIn, std::optional<int64_t>(1200));
  EXPECT_EQ(A.TokensOut, std::optional<int64_t>(300));
  EXPECT_EQ(A.CostUSD, std::optional<double>(0.004));
  EXPECT_EQ(A.WallMs, 850);
  EXPECT_EQ(A.Attempts, 2);
  EXPECT_EQ(A.RawReply, "```json\n{\"edits\":[]}\n```");
  EXPECT_EQ(A.Parsed["edits"][0]["factor"], 4);
  ASSERT_EQ(Ps[0].Edits.size(), 1u);
  EXPECT_EQ(Ps[0].Edits[0].Target, "reduce<256>/loop#1");
  EXPECT_EQ(Ps[0].Edits[0].Kind, "set_unroll");
  EXPECT_TRUE(Ps[0].Edits[0].Applied);
  ASSERT_TRUE(Ps[0].Build.has_value());
  EXPECT_EQ(Ps[0].Build->Ptxas["registers"], 32);
  ASSERT_TRUE(Ps[0].Verdict.has_value());
  EXPECT_EQ(Ps[0].Verdict->Outcome, "accepted");
  EXPECT_EQ(Ps[0].Verdict->Detail["ratio"], 0.82);
  EXPECT_TRUE(Ps[0].Refusals.empty());

  const ProposalRecord &Bd = Ps[1].Proposal;
  EXPECT_TRUE(Bd.Parsed.is_null());
  EXPECT_EQ(Bd.ParseError, std::optional<std::string>("reply is not JSON"));
  EXPECT_FALSE(Bd.Seed.has_value());
  EXPECT_FALSE(Bd.CostUSD.has_value());
  ASSERT_EQ(Ps[1].Refusals.size(), 1u);
  EXPECT_FALSE(Ps[1].Refusals[0].EditOrdinal.has_value());
  EXPECT_FALSE(Ps[1].Verdict.has_value());

  std::vector<SampleRecord> All = mustGet(J->listSamples(Run));
  ASSERT_EQ(All.size(), 6u);
  EXPECT_TRUE(All[5].Throttled);
  EXPECT_EQ(All[5].DurationNs, 10005);
  EXPECT_TRUE(All[5].ForeignLoad);
  EXPECT_TRUE(All[3].ForeignLoad);
  EXPECT_FALSE(All[3].Throttled);
  EXPECT_FALSE(All[4].ForeignLoad);
  EXPECT_EQ(mustGet(J->listSamplesOf(Run, P1)).size(), 3u);
  std::vector<SampleRecord> Base = mustGet(J->listSamplesOf(Run, std::nullopt));
  ASSERT_EQ(Base.size(), 3u);
  EXPECT_FALSE(Base[0].Proposal.has_value());

  json JS = toJSON(Ps[0]);
  EXPECT_EQ(JS["provenance"]["model"], "gpt-test");
  EXPECT_EQ(JS["verdict"]["outcome"], "accepted");
  EXPECT_TRUE(toJSON(Ps[1])["provenance"]["cost_usd"].is_null());

  // A read-only journal refuses writes.
  Expected<int64_t> W = J->createRun("x", "y");
  ASSERT_FALSE(bool(W));
  EXPECT_NE(toString(W.takeError()).find("readonly"), std::string::npos);
}

TEST_F(JournalTest, ResumeQueries) {
  auto J = mustOpen(file("resume.db"), Journal::OpenMode::Create);
  ASSERT_TRUE(J);
  int64_t Run = mustGet(J->createRun("h", "v"));
  EXPECT_FALSE(mustGet(J->lastFinishedStep(Run)).has_value());

  int64_t Ex = mustGet(J->beginStep(Run, 0, StepState::Extract));
  EXPECT_FALSE(mustGet(J->isStepFinished(Run, 0, StepState::Extract)));
  ASSERT_OK(J->finishStep(Ex, json{{"kernels", 2}}));
  EXPECT_TRUE(mustGet(J->isStepFinished(Run, 0, StepState::Extract)));

  // A step in a round that was never begun is refused (foreign key).
  Expected<int64_t> NoRound = J->beginStep(Run, 3, StepState::Propose);
  ASSERT_FALSE(bool(NoRound));
  EXPECT_NE(toString(NoRound.takeError()).find("round 3"), std::string::npos);

  ASSERT_OK(J->beginRound(Run, 1));
  int64_t Pr = mustGet(J->beginStep(Run, 1, StepState::Propose));
  ASSERT_OK(J->finishStep(Pr, json{{"proposals", json::array({1, 2})}}));
  int64_t Ap1 = mustGet(J->beginStep(Run, 1, StepState::Apply, "proposal:1"));
  ASSERT_OK(J->failStep(Ap1, "edit 0 refused: unknown ID"));
  int64_t Ap2 = mustGet(J->beginStep(Run, 1, StepState::Apply, "proposal:2"));
  ASSERT_OK(J->finishStep(Ap2));
  // A crashed attempt (begun, never ended) and its retry.
  int64_t Bu1 = mustGet(J->beginStep(Run, 1, StepState::Build, "proposal:2"));
  (void)Bu1;
  EXPECT_FALSE(mustGet(J->isStepFinished(Run, 1, StepState::Build, "proposal:2")));
  int64_t Bu2 = mustGet(J->beginStep(Run, 1, StepState::Build, "proposal:2"));
  ASSERT_OK(J->finishStep(Bu2, json{{"ok", true}}));

  EXPECT_FALSE(mustGet(J->isStepFinished(Run, 1, StepState::Apply, "proposal:1")));
  EXPECT_TRUE(mustGet(J->isStepFinished(Run, 1, StepState::Apply, "proposal:2")));
  EXPECT_FALSE(mustGet(J->isStepFinished(Run, 1, StepState::Apply))); // key ""
  EXPECT_FALSE(mustGet(J->isStepFinished(Run, 2, StepState::Propose)));

  std::optional<StepRecord> Last = mustGet(J->lastFinishedStep(Run));
  ASSERT_TRUE(Last.has_value());
  EXPECT_EQ(Last->Id, Bu2);
  EXPECT_EQ(Last->State, StepState::Build);
  EXPECT_EQ(Last->Key, "proposal:2");
  EXPECT_EQ(Last->Payload["ok"], true);

  std::optional<StepRecord> P = mustGet(J->findFinishedStep(Run, 1, StepState::Propose));
  ASSERT_TRUE(P.has_value());
  EXPECT_EQ(P->Payload["proposals"].size(), 2u);

  std::vector<StepRecord> Steps = mustGet(J->listSteps(Run));
  ASSERT_EQ(Steps.size(), 6u);
  EXPECT_EQ(Steps[2].Status, StepStatus::Failed);
  EXPECT_EQ(Steps[2].Error, std::optional<std::string>("edit 0 refused: unknown ID"));
  EXPECT_EQ(Steps[4].Status, StepStatus::Started);
  EXPECT_FALSE(Steps[4].FinishedNs.has_value());

  // Ending a step twice, or a missing step, is an error.
  Error Twice = J->finishStep(Ex);
  ASSERT_TRUE(bool(Twice));
  EXPECT_NE(toString(std::move(Twice)).find("already finished"), std::string::npos);
  Error Missing = J->failStep(9999, "x");
  ASSERT_TRUE(bool(Missing));
  EXPECT_NE(toString(std::move(Missing)).find("no step 9999"), std::string::npos);
  Error BadRound = J->beginRound(Run, 0);
  EXPECT_TRUE(bool(BadRound));
  consumeError(std::move(BadRound));
}

TEST_F(JournalTest, ForeignKeysAndTransactionsRollBack) {
  auto J = mustOpen(file("fk.db"), Journal::OpenMode::Create);
  ASSERT_TRUE(J);
  Expected<int64_t> E = J->recordEdit(77, 0, "k/loop#1", "set_unroll", json::object(), false);
  ASSERT_FALSE(bool(E));
  EXPECT_NE(toString(E.takeError()).find("FOREIGN KEY"), std::string::npos);

  int64_t Run = mustGet(J->createRun("h", "v"));
  Error Rolled = J->transaction([&]() -> Error {
    NewProposal N;
    N.ProposerKind = "builtin";
    if (Expected<int64_t> Id = J->recordProposal(Run, 0, N); !Id)
      return Id.takeError();
    if (Expected<int64_t> S = J->beginStep(Run, 0, StepState::Propose); !S)
      return S.takeError();
    return createStringError("body failed");
  });
  ASSERT_TRUE(bool(Rolled));
  EXPECT_EQ(toString(std::move(Rolled)), "body failed");
  EXPECT_TRUE(mustGet(J->listProposals(Run)).empty());
  EXPECT_TRUE(mustGet(J->listSteps(Run)).empty());

  // A failed nested transaction is undone even when the outer one commits.
  ASSERT_OK(J->transaction([&]() -> Error {
    if (Expected<int64_t> S = J->beginStep(Run, 0, StepState::Extract); !S)
      return S.takeError();
    Error Inner = J->transaction([&]() -> Error {
      if (Expected<int64_t> S = J->beginStep(Run, 0, StepState::Propose); !S)
        return S.takeError();
      return createStringError("inner failed");
    });
    EXPECT_TRUE(bool(Inner));
    consumeError(std::move(Inner));
    return Error::success();
  }));
  std::vector<StepRecord> Steps = mustGet(J->listSteps(Run));
  ASSERT_EQ(Steps.size(), 1u);
  EXPECT_EQ(Steps[0].State, StepState::Extract);
}

// ---- crash safety ------------------------------------------------------------------

/// Child body: finish \p N steps, then die inside an open transaction that has
/// begun a step, recorded a proposal and many samples. \p HowToDie: 0 = _exit,
/// 1 = SIGKILL. Never returns.
[[noreturn]] static void childDiesMidTransaction(const std::string &Path, int N,
                                                 int HowToDie) {
  auto JOr = Journal::open(Path, Journal::OpenMode::OpenExisting);
  if (!JOr) {
    consumeError(JOr.takeError());
    _exit(3);
  }
  Journal &J = **JOr;
  for (int I = 0; I < N; ++I) {
    Expected<int64_t> S = J.beginStep(1, 0, StepState::Measure, "shape:" + std::to_string(I));
    if (!S || J.finishStep(*S, json{{"i", I}})) {
      consumeError(S.takeError());
      _exit(4);
    }
  }
  Error E = J.transaction([&]() -> Error {
    Expected<int64_t> S = J.beginStep(1, 0, StepState::Decide);
    if (!S)
      return S.takeError();
    NewProposal P;
    P.ProposerKind = "builtin";
    P.RawReply = std::string(100000, 'x'); // enough to spill pages to the WAL
    if (Expected<int64_t> Id = J.recordProposal(1, 0, P); !Id)
      return Id.takeError();
    std::vector<SampleRecord> Samples(5000);
    for (SampleRecord &R : Samples) {
      R.Run = 1;
      R.Shape = "n=1";
      R.Kernel = "k";
      R.DurationNs = 1;
    }
    if (Error E = J.recordSamples(Samples))
      return E;
    if (HowToDie == 0)
      _exit(0);
    raise(SIGKILL);
    return Error::success();
  });
  consumeError(std::move(E));
  _exit(5);
}

TEST_F(JournalTest, CrashMidTransactionLosesNoFinishedStep) {
  for (int HowToDie : {0, 1}) {
    std::string Path = file("crash" + std::to_string(HowToDie) + ".db");
    {
      auto J = mustOpen(Path, Journal::OpenMode::Create);
      ASSERT_TRUE(J);
      ASSERT_EQ(mustGet(J->createRun("h", "v")), 1);
    }
    pid_t Pid = fork();
    ASSERT_GE(Pid, 0);
    if (Pid == 0)
      childDiesMidTransaction(Path, 5, HowToDie);
    int Status = 0;
    ASSERT_EQ(waitpid(Pid, &Status, 0), Pid);
    if (HowToDie == 0) {
      ASSERT_TRUE(WIFEXITED(Status));
      ASSERT_EQ(WEXITSTATUS(Status), 0);
    } else {
      ASSERT_TRUE(WIFSIGNALED(Status));
      ASSERT_EQ(WTERMSIG(Status), SIGKILL);
    }

    auto J = mustOpen(Path, Journal::OpenMode::OpenExisting); // runs quick_check
    ASSERT_TRUE(J);
    std::vector<StepRecord> Steps = mustGet(J->listSteps(1));
    ASSERT_EQ(Steps.size(), 5u) << "the uncommitted decide step must not appear";
    for (int I = 0; I < 5; ++I) {
      EXPECT_EQ(Steps[I].Status, StepStatus::Finished);
      EXPECT_EQ(Steps[I].Key, "shape:" + std::to_string(I));
      EXPECT_EQ(Steps[I].Payload["i"], I);
      EXPECT_TRUE(Steps[I].FinishedNs.has_value());
    }
    EXPECT_TRUE(mustGet(J->listProposals(1)).empty());
    EXPECT_TRUE(mustGet(J->listSamples(1)).empty());
    std::optional<StepRecord> Last = mustGet(J->lastFinishedStep(1));
    ASSERT_TRUE(Last.has_value());
    EXPECT_EQ(Last->Key, "shape:4");
    // The journal is still writable after the crash.
    ASSERT_GT(mustGet(J->beginStep(1, 0, StepState::Decide)), 0);
  }
}

TEST_F(JournalTest, KillAtArbitraryPointKeepsEveryAcknowledgedStep) {
  std::string Path = file("kill.db");
  {
    auto J = mustOpen(Path, Journal::OpenMode::Create);
    ASSERT_TRUE(J);
    ASSERT_EQ(mustGet(J->createRun("h", "v")), 1);
  }
  int Pipe[2];
  ASSERT_EQ(pipe(Pipe), 0);
  pid_t Pid = fork();
  ASSERT_GE(Pid, 0);
  if (Pid == 0) {
    close(Pipe[0]);
    auto JOr = Journal::open(Path, Journal::OpenMode::OpenExisting);
    if (!JOr) {
      consumeError(JOr.takeError());
      _exit(3);
    }
    for (int I = 0;; ++I) {
      Expected<int64_t> S = (*JOr)->beginStep(1, 0, StepState::Verify, std::to_string(I));
      if (!S || (*JOr)->finishStep(*S, json{{"i", I}}))
        _exit(4);
      // Acknowledge only after finishStep returned: from here on it must survive.
      int32_t Ack = I;
      if (write(Pipe[1], &Ack, sizeof(Ack)) != sizeof(Ack))
        _exit(5);
    }
  }
  close(Pipe[1]);
  int32_t Acked = -1, V;
  while (Acked < 20 && read(Pipe[0], &V, sizeof(V)) == sizeof(V))
    Acked = V;
  kill(Pid, SIGKILL); // lands anywhere: inside a step, a commit, or between
  while (read(Pipe[0], &V, sizeof(V)) == sizeof(V))
    Acked = V; // acknowledgements written before the kill
  close(Pipe[0]);
  int Status = 0;
  ASSERT_EQ(waitpid(Pid, &Status, 0), Pid);
  ASSERT_TRUE(WIFSIGNALED(Status)) << "child exited with " << WEXITSTATUS(Status);
  ASSERT_GE(Acked, 20);

  auto J = mustOpen(Path, Journal::OpenMode::OpenExisting);
  ASSERT_TRUE(J);
  for (int I = 0; I <= Acked; ++I)
    EXPECT_TRUE(mustGet(J->isStepFinished(1, 0, StepState::Verify, std::to_string(I))))
        << "acknowledged step " << I << " lost";
  for (const StepRecord &S : mustGet(J->listSteps(1))) {
    // No torn rows: a finished row has its time and payload, a started one neither.
    if (S.Status == StepStatus::Finished) {
      EXPECT_TRUE(S.FinishedNs.has_value());
      EXPECT_EQ(S.Payload["i"], std::stoi(S.Key));
    } else {
      EXPECT_EQ(S.Status, StepStatus::Started);
      EXPECT_TRUE(S.Payload.is_null());
    }
  }
}

// ---- refusing files that are not journals ---------------------------------------------

TEST_F(JournalTest, RefusesFilesThatAreNotJournals) {
  auto expectError = [](Expected<std::unique_ptr<Journal>> J, StringRef Path,
                        StringRef Needle) {
    ASSERT_FALSE(bool(J)) << "opened " << Path.str();
    std::string Msg = toString(J.takeError());
    EXPECT_NE(Msg.find(Path.str()), std::string::npos) << Msg;
    EXPECT_NE(Msg.find(Needle.str()), std::string::npos) << Msg;
  };
  std::string Text = file("notes.txt");
  {
    std::error_code EC;
    raw_fd_ostream OS(Text, EC);
    OS << "this is not a database, it is a shopping list\n";
  }
  expectError(Journal::open(Text, Journal::OpenMode::OpenExisting), Text,
              "not a kloop journal");
  std::string Empty = file("empty.db");
  { std::error_code EC; raw_fd_ostream OS(Empty, EC); }
  expectError(Journal::open(Empty, Journal::OpenMode::OpenOrCreate), Empty,
              "not a kloop journal");
  std::string Other = file("other.sqlite");
  rawExec(Other, "CREATE TABLE t(x); INSERT INTO t VALUES(1);");
  expectError(Journal::open(Other, Journal::OpenMode::ReadOnly), Other,
              "not a kloop journal (application_id 0");
  std::string Missing = file("missing.db");
  expectError(Journal::open(Missing, Journal::OpenMode::OpenExisting), Missing,
              "no such file");
  expectError(Journal::open(Text, Journal::OpenMode::Create), Text, "already exists");
  expectError(Journal::open(Dir, Journal::OpenMode::OpenOrCreate), Dir, "directory");
}

TEST_F(JournalTest, RefusesAnotherSchemaVersion) {
  std::string Path = file("v99.db");
  {
    auto J = mustOpen(Path, Journal::OpenMode::Create);
    ASSERT_TRUE(J);
  }
  rawExec(Path, "PRAGMA user_version=99;");
  Expected<std::unique_ptr<Journal>> J = Journal::open(Path, Journal::OpenMode::OpenExisting);
  ASSERT_FALSE(bool(J));
  std::string Msg = toString(J.takeError());
  EXPECT_NE(Msg.find(Path), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("schema version 99; this kloop reads versions 1 to 2"), std::string::npos)
      << Msg;
  rawExec(Path, "PRAGMA user_version=0;");
  J = Journal::open(Path, Journal::OpenMode::ReadOnly);
  ASSERT_FALSE(bool(J));
  Msg = toString(J.takeError());
  EXPECT_NE(Msg.find("schema version 0; this kloop reads versions 1 to 2"), std::string::npos)
      << Msg;
}

/// The user_version of the journal at \p Path, read outside the Journal API.
static int64_t userVersion(StringRef Path) {
  sqlite3 *Db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(Path.str().c_str(), &Db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt *S = nullptr;
  int64_t V = -1;
  if (sqlite3_prepare_v2(Db, "PRAGMA user_version", -1, &S, nullptr) == SQLITE_OK &&
      sqlite3_step(S) == SQLITE_ROW)
    V = sqlite3_column_int64(S, 0);
  sqlite3_finalize(S);
  sqlite3_close(Db);
  return V;
}

TEST_F(JournalTest, OpensAVersion1JournalAndUpgradesItForWriting) {
  // A version 1 journal: the samples table without foreign_load (the column
  // version 2 added), user_version 1, and samples recorded by an older kloop.
  std::string Path = file("v1.db");
  int64_t Run = 0;
  {
    auto J = mustOpen(Path, Journal::OpenMode::Create);
    ASSERT_TRUE(J);
    Run = mustGet(J->createRun("cfg", "0.1.0"));
  }
  rawExec(Path, "ALTER TABLE samples DROP COLUMN foreign_load; PRAGMA user_version=1; "
                "INSERT INTO samples(run, round, proposal, shape, seed, kernel, duration_ns, throttled) "
                "VALUES(" + std::to_string(Run) + ", 0, NULL, 'n1M', 0, 'saxpy', 1000, 1), (" +
                std::to_string(Run) + ", 0, NULL, 'n1M', 0, 'saxpy', 1001, 0);");
  ASSERT_EQ(userVersion(Path), 1);

  // Read-only (kloop history, kloop report): read as it is, not upgraded.
  {
    auto J = mustOpen(Path, Journal::OpenMode::ReadOnly);
    ASSERT_TRUE(J);
    std::vector<SampleRecord> S = mustGet(J->listSamples(Run));
    ASSERT_EQ(S.size(), 2u);
    EXPECT_TRUE(S[0].Throttled);
    EXPECT_FALSE(S[0].ForeignLoad);
    EXPECT_FALSE(S[1].ForeignLoad);
    EXPECT_EQ(mustGet(J->listSamplesOf(Run, std::nullopt)).size(), 2u);
  }
  EXPECT_EQ(userVersion(Path), 1);

  // Read-write (kloop optimize --resume): upgraded; old samples are not
  // foreign, new ones carry the flag.
  {
    auto J = mustOpen(Path, Journal::OpenMode::OpenExisting);
    ASSERT_TRUE(J);
    EXPECT_EQ(userVersion(Path), 2);
    SampleRecord New;
    New.Run = Run;
    New.Shape = "n1M";
    New.Kernel = "saxpy";
    New.DurationNs = 5000;
    New.ForeignLoad = true;
    ASSERT_OK(J->recordSamples({New}));
  }
  auto J = mustOpen(Path, Journal::OpenMode::ReadOnly);
  ASSERT_TRUE(J);
  std::vector<SampleRecord> S = mustGet(J->listSamples(Run));
  ASSERT_EQ(S.size(), 3u);
  EXPECT_FALSE(S[0].ForeignLoad);
  EXPECT_FALSE(S[1].ForeignLoad);
  EXPECT_TRUE(S[2].ForeignLoad);
  EXPECT_EQ(S[2].DurationNs, 5000);
  // Opening again changes nothing.
  auto W = mustOpen(Path, Journal::OpenMode::OpenOrCreate);
  ASSERT_TRUE(W);
  EXPECT_EQ(userVersion(Path), 2);
  EXPECT_EQ(mustGet(W->listSamples(Run)).size(), 3u);
}

TEST_F(JournalTest, ANewJournalHasTheUpgradedLayout) {
  // Created = version 1 plus every migration: the same columns as an upgraded
  // file, and the foreign_load CHECK holds.
  std::string Path = file("new.db");
  {
    auto J = mustOpen(Path, Journal::OpenMode::Create);
    ASSERT_TRUE(J);
  }
  EXPECT_EQ(userVersion(Path), kJournalSchemaVersion);
  sqlite3 *Db = nullptr;
  ASSERT_EQ(sqlite3_open(Path.c_str(), &Db), SQLITE_OK);
  char *Msg = nullptr;
  EXPECT_NE(sqlite3_exec(Db,
                         "INSERT INTO runs(started_ns, config_hash, kloop_version, state) "
                         "VALUES(1, 'h', 'v', 'running'); INSERT INTO rounds VALUES(1, 0, 1); "
                         "INSERT INTO samples(run, round, shape, seed, kernel, duration_ns, throttled, "
                         "foreign_load) VALUES(1, 0, 's', 0, 'k', 1, 0, 2);",
                         nullptr, nullptr, &Msg),
            SQLITE_OK);
  EXPECT_NE(std::string(Msg ? Msg : "").find("CHECK constraint failed"), std::string::npos)
      << (Msg ? Msg : "");
  sqlite3_free(Msg);
  sqlite3_close(Db);
}

TEST_F(JournalTest, RefusesACorruptFile) {
  std::string Path = file("corrupt.db");
  {
    auto J = mustOpen(Path, Journal::OpenMode::Create);
    ASSERT_TRUE(J);
    int64_t Run = mustGet(J->createRun("h", "v"));
    NewProposal P;
    P.ProposerKind = "builtin";
    for (int I = 0; I < 50; ++I) {
      P.RawReply = std::string(3000, static_cast<char>('a' + I % 26));
      ASSERT_GT(mustGet(J->recordProposal(Run, 0, P)), 0);
    }
  } // closing the last connection checkpoints the WAL into the file
  uint64_t Size = 0;
  ASSERT_FALSE(sys::fs::file_size(Path, Size));
  ASSERT_GT(Size, 40000u);
  int Fd = ::open(Path.c_str(), O_WRONLY);
  ASSERT_GE(Fd, 0);
  std::string Garbage(8192, '\xA5');
  // Pages 3..4 (4096-byte pages): b-tree pages of the tables, now garbage.
  ASSERT_EQ(pwrite(Fd, Garbage.data(), Garbage.size(), 2 * 4096),
            static_cast<ssize_t>(Garbage.size()));
  close(Fd);
  Expected<std::unique_ptr<Journal>> J = Journal::open(Path, Journal::OpenMode::OpenExisting);
  ASSERT_FALSE(bool(J));
  std::string Msg = toString(J.takeError());
  EXPECT_NE(Msg.find(Path), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("corrupt"), std::string::npos) << Msg;
}

TEST_F(JournalTest, OpensInWalModeWithFullSync) {
  std::string Path = file("wal.db");
  auto J = mustOpen(Path, Journal::OpenMode::Create);
  ASSERT_TRUE(J);
  ASSERT_GT(mustGet(J->createRun("h", "v")), 0);
  EXPECT_TRUE(sys::fs::exists(Path + "-wal"));
  sqlite3 *Db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(Path.c_str(), &Db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt *S = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(Db, "PRAGMA journal_mode", -1, &S, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(S), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char *>(sqlite3_column_text(S, 0)), "wal");
  sqlite3_finalize(S);
  ASSERT_EQ(sqlite3_prepare_v2(Db, "PRAGMA application_id", -1, &S, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(S), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(S, 0), kJournalApplicationId);
  sqlite3_finalize(S);
  sqlite3_close(Db);
}

} // namespace
