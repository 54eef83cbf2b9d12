//===- kloop/Journal/Journal.h - SQLite journal of one optimization run ---===//
///
/// \file
/// The journal records everything `kloop optimize` does, so that a run can be
/// resumed after a crash and reviewed afterwards (`kloop history`, `kloop
/// report`). One SQLite database file holds one run (the schema allows more
/// than one run per file; `kloop optimize` creates one file per run).
///
/// Durability (see docs/journal.md for the argument):
///  - journal_mode=WAL, synchronous=FULL: every commit fsyncs the write-ahead
///    log before COMMIT returns, so a transaction that returned is durable
///    against a process crash *and* an OS crash or power loss. synchronous=NORMAL
///    would only guarantee the former (SQLite docs, "PRAGMA synchronous": in WAL
///    mode NORMAL "might roll back" the last transactions after a power loss),
///    and the contract below is that a finished step is never lost.
///  - Every public write is one transaction (BEGIN IMMEDIATE ... COMMIT), or
///    part of the caller's transaction() when one is open, so a crash leaves
///    either all rows of a write or none ("no torn rows").
///  - foreign_keys=ON: a proposal cannot name a missing run, an edit a missing
///    proposal, and so on.
///
/// The file is identified by `PRAGMA application_id` = kJournalApplicationId and
/// its schema version by `PRAGMA user_version` = kJournalSchemaVersion.
///
/// A Journal object is not thread-safe: use it from one thread. Several
/// processes may read one journal while one process writes it (WAL readers do
/// not block the writer); writers wait up to 5 s for a lock (busy_timeout).
///
/// Timestamps are nanoseconds since the Unix epoch (UTC, system clock).
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_JOURNAL_JOURNAL_H
#define KLOOP_JOURNAL_JOURNAL_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace kloop {

/// `PRAGMA application_id` of every kloop journal: the ASCII bytes "kLoP"
/// (0x6B4C6F50). A SQLite file with another application id is not a journal.
inline constexpr int32_t kJournalApplicationId = 0x6B4C6F50;

/// Version of the table layout, stored in `PRAGMA user_version`. Version 2
/// added samples.foreign_load. A journal of an older version (>= 1) opens:
/// read-write it is upgraded in place (one transaction), read-only it is read
/// as it is (its samples read as not foreign). A newer or unknown version is
/// refused by Journal::open with an error naming both.
inline constexpr int kJournalSchemaVersion = 2;

/// The states of `kloop optimize`'s state machine (issue 5), in order.
enum class StepState { Extract, Propose, Apply, Build, Verify, Measure, Decide, Done };

/// Where a step is: begun, or ended one way or the other.
enum class StepStatus { Started, Finished, Failed };

/// "extract", "propose", "apply", "build", "verify", "measure", "decide", "done".
llvm::StringRef stepStateName(StepState S);
/// Inverse of stepStateName; std::nullopt for any other string.
std::optional<StepState> parseStepState(llvm::StringRef Name);
/// "started", "finished", "failed".
llvm::StringRef stepStatusName(StepStatus S);
/// Inverse of stepStatusName; std::nullopt for any other string.
std::optional<StepStatus> parseStepStatus(llvm::StringRef Name);

/// Current time in ns since the Unix epoch (system clock), as stored in the journal.
int64_t journalNowNs();

/// One row of `runs`.
struct RunRecord {
  int64_t Id = 0;
  int64_t StartedNs = 0;          ///< when createRun was called
  std::string ConfigHash;         ///< caller-chosen hash of the run's configuration
  std::string KloopVersion;       ///< e.g. "0.1.0"
  std::string State;              ///< free text set by the caller: "running", "stopped", ...
  std::optional<std::string> StopReason; ///< why the run stopped, once it did
  std::optional<int64_t> FinishedNs;     ///< set by setRunState when Finished is true
};

/// One row of `rounds`. Round 0 of every run exists from createRun on and holds
/// the run-level steps (extract, baseline build and measurement); rounds 1, 2,
/// ... are optimization rounds created with beginRound.
struct RoundRecord {
  int64_t Run = 0;
  int64_t Number = 0;
  int64_t StartedNs = 0;
};

