//===- kloop/Propose/Context.h - What an LLM proposer is shown --*- C++ -*-===//
///
/// \file
/// Turns the context `kloop optimize` hands every proposer (a JSON object:
/// "inventory" (docs/inventory.md), "history" (one object per earlier round),
/// "ptxas_baseline" (the baseline build's ptxas report), "profile" (the
/// evidence rows of the latest measured candidate), "counters" (the
/// incumbent's hardware counters, or null), "round") into the
/// placeholders of the LLM prompt template (prompts/optimize-kernel.v2.md):
/// kernel_name, kernel_source, ptxas_report, profile, history.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_PROPOSE_CONTEXT_H
#define KLOOP_PROPOSE_CONTEXT_H

#include "kloop/Inventory/Model.h"
#include "kloop/Propose/LLMProposer.h"
#include "kloop/Propose/Proposer.h"
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kloop {

/// One source file shown to a model: its path as the workload names it
/// (relative to the workload's directory) and its text.
using SourceText = std::pair<std::string, std::string>;

/// \p Files one after the other, each after a line "// file: <name>", with
/// every inventory ID of \p Inventory written as a trailing comment
/// "  // [kloop id: <ID>]" on the line where its entity begins (kernels, their
/// loops, shared arrays and local constants, launch sites,
/// constants, device functions), so that a model can name what it sees. An
/// entity is placed in a file when one of the two paths (the inventory's
/// location file, the file's name) ends with the other. Launch bounds have no
/// location of their own and are not marked.
std::string annotateSources(const std::vector<SourceText> &Files, const inv::Inventory &Inventory);

/// The hardware counters a model sees: one line per profile of \p Context's
/// "counters" (the incumbent's counters step, kloop optimize; each profile a
/// measure::KernelProfile's JSON, rendered by summarizeKernelProfile with its
/// kernel, shape and launch configuration), then one line per problem (why a
/// kernel or shape has none); a sentence saying none were taken when the
/// context has no "counters" object.
std::string renderCounters(const nlohmann::json &Context);

/// The profile a model sees: \p Context's "profile" (the evidence rows of the
/// latest measured candidate: baseline and candidate medians and p99 in ns,
/// % of roofline) as indented JSON, or a sentence saying that nothing has been
/// measured yet when it is absent or empty; then, after a blank line,
/// renderCounters.
std::string renderProfile(const nlohmann::json &Context);

/// The LLM template's placeholders for optimize's \p Context and the
/// workload's sources \p Files: {"kernel_name": the inventory's kernel IDs
/// joined by ", ", "kernel_source": annotateSources, "ptxas_report": the
/// baseline's ptxas report as JSON text, "profile": renderProfile, "history":
/// the history as JSON text}. The context's "inventory" is read with
/// inv::inventoryFromJSON (an absent one is an empty inventory); an error
/// names "context: inventory" and the member that does not read.
llvm::Expected<nlohmann::json> llmPlaceholders(const nlohmann::json &Context, const std::vector<SourceText> &Files);

/// A Proposer that hands an LLMProposer the placeholders llmPlaceholders
/// makes of optimize's context; kind() is the LLM proposer's.
class LLMContextAdapter : public Proposer {
public:
  LLMContextAdapter(std::unique_ptr<LLMProposer> P, std::vector<SourceText> Files)
      : P(std::move(P)), Files(std::move(Files)) {}
  llvm::Expected<ProposalReply> propose(const nlohmann::json &Context) override;
  /// LLMProposer::proposeBatch on the same placeholders as propose().
  llvm::Expected<std::vector<ProposalReply>> proposeBatch(const nlohmann::json &Context, unsigned N) override;
  llvm::StringRef kind() const override { return P->kind(); }

private:
  std::unique_ptr<LLMProposer> P;
  std::vector<SourceText> Files;
};

} // namespace kloop

#endif
