//===- kloop/Verify/VerifyJSON.h - Verification results as JSON ------------===//
///
/// \file
/// JSON (nlohmann) form of verification results, for the journal and the
/// report. Write-only: the journal keeps these as evidence beside the verdict
/// (kloop-verdict/1, DecisionJSON.h), which is what is read back.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_VERIFY_VERIFYJSON_H
#define KLOOP_VERIFY_VERIFYJSON_H

#include "kloop/Verify/AntiCheat.h"
#include "kloop/Verify/Compare.h"
#include "kloop/Verify/Protected.h"
#include <nlohmann/json.hpp>

namespace kloop {
namespace verify {

/// {"kind": findingKindName, "fatal", "kernel", "kernel_ordinal", "arg",
///  "message"}.
nlohmann::json toJSON(const Finding &F);
/// {"kernel", "kernel_ordinal", "arg", "baseline_seq", "candidate_seq",
///  "method": "dumps"|"hashes"|"missing", "matched", "message", and when
///  compared from dumps "elements", "mismatched", "poison", "new_nans",
///  "max_abs_error", "max_rel_error", "max_ulp_error"}.
nlohmann::json toJSON(const LaunchComparison &L);
/// {"passed", "matched", "mismatched", "explanation", "launches": [...],
///  "findings": [...]}.
nlohmann::json toJSON(const CompareReport &R);
/// {"output", "baseline_deterministic", "candidate_deterministic",
///  "regressed", "message"}.
nlohmann::json toJSON(const DeterminismComparison &D);
/// {"path", "before", "after", "message"}.
nlohmann::json toJSON(const ProtectedChange &C);

} // namespace verify
} // namespace kloop

#endif
