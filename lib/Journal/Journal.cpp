//===- Journal.cpp - SQLite journal of one optimization run ---------------===//
#include "kloop/Journal/Journal.h"
#include "kloop/Support/JSON.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <sqlite3.h>

#include <chrono>
#include <iterator>
#include <map>

using namespace llvm;
using json = nlohmann::json;

namespace kloop {

// ---- enums -------------------------------------------------------------------

static const char *const StateNames[] = {"extract", "propose", "apply",  "build",
                                         "verify",  "measure", "decide", "done"};
static const char *const StatusNames[] = {"started", "finished", "failed"};

StringRef stepStateName(StepState S) { return StateNames[static_cast<int>(S)]; }

std::optional<StepState> parseStepState(StringRef Name) {
  for (int I = 0; I < 8; ++I)
    if (Name == StateNames[I])
      return static_cast<StepState>(I);
  return std::nullopt;
}

StringRef stepStatusName(StepStatus S) { return StatusNames[static_cast<int>(S)]; }

std::optional<StepStatus> parseStepStatus(StringRef Name) {
  for (int I = 0; I < 3; ++I)
    if (Name == StatusNames[I])
      return static_cast<StepStatus>(I);
  return std::nullopt;
}

int64_t journalNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// ---- schema --------------------------------------------------------------------

/// Version 1 of the layout, as older kloops created it; Migrations bring it to
/// kJournalSchemaVersion. Never edit it: add a migration (and bump
/// kJournalSchemaVersion) instead.
static const char SchemaV1[] = R"sql(
CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  started_ns INTEGER NOT NULL,
  config_hash TEXT NOT NULL,
  kloop_version TEXT NOT NULL,
  state TEXT NOT NULL,
  stop_reason TEXT,
  finished_ns INTEGER);
CREATE TABLE rounds(
  run INTEGER NOT NULL REFERENCES runs(id),
  number INTEGER NOT NULL CHECK(number >= 0),
  started_ns INTEGER NOT NULL,
  PRIMARY KEY(run, number));
CREATE TABLE steps(
  id INTEGER PRIMARY KEY,
  run INTEGER NOT NULL,
  round INTEGER NOT NULL,
  state TEXT NOT NULL CHECK(state IN
    ('extract','propose','apply','build','verify','measure','decide','done')),
  step_key TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL CHECK(status IN ('started','finished','failed')),
  started_ns INTEGER NOT NULL,
  finished_ns INTEGER,
  finish_seq INTEGER,
  payload TEXT CHECK(payload IS NULL OR json_valid(payload)),
  error TEXT,
  CHECK((status = 'started') = (finished_ns IS NULL)),
  FOREIGN KEY(run, round) REFERENCES rounds(run, number));
CREATE INDEX steps_by_key ON steps(run, round, state, step_key, status);
CREATE TABLE proposals(
  id INTEGER PRIMARY KEY,
  run INTEGER NOT NULL,
  round INTEGER NOT NULL,
  created_ns INTEGER NOT NULL,
  proposer_kind TEXT NOT NULL,
  model TEXT NOT NULL,
  prompt_version TEXT NOT NULL,
  seed INTEGER,
  temperature REAL,
  tokens_in INTEGER,
  tokens_out INTEGER,
  cost_usd REAL,
  wall_ms INTEGER NOT NULL,
  attempts INTEGER NOT NULL,
  raw_reply TEXT NOT NULL,
  parsed TEXT CHECK(parsed IS NULL OR json_valid(parsed)),
  parse_error TEXT,
  FOREIGN KEY(run, round) REFERENCES rounds(run, number));
CREATE TABLE edits(
  id INTEGER PRIMARY KEY,
  proposal INTEGER NOT NULL REFERENCES proposals(id),
  ordinal INTEGER NOT NULL CHECK(ordinal >= 0),
  target TEXT NOT NULL,
  kind TEXT NOT NULL,
  spec TEXT NOT NULL CHECK(json_valid(spec)),
  applied INTEGER NOT NULL CHECK(applied IN (0, 1)),
  UNIQUE(proposal, ordinal));
CREATE TABLE refusals(
  id INTEGER PRIMARY KEY,
  proposal INTEGER NOT NULL REFERENCES proposals(id),
  edit_ordinal INTEGER,
  reason TEXT NOT NULL);
CREATE TABLE builds(
  id INTEGER PRIMARY KEY,
  run INTEGER NOT NULL,
  round INTEGER NOT NULL,
  proposal INTEGER REFERENCES proposals(id),
  succeeded INTEGER NOT NULL CHECK(succeeded IN (0, 1)),
  log TEXT NOT NULL,
  ptxas TEXT CHECK(ptxas IS NULL OR json_valid(ptxas)),
  wall_ms INTEGER NOT NULL,
  FOREIGN KEY(run, round) REFERENCES rounds(run, number));
CREATE TABLE samples(
  id INTEGER PRIMARY KEY,
  run INTEGER NOT NULL,
  round INTEGER NOT NULL,
  proposal INTEGER REFERENCES proposals(id),
  shape TEXT NOT NULL,
  seed INTEGER NOT NULL,
  kernel TEXT NOT NULL,
  duration_ns INTEGER NOT NULL CHECK(duration_ns >= 0),
  throttled INTEGER NOT NULL CHECK(throttled IN (0, 1)),
  FOREIGN KEY(run, round) REFERENCES rounds(run, number));
CREATE INDEX samples_by_proposal ON samples(run, proposal);
CREATE TABLE verdicts(
  id INTEGER PRIMARY KEY,
  proposal INTEGER NOT NULL REFERENCES proposals(id),
  outcome TEXT NOT NULL,
  detail TEXT CHECK(detail IS NULL OR json_valid(detail)),
  explanation TEXT NOT NULL,
  created_ns INTEGER NOT NULL);
)sql";