/// One row of `steps`: one attempt at one state-machine transition. A step is
/// identified for resumption by (run, round, state, key); the key tells apart
/// several steps of one state in a round (e.g. "proposal:3"), and is "" when
/// there is only one. A crashed attempt stays with status Started; a later
/// attempt of the same step is a new row.
struct StepRecord {
  int64_t Id = 0;
  int64_t Run = 0;
  int64_t Round = 0;
  StepState State = StepState::Extract;
  std::string Key;
  StepStatus Status = StepStatus::Started;
  int64_t StartedNs = 0;
  std::optional<int64_t> FinishedNs;   ///< set when Finished or Failed
  nlohmann::json Payload;              ///< from finishStep/failStep; null until then
  std::optional<std::string> Error;    ///< the failStep reason
};

/// Provenance and content of a proposal, as recordProposal stores it. Mirrors
/// kloop::Provenance of kloopPropose (the journal does not depend on it). The
/// API key of a proposer is never part of this record.
struct NewProposal {
  std::string ProposerKind;            ///< "builtin", "llm-openai", "llm-anthropic", "command"
  std::string Model;                   ///< model ID or command; "" if none
  std::string PromptVersion;           ///< prompt-template content hash; "" if none
  std::optional<int64_t> Seed;
  std::optional<double> Temperature;
  std::optional<int64_t> TokensIn;     ///< prompt tokens as reported by the API
  std::optional<int64_t> TokensOut;    ///< completion tokens as reported by the API
  std::optional<double> CostUSD;       ///< USD, when known
  int64_t WallMs = 0;                  ///< wall time of obtaining the reply, ms
  int64_t Attempts = 1;                ///< HTTP attempts / command runs
  std::string RawReply;                ///< the reply text exactly as received
  nlohmann::json Parsed;               ///< parsed proposal object; null if parsing failed
  std::optional<std::string> ParseError; ///< why RawReply did not parse, if it did not
};

/// One row of `proposals`.
struct ProposalRecord : NewProposal {
  int64_t Id = 0;
  int64_t Run = 0;
  int64_t Round = 0;
  int64_t CreatedNs = 0;
};

/// One row of `edits`: one edit of a proposal, with what happened to it.
struct EditRecord {
  int64_t Id = 0;
  int64_t Proposal = 0;
  int64_t Ordinal = 0;        ///< 0-based index in the proposal's edits[]
  std::string Target;         ///< inventory ID, e.g. "reduce<256>/loop#1"
  std::string Kind;           ///< edit kind, e.g. "set_unroll"
  nlohmann::json Spec;        ///< the edit object as proposed
  bool Applied = false;       ///< false: refused or not attempted
};

/// One row of `refusals`: a reason a proposal (or one of its edits) was refused;
/// that reason is the feedback the next proposal sees.
struct RefusalRecord {
  int64_t Id = 0;
  int64_t Proposal = 0;
  std::optional<int64_t> EditOrdinal; ///< the refused edit; none = whole proposal (parse, schema, conflict)
  std::string Reason;
};

/// One row of `builds`. Proposal is none for the baseline build.
struct BuildRecord {
  int64_t Id = 0;
  int64_t Run = 0;
  int64_t Round = 0;
  std::optional<int64_t> Proposal;
  bool Succeeded = false;
  std::string Log;            ///< compiler output (stdout+stderr)
  nlohmann::json Ptxas;       ///< ptxas resource report as JSON (the shape of kloop::optimize::toJSON(std::vector<PtxasKernel>), kloop/Optimize/Stages.h); null if none
  int64_t WallMs = 0;
};

/// One row of `samples`: one timed launch. Proposal is none for baseline samples.
struct SampleRecord {
  int64_t Id = 0;
  int64_t Run = 0;
  int64_t Round = 0;
  std::optional<int64_t> Proposal;
  std::string Shape;          ///< shape label, e.g. "n=1048576"
  int64_t Seed = 0;           ///< input-data seed
  std::string Kernel;         ///< kernel name as in the inventory
  int64_t DurationNs = 0;     ///< GPU duration of the launch, ns
  bool Throttled = false;     ///< any throttle reason was active during the launch
  /// Another process used the GPU during the launch (foreign GPU load); false
  /// for samples of schema version 1 journals, which did not record it.
  bool ForeignLoad = false;
};

