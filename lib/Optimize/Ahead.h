//===- Ahead.h - Candidates prepared ahead on other threads ---------------===//
///
/// \file
/// Internal to kloopOptimize: the queue of candidates kloop optimize prepares
/// (copies, applies, builds) on other threads while it times the current one
/// (OptimizeOptions::PrepareJobs; docs/optimize.md, "Preparing ahead"). The
/// loop asks a deterministic proposer for the proposals of the next rounds as
/// if the current candidate and every queued one were rejected, and queues
/// them; a round takes its prepared candidate only when the proposer, asked
/// after the real verdict, gives the very proposal it was prepared for from
/// the same source directory. The queue never touches the journal: the round
/// that takes a candidate journals its apply and build steps as it would have.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_LIB_OPTIMIZE_AHEAD_H
#define KLOOP_LIB_OPTIMIZE_AHEAD_H

#include "kloop/Optimize/Optimize.h"
#include "llvm/Support/ThreadPool.h"

#include <atomic>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kloop {
namespace optimize {

/// One candidate prepared on another thread.
struct PreparedCandidate {
  /// Why it could not be prepared (a copy or a proposal file that could not be written, an error of
  /// apply or build); "" when it was. The round then prepares it in line, which reports the error.
  std::string Problem;
  /// The candidate's source directory (Stages::copySources's result) and what applying did.
  std::string SourceDir;
  ApplyOutcome Apply;
  /// The build; none when the proposal was not applied (refused or failed).
  std::optional<BuildOutcome> Build;
  /// Wall time of the preparation on its thread, s.
  double WallS = 0;
};

/// The candidates queued ahead, in round order, each prepared by a job on a pool of threads.
class AheadQueue {
public:
  /// \p Jobs threads (at least 1).
  explicit AheadQueue(unsigned Jobs);
  /// Waits for every job (their results are dropped).
  ~AheadQueue();
  /// What prepares one candidate on a thread of the pool. It should look at \p Cancelled between its
  /// stages and stop early when it is set: the candidate was dropped, and only what it wrote matters.
  using Work = std::function<PreparedCandidate(const std::atomic<bool> &Cancelled)>;
  /// Queues round \p Round's candidate, \p Proposal applied to a copy of \p From, prepared by \p W on
  /// a thread of the pool. Rounds are queued in increasing order.
  void push(unsigned Round, nlohmann::json Proposal, std::string From, Work W);
  /// The rounds and proposals queued after round \p Round, in order.
  std::vector<std::pair<unsigned, nlohmann::json>> queuedAfter(unsigned Round) const;
  /// The last round queued; 0 when none is.
  unsigned lastRound() const;
  /// Round \p Round's prepared candidate when it was queued for \p Proposal from \p From (waits for its
  /// job). Otherwise every queued job is cancelled, waited for and dropped, and their rounds are added to
  /// \p Dropped: each of them was prepared for a history that did not happen. Rounds before \p Round
  /// are dropped in either case.
  std::optional<PreparedCandidate> take(unsigned Round, const nlohmann::json &Proposal, llvm::StringRef From,
                                        std::vector<unsigned> &Dropped);
  /// Cancels every queued job, waits for it and drops it; adds their rounds to \p Dropped.
  void drain(std::vector<unsigned> &Dropped);

private:
  struct Job {
    unsigned Round;
    nlohmann::json Proposal;
    std::string From;
    std::shared_ptr<std::atomic<bool>> Cancelled;
    std::shared_future<PreparedCandidate> Result;
  };
  /// Cancels the front job, waits for it and drops it into \p Dropped.
  void dropFront(std::vector<unsigned> &Dropped);
  llvm::StdThreadPool Pool;
  std::deque<Job> Jobs;
};

} // namespace optimize
} // namespace kloop

#endif