/// Migrations[I] turns a journal of schema version I + 1 into one of version
/// I + 2. A new journal is SchemaV1 plus all of them, so old and new files
/// have the same layout.
static const char *const Migrations[] = {
    // 2: samples taken while another process used the GPU (foreign GPU load,
    // docs/measure.md). Rows of version 1 journals read as not foreign.
    "ALTER TABLE samples ADD COLUMN foreign_load INTEGER NOT NULL DEFAULT 0 "
    "CHECK(foreign_load IN (0, 1));",
};
static_assert(std::size(Migrations) + 1 == kJournalSchemaVersion,
              "one migration per schema version after 1");

/// The SQL of the migrations from schema version \p Version to the current one.
static std::string migrationsFrom(int Version) {
  std::string Sql;
  for (int V = Version; V < kJournalSchemaVersion; ++V)
    Sql += Migrations[V - 1];
  return Sql;
}

// ---- statement wrapper -------------------------------------------------------------

namespace {

/// A prepared statement bound positionally from 1; finalized on destruction.
class Stmt {
public:
  Stmt(sqlite3 *Db, StringRef Path) : Db(Db), Path(Path) {}
  ~Stmt() { sqlite3_finalize(S); }

  Error prepare(StringRef Sql) {
    Idx = 0;
    if (sqlite3_prepare_v2(Db, Sql.data(), static_cast<int>(Sql.size()), &S,
                           nullptr) != SQLITE_OK)
      return err("preparing statement");
    return Error::success();
  }
  Stmt &bind(int64_t V) {
    sqlite3_bind_int64(S, ++Idx, V);
    return *this;
  }
  Stmt &bind(double V) {
    sqlite3_bind_double(S, ++Idx, V);
    return *this;
  }
  Stmt &bind(bool V) { return bind(static_cast<int64_t>(V ? 1 : 0)); }
  Stmt &bind(StringRef V) {
    sqlite3_bind_text(S, ++Idx, V.data(), static_cast<int>(V.size()),
                      SQLITE_TRANSIENT);
    return *this;
  }
  Stmt &bind(const std::string &V) { return bind(StringRef(V)); }
  Stmt &bind(const char *V) { return bind(StringRef(V)); }
  Stmt &bindNull() {
    sqlite3_bind_null(S, ++Idx);
    return *this;
  }
  /// JSON null is stored as SQL NULL.
  Stmt &bind(const json &V) {
    if (V.is_null())
      return bindNull();
    return bind(kloop::dumpJSON(V));
  }
  template <typename T> Stmt &bind(const std::optional<T> &V) {
    if (!V)
      return bindNull();
    return bind(*V);
  }

  /// Clears bindings and rewinds, to run the statement again.
  void reset() {
    sqlite3_reset(S);
    sqlite3_clear_bindings(S);
    Idx = 0;
  }
  /// True if a row is available, false when done.
  Expected<bool> step() {
    int RC = sqlite3_step(S);
    if (RC == SQLITE_ROW)
      return true;
    if (RC == SQLITE_DONE)
      return false;
    return err("executing statement");
  }
  /// Steps through every row, calling \p Fn with the statement positioned on it.
  Error forEachRow(function_ref<void()> Fn) {
    while (true) {
      Expected<bool> Row = step();
      if (!Row)
        return Row.takeError();
      if (!*Row)
        return Error::success();
      Fn();
    }
  }
  /// Runs a statement that returns no rows.
  Error run() {
    Expected<bool> R = step();
    if (!R)
      return R.takeError();
    return Error::success();
  }

  bool isNull(int C) const { return sqlite3_column_type(S, C) == SQLITE_NULL; }
  int64_t i64(int C) const { return sqlite3_column_int64(S, C); }
  double f64(int C) const { return sqlite3_column_double(S, C); }
  std::string str(int C) const {
    const unsigned char *T = sqlite3_column_text(S, C);
    return T ? std::string(reinterpret_cast<const char *>(T),
                           static_cast<size_t>(sqlite3_column_bytes(S, C)))
             : std::string();
  }
  std::optional<int64_t> optI64(int C) const {
    return isNull(C) ? std::nullopt : std::optional<int64_t>(i64(C));
  }
  std::optional<double> optF64(int C) const {
    return isNull(C) ? std::nullopt : std::optional<double>(f64(C));
  }
  std::optional<std::string> optStr(int C) const {
    return isNull(C) ? std::nullopt : std::optional<std::string>(str(C));
  }
  /// Parses a JSON column; SQL NULL is JSON null. The CHECK constraints keep
  /// the text valid, so a parse failure means the file was tampered with.
  json js(int C) const {
    if (isNull(C))
      return nullptr;
    return json::parse(str(C), nullptr, /*allow_exceptions=*/false);
  }

  Error err(StringRef What) const {
    return createStringError("journal '" + Path + "': " + What + ": " +
                             sqlite3_errmsg(Db));
  }

private:
  sqlite3 *Db;
  StringRef Path;
  sqlite3_stmt *S = nullptr;
  int Idx = 0;
};

} // namespace

/// Private helpers with access to Journal's members.
class Journal::Impl {
public:
  static Error exec(Journal &J, const char *Sql) { return execOn(J.Db, J.Path, Sql); }
  static Error execOn(sqlite3 *Db, StringRef Path, const char *Sql) {
    char *Msg = nullptr;
    if (sqlite3_exec(Db, Sql, nullptr, nullptr, &Msg) != SQLITE_OK) {
      std::string M = Msg ? Msg : sqlite3_errmsg(Db);
      sqlite3_free(Msg);
      return createStringError("journal '" + Path + "': " + M);
    }
    return Error::success();
  }