/// One row of `verdicts`: the decision on a proposal.
struct VerdictRecord {
  int64_t Id = 0;
  int64_t Proposal = 0;
  std::string Outcome;        ///< e.g. "accepted", "rejected", "failed_verification", "inconclusive"
  nlohmann::json Detail;      ///< Decide's verdict JSON (ratios, CIs, p99 per shape)
  std::string Explanation;    ///< one human-readable sentence
  int64_t CreatedNs = 0;
};

/// A proposal with everything that was decided about it, for history and reports.
struct ProposalSummary {
  ProposalRecord Proposal;
  std::vector<EditRecord> Edits;
  std::vector<RefusalRecord> Refusals;
  std::optional<BuildRecord> Build;     ///< latest build of this proposal, if any
  std::optional<VerdictRecord> Verdict; ///< latest verdict, if any
};

/// An open journal file.
class Journal {
public:
  /// How open() treats the file.
  enum class OpenMode {
    Create,        ///< create a new journal; error if the file exists
    OpenExisting,  ///< open an existing journal read-write; error if missing
    OpenOrCreate,  ///< open if it exists, else create
    ReadOnly,      ///< open an existing journal for reading only
  };

  /// Opens or creates the journal at \p Path. A journal of an older schema
  /// version is upgraded unless opened ReadOnly (kJournalSchemaVersion).
  /// Errors (each naming \p Path): the file is missing (OpenExisting/ReadOnly)
  /// or exists (Create); it is not a SQLite database or not a kloop journal
  /// (wrong application_id); its schema version is newer than this kloop's or
  /// below 1; the upgrade fails; `PRAGMA quick_check` reports corruption (run
  /// on every open of an existing file; O(size of the file)); SQLite fails.
  static llvm::Expected<std::unique_ptr<Journal>> open(llvm::StringRef Path,
                                                       OpenMode Mode);
  ~Journal();
  Journal(const Journal &) = delete;
  Journal &operator=(const Journal &) = delete;

  /// The path given to open().
  llvm::StringRef path() const { return Path; }

  /// Runs \p Body inside one transaction: every record*/Step call made by
  /// \p Body commits together when \p Body returns success, or not at all when
  /// it returns an error (which is returned) or the process dies. Nested calls
  /// join the outer transaction.
  llvm::Error transaction(llvm::function_ref<llvm::Error()> Body);

  // ---- runs and rounds -----------------------------------------------------

  /// Inserts a run in state "running" and its round 0; returns the run id.
  llvm::Expected<int64_t> createRun(llvm::StringRef ConfigHash,
                                    llvm::StringRef KloopVersion);
  /// Sets the run's state text; \p StopReason (if given) is stored; when
  /// \p Finished, the run's finished time is set to now. Error if no such run.
  llvm::Error setRunState(int64_t Run, llvm::StringRef State,
                          std::optional<std::string> StopReason = std::nullopt,
                          bool Finished = false);
  /// The run with id \p Run; error if there is none.
  llvm::Expected<RunRecord> getRun(int64_t Run);
  /// All runs, by id.
  llvm::Expected<std::vector<RunRecord>> listRuns();
  /// Creates round \p Number (>= 1) of \p Run, or does nothing if it exists
  /// (so a resumed run may call it again). Error if the run does not exist.
  llvm::Error beginRound(int64_t Run, int64_t Number);
  /// Rounds of \p Run by number, round 0 included.
  llvm::Expected<std::vector<RoundRecord>> listRounds(int64_t Run);

  // ---- steps (state-machine transitions) -------------------------------------

