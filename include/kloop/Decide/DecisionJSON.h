//===- kloop/Decide/DecisionJSON.h - Verdicts as JSON ----------------------===//
///
/// \file
/// JSON (nlohmann) form of verdicts, for the journal and the report. The
/// format is versioned by the "schema" member of a combined verdict
/// ("kloop-verdict/1"); field names are listed in docs/decide.md. Reading
/// back what toJSON wrote gives an equal value (round trip).
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_DECIDE_DECISIONJSON_H
#define KLOOP_DECIDE_DECISIONJSON_H

#include "kloop/Decide/Decision.h"
#include "llvm/Support/Error.h"
#include <nlohmann/json.hpp>

namespace kloop {
namespace decide {

/// Schema tag written into a combined verdict.
inline constexpr const char *VerdictSchema = "kloop-verdict/1";

/// Serialises a summary / interval / thresholds / shape verdict / combined verdict.
nlohmann::json toJSON(const Summary &S);
nlohmann::json toJSON(const SpeedupInterval &I);
nlohmann::json toJSON(const DecisionThresholds &T);
nlohmann::json toJSON(const ShapeVerdict &V);
nlohmann::json toJSON(const CombinedVerdict &V);

/// Reads back a value written by toJSON. Errors name the missing or mistyped
/// field with its JSON path (e.g. "shapes[2].speedup.lower: expected a number").
llvm::Expected<Summary> summaryFromJSON(const nlohmann::json &J);
llvm::Expected<SpeedupInterval> speedupIntervalFromJSON(const nlohmann::json &J);
llvm::Expected<DecisionThresholds> thresholdsFromJSON(const nlohmann::json &J);
llvm::Expected<ShapeVerdict> shapeVerdictFromJSON(const nlohmann::json &J);
/// Also checks "schema" == VerdictSchema.
llvm::Expected<CombinedVerdict> combinedVerdictFromJSON(const nlohmann::json &J);

} // namespace decide
} // namespace kloop

#endif