  /// Runs \p Body in a read snapshot (BEGIN DEFERRED) unless a transaction is open.
  template <typename T>
  static Expected<T> read(Journal &J, function_ref<Expected<T>()> Body) {
    if (J.TxDepth > 0)
      return Body();
    if (Error E = exec(J, "BEGIN"))
      return E;
    ++J.TxDepth;
    Expected<T> R = Body();
    --J.TxDepth;
    if (Error E = exec(J, R ? "COMMIT" : "ROLLBACK")) {
      if (!R)
        consumeError(std::move(E));
      else
        return E;
    }
    return R;
  }

  static StepRecord readStep(const Stmt &S) {
    // id, run, round, state, step_key, status, started_ns, finished_ns, payload, error
    StepRecord R;
    R.Id = S.i64(0);
    R.Run = S.i64(1);
    R.Round = S.i64(2);
    R.State = parseStepState(S.str(3)).value_or(StepState::Extract);
    R.Key = S.str(4);
    R.Status = parseStepStatus(S.str(5)).value_or(StepStatus::Started);
    R.StartedNs = S.i64(6);
    R.FinishedNs = S.optI64(7);
    R.Payload = S.js(8);
    R.Error = S.optStr(9);
    return R;
  }

  static ProposalRecord readProposal(const Stmt &S) {
    ProposalRecord P;
    P.Id = S.i64(0);
    P.Run = S.i64(1);
    P.Round = S.i64(2);
    P.CreatedNs = S.i64(3);
    P.ProposerKind = S.str(4);
    P.Model = S.str(5);
    P.PromptVersion = S.str(6);
    P.Seed = S.optI64(7);
    P.Temperature = S.optF64(8);
    P.TokensIn = S.optI64(9);
    P.TokensOut = S.optI64(10);
    P.CostUSD = S.optF64(11);
    P.WallMs = S.i64(12);
    P.Attempts = S.i64(13);
    P.RawReply = S.str(14);
    P.Parsed = S.js(15);
    P.ParseError = S.optStr(16);
    return P;
  }

  static BuildRecord readBuild(const Stmt &S) {
    BuildRecord B;
    B.Id = S.i64(0);
    B.Run = S.i64(1);
    B.Round = S.i64(2);
    B.Proposal = S.optI64(3);
    B.Succeeded = S.i64(4) != 0;
    B.Log = S.str(5);
    B.Ptxas = S.js(6);
    B.WallMs = S.i64(7);
    return B;
  }

  static Error endStep(Journal &J, int64_t Step, StepStatus To,
                       std::optional<StringRef> Reason, const json &Payload);

  /// Brings an open journal of an older schema version to kJournalSchemaVersion
  /// in one transaction (Migrations).
  static Error upgrade(Journal &J);
};

static const char StepColumns[] =
    "id, run, round, state, step_key, status, started_ns, finished_ns, payload, error";
static const char ProposalColumns[] =
    "id, run, round, created_ns, proposer_kind, model, prompt_version, seed, "
    "temperature, tokens_in, tokens_out, cost_usd, wall_ms, attempts, raw_reply, "
    "parsed, parse_error";
static const char BuildColumns[] =
    "id, run, round, proposal, succeeded, log, ptxas, wall_ms";
/// The columns querySamples reads; a version 1 journal opened read-only has no
/// foreign_load column, and its samples read as not foreign.
static std::string sampleColumns(int SchemaVersion) {
  return std::string("id, run, round, proposal, shape, seed, kernel, duration_ns, throttled, ") +
         (SchemaVersion >= 2 ? "foreign_load" : "0");
}

// ---- open ----------------------------------------------------------------------

static Error fileError(StringRef Path, const Twine &Why) {
  return createStringError("journal '" + Path + "': " + Why);
}

/// Reads one integer PRAGMA.
static Expected<int64_t> pragmaInt(sqlite3 *Db, StringRef Path, StringRef Name) {
  Stmt S(Db, Path);
  if (Error E = S.prepare(("PRAGMA " + Name).str()))
    return E;
  Expected<bool> Row = S.step();
  if (!Row)
    return Row.takeError();
  if (!*Row)
    return fileError(Path, "PRAGMA " + Name + " returned no row");
  return S.i64(0);
}