  /// Records that step (Run, Round, State, Key) has started; returns its id.
  /// The round must exist (beginRound).
  llvm::Expected<int64_t> beginStep(int64_t Run, int64_t Round, StepState State,
                                    llvm::StringRef Key = "");
  /// Marks step \p Step finished with \p Payload (any JSON, e.g. the step's
  /// output). Once this returns success the step is durable (synchronous=FULL).
  /// Error if the step does not exist or is not in status Started.
  llvm::Error finishStep(int64_t Step, const nlohmann::json &Payload = nullptr);
  /// Marks step \p Step failed with \p Reason. Same preconditions as finishStep.
  llvm::Error failStep(int64_t Step, llvm::StringRef Reason,
                       const nlohmann::json &Payload = nullptr);
  /// The step of \p Run that finished last (status Finished, in commit order),
  /// or std::nullopt if none has finished.
  llvm::Expected<std::optional<StepRecord>> lastFinishedStep(int64_t Run);
  /// True if some attempt of step (Run, Round, State, Key) has finished.
  llvm::Expected<bool> isStepFinished(int64_t Run, int64_t Round,
                                      StepState State, llvm::StringRef Key = "");
  /// The finished attempt of step (Run, Round, State, Key), so a resumed run can
  /// reuse its payload; std::nullopt if it has not finished. The payload is
  /// JSON (the schema's CHECK json_valid); its shape is the caller's to check.
  llvm::Expected<std::optional<StepRecord>>
  findFinishedStep(int64_t Run, int64_t Round, StepState State,
                   llvm::StringRef Key = "");
  /// Every step attempt of \p Run in the order they began.
  llvm::Expected<std::vector<StepRecord>> listSteps(int64_t Run);

  // ---- records -------------------------------------------------------------

  /// Stores a proposal of round \p Round; returns its id.
  llvm::Expected<int64_t> recordProposal(int64_t Run, int64_t Round,
                                         const NewProposal &P);
  /// Stores edit \p Ordinal of \p Proposal; returns its id. Target/Kind are
  /// also kept in their own columns for queries.
  llvm::Expected<int64_t> recordEdit(int64_t Proposal, int64_t Ordinal,
                                     llvm::StringRef Target, llvm::StringRef Kind,
                                     const nlohmann::json &Spec, bool Applied);
  /// Stores a refusal of \p Proposal (of its edit \p EditOrdinal, if given).
  llvm::Expected<int64_t> recordRefusal(int64_t Proposal,
                                        std::optional<int64_t> EditOrdinal,
                                        llvm::StringRef Reason);
  /// Stores a build; returns its id. Id, in \p B, is ignored.
  llvm::Expected<int64_t> recordBuild(const BuildRecord &B);
  /// Stores many samples in one transaction. Ids in \p Samples are ignored.
  llvm::Error recordSamples(const std::vector<SampleRecord> &Samples);
  /// Stores the verdict on \p Proposal; returns its id.
  llvm::Expected<int64_t> recordVerdict(int64_t Proposal, llvm::StringRef Outcome,
                                        const nlohmann::json &Detail,
                                        llvm::StringRef Explanation);

  // ---- queries -------------------------------------------------------------

  /// The proposal with id \p Id; error if there is none.
  llvm::Expected<ProposalRecord> getProposal(int64_t Id);
  /// Every proposal of \p Run (by round, then id) with its edits, refusals,
  /// latest build and latest verdict.
  llvm::Expected<std::vector<ProposalSummary>> listProposals(int64_t Run);
  /// Builds of \p Run, by id.
  llvm::Expected<std::vector<BuildRecord>> listBuilds(int64_t Run);
  /// Every sample of \p Run, by id.
  llvm::Expected<std::vector<SampleRecord>> listSamples(int64_t Run);
  /// Samples of \p Run belonging to \p Proposal, or to the baseline when
  /// \p Proposal is std::nullopt.
  llvm::Expected<std::vector<SampleRecord>>
  listSamplesOf(int64_t Run, std::optional<int64_t> Proposal);

private:
  Journal(std::string Path, sqlite3 *Db) : Path(std::move(Path)), Db(Db) {}
  class Impl;
  friend class Impl;
  std::string Path;
  sqlite3 *Db = nullptr;
  int TxDepth = 0;
  /// Schema version of the open file: kJournalSchemaVersion, or older for a
  /// journal opened read-only.
  int SchemaVersion = kJournalSchemaVersion;
};

/// The summary as JSON (field names in snake_case), for `kloop history --json`
/// and reports. Raw replies are included verbatim.
nlohmann::json toJSON(const ProposalSummary &S);
/// A run as JSON (snake_case fields).
nlohmann::json toJSON(const RunRecord &R);
/// A step as JSON (snake_case fields).
nlohmann::json toJSON(const StepRecord &S);

} // namespace kloop

#endif
