//===- Ahead.cpp - Candidates prepared ahead on other threads -------------===//
#include "Ahead.h"

using json = nlohmann::json;

namespace kloop {
namespace optimize {

AheadQueue::AheadQueue(unsigned Jobs) : Pool(llvm::hardware_concurrency(std::max(1u, Jobs))) {}

AheadQueue::~AheadQueue() {
  std::vector<unsigned> Ignored;
  drain(Ignored);
}

void AheadQueue::push(unsigned Round, json Proposal, std::string From, Work W) {
  auto Cancelled = std::make_shared<std::atomic<bool>>(false);
  auto Result = Pool.async([W = std::move(W), Cancelled] { return W(*Cancelled); });
  Jobs.push_back({Round, std::move(Proposal), std::move(From), std::move(Cancelled), std::move(Result)});
}

std::vector<std::pair<unsigned, json>> AheadQueue::queuedAfter(unsigned Round) const {
  std::vector<std::pair<unsigned, json>> Out;
  for (const Job &J : Jobs)
    if (J.Round > Round)
      Out.push_back({J.Round, J.Proposal});
  return Out;
}

unsigned AheadQueue::lastRound() const { return Jobs.empty() ? 0 : Jobs.back().Round; }

std::optional<PreparedCandidate> AheadQueue::take(unsigned Round, const json &Proposal, llvm::StringRef From,
                                                  std::vector<unsigned> &Dropped) {
  while (!Jobs.empty() && Jobs.front().Round < Round)
    dropFront(Dropped);
  if (Jobs.empty() || Jobs.front().Round != Round || Jobs.front().Proposal != Proposal || Jobs.front().From != From) {
    drain(Dropped);
    return std::nullopt;
  }
  PreparedCandidate C = Jobs.front().Result.get();
  Jobs.pop_front();
  return C;
}

void AheadQueue::dropFront(std::vector<unsigned> &Dropped) {
  Jobs.front().Cancelled->store(true);
  Jobs.front().Result.wait();
  Dropped.push_back(Jobs.front().Round);
  Jobs.pop_front();
}

void AheadQueue::drain(std::vector<unsigned> &Dropped) {
  for (Job &J : Jobs) // every job stops at its next stage, not one after the other
    J.Cancelled->store(true);
  while (!Jobs.empty())
    dropFront(Dropped);
}

} // namespace optimize
} // namespace kloop