Expected<std::unique_ptr<Journal>> Journal::open(StringRef PathRef, OpenMode Mode) {
  std::string Path = PathRef.str();
  bool Exists = sys::fs::exists(Path);
  if (Mode == OpenMode::Create && Exists)
    return fileError(Path, "cannot create: the file already exists");
  if ((Mode == OpenMode::OpenExisting || Mode == OpenMode::ReadOnly) && !Exists)
    return fileError(Path, "no such file");
  if (Exists && sys::fs::is_directory(Path))
    return fileError(Path, "is a directory, not a kloop journal");
  bool Creating = !Exists;

  // A file that does not start with SQLite's magic header is refused before
  // SQLite sees it (SQLite would treat an empty file as an empty database).
  if (Exists) {
    ErrorOr<std::unique_ptr<MemoryBuffer>> Buf =
        MemoryBuffer::getFileSlice(Path, 16, 0, /*IsVolatile=*/true);
    if (!Buf)
      return fileError(Path, "cannot read: " + Buf.getError().message());
    StringRef Head = (*Buf)->getBuffer();
    if (Head.size() < 16 || Head != StringRef("SQLite format 3\0", 16))
      return fileError(Path, "not a kloop journal (not an SQLite database)");
  }

  int Flags = Mode == OpenMode::ReadOnly
                  ? SQLITE_OPEN_READONLY
                  : SQLITE_OPEN_READWRITE | (Creating ? SQLITE_OPEN_CREATE : 0);
  sqlite3 *Db = nullptr;
  int RC = sqlite3_open_v2(Path.c_str(), &Db, Flags, nullptr);
  if (RC != SQLITE_OK) {
    std::string Msg = Db ? sqlite3_errmsg(Db) : sqlite3_errstr(RC);
    sqlite3_close(Db);
    return fileError(Path, "cannot open: " + Msg);
  }
  std::unique_ptr<Journal> J(new Journal(Path, Db));
  sqlite3_extended_result_codes(Db, 1);
  sqlite3_busy_timeout(Db, 5000);

  auto Fail = [&](Error E) -> Expected<std::unique_ptr<Journal>> {
    J.reset();
    if (Creating)
      for (const char *Suffix : {"", "-wal", "-shm", "-journal"})
        sys::fs::remove(Path + Suffix);
    return E;
  };

  if (!Creating) {
    Expected<int64_t> AppId = pragmaInt(Db, Path, "application_id");
    if (!AppId) {
      consumeError(AppId.takeError());
      return Fail(fileError(Path, Twine("not a kloop journal or corrupt (") +
                                      sqlite3_errmsg(Db) + ")"));
    }
    if (*AppId != kJournalApplicationId)
      return Fail(fileError(Path, "not a kloop journal (application_id " +
                                      Twine(*AppId) + ", expected " +
                                      Twine(kJournalApplicationId) + " \"kLoP\")"));
    Expected<int64_t> Version = pragmaInt(Db, Path, "user_version");
    if (!Version)
      return Fail(Version.takeError());
    if (*Version < 1 || *Version > kJournalSchemaVersion)
      return Fail(fileError(Path, "journal schema version " +
                                      std::to_string(*Version) +
                                      "; this kloop reads versions 1 to " +
                                      std::to_string(kJournalSchemaVersion)));
    J->SchemaVersion = static_cast<int>(*Version);
    Stmt Check(Db, Path);
    if (Error E = Check.prepare("PRAGMA quick_check")) {
      consumeError(std::move(E));
      return Fail(fileError(Path, Twine("corrupt (") + sqlite3_errmsg(Db) + ")"));
    }
    std::string Problems;
    while (true) {
      Expected<bool> Row = Check.step();
      if (!Row) {
        consumeError(Row.takeError());
        return Fail(fileError(Path, Twine("corrupt (") + sqlite3_errmsg(Db) + ")"));
      }
      if (!*Row)
        break;
      std::string Line = Check.str(0);
      if (Line != "ok")
        Problems += (Problems.empty() ? "" : "; ") + Line;
    }
    if (!Problems.empty())
      return Fail(fileError(Path, "corrupt (quick_check: " + Problems + ")"));
  }

  if (Mode != OpenMode::ReadOnly) {
    // journal_mode answers with the mode in effect; anything but "wal" (e.g. a
    // file system without shared memory) is an error, not a silent downgrade.
    Stmt S(Db, Path);
    if (Error E = S.prepare("PRAGMA journal_mode=WAL"))
      return Fail(std::move(E));
    Expected<bool> Row = S.step();
    if (!Row)
      return Fail(Row.takeError());
    if (!*Row || S.str(0) != "wal")
      return Fail(fileError(Path, "cannot switch to WAL mode"));
  }
  if (Error E = Impl::execOn(Db, Path, "PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;"))
    return Fail(std::move(E));

  if (Creating) {
    std::string Sql = std::string("BEGIN IMMEDIATE;") + SchemaV1 + migrationsFrom(1) +
                      "PRAGMA application_id=" + std::to_string(kJournalApplicationId) +
                      "; PRAGMA user_version=" + std::to_string(kJournalSchemaVersion) +
                      "; COMMIT;";
    if (Error E = Impl::execOn(Db, Path, Sql.c_str())) {
      consumeError(Impl::execOn(Db, Path, "ROLLBACK"));
      return Fail(std::move(E));
    }
    J->SchemaVersion = kJournalSchemaVersion;
  } else if (Mode != OpenMode::ReadOnly && J->SchemaVersion < kJournalSchemaVersion) {
    if (Error E = Impl::upgrade(*J))
      return Fail(std::move(E));
  }
  return J;
}

Error Journal::Impl::upgrade(Journal &J) {
  // Another kloop may be upgrading the same file: the version is read again
  // under the write lock, and the migrations run only if it is still old.
  return J.transaction([&]() -> Error {
    Expected<int64_t> Version = pragmaInt(J.Db, J.Path, "user_version");
    if (!Version)
      return Version.takeError();
    if (*Version < kJournalSchemaVersion) {
      std::string Sql = migrationsFrom(static_cast<int>(*Version)) +
                        "PRAGMA user_version=" + std::to_string(kJournalSchemaVersion) + ";";
      if (Error E = Impl::exec(J, Sql.c_str()))
        return fileError(J.Path, "cannot upgrade from schema version " + Twine(*Version) +
                                     " to " + Twine(kJournalSchemaVersion) + ": " +
                                     toString(std::move(E)));
    }
    J.SchemaVersion = kJournalSchemaVersion;
    return Error::success();
  });
}

Journal::~Journal() { sqlite3_close(Db); }

Error Journal::transaction(function_ref<Error()> Body) {
  // The outer level takes the write lock up front (IMMEDIATE) so that a
  // concurrent writer fails at BEGIN rather than half-way; nested levels are
  // savepoints, so a failed inner body is undone even if the outer one goes on.
  bool Outer = TxDepth == 0;
  if (Error E = Impl::exec(*this, Outer ? "BEGIN IMMEDIATE" : "SAVEPOINT kloop_nested"))
    return E;
  ++TxDepth;
  Error E = Body();
  --TxDepth;
  if (E) {
    consumeError(Impl::exec(*this, Outer ? "ROLLBACK"
                                         : "ROLLBACK TO kloop_nested; RELEASE kloop_nested"));
    return E;
  }
  if (Error C = Impl::exec(*this, Outer ? "COMMIT" : "RELEASE kloop_nested")) {
    if (Outer)
      consumeError(Impl::exec(*this, "ROLLBACK"));
    return C;
  }
  return Error::success();
}

// ---- runs and rounds -------------------------------------------------------------

Expected<int64_t> Journal::createRun(StringRef ConfigHash, StringRef KloopVersion) {
  int64_t Id = 0;
  Error E = transaction([&]() -> Error {
    int64_t Now = journalNowNs();
    Stmt S(Db, Path);
    if (Error E = S.prepare("INSERT INTO runs(started_ns, config_hash, kloop_version, "
                            "state) VALUES(?, ?, ?, 'running')"))
      return E;
    S.bind(Now).bind(ConfigHash).bind(KloopVersion);
    if (Error E = S.run())
      return E;
    Id = sqlite3_last_insert_rowid(Db);
    Stmt R(Db, Path);
    if (Error E = R.prepare("INSERT INTO rounds(run, number, started_ns) VALUES(?, 0, ?)"))
      return E;
    R.bind(Id).bind(Now);
    return R.run();
  });
  if (E)
    return E;
  return Id;
}

Error Journal::setRunState(int64_t Run, StringRef State,
                           std::optional<std::string> StopReason, bool Finished) {
  return transaction([&]() -> Error {
    Stmt S(Db, Path);
    if (Error E = S.prepare("UPDATE runs SET state = ?, "
                            "stop_reason = COALESCE(?, stop_reason), "
                            "finished_ns = CASE WHEN ? THEN ? ELSE finished_ns END "
                            "WHERE id = ?"))
      return E;
    S.bind(State).bind(StopReason).bind(Finished).bind(journalNowNs()).bind(Run);
    if (Error E = S.run())
      return E;
    if (sqlite3_changes(Db) != 1)
      return fileError(Path, "no run " + Twine(Run));
    return Error::success();
  });
}

static RunRecord readRun(const Stmt &S) {
  RunRecord R;
  R.Id = S.i64(0);
  R.StartedNs = S.i64(1);
  R.ConfigHash = S.str(2);
  R.KloopVersion = S.str(3);
  R.State = S.str(4);
  R.StopReason = S.optStr(5);
  R.FinishedNs = S.optI64(6);
  return R;
}

static const char RunColumns[] =
    "id, started_ns, config_hash, kloop_version, state, stop_reason, finished_ns";

Expected<RunRecord> Journal::getRun(int64_t Run) {
  Stmt S(Db, Path);
  if (Error E = S.prepare(std::string("SELECT ") + RunColumns + " FROM runs WHERE id = ?"))
    return E;
  S.bind(Run);
  Expected<bool> Row = S.step();
  if (!Row)
    return Row.takeError();
  if (!*Row)
    return fileError(Path, "no run " + Twine(Run));
  return readRun(S);
}

Expected<std::vector<RunRecord>> Journal::listRuns() {
  Stmt S(Db, Path);
  if (Error E = S.prepare(std::string("SELECT ") + RunColumns + " FROM runs ORDER BY id"))
    return E;
  std::vector<RunRecord> Out;
  if (Error E = S.forEachRow([&] {
    Out.push_back(readRun(S));
  }))
    return E;
  return Out;
}

Error Journal::beginRound(int64_t Run, int64_t Number) {
  if (Number < 1)
    return fileError(Path, "round numbers start at 1 (round 0 is created with the run), got " +
                               Twine(Number));
  return transaction([&]() -> Error {
    Stmt S(Db, Path);
    if (Error E = S.prepare("INSERT OR IGNORE INTO rounds(run, number, started_ns) "
                            "VALUES(?, ?, ?)"))
      return E;
    S.bind(Run).bind(Number).bind(journalNowNs());
    if (Error E = S.run())
      return fileError(Path, "cannot begin round " + Twine(Number) + " of run " +
                                 Twine(Run) + ": " + toString(std::move(E)));
    return Error::success();
  });
}

Expected<std::vector<RoundRecord>> Journal::listRounds(int64_t Run) {
  Stmt S(Db, Path);
  if (Error E = S.prepare("SELECT run, number, started_ns FROM rounds WHERE run = ? "
                          "ORDER BY number"))
    return E;
  S.bind(Run);
  std::vector<RoundRecord> Out;
  if (Error E = S.forEachRow([&] {
    Out.push_back({S.i64(0), S.i64(1), S.i64(2)});
  }))
    return E;
  return Out;
}

// ---- steps -----------------------------------------------------------------------

Expected<int64_t> Journal::beginStep(int64_t Run, int64_t Round, StepState State,
                                     StringRef Key) {
  int64_t Id = 0;
  Error E = transaction([&]() -> Error {
    Stmt S(Db, Path);
    if (Error E = S.prepare("INSERT INTO steps(run, round, state, step_key, status, "
                            "started_ns) VALUES(?, ?, ?, ?, 'started', ?)"))
      return E;
    S.bind(Run).bind(Round).bind(stepStateName(State)).bind(Key).bind(journalNowNs());
    if (Error E = S.run())
      return fileError(Path, "cannot begin step " + stepStateName(State) +
                                 " of run " + Twine(Run) + " round " + Twine(Round) +
                                 ": " + toString(std::move(E)));
    Id = sqlite3_last_insert_rowid(Db);
    return Error::success();
  });
  if (E)
    return E;
  return Id;
}

Error Journal::Impl::endStep(Journal &J, int64_t Step, StepStatus To,
                             std::optional<StringRef> Reason, const json &Payload) {
  return J.transaction([&]() -> Error {
    Stmt Q(J.Db, J.Path);
    if (Error E = Q.prepare("SELECT status, run FROM steps WHERE id = ?"))
      return E;
    Q.bind(Step);
    Expected<bool> Row = Q.step();
    if (!Row)
      return Row.takeError();
    if (!*Row)
      return fileError(J.Path, "no step " + Twine(Step));
    if (Q.str(0) != "started")
      return fileError(J.Path, "step " + Twine(Step) + " is already " + Q.str(0));
    int64_t Run = Q.i64(1);
    Stmt S(J.Db, J.Path);
    if (Error E = S.prepare(
            "UPDATE steps SET status = ?, finished_ns = ?, payload = ?, error = ?, "
            "finish_seq = (SELECT COALESCE(MAX(finish_seq), 0) + 1 FROM steps "
            "WHERE run = ?) WHERE id = ?"))
      return E;
    S.bind(stepStatusName(To)).bind(journalNowNs()).bind(Payload);
    if (Reason)
      S.bind(*Reason);
    else
      S.bindNull();
    S.bind(Run).bind(Step);
    return S.run();
  });
}

Error Journal::finishStep(int64_t Step, const json &Payload) {
  return Impl::endStep(*this, Step, StepStatus::Finished, std::nullopt, Payload);
}

Error Journal::failStep(int64_t Step, StringRef Reason, const json &Payload) {
  return Impl::endStep(*this, Step, StepStatus::Failed, Reason, Payload);
}

Expected<std::optional<StepRecord>> Journal::lastFinishedStep(int64_t Run) {
  Stmt S(Db, Path);
  if (Error E = S.prepare(std::string("SELECT ") + StepColumns +
                          " FROM steps WHERE run = ? AND status = 'finished' "
                          "ORDER BY finish_seq DESC LIMIT 1"))
    return E;
  S.bind(Run);
  Expected<bool> Row = S.step();
  if (!Row)
    return Row.takeError();
  if (!*Row)
    return std::optional<StepRecord>();
  return std::optional<StepRecord>(Impl::readStep(S));
}

Expected<std::optional<StepRecord>>
Journal::findFinishedStep(int64_t Run, int64_t Round, StepState State, StringRef Key) {
  Stmt S(Db, Path);
  if (Error E = S.prepare(std::string("SELECT ") + StepColumns +
                          " FROM steps WHERE run = ? AND round = ? AND state = ? AND "
                          "step_key = ? AND status = 'finished' "
                          "ORDER BY finish_seq DESC LIMIT 1"))
    return E;
  S.bind(Run).bind(Round).bind(stepStateName(State)).bind(Key);
  Expected<bool> Row = S.step();
  if (!Row)
    return Row.takeError();
  if (!*Row)
    return std::optional<StepRecord>();
  return std::optional<StepRecord>(Impl::readStep(S));
}

Expected<bool> Journal::isStepFinished(int64_t Run, int64_t Round, StepState State,
                                       StringRef Key) {
  Expected<std::optional<StepRecord>> R = findFinishedStep(Run, Round, State, Key);
  if (!R)
    return R.takeError();
  return R->has_value();
}

Expected<std::vector<StepRecord>> Journal::listSteps(int64_t Run) {
  Stmt S(Db, Path);
  if (Error E = S.prepare(std::string("SELECT ") + StepColumns +
                          " FROM steps WHERE run = ? ORDER BY id"))
    return E;
  S.bind(Run);
  std::vector<StepRecord> Out;
  if (Error E = S.forEachRow([&] {
    Out.push_back(Impl::readStep(S));
  }))
    return E;
  return Out;
}

// ---- records ---------------------------------------------------------------------

/// Runs one INSERT in its own transaction (or the caller's) and returns the rowid.
static Expected<int64_t> insertOne(Journal &J, sqlite3 *Db, StringRef Path,
                                   StringRef Sql, StringRef What,
                                   function_ref<void(Stmt &)> Bind) {
  int64_t Id = 0;
  Error E = J.transaction([&]() -> Error {
    Stmt S(Db, Path);
    if (Error E = S.prepare(Sql))
      return E;
    Bind(S);
    if (Error E = S.run())
      return fileError(Path, "cannot record " + What + ": " + toString(std::move(E)));
    Id = sqlite3_last_insert_rowid(Db);
    return Error::success();
  });
  if (E)
    return E;
  return Id;
}

Expected<int64_t> Journal::recordProposal(int64_t Run, int64_t Round,
                                          const NewProposal &P) {
  return insertOne(
      *this, Db, Path,
      "INSERT INTO proposals(run, round, created_ns, proposer_kind, model, "
      "prompt_version, seed, temperature, tokens_in, tokens_out, cost_usd, wall_ms, "
      "attempts, raw_reply, parsed, parse_error) "
      "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      "proposal", [&](Stmt &S) {
        S.bind(Run).bind(Round).bind(journalNowNs()).bind(P.ProposerKind).bind(P.Model);
        S.bind(P.PromptVersion).bind(P.Seed).bind(P.Temperature).bind(P.TokensIn);
        S.bind(P.TokensOut).bind(P.CostUSD).bind(P.WallMs).bind(P.Attempts);
        S.bind(P.RawReply).bind(P.Parsed).bind(P.ParseError);
      });
}

Expected<int64_t> Journal::recordEdit(int64_t Proposal, int64_t Ordinal,
                                      StringRef Target, StringRef Kind,
                                      const json &Spec, bool Applied) {
  return insertOne(*this, Db, Path,
                   "INSERT INTO edits(proposal, ordinal, target, kind, spec, applied) "
                   "VALUES(?, ?, ?, ?, ?, ?)",
                   "edit", [&](Stmt &S) {
                     S.bind(Proposal).bind(Ordinal).bind(Target).bind(Kind);
                     // spec is NOT NULL: a null edit is stored as the JSON text "null".
                     S.bind(kloop::dumpJSON(Spec)).bind(Applied);
                   });
}

Expected<int64_t> Journal::recordRefusal(int64_t Proposal,
                                         std::optional<int64_t> EditOrdinal,
                                         StringRef Reason) {
  return insertOne(*this, Db, Path,
                   "INSERT INTO refusals(proposal, edit_ordinal, reason) VALUES(?, ?, ?)",
                   "refusal", [&](Stmt &S) {
                     S.bind(Proposal).bind(EditOrdinal).bind(Reason);
                   });
}

Expected<int64_t> Journal::recordBuild(const BuildRecord &B) {
  return insertOne(*this, Db, Path,
                   "INSERT INTO builds(run, round, proposal, succeeded, log, ptxas, "
                   "wall_ms) VALUES(?, ?, ?, ?, ?, ?, ?)",
                   "build", [&](Stmt &S) {
                     S.bind(B.Run).bind(B.Round).bind(B.Proposal).bind(B.Succeeded);
                     S.bind(B.Log).bind(B.Ptxas).bind(B.WallMs);
                   });
}

Error Journal::recordSamples(const std::vector<SampleRecord> &Samples) {
  return transaction([&]() -> Error {
    Stmt S(Db, Path);
    if (Error E = S.prepare("INSERT INTO samples(run, round, proposal, shape, seed, "
                            "kernel, duration_ns, throttled, foreign_load) "
                            "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)"))
      return E;
    for (const SampleRecord &R : Samples) {
      S.reset();
      S.bind(R.Run).bind(R.Round).bind(R.Proposal).bind(R.Shape).bind(R.Seed);
      S.bind(R.Kernel).bind(R.DurationNs).bind(R.Throttled).bind(R.ForeignLoad);
      if (Error E = S.run())
        return fileError(Path, "cannot record sample: " + toString(std::move(E)));
    }
    return Error::success();
  });
}

Expected<int64_t> Journal::recordVerdict(int64_t Proposal, StringRef Outcome,
                                         const json &Detail, StringRef Explanation) {
  return insertOne(*this, Db, Path,
                   "INSERT INTO verdicts(proposal, outcome, detail, explanation, "
                   "created_ns) VALUES(?, ?, ?, ?, ?)",
                   "verdict", [&](Stmt &S) {
                     S.bind(Proposal).bind(Outcome).bind(Detail).bind(Explanation);
                     S.bind(journalNowNs());
                   });
}

// ---- queries ---------------------------------------------------------------------

Expected<ProposalRecord> Journal::getProposal(int64_t Id) {
  Stmt S(Db, Path);
  if (Error E = S.prepare(std::string("SELECT ") + ProposalColumns +
                          " FROM proposals WHERE id = ?"))
    return E;
  S.bind(Id);
  Expected<bool> Row = S.step();
  if (!Row)
    return Row.takeError();
  if (!*Row)
    return fileError(Path, "no proposal " + Twine(Id));
  return Impl::readProposal(S);
}

Expected<std::vector<ProposalSummary>> Journal::listProposals(int64_t Run) {
  return Impl::read<std::vector<ProposalSummary>>(
      *this, [&]() -> Expected<std::vector<ProposalSummary>> {
        std::vector<ProposalSummary> Out;
        std::map<int64_t, size_t> Index;
        {
          Stmt S(Db, Path);
          if (Error E = S.prepare(std::string("SELECT ") + ProposalColumns +
                                  " FROM proposals WHERE run = ? ORDER BY round, id"))
            return E;
          S.bind(Run);
          if (Error E = S.forEachRow([&] {
            ProposalSummary Sum;
            Sum.Proposal = Impl::readProposal(S);
            Index[Sum.Proposal.Id] = Out.size();
            Out.push_back(std::move(Sum));
          }))
            return E;
        }
        {
          Stmt S(Db, Path);
          if (Error E = S.prepare("SELECT e.id, e.proposal, e.ordinal, e.target, e.kind, "
                                  "e.spec, e.applied FROM edits e JOIN proposals p ON "
                                  "p.id = e.proposal WHERE p.run = ? ORDER BY e.proposal, "
                                  "e.ordinal"))
            return E;
          S.bind(Run);
          if (Error E = S.forEachRow([&] {
            EditRecord R{S.i64(0), S.i64(1), S.i64(2), S.str(3), S.str(4), S.js(5),
                         S.i64(6) != 0};
            Out[Index.at(R.Proposal)].Edits.push_back(std::move(R));
          }))
            return E;
        }
        {
          Stmt S(Db, Path);
          if (Error E = S.prepare("SELECT r.id, r.proposal, r.edit_ordinal, r.reason FROM "
                                  "refusals r JOIN proposals p ON p.id = r.proposal WHERE "
                                  "p.run = ? ORDER BY r.id"))
            return E;
          S.bind(Run);
          if (Error E = S.forEachRow([&] {
            RefusalRecord R{S.i64(0), S.i64(1), S.optI64(2), S.str(3)};
            Out[Index.at(R.Proposal)].Refusals.push_back(std::move(R));
          }))
            return E;
        }
        {
          Stmt S(Db, Path);
          if (Error E = S.prepare(std::string("SELECT ") + BuildColumns +
                                  " FROM builds WHERE run = ? AND proposal IS NOT NULL "
                                  "ORDER BY id"))
            return E;
          S.bind(Run);
          if (Error E = S.forEachRow([&] {
            BuildRecord B = Impl::readBuild(S);
            auto It = Index.find(*B.Proposal);
            if (It != Index.end())
              Out[It->second].Build = std::move(B); // later rows win: latest build
          }))
            return E;
        }
        {
          Stmt S(Db, Path);
          if (Error E = S.prepare("SELECT v.id, v.proposal, v.outcome, v.detail, "
                                  "v.explanation, v.created_ns FROM verdicts v JOIN "
                                  "proposals p ON p.id = v.proposal WHERE p.run = ? "
                                  "ORDER BY v.id"))
            return E;
          S.bind(Run);
          if (Error E = S.forEachRow([&] {
            VerdictRecord V{S.i64(0), S.i64(1), S.str(2), S.js(3), S.str(4), S.i64(5)};
            Out[Index.at(V.Proposal)].Verdict = std::move(V);
          }))
            return E;
        }
        return Out;
      });
}

Expected<std::vector<BuildRecord>> Journal::listBuilds(int64_t Run) {
  Stmt S(Db, Path);
  if (Error E = S.prepare(std::string("SELECT ") + BuildColumns +
                          " FROM builds WHERE run = ? ORDER BY id"))
    return E;
  S.bind(Run);
  std::vector<BuildRecord> Out;
  if (Error E = S.forEachRow([&] {
    Out.push_back(Impl::readBuild(S));
  }))
    return E;
  return Out;
}

static Expected<std::vector<SampleRecord>>
querySamples(sqlite3 *Db, StringRef Path, StringRef Sql,
             function_ref<void(Stmt &)> Bind) {
  Stmt S(Db, Path);
  if (Error E = S.prepare(Sql))
    return E;
  Bind(S);
  std::vector<SampleRecord> Out;
  if (Error E = S.forEachRow([&] {
    SampleRecord R;
    R.Id = S.i64(0);
    R.Run = S.i64(1);
    R.Round = S.i64(2);
    R.Proposal = S.optI64(3);
    R.Shape = S.str(4);
    R.Seed = S.i64(5);
    R.Kernel = S.str(6);
    R.DurationNs = S.i64(7);
    R.Throttled = S.i64(8) != 0;
    R.ForeignLoad = S.i64(9) != 0;
    Out.push_back(std::move(R));
  }))
    return E;
  return Out;
}

Expected<std::vector<SampleRecord>> Journal::listSamples(int64_t Run) {
  return querySamples(Db, Path,
                      "SELECT " + sampleColumns(SchemaVersion) +
                          " FROM samples WHERE run = ? ORDER BY id",
                      [&](Stmt &S) { S.bind(Run); });
}

Expected<std::vector<SampleRecord>>
Journal::listSamplesOf(int64_t Run, std::optional<int64_t> Proposal) {
  return querySamples(Db, Path,
                      "SELECT " + sampleColumns(SchemaVersion) +
                          " FROM samples WHERE run = ? AND proposal IS ? ORDER BY id",
                      [&](Stmt &S) { S.bind(Run).bind(Proposal); });
}

// ---- JSON ------------------------------------------------------------------------

template <typename T> static json opt(const std::optional<T> &V) {
  return V ? json(*V) : json(nullptr);
}

json toJSON(const RunRecord &R) {
  return {{"id", R.Id},
          {"started_ns", R.StartedNs},
          {"config_hash", R.ConfigHash},
          {"kloop_version", R.KloopVersion},
          {"state", R.State},
          {"stop_reason", opt(R.StopReason)},
          {"finished_ns", opt(R.FinishedNs)}};
}

json toJSON(const StepRecord &S) {
  return {{"id", S.Id},
          {"run", S.Run},
          {"round", S.Round},
          {"state", stepStateName(S.State).str()},
          {"key", S.Key},
          {"status", stepStatusName(S.Status).str()},
          {"started_ns", S.StartedNs},
          {"finished_ns", opt(S.FinishedNs)},
          {"payload", S.Payload},
          {"error", opt(S.Error)}};
}

json toJSON(const ProposalSummary &S) {
  const ProposalRecord &P = S.Proposal;
  json J = {{"id", P.Id},
            {"run", P.Run},
            {"round", P.Round},
            {"created_ns", P.CreatedNs},
            {"provenance",
             {{"proposer", P.ProposerKind},
              {"model", P.Model},
              {"prompt_version", P.PromptVersion},
              {"seed", opt(P.Seed)},
              {"temperature", opt(P.Temperature)},
              {"tokens_in", opt(P.TokensIn)},
              {"tokens_out", opt(P.TokensOut)},
              {"cost_usd", opt(P.CostUSD)},
              {"wall_ms", P.WallMs},
              {"attempts", P.Attempts}}},
            {"raw_reply", P.RawReply},
            {"parsed", P.Parsed},
            {"parse_error", opt(P.ParseError)}};
  json Edits = json::array();
  for (const EditRecord &E : S.Edits)
    Edits.push_back({{"ordinal", E.Ordinal},
                     {"target", E.Target},
                     {"kind", E.Kind},
                     {"spec", E.Spec},
                     {"applied", E.Applied}});
  J["edits"] = std::move(Edits);
  json Refusals = json::array();
  for (const RefusalRecord &R : S.Refusals)
    Refusals.push_back({{"edit_ordinal", opt(R.EditOrdinal)}, {"reason", R.Reason}});
  J["refusals"] = std::move(Refusals);
  if (S.Build)
    J["build"] = {{"id", S.Build->Id},
                  {"succeeded", S.Build->Succeeded},
                  {"ptxas", S.Build->Ptxas},
                  {"wall_ms", S.Build->WallMs}};
  else
    J["build"] = nullptr;
  if (S.Verdict)
    J["verdict"] = {{"outcome", S.Verdict->Outcome},
                    {"detail", S.Verdict->Detail},
                    {"explanation", S.Verdict->Explanation},
                    {"created_ns", S.Verdict->CreatedNs}};
  else
    J["verdict"] = nullptr;
  return J;
}

} // namespace kloop
